package model

import (
	"fmt"
	"math"
	"time"
)

// SimulateMedium runs a scenario through the event-driven Medium instead
// of Simulate's shared channel: stations 0..n-1 and the access point n
// are radios whose frames reach one another as link says (positions and
// path loss, fixed SNRs, stations hidden from each other), each with its
// own carrier sense, preamble detection and SINR. Stations keep their
// queues full of UDP datagrams or TCP segments to the access point; for
// TCP the access point answers every AckEvery segments delivered with a
// TCP ACK. cfg supplies the medium's thresholds (its MAC, Link, AMPDU
// and Seed come from the scenario and link).
//
// The result is Simulate's, with these meanings: a node's GoodputMbps and
// MPDUs count distinct MPDUs delivered (a retransmission the access point
// decodes again counts once); PPDUs are its transmissions; Collided those
// that got no ACK or Block Ack back, and CollisionP their share of the
// stations' PPDUs (what ns-3's wifi-ref reports as collision_p); Failed
// is 0; Dropped counts MPDUs given up after the retry limit.
func SimulateMedium(s Scenario, link func(tx, rx int) Link, cfg MediumConfig) (SimResult, error) {
	if err := s.Validate(); err != nil {
		return SimResult{}, err
	}
	if s.AMPDU && s.window() != MaxAMPDUSubframes {
		return SimResult{}, fmt.Errorf("the medium aggregates up to %d MPDUs (window %d)", MaxAMPDUSubframes, s.Window)
	}
	n := s.Stations
	ap := n
	mac := s.MAC
	cfg.MAC = func(Band) MAC { return mac }
	cfg.Link = link
	cfg.AMPDU = s.AMPDU
	cfg.Seed = s.Seed
	m := NewMedium(cfg)
	m.ReportAir(true)
	freq := map[Band]int{Band2G4: 2412, Band5G: 5180, Band6G: 5955}[mac.Band]
	addrOf := func(i int) [6]byte { return [6]byte{0x02, 0x6d, 0, 0, byte(i >> 8), byte(i)} }
	for i := 0; i <= n; i++ {
		m.AddRadio(i, freq)
		m.LearnAddr(addrOf(i), i)
	}
	limit := s.MAC.RetryLimit
	if limit <= 0 {
		limit = math.MaxInt32
	}
	tid := map[AC]byte{BE: 0, BK: 1, VI: 5, VO: 6}[s.AC]
	header := func(tx, rx int) []byte {
		h := make([]byte, mac.MACHeader())
		h[0], h[1] = 0x08, 0x01 // data, to DS
		if tx == ap {
			h[1] = 0x02 // from DS
		}
		if mac.QoS {
			h[0] = 0x88
			h[24] = tid
		}
		a1, a2 := addrOf(rx), addrOf(tx)
		copy(h[4:], a1[:])
		copy(h[10:], a2[:])
		copy(h[16:], a1[:])
		return h
	}
	type tag struct {
		station int  // whose data (or, for a TCP ACK, to whom)
		ack     bool // a TCP ACK from the access point
	}
	dataLen, ackLen := s.dataMPDU(), s.ackMPDU()
	hdr := make([][]byte, n+1)
	for i := 0; i < n; i++ {
		hdr[i] = header(i, ap)
	}
	ackHdr := make([][]byte, n)
	for i := range ackHdr {
		ackHdr[i] = header(ap, i)
	}
	frame := func(tx, rx int, b []byte, size int, t *tag) *MediumFrame {
		return &MediumFrame{Radio: tx, Freq: freq, Data: b, Extra: size - len(b) - FCSBytes,
			Rates: [4]TxRate{{Rate: s.Rate, Count: limit}}, Ref: t}
	}
	const backlog = 100 // below the medium's queue bound (128)
	pending := make([]int, n)
	top := func(now time.Duration) error {
		for i := 0; i < n; i++ {
			for pending[i] < backlog {
				if err := m.Submit(now, frame(i, ap, hdr[i], dataLen, &tag{station: i})); err != nil {
					return err
				}
				pending[i]++
			}
		}
		return nil
	}
	res := SimResult{Nodes: make([]NodeStats, n+1)}
	seen := map[*MediumFrame]bool{}
	delivered := make([]int, n)
	segs := make([]int, n)
	var acks []*MediumFrame
	var busy time.Duration
	var dataPPDUs, dataMPDUs int
	emit := func(ev any) {
		switch v := ev.(type) {
		case Reception:
			t := v.Frame.Ref.(*tag)
			if t.ack || v.To != ap || seen[v.Frame] {
				return
			}
			seen[v.Frame] = true
			delivered[t.station]++
			if s.Proto == "tcp" {
				segs[t.station]++
				if segs[t.station]%s.AckEvery == 0 {
					acks = append(acks, frame(ap, t.station, ackHdr[t.station], ackLen, &tag{station: t.station, ack: true}))
				}
			}
		case Status:
			if t := v.Frame.Ref.(*tag); !t.ack {
				pending[t.station]--
			}
		case Air:
			if v.At+v.Dur <= s.Duration {
				busy += v.Dur + v.RespDur
			}
			if v.Radio != ap {
				dataPPDUs++
				dataMPDUs += len(v.Frames)
			}
		}
	}
	if err := top(0); err != nil {
		return SimResult{}, err
	}
	for {
		at, ok := m.Next()
		if !ok || at > s.Duration {
			break
		}
		m.Advance(at, emit)
		for _, f := range acks {
			if err := m.Submit(at, f); err != nil {
				return SimResult{}, err
			}
		}
		acks = acks[:0]
		if err := top(at); err != nil {
			return SimResult{}, err
		}
	}
	secs := s.Duration.Seconds()
	var attempts, unanswered uint64
	for i := 0; i <= n; i++ {
		st, _ := m.Stats(i)
		nd := &res.Nodes[i]
		nd.PPDUs = int(st.Attempts)
		nd.Collided = int(st.NoResponse)
		nd.Retries = int(st.Retries)
		nd.Dropped = int(st.Failed)
		nd.Airtime = st.Airtime.Seconds() / secs
		if i < n {
			nd.MPDUs = delivered[i]
			nd.GoodputMbps = float64(delivered[i]*s.Payload) * 8 / secs / 1e6
			res.GoodputMbps += nd.GoodputMbps
			attempts += st.Attempts
			unanswered += st.NoResponse
		}
	}
	if attempts > 0 {
		res.CollisionP = float64(unanswered) / float64(attempts)
	}
	if dataPPDUs > 0 {
		res.MPDUsPerPPDU = float64(dataMPDUs) / float64(dataPPDUs)
	}
	res.Busy = math.Min(1, busy.Seconds()/secs)
	return res, nil
}
