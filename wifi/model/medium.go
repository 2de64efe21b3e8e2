package model

import (
	"container/heap"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// The medium: the same DCF/EDCA, airtime and error model as Simulate,
// driven by frames as they come (from mac80211_hwsim radios) instead of
// saturated queues. Pure: the caller owns the clock. It Submits each frame
// a radio sends, asks Next for the time of the next event, and calls
// Advance with the current time to collect what happened by then —
// receptions to deliver and transmit statuses to report. Time is a
// duration since the medium's start; it never runs ahead of Advance's
// now, and it is never compressed.

// TxRate is one stage of a frame's multi-rate retry chain.
type TxRate struct {
	Rate  Rate
	Count int // attempts at this rate (0 ends the chain)
}

// MediumFrame is one MPDU a radio handed to the medium.
type MediumFrame struct {
	Radio  int    // transmitter
	Cookie uint64 // the driver's handle, echoed in the status
	Freq   int    // MHz of the channel it is sent on
	// Data is the MPDU without FCS (24-byte header at least).
	Data []byte
	// Rates is the retry chain (mac80211's rate control, or a fixed rate).
	Rates [4]TxRate
	// NoAck: the frame expects no acknowledgement (the medium also
	// treats group-addressed frames so).
	NoAck bool
	// Extra counts body bytes that are on the air but not in Data (a
	// caller that keeps the body elsewhere passes the header only).
	Extra int
	// Ref is the caller's own handle, returned untouched.
	Ref any

	submitted time.Duration
	stage     int
	tries     int // attempts so far at the current stage
	counts    [4]int
	ac        AC
	tid       int
	ra        [6]byte
	qosData   bool
}

// Len is the MPDU's airtime length (with FCS).
func (f *MediumFrame) Len() int { return len(f.Data) + f.Extra + FCSBytes }

// Reception is one frame delivered to one radio.
type Reception struct {
	At        time.Duration
	To        int
	Frame     *MediumFrame
	SignalDBm float64
	Rate      Rate
}

// Status is the outcome of one frame for its transmitter.
type Status struct {
	At    time.Duration
	Frame *MediumFrame
	// Acked: acknowledged (or, for NoAck frames, transmitted).
	Acked bool
	// Counts are the attempts made at each stage of Rates.
	Counts       [4]int
	AckSignalDBm float64
	// Dropped: the medium's queue for the radio was full (reported as
	// acked so rate control is not misled; not delivered).
	Dropped bool
}

// Air is one PPDU on the air, as a monitor on its channel would see it
// (emitted only while ReportAir is on, at the PPDU's start).
type Air struct {
	At, Dur time.Duration
	Radio   int // transmitter
	Freq    int
	Rate    Rate
	Frames  []*MediumFrame
	// OK says which MPDUs reached their receiver (a group frame: any
	// radio).
	OK       []bool
	Collided bool
	// The acknowledgement the receiver sent back (RespDur 0: none): an
	// ACK, or a Block Ack for an A-MPDU.
	RespAt, RespDur time.Duration
	RespFrom        int
	RespRate        Rate
	BlockAck        bool
}

// Link is what one radio's frames look like at another: the received
// power and the SNR it gives there. OK false: the receiver cannot even
// detect the frames (below sensitivity; it also does not defer to them).
type Link struct {
	RxDBm, SNRdB float64
	OK           bool
}

// RadioStats are one radio's medium counters.
type RadioStats struct {
	Frames     uint64        `json:"frames"`     // submitted
	Attempts   uint64        `json:"attempts"`   // PPDUs sent (each MPDU attempt counted once per PPDU)
	Retries    uint64        `json:"retries"`    // attempts after the first
	Collisions uint64        `json:"collisions"` // attempts that overlapped another transmission
	Errors     uint64        `json:"errors"`     // MPDU attempts lost to the channel (PER)
	Failed     uint64        `json:"failed"`     // frames given up after the retry chain
	Dropped    uint64        `json:"dropped"`    // frames tail-dropped at the medium's queue bound
	Delivered  uint64        `json:"delivered"`  // unicast MPDUs received by their receiver
	Airtime    time.Duration `json:"airtime_ns"` // own PPDUs on air
	LastRate   string        `json:"last_rate"`  // rate of the last attempt
	// LastDataRate is the rate of the last QoS data attempt.
	LastDataRate string `json:"last_data_rate"`
	RxBytes      uint64 `json:"rx_bytes"` // MPDU bytes delivered to this radio
	TxBytes      uint64 `json:"tx_bytes"` // MPDU bytes this radio delivered
}

// MediumConfig configures a medium.
type MediumConfig struct {
	// MAC gives a channel's timing from its band (DefaultMAC by default).
	MAC func(b Band) MAC
	// Link returns what tx's frames look like at rx.
	Link func(tx, rx int) Link
	// QueueLimit bounds each radio's backlog (mac80211_hwsim frees
	// frames without status beyond 200): default 128.
	QueueLimit int
	// AMPDU aggregates queued QoS data MPDUs to the same receiver and TID
	// into one PPDU (HT and later rates), up to 64 and the PPDU limits.
	AMPDU bool
	Seed  uint64
}

type edcaf struct {
	q        []*MediumFrame
	bo, cw   int
	from     time.Duration
	ifs      time.Duration
	boActive bool // a backoff is pending (not yet counted down)
}

type mradio struct {
	id    int
	freq  int
	acs   [4]edcaf
	stats RadioStats
}

type mchannel struct {
	freq    int
	mac     MAC
	radios  []*mradio
	busy    bool
	idleAt  time.Duration // when the medium last became idle
	pending *exchange
	gen     uint64 // the txStart event that is current
}

type resumeAt struct {
	from, ifs time.Duration
	ac        AC
}

type exchange struct {
	end    time.Duration
	resume map[int]resumeAt
	others struct {
		from time.Duration
		ifs  time.Duration
	}
}

// Medium is the event-driven medium.
type Medium struct {
	cfg      MediumConfig
	rng      *rand.Rand
	radios   map[int]*mradio
	channels map[int]*mchannel
	addrs    map[[6]byte]int // MAC address → radio
	events   eventHeap
	now      time.Duration
	seq, gen uint64
	sorted   []*mradio
	air      bool
}

// ReportAir turns Air events on or off (a capture of the medium).
func (m *Medium) ReportAir(on bool) { m.air = on }

func (m *Medium) sortedRadios() []*mradio {
	if m.sorted == nil {
		for _, r := range m.radios {
			m.sorted = append(m.sorted, r)
		}
		slices.SortFunc(m.sorted, func(a, b *mradio) int { return a.id - b.id })
	}
	return m.sorted
}

// NewMedium makes an empty medium.
func NewMedium(cfg MediumConfig) *Medium {
	if cfg.QueueLimit <= 0 {
		cfg.QueueLimit = 128
	}
	if cfg.MAC == nil {
		cfg.MAC = func(b Band) MAC { return DefaultMAC(ModeN, b, true) }
	}
	if cfg.Link == nil {
		cfg.Link = func(int, int) Link { return Link{RxDBm: -50, SNRdB: 44, OK: true} }
	}
	return &Medium{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x6d656469756d)), radios: map[int]*mradio{},
		channels: map[int]*mchannel{}, addrs: map[[6]byte]int{}}
}

// AddRadio registers a radio on a channel (MHz; 0: on none yet — it joins
// the channel of its first transmission and receives group frames
// meanwhile). A radio moved to another channel keeps its counters and
// queued frames, which go out on the new channel.
func (m *Medium) AddRadio(id, freq int) {
	r, ok := m.radios[id]
	if ok && r.freq == freq {
		return
	}
	if !ok {
		r = &mradio{id: id}
		m.radios[id] = r
		m.sorted = nil
	} else if r.freq != 0 {
		m.removeFromChannel(r)
	}
	r.freq = freq
	if freq == 0 {
		return
	}
	ch := m.channel(freq)
	mac := ch.mac
	for ac := range r.acs {
		e := &r.acs[ac]
		if !ok {
			e.cw = mac.Param[AC(ac)].CWMin
		}
		e.from, e.ifs = m.now, mac.AIFS(AC(ac))
	}
	ch.radios = append(ch.radios, r)
	m.schedule(ch)
}

// LearnAddr maps a MAC address to a radio (its vif or link addresses);
// transmitted frames teach their own TA too.
func (m *Medium) LearnAddr(addr [6]byte, radio int) { m.addrs[addr] = radio }

// Stats returns a radio's counters.
func (m *Medium) Stats(radio int) (RadioStats, bool) {
	r, ok := m.radios[radio]
	if !ok {
		return RadioStats{}, false
	}
	return r.stats, true
}

func (m *Medium) removeFromChannel(r *mradio) {
	ch := m.channels[r.freq]
	for i, x := range ch.radios {
		if x == r {
			ch.radios = append(ch.radios[:i], ch.radios[i+1:]...)
			break
		}
	}
}

func bandOf(freq int) Band {
	switch {
	case freq < 3000:
		return Band2G4
	case freq > 5935:
		return Band6G
	}
	return Band5G
}

func (m *Medium) channel(freq int) *mchannel {
	ch, ok := m.channels[freq]
	if !ok {
		ch = &mchannel{freq: freq, mac: m.cfg.MAC(bandOf(freq)), idleAt: m.now}
		m.channels[freq] = ch
	}
	return ch
}

// parse reads what the medium needs from an MPDU header.
func (f *MediumFrame) parse() error {
	if len(f.Data) < 10 {
		return fmt.Errorf("frame of %d bytes is shorter than a header", len(f.Data))
	}
	fc := f.Data[0]
	typ, sub := (fc>>2)&3, fc>>4
	copy(f.ra[:], f.Data[4:10])
	f.ac = BE
	switch {
	case typ == 0: // management
		f.ac = VO
	case typ == 2 && sub&8 != 0 && len(f.Data) >= 26: // QoS data
		toDS, fromDS := f.Data[1]&1, f.Data[1]&2
		off := 24
		if toDS != 0 && fromDS != 0 {
			off = 30
		}
		if len(f.Data) >= off+2 {
			f.tid = int(f.Data[off] & 7)
			f.ac = TIDAC(f.tid)
			f.qosData = true
		}
	}
	if f.ra[0]&1 != 0 {
		f.NoAck = true
	}
	if f.Rates[0].Count <= 0 {
		f.Rates[0].Count = 1
	}
	return f.Rates[0].Rate.Validate()
}

// Submit hands the medium a frame at time now. Call Advance(now) first so
// that everything due by then has happened.
func (m *Medium) Submit(now time.Duration, f *MediumFrame) error {
	m.now = max(m.now, now)
	r, ok := m.radios[f.Radio]
	if !ok {
		return fmt.Errorf("radio %d is not on the medium", f.Radio)
	}
	if err := f.parse(); err != nil {
		return err
	}
	if f.Freq != 0 && f.Freq != r.freq {
		m.AddRadio(r.id, f.Freq)
		r = m.radios[f.Radio]
	}
	if r.freq == 0 {
		return fmt.Errorf("radio %d sent a frame on no channel", f.Radio)
	}
	if len(f.Data) >= 16 {
		var ta [6]byte
		copy(ta[:], f.Data[10:16])
		m.addrs[ta] = r.id
	}
	r.stats.Frames++
	e := &r.acs[f.ac]
	if len(e.q) >= m.cfg.QueueLimit {
		r.stats.Dropped++
		m.push(now, Status{At: now, Frame: f, Acked: true, Dropped: true})
		return nil
	}
	f.submitted = now
	ch := m.channels[r.freq]
	if len(e.q) == 0 && !e.boActive && ch.busy {
		// A frame that finds the medium busy and no backoff pending
		// invokes one (802.11-2016 10.22.2.2).
		e.bo, e.boActive = m.rng.IntN(e.cw+1), true
	}
	e.q = append(e.q, f)
	m.schedule(ch)
	return nil
}

// Next is the time of the next event (false: nothing pending).
func (m *Medium) Next() (time.Duration, bool) {
	if len(m.events) == 0 {
		return 0, false
	}
	return m.events[0].at, true
}

// Advance processes every event due by now, in time order, passing each
// Reception and Status to emit (which may be nil).
func (m *Medium) Advance(now time.Duration, emit func(any)) {
	for len(m.events) > 0 && m.events[0].at <= now {
		ev := heap.Pop(&m.events).(*event)
		m.now = max(m.now, ev.at)
		switch v := ev.v.(type) {
		case txStart:
			m.transmit(m.channels[v.freq], ev.at, v.gen)
		case txEnd:
			m.finish(m.channels[v.freq], ev.at)
		default:
			if emit != nil {
				emit(v)
			}
		}
	}
	if now > m.now {
		m.now = now
	}
}

type txStart struct {
	freq int
	gen  uint64
}
type txEnd struct{ freq int }

type event struct {
	at  time.Duration
	seq uint64
	v   any
}

type eventHeap []*event

func (h eventHeap) Len() int { return len(h) }
func (h eventHeap) Less(i, j int) bool {
	if h[i].at != h[j].at {
		return h[i].at < h[j].at
	}
	return h[i].seq < h[j].seq
}
func (h eventHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *eventHeap) Push(x any)   { *h = append(*h, x.(*event)) }
func (h *eventHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

func (m *Medium) push(at time.Duration, v any) {
	m.seq++
	heap.Push(&m.events, &event{at: at, seq: m.seq, v: v})
}

// txTime is when EDCAF e would start transmitting on an idle medium.
func txTime(e *edcaf, slot time.Duration) time.Duration {
	t := e.from + e.ifs + time.Duration(e.bo)*slot
	if !e.boActive {
		t = e.from + e.ifs
	}
	if len(e.q) > 0 && e.q[0].submitted > t {
		t = e.q[0].submitted // the countdown ended before the frame came
	}
	return t
}

// schedule (re)computes the channel's next transmission.
func (m *Medium) schedule(ch *mchannel) {
	if ch.busy {
		return
	}
	next := time.Duration(math.MaxInt64)
	for _, r := range ch.radios {
		for ac := range r.acs {
			e := &r.acs[ac]
			if len(e.q) == 0 {
				continue
			}
			next = min(next, txTime(e, ch.mac.Slot))
		}
	}
	if next == time.Duration(math.MaxInt64) {
		return
	}
	// A new schedule invalidates the channel's earlier txStart events.
	m.gen++
	ch.gen = m.gen
	m.push(max(next, m.now), txStart{freq: ch.freq, gen: m.gen})
}

// ccaWindow: transmissions starting within it of one another collide
// (a station cannot sense a transmission that began in the same slot).
const ccaWindow = 4 * time.Microsecond

type txAttempt struct {
	r      *mradio
	ac     AC
	frames []*MediumFrame
	rate   Rate
	dur    time.Duration
	// outcome, for Air events
	ok       []bool
	respAt   time.Duration
	respDur  time.Duration
	respFrom int
	respRate Rate
}

func (m *Medium) transmit(ch *mchannel, now time.Duration, gen uint64) {
	if ch.busy || ch.gen != gen {
		return // stale
	}
	slot := ch.mac.Slot
	var txs []*txAttempt
	for _, r := range ch.radios {
		var winner *txAttempt
		for ac := 3; ac >= 0; ac-- { // VO first: internal collisions go to the higher AC
			e := &r.acs[ac]
			if len(e.q) == 0 {
				continue
			}
			if txTime(e, slot) <= now+ccaWindow {
				if winner == nil {
					winner = &txAttempt{r: r, ac: AC(ac)}
				} else { // virtual collision: the lower AC backs off
					e.cw = min(2*(e.cw+1)-1, ch.mac.Param[AC(ac)].CWMax)
					e.bo, e.boActive = m.rng.IntN(e.cw+1), true
					e.from = now
				}
			}
		}
		if winner != nil {
			txs = append(txs, winner)
		}
	}
	if len(txs) == 0 {
		m.schedule(ch)
		return
	}
	// Everyone else freezes: count the idle slots that passed.
	for _, r := range ch.radios {
		for ac := range r.acs {
			e := &r.acs[ac]
			if isTx(txs, r, AC(ac)) || !e.boActive {
				continue
			}
			if start := e.from + e.ifs; now > start {
				e.bo = max(0, e.bo-int((now-start)/slot))
			}
		}
	}
	ch.busy = true
	var end time.Duration
	for _, t := range txs {
		m.buildPPDU(ch, t)
		end = max(end, now+t.dur)
	}
	x := &exchange{resume: map[int]resumeAt{}}
	mac := ch.mac
	if len(txs) > 1 {
		for _, t := range txs {
			t.r.stats.Collisions++
			m.attemptFailed(ch, t, now, x, true)
			own := now + t.dur + mac.ACKTimeout(t.rate)
			if own >= end {
				x.resume[t.r.id] = resumeAt{own, mac.AIFS(t.ac), t.ac}
			} else {
				x.resume[t.r.id] = resumeAt{end, mac.EIFS(t.ac), t.ac}
			}
		}
		x.end = end
		x.others.from, x.others.ifs = end, -1 // EIFS
	} else {
		m.single(ch, txs[0], now, x)
	}
	if m.air {
		for _, t := range txs {
			a := Air{At: now, Dur: t.dur, Radio: t.r.id, Freq: ch.freq, Rate: t.rate, Frames: t.frames,
				OK: t.ok, Collided: len(txs) > 1, RespAt: t.respAt, RespDur: t.respDur, RespFrom: t.respFrom,
				RespRate: t.respRate, BlockAck: len(t.frames) > 1}
			if a.OK == nil {
				a.OK = make([]bool, len(t.frames))
			}
			m.push(now, a)
		}
	}
	ch.pending = x
	m.push(max(x.end, end), txEnd{freq: ch.freq})
}

func isTx(txs []*txAttempt, r *mradio, ac AC) bool {
	for _, t := range txs {
		if t.r == r && t.ac == ac {
			return true
		}
	}
	return false
}

// buildPPDU takes the head frame, and with A-MPDU the queued QoS data
// frames to the same receiver and TID, at the head's current rate.
func (m *Medium) buildPPDU(ch *mchannel, t *txAttempt) {
	e := &t.r.acs[t.ac]
	head := e.q[0]
	t.rate = head.Rates[head.stage].Rate
	t.frames = []*MediumFrame{head}
	if m.cfg.AMPDU && head.qosData && !head.NoAck && t.rate.Class >= HT {
		limit := MaxAMPDUSubframes
		mpduSum := head.Len()
		for _, f := range e.q[1:] {
			if len(t.frames) == limit {
				break
			}
			if !f.qosData || f.ra != head.ra || f.tid != head.tid || f.NoAck {
				continue
			}
			// delimiters and padding of n subframes, plus the MPDUs
			bytes := AMPDUBytes(len(t.frames)+1, 0) + mpduSum + f.Len()
			if bytes > MaxAMPDUBytes(t.rate.Class) || TxTime(t.rate, bytes, ch.mac.Band) > PPDUMaxTime {
				break
			}
			t.frames = append(t.frames, f)
			mpduSum += f.Len()
		}
	}
	psdu := 0
	if len(t.frames) > 1 || t.rate.Class >= VHT {
		psdu = AMPDUBytes(len(t.frames), 0)
	}
	for _, f := range t.frames {
		psdu += f.Len()
	}
	t.dur = TxTime(t.rate, psdu, ch.mac.Band)
	t.r.stats.Attempts++
	t.r.stats.Airtime += t.dur
	t.r.stats.LastRate = t.rate.String()
	if head.qosData {
		t.r.stats.LastDataRate = t.rate.String()
	}
	for _, f := range t.frames {
		if f.stage > 0 || f.tries > 0 {
			t.r.stats.Retries++
		}
	}
}

// single resolves an uncollided transmission.
func (m *Medium) single(ch *mchannel, t *txAttempt, now time.Duration, x *exchange) {
	mac := ch.mac
	ppduEnd := now + t.dur
	head := t.frames[0]
	if head.NoAck {
		// Group-addressed (or no-ack): every radio on the channel that
		// detects it receives it, with its own errors; one attempt.
		// Every other radio gets it, on whichever channel it is: the
		// kernel drops frames for radios not tuned to Freq (a station
		// scanning is on no channel of the medium's yet).
		got := false
		for _, r := range m.sortedRadios() {
			if r == t.r {
				continue
			}
			l := m.cfg.Link(t.r.id, r.id)
			if l.OK && m.rng.Float64() < 1-PER(t.rate, head.Len(), DBToLinear(l.SNRdB)) {
				m.push(ppduEnd, Reception{At: ppduEnd, To: r.id, Frame: head, SignalDBm: l.RxDBm, Rate: t.rate})
				r.stats.RxBytes += uint64(head.Len())
				got = true
			}
		}
		if m.air {
			t.ok = []bool{got}
		}
		head.counts[head.stage]++
		m.push(ppduEnd, Status{At: ppduEnd, Frame: head, Acked: true, Counts: head.counts})
		m.popFrames(t, map[*MediumFrame]bool{head: true})
		m.resetCW(ch, t)
		x.end = ppduEnd
		x.others.from, x.others.ifs = ppduEnd, 0
		x.resume[t.r.id] = resumeAt{ppduEnd, mac.AIFS(t.ac), t.ac}
		return
	}
	rx, ok := m.addrs[head.ra]
	var l Link
	if ok {
		l = m.cfg.Link(t.r.id, rx)
	}
	good := map[*MediumFrame]bool{}
	if ok && l.OK && m.rng.Float64() < HeaderSuccess(t.rate, DBToLinear(l.SNRdB)) {
		for _, f := range t.frames {
			if m.rng.Float64() < MPDUSuccess(t.rate, f.Len(), DBToLinear(l.SNRdB)) {
				good[f] = true
			} else {
				t.r.stats.Errors++
			}
		}
	} else {
		t.r.stats.Errors += uint64(len(t.frames))
	}
	if len(good) == 0 {
		m.attemptFailed(ch, t, now, x, false)
		x.end = ppduEnd
		x.resume[t.r.id] = resumeAt{ppduEnd + mac.ACKTimeout(t.rate), mac.AIFS(t.ac), t.ac}
		x.others.from, x.others.ifs = ppduEnd, -1
		return
	}
	resp := mac.ACKTime(t.rate)
	if len(t.frames) > 1 {
		resp = mac.BATime(t.rate)
	}
	done := ppduEnd + mac.sifsAfter() + resp
	if m.air {
		t.ok = make([]bool, len(t.frames))
		for i, f := range t.frames {
			t.ok[i] = good[f]
		}
		t.respAt, t.respDur, t.respFrom, t.respRate = ppduEnd+mac.sifsAfter(), resp, rx, ControlRate(t.rate, mac.BasicRates)
	}
	back := m.cfg.Link(rx, t.r.id)
	rr := m.radios[rx]
	for _, f := range t.frames {
		if good[f] {
			m.push(ppduEnd, Reception{At: ppduEnd, To: rx, Frame: f, SignalDBm: l.RxDBm, Rate: t.rate})
			f.counts[f.stage]++
			m.push(done, Status{At: done, Frame: f, Acked: true, Counts: f.counts, AckSignalDBm: back.RxDBm})
			t.r.stats.Delivered++
			t.r.stats.TxBytes += uint64(f.Len())
			if rr != nil {
				rr.stats.RxBytes += uint64(f.Len())
			}
		}
	}
	// The MPDUs the Block Ack bitmap reports missing stay queued and
	// count an attempt.
	var failed []*MediumFrame
	for _, f := range t.frames {
		if !good[f] {
			failed = append(failed, f)
		}
	}
	m.popFrames(t, good)
	for _, f := range failed {
		m.chargeAttempt(t, f, done, x)
	}
	m.resetCW(ch, t)
	x.end = done
	x.others.from, x.others.ifs = done, 0
	x.resume[t.r.id] = resumeAt{done, mac.AIFS(t.ac), t.ac}
}

func (m *Medium) resetCW(ch *mchannel, t *txAttempt) {
	e := &t.r.acs[t.ac]
	e.cw = ch.mac.Param[t.ac].CWMin
	e.bo, e.boActive = m.rng.IntN(e.cw+1), true // post-backoff
}

// attemptFailed: no ACK/BA — every MPDU counts an attempt, CW doubles.
func (m *Medium) attemptFailed(ch *mchannel, t *txAttempt, now time.Duration, x *exchange, collided bool) {
	e := &t.r.acs[t.ac]
	at := now + t.dur + ch.mac.ACKTimeout(t.rate)
	for _, f := range t.frames {
		m.chargeAttempt(t, f, at, x)
	}
	if len(e.q) > 0 && e.q[0] == t.frames[0] {
		e.cw = min(2*(e.cw+1)-1, ch.mac.Param[t.ac].CWMax)
	} else {
		e.cw = ch.mac.Param[t.ac].CWMin
	}
	e.bo, e.boActive = m.rng.IntN(e.cw+1), true
}

// chargeAttempt counts a failed attempt of f; at the end of its retry
// chain it fails (status not acked) and leaves the queue.
func (m *Medium) chargeAttempt(t *txAttempt, f *MediumFrame, at time.Duration, x *exchange) {
	f.counts[f.stage]++
	f.tries++
	if f.tries >= f.Rates[f.stage].Count {
		f.stage++
		f.tries = 0
	}
	if f.stage >= len(f.Rates) || f.Rates[f.stage].Count == 0 {
		t.r.stats.Failed++
		m.push(at, Status{At: at, Frame: f, Acked: false, Counts: f.counts})
		m.popFrames(t, map[*MediumFrame]bool{f: true})
		f.stage = len(f.Rates) - 1
	}
}

func (m *Medium) popFrames(t *txAttempt, gone map[*MediumFrame]bool) {
	e := &t.r.acs[t.ac]
	q := e.q[:0]
	for _, f := range e.q {
		if !gone[f] {
			q = append(q, f)
		}
	}
	e.q = q
}

// finish ends the channel's exchange: events go out, every EDCAF resumes
// counting (AIFS, or EIFS after a frame it could not decode).
func (m *Medium) finish(ch *mchannel, now time.Duration) {
	x := ch.pending
	ch.pending = nil
	ch.busy = false
	ch.idleAt = now
	for _, r := range ch.radios {
		res, isTx := x.resume[r.id]
		for ac := range r.acs {
			e := &r.acs[ac]
			if isTx {
				if AC(ac) == res.ac {
					e.from, e.ifs = res.from, res.ifs
					continue
				}
			}
			e.from, e.ifs = x.others.from, othersIFS(ch.mac, AC(ac), x.others.ifs)
		}
	}
	m.schedule(ch)
}

func othersIFS(mac MAC, ac AC, code time.Duration) time.Duration {
	if code < 0 {
		return mac.EIFS(ac)
	}
	return mac.AIFS(ac)
}
