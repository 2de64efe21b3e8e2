package model

import (
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Scenario is one BSS: n stations sending saturated uplink traffic to
// the access point over one channel, every node hearing every other.
type Scenario struct {
	Mode Mode
	MAC  MAC
	// Rate is every station's data rate (and the AP's, for TCP ACKs).
	Rate Rate
	// Stations is the number of saturated senders (≥ 1).
	Stations int
	// AC is the access category of the traffic.
	AC AC
	// Proto is "udp" or "tcp".
	Proto string
	// Payload is the UDP payload or the TCP MSS in bytes.
	Payload int
	// AckEvery is the number of TCP segments per TCP ACK (≥ 1).
	AckEvery int
	// AMPDU aggregates MPDUs (HT and later) up to Window subframes.
	AMPDU  bool
	Window int
	// SNRdB is each station's link SNR (both directions); +Inf or unset
	// entries mean an error-free link.
	SNRdB []float64
	// Duration is the simulated time; Seed the random stream.
	Duration time.Duration
	Seed     uint64
}

// NodeStats is what one node (station, or the AP as the last entry) did.
type NodeStats struct {
	// GoodputMbps is the application payload this node delivered.
	GoodputMbps float64 `json:"goodput_mbps"`
	// PPDUs are transmissions (each an MPDU or an A-MPDU); Collided
	// those that overlapped another; Failed those with no ACK/BA for
	// another reason (errors); Retries MPDU retransmissions; Dropped
	// MPDUs given up after the retry limit.
	PPDUs    int `json:"ppdus"`
	Collided int `json:"collided"`
	Failed   int `json:"failed"`
	MPDUs    int `json:"mpdus_delivered"`
	Retries  int `json:"retries"`
	Dropped  int `json:"dropped"`
	// Airtime is the share of time this node's own frames were on air.
	Airtime float64 `json:"airtime_share"`
}

// SimResult is a simulated run.
type SimResult struct {
	GoodputMbps float64     `json:"goodput_mbps"`
	Nodes       []NodeStats `json:"nodes"`
	// CollisionP is the share of transmissions that collided (Bianchi's p).
	CollisionP float64 `json:"collision_p"`
	// MPDUsPerPPDU is the mean number of data MPDUs per data PPDU.
	MPDUsPerPPDU float64 `json:"mpdus_per_ppdu"`
	// Busy is the share of time the medium carried a frame.
	Busy float64 `json:"busy"`
}

type mpdu struct {
	seq, tries int
	dst        int // receiving node
	payload    int // application bytes it carries (0 for TCP ACKs)
	bytes      int // MPDU length with FCS
}

type simNode struct {
	queue     []mpdu // in sequence order, retransmissions first
	nextSeq   int
	saturated bool
	bo, cw    int
	from      time.Duration // when the node starts counting ifs
	ifs       time.Duration
	snr       float64 // linear; +Inf error-free
	stats     NodeStats
	air       time.Duration
	delivered int // application bytes
	segsAtAP  int // TCP: segments of this station delivered, for ACK pacing
}

// Validate checks a scenario.
func (s *Scenario) Validate() error {
	if s.Stations < 1 || s.Stations > 1000 {
		return fmt.Errorf("stations: want 1–1000, not %d", s.Stations)
	}
	if s.Proto != "udp" && s.Proto != "tcp" {
		return fmt.Errorf("proto: want udp or tcp, not %q", s.Proto)
	}
	if s.Payload < 1 || s.Payload > 7935 {
		return fmt.Errorf("payload: want 1–7935 bytes, not %d", s.Payload)
	}
	if s.Proto == "tcp" && s.AckEvery < 1 {
		return fmt.Errorf("ack-every: want ≥ 1, not %d", s.AckEvery)
	}
	if err := s.Rate.Validate(); err != nil {
		return err
	}
	if s.AMPDU && s.Rate.Class < HT {
		return fmt.Errorf("A-MPDU needs 802.11n or later (rate %v)", s.Rate)
	}
	return nil
}

// dataMPDU is the MPDU length of one data segment/datagram.
func (s *Scenario) dataMPDU() int {
	if s.Proto == "tcp" {
		return s.MAC.MPDUBytes(IPv4Bytes + TCPBytes + s.Payload)
	}
	return s.MAC.MPDUBytes(IPv4Bytes + UDPBytes + s.Payload)
}

// ackMPDU is the MPDU length of a pure TCP ACK.
func (s *Scenario) ackMPDU() int { return s.MAC.MPDUBytes(IPv4Bytes + TCPBytes) }

func (s *Scenario) window() int {
	if s.Window <= 0 || s.Window > MaxAMPDUSubframes {
		return MaxAMPDUSubframes
	}
	return s.Window
}

// psdu is the PSDU length of n MPDUs of b bytes: an A-MPDU when
// aggregating (always for VHT and HE, whose single MPDUs are S-MPDUs).
func (s *Scenario) psdu(n, b int) int {
	if n > 1 || s.Rate.Class >= VHT {
		return AMPDUBytes(n, b)
	}
	return b
}

// Simulate runs the scenario's discrete-event DCF/EDCA simulation:
// per-node backoff counters drawn uniformly from [0, CW], counted down
// in idle slots after AIFS and frozen while the medium is busy; equal
// counters collide; a collision or an errored frame doubles CW up to
// CWmax; senders wait the ACK timeout and the others EIFS (or, with
// MAC.Bianchi, everyone DIFS after the frame); per-MPDU errors from the
// SNR; A-MPDUs acknowledged by a Block Ack bitmap.
func Simulate(s Scenario) (SimResult, error) {
	if err := s.Validate(); err != nil {
		return SimResult{}, err
	}
	rng := rand.New(rand.NewPCG(s.Seed, 0x656d7563746c))
	mac := s.MAC
	ed := mac.Param[s.AC]
	slot := mac.Slot
	aifs := mac.AIFS(s.AC)
	eifs := mac.EIFS(s.AC)
	// After a frame they could not decode, the others wait EIFS (AIFS
	// under Bianchi's assumptions).
	othersIFSAfterError := eifs
	if mac.Bianchi {
		othersIFSAfterError = aifs
	}
	n := s.Stations
	ap := n
	nodes := make([]*simNode, n+1)
	for i := range nodes {
		nd := &simNode{cw: ed.CWMin, ifs: aifs, snr: math.Inf(1)}
		if i < n && i < len(s.SNRdB) && !math.IsInf(s.SNRdB[i], 1) {
			nd.snr = DBToLinear(s.SNRdB[i])
		}
		nd.bo = rng.IntN(nd.cw + 1)
		nd.saturated = i < n
		nodes[i] = nd
	}
	dataLen, ackLen := s.dataMPDU(), s.ackMPDU()
	win := s.window()
	maxAgg := 1
	if s.AMPDU {
		maxAgg = MaxMPDUsPerAMPDU(s.Rate, dataLen, mac.Band, win)
	}
	refill := func(i int) {
		nd := nodes[i]
		for nd.saturated && len(nd.queue) < 2*win {
			nd.queue = append(nd.queue, mpdu{seq: nd.nextSeq, dst: ap, payload: s.Payload, bytes: dataLen})
			nd.nextSeq++
		}
	}
	for i := 0; i < n; i++ {
		refill(i)
	}
	end := s.Duration
	var now, busy time.Duration
	var ppdus, collided, dataPPDUs, dataMPDUs int
	contenders := make([]int, 0, n+1)
	for {
		// The next transmission: the earliest end of AIFS + backoff
		// among nodes with a frame.
		next := time.Duration(math.MaxInt64)
		for _, nd := range nodes {
			if len(nd.queue) == 0 {
				continue
			}
			if t := nd.from + nd.ifs + time.Duration(nd.bo)*slot; t < next {
				next = t
			}
		}
		if next == time.Duration(math.MaxInt64) || next >= end {
			break
		}
		contenders = contenders[:0]
		for i, nd := range nodes {
			start := nd.from + nd.ifs
			if len(nd.queue) > 0 && start+time.Duration(nd.bo)*slot <= next {
				contenders = append(contenders, i)
				continue
			}
			// Frozen: count the idle slots that passed (post-backoff
			// counts too when the queue is empty).
			if next > start {
				k := int((next - start) / slot)
				nd.bo = max(0, nd.bo-k)
			}
			// Bianchi's chain decrements every deferring counter once per
			// generic slot, the busy one included; 802.11 does not.
			if mac.Bianchi && len(nd.queue) > 0 && nd.bo > 0 {
				nd.bo--
			}
		}
		ppdus += len(contenders)
		// Build each contender's PPDU.
		type tx struct {
			node  int
			mpdus []int // indices into the queue
			dur   time.Duration
		}
		txs := make([]tx, 0, len(contenders))
		var busyEnd time.Duration
		for _, i := range contenders {
			nd := nodes[i]
			agg := 1
			if s.AMPDU {
				agg = maxAgg
				if i == ap {
					agg = MaxMPDUsPerAMPDU(s.Rate, ackLen, mac.Band, win)
				}
			}
			var idx []int
			head := nd.queue[0]
			for k := range nd.queue {
				m := nd.queue[k]
				if len(idx) == agg {
					break
				}
				if m.dst != head.dst || m.seq >= head.seq+win {
					continue
				}
				idx = append(idx, k)
			}
			d := TxTime(s.Rate, s.psdu(len(idx), head.bytes), mac.Band)
			txs = append(txs, tx{node: i, mpdus: idx, dur: d})
			nd.air += d
			nd.stats.PPDUs++
			busyEnd = max(busyEnd, next+d)
			if i != ap {
				dataPPDUs++
				dataMPDUs += len(idx)
			}
		}
		var resume time.Duration // when the medium is idle for everyone
		if len(txs) > 1 {
			collided += len(txs)
			for _, t := range txs {
				nd := nodes[t.node]
				nd.stats.Collided++
				fail(nd, t.mpdus, mac, ed, rng)
				if mac.Bianchi {
					nd.from, nd.ifs = busyEnd, aifs
				} else if own := next + t.dur + mac.ACKTimeout(s.Rate); own >= busyEnd {
					nd.from, nd.ifs = own, aifs
				} else {
					// still busy with the longer PPDU, whose preamble it
					// missed while sending its own: nothing to decode, so
					// AIFS (not EIFS) once the medium is idle, as in ns-3
					// (and the medium)
					nd.from, nd.ifs = busyEnd, aifs
				}
			}
			resume = busyEnd
			for i, nd := range nodes {
				if !inTx(i, contenders) {
					nd.from, nd.ifs = busyEnd, othersIFSAfterError
				}
			}
		} else {
			t := txs[0]
			nd := nodes[t.node]
			peer := t.node
			if t.node == ap {
				peer = nd.queue[t.mpdus[0]].dst
			}
			snr := nodes[peer].snr
			if t.node != ap {
				snr = nd.snr
			}
			ok := make([]bool, len(t.mpdus))
			any := false
			if math.IsInf(snr, 1) || rng.Float64() < HeaderSuccess(s.Rate, snr) {
				for k, qi := range t.mpdus {
					m := nd.queue[qi]
					ok[k] = math.IsInf(snr, 1) || rng.Float64() < MPDUSuccess(s.Rate, m.bytes, snr)
					any = any || ok[k]
				}
			}
			if any {
				resp := mac.ACKTime(s.Rate)
				if len(t.mpdus) > 1 {
					resp = mac.BATime(s.Rate)
				}
				done := next + t.dur + mac.sifsAfter() + resp
				busyEnd = done
				succeed(s, nodes, t.node, t.mpdus, ok, ed, rng, ap, ackLen)
				for _, o := range nodes {
					o.from, o.ifs = done, aifs
				}
			} else {
				nd.stats.Failed++
				fail(nd, t.mpdus, mac, ed, rng)
				for i, o := range nodes {
					if i == t.node {
						if mac.Bianchi {
							o.from, o.ifs = busyEnd, aifs
						} else {
							o.from, o.ifs = next+t.dur+mac.ACKTimeout(s.Rate), aifs
						}
					} else {
						o.from, o.ifs = busyEnd, othersIFSAfterError
					}
				}
			}
			resume = busyEnd
		}
		busy += busyEnd - next
		now = resume
		for i := 0; i < n; i++ {
			refill(i)
		}
	}
	if now < end {
		now = end
	}
	res := SimResult{Nodes: make([]NodeStats, len(nodes))}
	secs := end.Seconds()
	for i, nd := range nodes {
		nd.stats.GoodputMbps = float64(nd.delivered) * 8 / secs / 1e6
		nd.stats.Airtime = nd.air.Seconds() / secs
		res.Nodes[i] = nd.stats
		res.GoodputMbps += nd.stats.GoodputMbps
	}
	if ppdus > 0 {
		res.CollisionP = float64(collided) / float64(ppdus)
	}
	if dataPPDUs > 0 {
		res.MPDUsPerPPDU = float64(dataMPDUs) / float64(dataPPDUs)
	}
	res.Busy = math.Min(1, busy.Seconds()/secs)
	return res, nil
}

func inTx(i int, set []int) bool {
	for _, j := range set {
		if i == j {
			return true
		}
	}
	return false
}

// fail charges an unanswered attempt: every MPDU's try count, CW doubled,
// MPDUs beyond the retry limit dropped, a new backoff.
func fail(nd *simNode, idx []int, mac MAC, ed EDCA, rng *rand.Rand) {
	drop := map[int]bool{}
	for _, qi := range idx {
		nd.queue[qi].tries++
		nd.stats.Retries++
		if mac.RetryLimit > 0 && nd.queue[qi].tries >= mac.RetryLimit {
			drop[qi] = true
		}
	}
	if len(drop) > 0 {
		nd.stats.Dropped += len(drop)
		nd.removeIdx(drop)
		nd.cw = ed.CWMin
	} else {
		nd.cw = min(2*(nd.cw+1)-1, ed.CWMax)
	}
	nd.bo = rng.IntN(nd.cw + 1)
}

// succeed applies an ACK or Block Ack: delivered MPDUs leave the queue
// (and, for TCP data, pace the AP's TCP ACKs), failed ones count a try;
// CW resets.
func succeed(s Scenario, nodes []*simNode, sender int, idx []int, ok []bool, ed EDCA, rng *rand.Rand, ap, ackLen int) {
	nd := nodes[sender]
	gone := map[int]bool{}
	for k, qi := range idx {
		m := nd.queue[qi]
		if ok[k] {
			gone[qi] = true
			nd.stats.MPDUs++
			nd.delivered += m.payload
			if s.Proto == "tcp" && sender != ap {
				nd.segsAtAP++
				if nd.segsAtAP%s.AckEvery == 0 {
					a := nodes[ap]
					a.queue = append(a.queue, mpdu{seq: a.nextSeq, dst: sender, bytes: ackLen})
					a.nextSeq++
				}
			}
			continue
		}
		nd.queue[qi].tries++
		nd.stats.Retries++
		if s.MAC.RetryLimit > 0 && nd.queue[qi].tries >= s.MAC.RetryLimit {
			gone[qi] = true
			nd.stats.Dropped++
		}
	}
	nd.removeIdx(gone)
	nd.cw = ed.CWMin
	nd.bo = rng.IntN(nd.cw + 1)
}

func (nd *simNode) removeIdx(gone map[int]bool) {
	q := nd.queue[:0]
	for k, m := range nd.queue {
		if !gone[k] {
			q = append(q, m)
		}
	}
	nd.queue = q
}
