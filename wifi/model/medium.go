package model

import (
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"time"
)

// The medium: the same EDCA, airtime and error model as Simulate, driven
// by frames as they come (from mac80211_hwsim radios) instead of
// saturated queues, with a physical layer per radio as ns-3 3.37's
// YansWifiPhy has it (InterferenceHelper, ThresholdPreambleDetectionModel,
// no frame-capture model). Pure: the caller owns the clock. It Submits
// each frame a radio sends, asks Next for the time of the next event, and
// calls Advance with the current time to collect what happened by then —
// receptions to deliver and transmit statuses to report. Time is a
// duration since the medium's start; it never runs ahead of Advance's
// now, and it is never compressed.
//
// Every PPDU (data, and the ACK or Block Ack answering it) reaches each
// radio on its channel at the power Link gives (nothing below the
// receiver's sensitivity, Link.OK false). Each radio:
//
//   - senses: from ccaWindow (4 µs, ns-3's preamble detection period)
//     after a PPDU's start it defers (backoff frozen, AIFS again after)
//     while it transmits, while it is locked on a PPDU, while its NAV
//     runs (set by a frame it decoded for another radio, to the end of
//     that frame's acknowledgement), while it awaits its own
//     acknowledgement, and while the energy of all the PPDUs it hears
//     reaches the CCA sensitivity (−82 dBm; −62 dBm, CCA-ED, for a PPDU
//     that started within ccaWindow before its own transmission, whose
//     detection that transmission cancelled — ns-3's thresholds). A radio
//     that hears nothing keeps counting down: hidden stations transmit
//     over each other.
//   - locks on a PPDU when, at the end of its detection period, it is
//     neither transmitting nor locked on another (the first detected
//     preamble wins; among preambles starting within one detection period
//     the strongest), and the preamble is detected: received power ≥
//     −82 dBm and SINR ≥ 4 dB. Its own transmission ends a lock (half
//     duplex).
//   - decodes a locked PPDU by SINR = S / (N + Σ interference), powers
//     summed in mW, chunk by chunk: the PPDU's time is split at every
//     start and end of another PPDU it hears, and the PHY header and each
//     MPDU succeed with the product of the Yans chunk success rates over
//     their stretch of it (ns-3's InterferenceHelper). A frame it decoded
//     for another radio sets its NAV; one whose header it decoded and
//     none of whose MPDUs it did makes it wait EIFS.
//
// The receiver acknowledges what it decoded SIFS after the PPDU, whatever
// it senses; the transmitter judges that ACK or Block Ack the same way,
// and without it (not detected, or lost) counts the attempt failed at the
// ACK timeout or at the end of the response it could not decode.

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
	done      bool // leaves its queue
}

// Len is the MPDU's airtime length (with FCS).
func (f *MediumFrame) Len() int { return len(f.Data) + f.Extra + FCSBytes }

// Reception is one frame delivered to one radio. A retransmission the
// receiver decodes again (its acknowledgement was lost) is delivered
// again, as on the air; mac80211 drops the duplicate.
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
// (only while ReportAir is on). Air events come in the order PPDUs
// started (At, on every channel), each once its PPDU has ended (its
// outcome and the acknowledgement are known then) and before the Status
// of any of its frames: while ReportAir is on, a Status whose frame's
// PPDU waits behind one that started earlier and is still on the air
// (another channel's, or an overlapping one) waits too.
type Air struct {
	At, Dur time.Duration
	Radio   int // transmitter
	Freq    int
	Rate    Rate
	Frames  []*MediumFrame
	// OK says which MPDUs reached their receiver (a group frame: any
	// radio).
	OK []bool
	// Collided: it overlapped another transmission at its receiver (a
	// group frame: at a radio that hears it) and none of its MPDUs got
	// through.
	Collided bool
	// The acknowledgement the receiver sent back (RespDur 0: none): an
	// ACK, or a Block Ack for an A-MPDU.
	RespAt, RespDur time.Duration
	RespFrom        int
	RespRate        Rate
	BlockAck        bool
}

// Link is what one radio's frames look like at another: the received
// power and the SNR it gives there, so the receiver's noise floor is
// RxDBm − SNRdB. OK false: the frames do not reach the receiver at all
// (below its sensitivity: they neither interfere nor make it defer).
type Link struct {
	RxDBm, SNRdB float64
	OK           bool
}

// RadioStats are one radio's medium counters.
type RadioStats struct {
	Frames     uint64 `json:"frames"`     // submitted
	Attempts   uint64 `json:"attempts"`   // PPDUs sent (each MPDU attempt counted once per PPDU)
	Retries    uint64 `json:"retries"`    // attempts after the first
	Collisions uint64 `json:"collisions"` // attempts that overlapped another transmission at their receiver
	Errors     uint64 `json:"errors"`     // MPDU attempts lost to the channel (PER) without an overlap
	// NoResponse counts unicast attempts that got no ACK or Block Ack
	// back (a collision, errors, or a lost acknowledgement).
	NoResponse uint64        `json:"no_response"`
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
	// QueueLimit bounds each radio's backlog per access category
	// (mac80211_hwsim frees frames without status beyond 200; a
	// multi-link radio's links share the bound): default 128.
	QueueLimit int
	// AMPDU aggregates queued QoS data MPDUs to the same receiver and TID
	// into one PPDU (HT and later rates), up to 64 and the PPDU limits.
	AMPDU bool
	Seed  uint64
	// DetectDBm and DetectSNRdB are the preamble detection thresholds
	// (0: ns-3's −82 dBm and 4 dB). NoDetection turns preamble detection
	// off (ns-3 without a preamble detection model): a radio locks on the
	// strongest PPDU that reaches it, whatever its SINR.
	DetectDBm, DetectSNRdB float64
	NoDetection            bool
	// CCADBm and CCAEdDBm are the energy a radio defers to (0: ns-3's
	// CcaSensitivity −82 dBm and CcaEdThreshold −62 dBm; see
	// DefaultCCASensitivityDBm).
	CCADBm, CCAEdDBm float64
}

type edcaf struct {
	q        []*MediumFrame
	bo, cw   int
	from     time.Duration
	ifs      time.Duration
	boActive bool // a backoff is pending (not yet counted down)
}

// rsig is one PPDU as one radio receives it.
type rsig struct {
	p         *ppdu
	dbm       float64
	mw, noise float64 // received power and the receiver's noise floor, mW
	// sensed: past its detection period (counted in the radio's energy);
	// cs: against the CCA sensitivity (else CCA-ED only).
	sensed, cs bool
	ended      bool
	// overlapped: another PPDU, or the radio's own transmission, overlapped
	// it here.
	overlapped bool
}

type mradio struct {
	id    int
	n     int // dense index, for the link caches
	freq  int
	ch    *mchannel
	acs   [4]edcaf
	stats RadioStats
	// links: a multi-link radio's record holds one radio per channel it
	// uses (by MHz), each with its own channel access; the record itself
	// is on no channel. nil for a single-channel radio.
	links  map[int]*mradio
	dev    *mradio       // a link's multi-link radio record
	lastTx time.Duration // when it last started a data PPDU

	sigs    []rsig  // PPDUs it hears (and ended ones that overlapped them)
	cands   []*ppdu // preambles in their detection period
	rx      *ppdu   // the PPDU it is locked on
	rxHdr   int8    // rx's PHY header: 0 not judged yet, 1 decoded, -1 lost
	txing   bool
	txStart time.Duration
	x       *ppdu // its own unicast PPDU awaiting an acknowledgement
	resp    *ppdu // the PPDU it acknowledges after SIFS
	// Access waits for the NAV (set by a frame it decoded for another
	// radio) and EIFS (after a failed reception): it counts AIFS from
	// navEnd and eifsEnd at the earliest.
	navEnd  time.Duration
	eifsEnd time.Duration
	energy  float64 // mW of the sensed PPDUs
	nsensed int
	ncs     int // sensed PPDUs counted against the CCA sensitivity
	busy    bool

	gen           uint64 // the access event that is current
	accessPending bool
	accessAt      time.Duration

	lc []linkMW // by transmitter's n: the last Link seen and its powers

	lastRate Rate // the rate stats.LastRate names
}

// linkMW caches one transmitter's Link at a radio in mW (Link may change
// as radios move, so it is asked each time and converted only then).
type linkMW struct {
	dbm, snr  float64
	mw, noise float64
	valid     bool
}

type mchannel struct {
	freq      int
	mac       MAC
	radios    []*mradio
	eifsExtra time.Duration // EIFS − AIFS
	aifs      [4]time.Duration
	par       [4]EDCA
}

// ppdu is one PPDU on the air: a data PPDU (one MPDU or an A-MPDU), or
// the ACK or Block Ack answering one (data != nil).
type ppdu struct {
	refs       int
	ch         *mchannel
	tx         *mradio
	start, end time.Duration
	rate       Rate
	psdu       int
	// where its PHY header and payload are (from phyFields, headerRate)
	hdrA, hdrB, payA, payB time.Duration
	hdrRate                Rate
	hdrBits, payBits       float64 // payBits: payloadBits of the whole PSDU

	// data PPDU
	ac       AC
	frames   []*MediumFrame
	group    bool
	rxID     int     // intended receiver
	rx       *mradio // the receiver's radio on the PPDU's channel
	hasRx    bool
	ok       []bool // MPDUs the receiver decoded
	nOK      int
	rxDBm    float64  // power at the receiver
	ackDBm   float64  // the acknowledgement's power at the transmitter
	collided bool     // overlapped at its receiver
	air      bool     // reported as an Air event, not yet out
	airDone  bool     // its Air event is complete
	held     []Status // its frames' statuses, held until its Air event is out
	respAt   time.Duration
	respDur  time.Duration // the acknowledgement sent (0: none)
	respRate Rate
	ackTime  time.Duration // the acknowledgement it asks for

	// acknowledgement
	data *ppdu
}

// Medium is the event-driven medium.
type Medium struct {
	cfg      MediumConfig
	rng      *rand.Rand
	radios   map[int]*mradio
	channels map[int]*mchannel
	addrs    map[[6]byte]int // MAC address → radio
	// events: a heap of pointer-free entries (swapping them costs no GC
	// write barriers) into evs, whose free slots are listed in evFree.
	events []hent
	evs    []event
	evFree []int32
	now    time.Duration
	seq    uint64
	sorted []*mradio
	air    bool
	airq   []*ppdu
	free   []*ppdu

	detectDBm, detectSNR float64 // dBm, linear
	ccaMW, ccaEdMW       float64
	nradios              int
	bec                  [64]berEntry // bitError cache

	// scratch
	bp []time.Duration
	ck []chunk
	lg []float64
}

type chunk struct {
	a, b time.Duration
	sinr float64
}

type berEntry struct {
	r      Rate
	sinr   float64
	e      float64
	filled bool
}

// bitError is the package's bitError, remembered: a radio's links keep
// their SINR, so the same few values recur.
func (m *Medium) bitError(r Rate, sinr float64) float64 {
	h := math.Float64bits(sinr)
	h ^= h >> 29
	h ^= uint64(r.Kbps)*31 + uint64(r.MCS)*7 + uint64(r.Class)*131 + uint64(r.WidthMHz) + uint64(r.NSS)*17 + uint64(r.GI)
	c := &m.bec[(h*0x9e3779b97f4a7c15)>>58]
	if c.filled && c.sinr == sinr && c.r == r {
		return c.e
	}
	*c = berEntry{r: r, sinr: sinr, e: bitError(r, sinr), filled: true}
	return c.e
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

func dbmToMW(dbm float64) float64 { return math.Pow(10, dbm/10) }

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
	m := &Medium{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x6d656469756d)), radios: map[int]*mradio{},
		channels: map[int]*mchannel{}, addrs: map[[6]byte]int{}}
	m.detectDBm = orDefault(cfg.DetectDBm, DefaultDetectDBm)
	m.detectSNR = DBToLinear(orDefault(cfg.DetectSNRdB, DefaultDetectSNRdB))
	m.ccaMW = dbmToMW(orDefault(cfg.CCADBm, DefaultCCASensitivityDBm))
	m.ccaEdMW = dbmToMW(orDefault(cfg.CCAEdDBm, DefaultCCAEdThreshold))
	return m
}

func orDefault(v, d float64) float64 {
	if v == 0 {
		return d
	}
	return v
}

// AddRadio registers a radio on a channel (MHz; 0: on none yet — it joins
// the channel of its first transmission and receives group frames
// meanwhile). A radio moved to another channel keeps its counters and
// queued frames, which go out on the new channel.
func (m *Medium) AddRadio(id, freq int) {
	r, ok := m.radios[id]
	if ok && r.links != nil {
		if freq != 0 {
			m.radioOn(r, freq)
		}
		return
	}
	if ok && r.freq == freq {
		return
	}
	if !ok {
		r = &mradio{id: id, n: m.nradios}
		m.nradios++
		m.radios[id] = r
		m.sorted = nil
	} else if r.freq != 0 {
		m.removeFromChannel(r)
	}
	r.freq = freq
	if freq == 0 {
		return
	}
	m.join(r, freq, !ok)
}

// AddMultiLinkRadio registers a radio that is on several channels at once
// — a multi-link device (802.11be MLD: mac80211_hwsim's multi-link radios
// send each frame on one of their links, and say on which). Each channel
// it sends or is addressed on gets a radio of its own there, with its own
// EDCA functions, queues, carrier sense and receptions, as the MLD's
// affiliated station on that link has: the links contend, and carry
// frames, independently. Frames it submits must name their channel
// (Freq). Receptions, statuses and Stats name the radio by id; LinkStats
// gives each channel's counters. Group frames reach it once: on a channel
// it has a link on, through that link, elsewhere by the SNR alone.
func (m *Medium) AddMultiLinkRadio(id int) {
	if r, ok := m.radios[id]; ok {
		if r.links == nil && r.freq != 0 {
			m.removeFromChannel(r)
			r.freq = 0
		}
		if r.links == nil {
			r.links = map[int]*mradio{}
		}
		return
	}
	m.radios[id] = &mradio{id: id, n: m.nradios, links: map[int]*mradio{}}
	m.nradios++
	m.sorted = nil
}

// radioOn is the radio r sends and receives with on freq: r itself, or
// for a multi-link radio its link on that channel (made on first use).
func (m *Medium) radioOn(r *mradio, freq int) *mradio {
	if r.links == nil {
		return r
	}
	if l, ok := r.links[freq]; ok {
		return l
	}
	l := &mradio{id: r.id, n: m.nradios, freq: freq, dev: r}
	m.nradios++
	r.links[freq] = l
	m.join(l, freq, true)
	return l
}

// join puts r on the channel freq (fresh: r has never been on one).
func (m *Medium) join(r *mradio, freq int, fresh bool) {
	ch := m.channel(freq)
	for ac := range r.acs {
		e := &r.acs[ac]
		if fresh {
			e.cw = ch.par[ac].CWMin
		}
		e.from, e.ifs = m.now, ch.aifs[ac]
	}
	r.ch = ch
	ch.radios = append(ch.radios, r)
	r.busy = m.isBusy(r)
	m.schedule(r)
}

// LearnAddr maps a MAC address to a radio (its vif or link addresses);
// transmitted frames teach their own TA too.
func (m *Medium) LearnAddr(addr [6]byte, radio int) { m.addrs[addr] = radio }

// RadioOf is the radio an address belongs to, as far as the medium knows.
func (m *Medium) RadioOf(addr [6]byte) (int, bool) {
	r, ok := m.addrs[addr]
	return r, ok
}

// Stats returns a radio's counters (a multi-link radio's: its links'
// summed, the rates those of the link that sent data last).
func (m *Medium) Stats(radio int) (RadioStats, bool) {
	r, ok := m.radios[radio]
	if !ok {
		return RadioStats{}, false
	}
	st := r.stats
	last := time.Duration(-1)
	for _, f := range slices.Sorted(maps.Keys(r.links)) {
		l := r.links[f]
		st.add(l.stats)
		if l.stats.LastRate != "" && l.lastTx > last {
			last = l.lastTx
			st.LastRate, st.LastDataRate = l.stats.LastRate, l.stats.LastDataRate
		}
	}
	return st, true
}

// LinkStats returns a multi-link radio's counters per channel (MHz) it
// used; nil for a single-channel radio.
func (m *Medium) LinkStats(radio int) map[int]RadioStats {
	r, ok := m.radios[radio]
	if !ok || r.links == nil {
		return nil
	}
	out := map[int]RadioStats{}
	for f, l := range r.links {
		out[f] = l.stats
	}
	return out
}

// add sums o's counters into s (the rates are left alone).
func (s *RadioStats) add(o RadioStats) {
	s.Frames += o.Frames
	s.Attempts += o.Attempts
	s.Retries += o.Retries
	s.Collisions += o.Collisions
	s.Errors += o.Errors
	s.NoResponse += o.NoResponse
	s.Failed += o.Failed
	s.Dropped += o.Dropped
	s.Delivered += o.Delivered
	s.Airtime += o.Airtime
	s.RxBytes += o.RxBytes
	s.TxBytes += o.TxBytes
}

// removeFromChannel takes r off its channel: it stops hearing the
// channel's PPDUs (its own, if one is on the air, ends there).
func (m *Medium) removeFromChannel(r *mradio) {
	ch := m.channels[r.freq]
	for i, x := range ch.radios {
		if x == r {
			ch.radios = append(ch.radios[:i], ch.radios[i+1:]...)
			break
		}
	}
	for i := range r.sigs {
		m.release(r.sigs[i].p)
	}
	clear(r.sigs)
	r.sigs, r.cands, r.rx = r.sigs[:0], r.cands[:0], nil
	r.energy, r.nsensed, r.ncs = 0, 0, 0
	r.ch = nil
	r.gen++
	r.accessPending = false
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
		mac := m.cfg.MAC(bandOf(freq))
		ch = &mchannel{freq: freq, mac: mac, eifsExtra: mac.EIFS(BE) - mac.AIFS(BE)}
		for ac := range ch.aifs {
			ch.aifs[ac], ch.par[ac] = mac.AIFS(AC(ac)), mac.Param[AC(ac)]
		}
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
	switch {
	case r.links != nil:
		if f.Freq == 0 {
			return fmt.Errorf("multi-link radio %d sent a frame without naming its channel", f.Radio)
		}
		r = m.radioOn(r, f.Freq)
	case f.Freq != 0 && f.Freq != r.freq:
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
	if m.queued(r, f.ac) >= m.cfg.QueueLimit {
		r.stats.Dropped++
		m.out(now, Status{At: now, Frame: f, Acked: true, Dropped: true})
		return nil
	}
	f.submitted, f.done = now, false
	if len(e.q) == 0 && !e.boActive && (r.busy || m.now < r.navEnd) {
		// A frame that finds the medium busy and no backoff pending
		// invokes one (802.11-2016 10.22.2.2).
		e.bo, e.boActive = m.rng.IntN(e.cw+1), true
	}
	e.q = append(e.q, f)
	m.schedule(r)
	return nil
}

// queued is how many frames of access category ac r holds: a multi-link
// radio's bound is on all its links together (the driver above sees one
// radio: mac80211_hwsim frees frames beyond 200 pending, whichever link
// they wait on).
func (m *Medium) queued(r *mradio, ac AC) int {
	if r.dev == nil {
		return len(r.acs[ac].q)
	}
	n := 0
	for _, l := range r.dev.links {
		n += len(l.acs[ac].q)
	}
	return n
}

// Next is the time of the next event (false: nothing pending).
func (m *Medium) Next() (time.Duration, bool) {
	if len(m.events) == 0 {
		return 0, false
	}
	return m.events[0].at, true
}

// Advance processes every event due by now, in time order, passing each
// Reception, Status and Air to emit (which may be nil).
func (m *Medium) Advance(now time.Duration, emit func(any)) {
	for len(m.events) > 0 && m.events[0].at <= now {
		ev := m.pop()
		m.now = max(m.now, ev.at)
		switch ev.kind {
		case evOut:
			if emit != nil {
				emit(ev.v)
			}
		case evAccess:
			m.access(ev.r, ev.gen)
		case evRespond:
			m.respond(ev.p)
		case evDetect:
			m.detect(ev.p)
		case evEnd:
			m.end(ev.p)
		case evTimeout:
			m.timeout(ev.p)
		}
	}
	if now > m.now {
		m.now = now
	}
}

type evKind uint8

const (
	evOut     evKind = iota // a Reception, Status or Air for the caller
	evAccess                // a radio's countdown ends
	evRespond               // SIFS after a PPDU: its receiver acknowledges it
	evDetect                // a PPDU's preamble detection period ends
	evEnd                   // a PPDU ends
	evTimeout               // a transmitter's ACK timeout
)

type event struct {
	at   time.Duration
	late bool // after the others due at the same time
	kind evKind
	gen  uint64
	r    *mradio
	p    *ppdu
	v    any
}

// hent is a heap entry: when, the order among equal times (the late bit
// above the sequence number), and the event's slot in evs.
type hent struct {
	at  time.Duration
	key uint64
	i   int32
}

func (a hent) before(b hent) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.key < b.key
}

func (m *Medium) push(ev event) {
	var i int32
	if n := len(m.evFree); n > 0 {
		i = m.evFree[n-1]
		m.evFree = m.evFree[:n-1]
		m.evs[i] = ev
	} else {
		i = int32(len(m.evs))
		m.evs = append(m.evs, ev)
	}
	m.seq++
	key := m.seq
	if ev.late {
		key |= 1 << 63
	}
	h := append(m.events, hent{at: ev.at, key: key, i: i})
	for j := len(h) - 1; j > 0; {
		p := (j - 1) / 2
		if !h[j].before(h[p]) {
			break
		}
		h[j], h[p] = h[p], h[j]
		j = p
	}
	m.events = h
}

func (m *Medium) pop() event {
	h := m.events
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	for i := 0; ; {
		l := 2*i + 1
		if l >= n {
			break
		}
		c := l
		if r := l + 1; r < n && h[r].before(h[l]) {
			c = r
		}
		if !h[c].before(h[i]) {
			break
		}
		h[i], h[c] = h[c], h[i]
		i = c
	}
	m.events = h
	ev := m.evs[top.i]
	m.evs[top.i] = event{}
	m.evFree = append(m.evFree, top.i)
	return ev
}

// out queues a Reception, Status or Air for the caller.
func (m *Medium) out(at time.Duration, v any) { m.push(event{at: at, kind: evOut, v: v}) }

func (m *Medium) newPPDU() *ppdu {
	if n := len(m.free); n > 0 {
		p := m.free[n-1]
		m.free = m.free[:n-1]
		return p
	}
	return &ppdu{}
}

func (m *Medium) hold(p *ppdu) { p.refs++ }

// release drops one reference to p; the last one recycles it.
func (m *Medium) release(p *ppdu) {
	p.refs--
	if p.refs > 0 {
		return
	}
	if p.refs < 0 {
		panic("model: PPDU released twice")
	}
	if p.data != nil {
		m.release(p.data)
	}
	clear(p.frames)
	clear(p.held)
	*p = ppdu{frames: p.frames[:0], ok: p.ok[:0], held: p.held[:0]}
	m.free = append(m.free, p)
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

// isBusy is whether r defers now.
func (m *Medium) isBusy(r *mradio) bool {
	if r.txing || r.rx != nil || r.x != nil || r.resp != nil {
		return true
	}
	if r.nsensed == 0 {
		return false
	}
	if r.ncs > 0 {
		return r.energy >= m.ccaMW
	}
	return r.energy >= m.ccaEdMW
}

// update follows r's carrier sense: when the medium turns busy the
// backoff counters freeze (the idle slots that passed are counted); when
// it turns idle they resume after AIFS, counted from the end of the NAV
// and of EIFS's extra wait if later.
func (m *Medium) update(r *mradio) {
	b := m.isBusy(r)
	if b == r.busy {
		return
	}
	r.busy = b
	ch := r.ch
	if ch == nil {
		return
	}
	if b {
		for ac := range r.acs {
			e := &r.acs[ac]
			if !e.boActive {
				continue
			}
			if start := e.from + e.ifs; m.now > start {
				e.bo = max(0, e.bo-int((m.now-start)/ch.mac.Slot))
			}
		}
		r.gen++
		r.accessPending = false
		return
	}
	from := max(m.now, r.eifsEnd, r.navEnd)
	for ac := range r.acs {
		e := &r.acs[ac]
		e.from, e.ifs = from, ch.aifs[ac]
	}
	m.schedule(r)
}

// schedule (re)computes r's next transmission.
func (m *Medium) schedule(r *mradio) {
	if r.busy || r.ch == nil {
		return
	}
	next := time.Duration(math.MaxInt64)
	for ac := range r.acs {
		e := &r.acs[ac]
		if len(e.q) > 0 {
			next = min(next, txTime(e, r.ch.mac.Slot))
		}
	}
	if next == time.Duration(math.MaxInt64) {
		return
	}
	at := max(next, m.now)
	if r.accessPending && r.accessAt == at {
		return
	}
	// A new schedule invalidates the radio's earlier access events.
	r.gen++
	r.accessPending, r.accessAt = true, at
	m.push(event{at: at, kind: evAccess, r: r, gen: r.gen})
}

// ccaWindow is ns-3's preamble detection period: a radio senses a PPDU
// from 4 µs after its start, so transmissions starting within it of one
// another do not defer to each other.
const ccaWindow = 4 * time.Microsecond

// access: r's countdown ended on an idle medium; the highest access
// category whose countdown ends with it transmits.
func (m *Medium) access(r *mradio, gen uint64) {
	if gen != r.gen {
		return // stale
	}
	r.accessPending = false
	if r.busy || r.ch == nil {
		return
	}
	ch := r.ch
	winner := -1
	for ac := 3; ac >= 0; ac-- { // VO first: internal collisions go to the higher AC
		e := &r.acs[ac]
		if len(e.q) == 0 || txTime(e, ch.mac.Slot) > m.now+ccaWindow {
			continue
		}
		if winner < 0 {
			winner = ac
		} else { // virtual collision: the lower AC backs off
			e.cw = min(2*(e.cw+1)-1, ch.par[ac].CWMax)
			e.bo, e.boActive = m.rng.IntN(e.cw+1), true
			e.from = m.now
		}
	}
	if winner < 0 {
		m.schedule(r)
		return
	}
	p := m.newPPDU()
	m.buildPPDU(ch, r, AC(winner), p)
	m.startTx(r, ch, p)
}

// buildPPDU takes the head frame, and with A-MPDU the queued QoS data
// frames to the same receiver and TID, at the head's current rate.
func (m *Medium) buildPPDU(ch *mchannel, r *mradio, ac AC, p *ppdu) {
	e := &r.acs[ac]
	head := e.q[0]
	p.ac = ac
	p.rate = head.Rates[head.stage].Rate
	p.frames = append(p.frames[:0], head)
	if m.cfg.AMPDU && head.qosData && !head.NoAck && p.rate.Class >= HT {
		limit := MaxAMPDUSubframes
		mpduSum := head.Len()
		for _, f := range e.q[1:] {
			if len(p.frames) == limit {
				break
			}
			if !f.qosData || f.ra != head.ra || f.tid != head.tid || f.NoAck {
				continue
			}
			// delimiters and padding of n subframes, plus the MPDUs
			bytes := AMPDUBytes(len(p.frames)+1, 0) + mpduSum + f.Len()
			if bytes > MaxAMPDUBytes(p.rate.Class) || TxTime(p.rate, bytes, ch.mac.Band) > PPDUMaxTime {
				break
			}
			p.frames = append(p.frames, f)
			mpduSum += f.Len()
		}
	}
	psdu := 0
	if len(p.frames) > 1 || p.rate.Class >= VHT {
		psdu = AMPDUBytes(len(p.frames), 0)
	}
	for _, f := range p.frames {
		psdu += f.Len()
	}
	p.psdu = psdu
	p.end = TxTime(p.rate, psdu, ch.mac.Band) // a duration until startTx
	p.group = head.NoAck
	if !p.group {
		p.rxID, p.hasRx = m.addrs[head.ra]
		if rr := m.radios[p.rxID]; p.hasRx && rr != nil {
			// a multi-link receiver hears it on its link on this channel
			p.rx = m.radioOn(rr, ch.freq)
		}
	}
	if cap(p.ok) < len(p.frames) {
		p.ok = make([]bool, len(p.frames), max(len(p.frames), MaxAMPDUSubframes))
	}
	p.ok = p.ok[:len(p.frames)]
	clear(p.ok)
	r.stats.Attempts++
	r.stats.Airtime += p.end
	if p.rate != r.lastRate || r.stats.LastRate == "" {
		r.lastRate, r.stats.LastRate = p.rate, p.rate.String()
	}
	if head.qosData {
		r.stats.LastDataRate = r.stats.LastRate
		r.lastTx = m.now
	}
	for _, f := range p.frames {
		if f.stage > 0 || f.tries > 0 {
			r.stats.Retries++
		}
	}
}

// startTx puts p (its duration in p.end) on ch's air from r.
func (m *Medium) startTx(r *mradio, ch *mchannel, p *ppdu) {
	now := m.now
	p.ch, p.tx, p.start, p.end = ch, r, now, now+p.end
	hs, ps := phyFields(p.rate)
	hr, hd := headerRate(p.rate)
	p.hdrA, p.hdrB, p.payA, p.payB = now+hs, now+hs+hd, now+ps, p.end
	if ch.mac.Band == Band2G4 && p.rate.Class != DSSS {
		p.payB -= 6 * time.Microsecond // the signal extension carries no bits
	}
	p.hdrRate, p.hdrBits = hr, hr.Mbps()*float64(hd)/float64(time.Microsecond)
	p.payBits = payloadBits(p.rate, p.psdu)
	if p.data == nil && !p.group {
		p.ackTime = ch.mac.ACKTime(p.rate)
		if len(p.frames) > 1 {
			p.ackTime = ch.mac.BATime(p.rate)
		}
	}
	// Half duplex: a reception under way, and preambles being detected,
	// are lost; what r hears now overlaps its transmission.
	r.txing, r.txStart = true, now
	r.rx, r.rxHdr = nil, 0
	r.cands = r.cands[:0]
	for i := range r.sigs {
		if !r.sigs[i].ended {
			r.sigs[i].overlapped = true
		}
	}
	heard := false
	for _, o := range ch.radios {
		if o == r {
			continue
		}
		if l := m.cfg.Link(r.id, o.id); l.OK {
			m.addSig(o, p, l)
			heard = true
		}
	}
	m.hold(p)
	m.push(event{at: p.end, kind: evEnd, p: p})
	if heard {
		m.hold(p)
		m.push(event{at: now + ccaWindow, late: true, kind: evDetect, p: p})
	}
	if p.data == nil {
		if !p.group {
			r.x = p
			m.hold(p)
		}
		if m.air {
			p.air = true
			m.hold(p)
			m.airq = append(m.airq, p)
		}
	}
	m.update(r)
}

// addSig: p starts reaching o.
func (m *Medium) addSig(o *mradio, p *ppdu, l Link) {
	if n := p.tx.n; n >= len(o.lc) {
		o.lc = append(o.lc, make([]linkMW, n+1-len(o.lc))...)
	}
	c := &o.lc[p.tx.n]
	if !c.valid || c.dbm != l.RxDBm || c.snr != l.SNRdB {
		*c = linkMW{dbm: l.RxDBm, snr: l.SNRdB, mw: dbmToMW(l.RxDBm), noise: dbmToMW(l.RxDBm - l.SNRdB), valid: true}
	}
	s := rsig{p: p, dbm: l.RxDBm, mw: c.mw, noise: c.noise, overlapped: o.txing}
	for i := range o.sigs {
		if !o.sigs[i].ended {
			o.sigs[i].overlapped = true
			s.overlapped = true
		}
	}
	o.sigs = append(o.sigs, s)
	m.hold(p)
	if !o.txing && o.rx == nil {
		o.cands = append(o.cands, p)
	}
}

func (o *mradio) sigOf(p *ppdu) int {
	for i := range o.sigs {
		if o.sigs[i].p == p {
			return i
		}
	}
	return -1
}

// detect: p's preamble detection period ends at every radio that hears
// it. It counts in their energy from now; a radio whose strongest
// candidate it is locks on it if the preamble is detected.
func (m *Medium) detect(p *ppdu) {
	for _, o := range p.ch.radios {
		i := o.sigOf(p)
		if i < 0 || o.sigs[i].sensed || o.sigs[i].ended {
			continue
		}
		s := &o.sigs[i]
		s.sensed = true
		o.energy += s.mw
		o.nsensed++
		// A transmission r started after p did cancelled p's detection:
		// afterwards r defers to it only by CCA-ED.
		s.cs = !(o.txing && o.txStart > p.start)
		if s.cs {
			o.ncs++
		}
		if k := slices.Index(o.cands, p); k >= 0 {
			switch {
			case m.strongest(o) != p:
				o.cands = slices.Delete(o.cands, k, k+1)
			case m.detected(o, i):
				o.rx, o.rxHdr = p, 0
				o.cands = o.cands[:0]
			default:
				o.cands = slices.Delete(o.cands, k, k+1)
			}
		}
		m.update(o)
	}
	m.release(p)
}

// strongest is o's strongest candidate preamble (the earliest of equals).
func (m *Medium) strongest(o *mradio) *ppdu {
	var best *ppdu
	bestMW := -1.0
	for _, c := range o.cands {
		if i := o.sigOf(c); i >= 0 && o.sigs[i].mw > bestMW {
			best, bestMW = c, o.sigs[i].mw
		}
	}
	return best
}

// detected is ns-3's ThresholdPreambleDetectionModel for o.sigs[i] now:
// received power and SINR over the thresholds.
func (m *Medium) detected(o *mradio, i int) bool {
	if m.cfg.NoDetection {
		return true
	}
	s := &o.sigs[i]
	if s.dbm < m.detectDBm {
		return false
	}
	interf := 0.0
	for j := range o.sigs {
		if j != i && !o.sigs[j].ended {
			interf += o.sigs[j].mw
		}
	}
	return s.mw >= m.detectSNR*(s.noise+interf)
}

// end: p leaves the air. Radios locked on it judge it; a data PPDU's
// receiver delivers what it decoded and will acknowledge it; an
// acknowledgement settles its exchange.
func (m *Medium) end(p *ppdu) {
	ch, tx := p.ch, p.tx
	if tx.txing && tx.txStart == p.start {
		tx.txing = false
	}
	resp := p.data != nil
	var ackOK, ackHeard bool
	for _, o := range ch.radios {
		i := o.sigOf(p)
		if i < 0 {
			continue
		}
		s := &o.sigs[i]
		s.ended = true
		if s.sensed {
			o.energy -= s.mw
			o.nsensed--
			if s.cs {
				o.ncs--
			}
			if o.nsensed == 0 {
				o.energy, o.ncs = 0, 0
			}
		}
		if k := slices.Index(o.cands, p); k >= 0 {
			o.cands = slices.Delete(o.cands, k, k+1)
		}
		isRx := !resp && (p.group || p.hasRx && o == p.rx)
		if isRx && s.overlapped {
			p.collided = true
		}
		if o.rx == p {
			dbm := s.dbm
			ok := m.judge(o, p, i)
			o.rx, o.rxHdr = nil, 0
			switch {
			case resp && o == p.data.tx:
				ackOK, ackHeard = ok, true
				p.data.ackDBm = dbm
			case ok && !resp && !p.group && o == p.rx:
				o.resp = p // it acknowledges SIFS later
			}
		}
		m.prune(o)
		m.update(o)
	}
	switch {
	case resp:
		if ackHeard {
			m.exchangeDone(p.data.tx, p.data, ackOK)
		}
	case p.group:
		m.groupDone(p)
	default:
		m.unicastDone(p)
		m.airReady(p)
	}
	m.update(tx)
	m.release(p)
}

// prune forgets the ended PPDUs o no longer needs (none of the PPDUs
// still on the air there overlapped them).
func (m *Medium) prune(o *mradio) {
	first := time.Duration(math.MaxInt64)
	for i := range o.sigs {
		if !o.sigs[i].ended {
			first = min(first, o.sigs[i].p.start)
		}
	}
	n := 0
	for i := range o.sigs {
		s := o.sigs[i]
		if s.ended && s.p.end <= first {
			m.release(s.p)
			continue
		}
		o.sigs[n] = s
		n++
	}
	clear(o.sigs[n:])
	o.sigs = o.sigs[:n]
}

// judge decodes the PPDU o was locked on (o.sigs[i]) and says whether it
// got anything: a data PPDU's receiver records which MPDUs it decoded, a
// group frame is delivered, a third radio sets its NAV; a header decoded
// with nothing after it starts EIFS.
func (m *Medium) judge(o *mradio, p *ppdu, i int) bool {
	s := &o.sigs[i]
	ck := m.chunksAt(o, i, p.start, p.end)
	hdrOK := o.rxHdr > 0
	if o.rxHdr == 0 {
		hdrOK = m.draw(m.headerSuccess(p, ck))
	}
	got := false
	if hdrOK {
		lg := m.chunkLogs(ck, p.rate)
		payA, payB := p.payA, p.payB
		switch {
		case p.data != nil: // an ACK or Block Ack
			got = m.draw(prob(windowLog(ck, lg, payA, payB, p.payBits)))
		case p.group:
			got = m.draw(prob(windowLog(ck, lg, payA, payB, p.payBits)))
			if got {
				f := p.frames[0]
				m.out(p.end, Reception{At: p.end, To: o.id, Frame: f, SignalDBm: s.dbm, Rate: p.rate})
				o.stats.RxBytes += uint64(f.Len())
				p.nOK = 1
			}
		case o == p.rx: // the receiver: MPDU by MPDU
			p.rxDBm = s.dbm
			m.eachMPDU(p, ck, lg, payA, payB, func(k int, lgs float64) {
				if m.draw(prob(lgs)) {
					p.ok[k] = true
					p.nOK++
				}
			})
			got = p.nOK > 0
		default: // a third radio: anything decoded sets its NAV
			fail := 1.0
			m.eachMPDU(p, ck, lg, payA, payB, func(_ int, lgs float64) { fail *= 1 - prob(lgs) })
			got = m.draw(1 - fail)
			if got {
				o.navEnd = max(o.navEnd, p.end+p.ch.mac.sifsAfter()+p.ackTime)
			}
		}
	}
	switch {
	case got:
		o.eifsEnd = 0
	case hdrOK:
		o.eifsEnd = p.end + p.ch.eifsExtra
	}
	return got
}

// eachMPDU calls f with the log success probability of each MPDU of p: a
// lone MPDU over the whole payload with ns-3's bit count (N_SYM × N_DBPS),
// an A-MPDU's subframes over their share of the payload's time, 8 bits a
// byte.
func (m *Medium) eachMPDU(p *ppdu, ck []chunk, lg []float64, a, b time.Duration, f func(k int, lgs float64)) {
	if len(p.frames) == 1 {
		f(0, windowLog(ck, lg, a, b, p.payBits))
		return
	}
	flat := len(ck) == 1
	span := int64(b - a)
	off := 0
	for k, fr := range p.frames {
		sub := delimiterBytes + fr.Len()
		bits := float64(8 * fr.Len())
		if flat {
			f(k, lg[0]*bits)
		} else {
			wa := a + time.Duration(span*int64(off)/int64(p.psdu))
			wb := a + time.Duration(span*int64(off+sub)/int64(p.psdu))
			f(k, windowLog(ck, lg, wa, wb, bits))
		}
		off += (sub + 3) / 4 * 4
	}
}

// headerSuccess is the PHY header's success probability over chunks ck.
func (m *Medium) headerSuccess(p *ppdu, ck []chunk) float64 {
	lg := m.chunkLogs(ck, p.hdrRate)
	return prob(windowLog(ck, lg, p.hdrA, p.hdrB, p.hdrBits))
}

// chunksAt splits [a, b) at o, for o.sigs[i], wherever another PPDU o
// hears starts or ends, with the SINR of each piece.
func (m *Medium) chunksAt(o *mradio, i int, a, b time.Duration) []chunk {
	s := &o.sigs[i]
	bp := append(m.bp[:0], a, b)
	for j := range o.sigs {
		q := o.sigs[j].p
		if j == i || q.start >= b || q.end <= a {
			continue
		}
		if q.start > a {
			bp = append(bp, q.start)
		}
		if q.end < b {
			bp = append(bp, q.end)
		}
	}
	ck := m.ck[:0]
	if len(bp) == 2 {
		ck = append(ck, chunk{a, b, s.mw / s.noise})
	} else {
		slices.Sort(bp)
		bp = slices.Compact(bp)
		for k := 0; k+1 < len(bp); k++ {
			x, y := bp[k], bp[k+1]
			interf := 0.0
			for j := range o.sigs {
				if q := o.sigs[j].p; j != i && q.start <= x && q.end >= y {
					interf += o.sigs[j].mw
				}
			}
			ck = append(ck, chunk{x, y, s.mw / (s.noise + interf)})
		}
	}
	m.bp, m.ck = bp, ck
	return ck
}

// chunkLogs is, per chunk, the log of the per-bit success probability at
// rate r (0: no errors; −Inf: nothing survives).
func (m *Medium) chunkLogs(ck []chunk, r Rate) []float64 {
	lg := m.lg[:0]
	for _, c := range ck {
		e := m.bitError(r, c.sinr)
		switch {
		case e <= 0:
			lg = append(lg, 0)
		case e >= 1:
			lg = append(lg, math.Inf(-1))
		default:
			lg = append(lg, math.Log1p(-e))
		}
	}
	m.lg = lg
	return lg
}

// windowLog is the log success probability of bits spread evenly over
// [a, b): each chunk's per-bit log times the bits in its share.
func windowLog(ck []chunk, lg []float64, a, b time.Duration, bits float64) float64 {
	if bits <= 0 || b <= a {
		return 0
	}
	sum := 0.0
	for k, c := range ck {
		if lg[k] == 0 {
			continue
		}
		x, y := max(c.a, a), min(c.b, b)
		if y <= x {
			continue
		}
		if math.IsInf(lg[k], -1) {
			return lg[k]
		}
		sum += lg[k] * bits * float64(y-x) / float64(b-a)
	}
	return sum
}

// prob is exp(lg), a log probability (1 without calling exp for 0).
func prob(lg float64) float64 {
	if lg == 0 {
		return 1
	}
	return math.Exp(lg)
}

// draw is true with probability pr.
func (m *Medium) draw(pr float64) bool {
	switch {
	case pr >= 1:
		return true
	case pr <= 0:
		return false
	}
	return m.rng.Float64() < pr
}

// unicastDone: a unicast data PPDU ended. Its receiver gets what it
// decoded and acknowledges it SIFS later; the transmitter waits for that
// until its ACK timeout.
func (m *Medium) unicastDone(p *ppdu) {
	tx, mac := p.tx, p.ch.mac
	if p.nOK > 0 {
		rr := p.rx
		for k, f := range p.frames {
			if p.ok[k] {
				m.out(p.end, Reception{At: p.end, To: p.rxID, Frame: f, SignalDBm: p.rxDBm, Rate: p.rate})
				tx.stats.Delivered++
				tx.stats.TxBytes += uint64(f.Len())
				rr.stats.RxBytes += uint64(f.Len())
			}
		}
		p.respAt, p.respDur, p.respRate = p.end+mac.sifsAfter(), p.ackTime, ControlRate(p.rate, mac.BasicRates)
		m.hold(p)
		m.push(event{at: p.respAt, kind: evRespond, p: p})
	}
	if p.collided {
		tx.stats.Collisions++
	} else {
		tx.stats.Errors += uint64(len(p.frames) - p.nOK)
	}
	m.hold(p)
	m.push(event{at: p.end + mac.ACKTimeout(p.rate), kind: evTimeout, p: p})
}

// respond: SIFS after p, its receiver sends the ACK or Block Ack.
func (m *Medium) respond(p *ppdu) {
	rr := p.rx
	if rr.resp == p {
		rr.resp = nil
	}
	q := m.newPPDU()
	q.data = p // keeps the event's hold on p
	q.rate = p.respRate
	q.psdu = ACKBytes
	if len(p.frames) > 1 {
		q.psdu = BlockAckBytes
	}
	q.end = p.respDur
	m.startTx(rr, p.ch, q)
}

// timeout: p's transmitter has heard no acknowledgement start (or could
// not decode its PHY header): the attempt failed.
func (m *Medium) timeout(p *ppdu) {
	a := p.tx
	if a.x == p {
		if q := a.rx; q != nil && q.data == p {
			if a.rxHdr == 0 {
				i := a.sigOf(q)
				a.rxHdr = -1
				if m.draw(m.headerSuccess(q, m.chunksAt(a, i, q.start, q.end))) {
					a.rxHdr = 1
				}
			}
			if a.rxHdr > 0 {
				m.release(p)
				return // receiving the acknowledgement: its end decides
			}
		}
		m.exchangeDone(a, p, false)
	}
	m.release(p)
}

// exchangeDone settles a's unicast PPDU p: acknowledged (the MPDUs the
// receiver decoded leave the queue, the others count an attempt, CW
// resets) or not (every MPDU counts an attempt, CW doubles).
func (m *Medium) exchangeDone(a *mradio, p *ppdu, acked bool) {
	if a.x != p {
		return
	}
	a.x = nil
	e := &a.acs[p.ac]
	if acked {
		for k, f := range p.frames {
			if p.ok[k] {
				f.counts[f.stage]++
				f.done = true
				m.status(p, Status{At: m.now, Frame: f, Acked: true, Counts: f.counts, AckSignalDBm: p.ackDBm})
			} else {
				m.chargeAttempt(a, p, f)
			}
		}
		popDone(e)
		e.cw = p.ch.par[p.ac].CWMin
	} else {
		a.stats.NoResponse++
		for _, f := range p.frames {
			m.chargeAttempt(a, p, f)
		}
		popDone(e)
		if len(e.q) > 0 && e.q[0] == p.frames[0] {
			e.cw = min(2*(e.cw+1)-1, p.ch.par[p.ac].CWMax)
		} else {
			e.cw = p.ch.par[p.ac].CWMin
		}
	}
	e.bo, e.boActive = m.rng.IntN(e.cw+1), true // (post-)backoff
	m.release(p)
	m.update(a)
}

// groupDone: a group (or no-ack) frame ended; radios on its channel that
// decoded it have it, radios elsewhere (the kernel drops it unless they
// are tuned to it; a scanning station is on no channel of the medium's
// yet) get it by the SNR alone. One attempt, reported transmitted.
func (m *Medium) groupDone(p *ppdu) {
	tx, head := p.tx, p.frames[0]
	for _, o := range m.sortedRadios() {
		// a multi-link radio with a link on the channel heard it there
		if o.id == tx.id || o.ch == p.ch || o.links[p.ch.freq] != nil {
			continue
		}
		l := m.cfg.Link(tx.id, o.id)
		if !l.OK || !m.cfg.NoDetection && (l.RxDBm < m.detectDBm || DBToLinear(l.SNRdB) < m.detectSNR) {
			continue
		}
		if m.draw(1 - PER(p.rate, head.Len(), DBToLinear(l.SNRdB))) {
			m.out(p.end, Reception{At: p.end, To: o.id, Frame: head, SignalDBm: l.RxDBm, Rate: p.rate})
			o.stats.RxBytes += uint64(head.Len())
			p.nOK = 1
		}
	}
	if p.collided {
		tx.stats.Collisions++
	}
	p.ok[0] = p.nOK > 0
	m.airReady(p)
	head.counts[head.stage]++
	head.done = true
	m.status(p, Status{At: p.end, Frame: head, Acked: true, Counts: head.counts})
	e := &tx.acs[p.ac]
	popDone(e)
	e.cw = p.ch.par[p.ac].CWMin
	e.bo, e.boActive = m.rng.IntN(e.cw+1), true // post-backoff
}

// chargeAttempt counts a failed attempt of f (in p); at the end of its
// retry chain it fails (status not acked) and leaves the queue.
func (m *Medium) chargeAttempt(r *mradio, p *ppdu, f *MediumFrame) {
	f.counts[f.stage]++
	f.tries++
	if f.tries >= f.Rates[f.stage].Count {
		f.stage++
		f.tries = 0
	}
	if f.stage >= len(f.Rates) || f.Rates[f.stage].Count == 0 {
		r.stats.Failed++
		f.done = true
		m.status(p, Status{At: m.now, Frame: f, Acked: false, Counts: f.counts})
		f.stage = len(f.Rates) - 1
	}
}

// popDone removes the frames that left e's queue.
func popDone(e *edcaf) {
	q := e.q[:0]
	for _, f := range e.q {
		if !f.done {
			q = append(q, f)
		}
	}
	clear(e.q[len(q):])
	e.q = q
}

// status queues st, a status of a frame sent in p — after p's Air event,
// if that is still waiting for its turn.
func (m *Medium) status(p *ppdu, st Status) {
	if p.air {
		p.held = append(p.held, st)
		return
	}
	m.out(st.At, st)
}

// airReady: p has ended and its Air event is complete. The complete ones
// at the head of the queue go out, in start order.
func (m *Medium) airReady(p *ppdu) {
	if !p.air {
		return
	}
	p.airDone = true
	n := 0
	for n < len(m.airq) && m.airq[n].airDone {
		m.emitAir(m.airq[n])
		n++
	}
	if n > 0 {
		k := copy(m.airq, m.airq[n:])
		clear(m.airq[k:])
		m.airq = m.airq[:k]
	}
}

// emitAir queues p's Air event, then the statuses held for it, and drops
// the queue's hold on p.
func (m *Medium) emitAir(p *ppdu) {
	a := Air{At: p.start, Dur: p.end - p.start, Radio: p.tx.id, Freq: p.ch.freq, Rate: p.rate,
		Frames: slices.Clone(p.frames), OK: slices.Clone(p.ok), Collided: p.collided && p.nOK == 0,
		BlockAck: len(p.frames) > 1}
	if p.respDur > 0 {
		a.RespAt, a.RespDur, a.RespFrom, a.RespRate = p.respAt, p.respDur, p.rxID, p.respRate
	}
	p.air = false
	m.out(m.now, a)
	for _, st := range p.held {
		m.out(m.now, st)
	}
	clear(p.held)
	p.held = p.held[:0]
	m.release(p)
}
