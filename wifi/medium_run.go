package wifi

import (
	"context"
	"fmt"
	"io"
	"math"
	"runtime"
	"time"

	"github.com/emuctl/emuctl/wifi/model"
)

// MediumRadio is one radio the medium serves.
type MediumRadio struct {
	Node string `json:"node"`
	// Perm is the radio's permanent address (HWSIM_ATTR_PERM_ADDR at
	// creation): the transmitter and receiver address of its frames.
	Perm [6]byte `json:"perm"`
	// Addrs are its interfaces' MAC addresses, when known in advance.
	Addrs [][6]byte `json:"addrs,omitempty"`
	// Pos is the node's position in metres.
	Pos [3]float64 `json:"pos"`
	// TxPowerDBm is its transmit power.
	TxPowerDBm float64 `json:"txpower_dbm"`
	// GainDBi is its antenna's gain, on transmission and reception.
	GainDBi float64 `json:"gain_dbi,omitempty"`
	// Fixed replaces the driver's rate chain with one rate (nil: the
	// driver's rate control, minstrel, chooses and sees every attempt;
	// on the engine backend, the ideal rate for the link's SNR).
	Fixed *model.Rate `json:"fixed,omitempty"`
	// MLO: a multi-link radio (an 802.11be MLD, one mac80211_hwsim radio
	// for all its links): every channel it uses is a link with its own
	// channel access on the medium (model.Medium.AddMultiLinkRadio).
	// Links are its links' channels: the fixed rate on each (Fixed does
	// not apply), or without one the ideal rate for the link's width and
	// SNR — hwsim's multi-link radios have no rate control, so mac80211
	// names no rate for their data frames.
	MLO   bool         `json:"mlo,omitempty"`
	Links []MediumLink `json:"links,omitempty"`

	// The engine backend's radios (ether.go): Port is the radio's veth
	// end in the medium namespace, MAC its node interface's address (the
	// radio's address on the air), AP the index of its access point in
	// the radios (-1: it is one), and its BSS's channel and framing.
	Port     string  `json:"port,omitempty"`
	MAC      [6]byte `json:"mac,omitzero"`
	AP       int     `json:"ap,omitempty"`
	Mode     string  `json:"mode,omitempty"` // g, n, ac, ax (be is timed as ax)
	FreqMHz  int     `json:"freq_mhz,omitempty"`
	WidthMHz int     `json:"width_mhz,omitempty"`
	// QoS: the BSS uses QoS data frames (WMM; every mode but a, b, g).
	QoS bool `json:"qos,omitempty"`
	// ShortPreamble: an 802.11b BSS's 2-11 Mbit/s frames use the short
	// PLCP preamble.
	ShortPreamble bool `json:"short_preamble,omitempty"`
	// ESS: a station of a network of several access points (one SSID)
	// roams between them (their radio indexes, AP among them) as Roam
	// says (ether_roam.go).
	ESS  []int    `json:"ess,omitempty"`
	Roam *Roaming `json:"roam,omitempty"`
	// Adhoc: a member of an ad hoc (IBSS) network of the engine backend
	// (1, 2, ...: which network; AP is -1, as an access point's, and it
	// has its own rate table): it sends straight to the members it
	// addresses and hears only them (ether_adhoc.go).
	Adhoc int `json:"adhoc,omitempty"`
	// CryptoBytes are added to every data MPDU (CCMP header and MIC: 16
	// with WPA2 or WPA3).
	CryptoBytes int `json:"crypto_bytes,omitempty"`
	// Gone: a radio removed while the medium ran (EtherMedium.RemoveRadio):
	// its slot stays, because ports are named by their index.
	Gone bool `json:"gone,omitempty"`
}

// MediumLink is one link of a multi-link radio.
type MediumLink struct {
	FreqMHz  int         `json:"freq_mhz"` // primary 20 MHz channel
	WidthMHz int         `json:"width_mhz"`
	Fixed    *model.Rate `json:"fixed,omitempty"`
}

// MediumConfig is what the medium of one lab models.
type MediumConfig struct {
	Radios        []MediumRadio  `json:"radios"`
	PathLoss      model.PathLoss `json:"path_loss"`
	NoiseFigureDB float64        `json:"noise_figure_db"`
	// SNR and Loss override a pair of nodes (both directions): a fixed
	// SNR in dB, or extra loss in dB on top of the path loss.
	SNR   map[[2]string]float64 `json:"-"`
	Loss  map[[2]string]float64 `json:"-"`
	AMPDU bool                  `json:"ampdu"`
	// RetryLimit caps a fixed rate's attempts (the driver's chain
	// otherwise); 0: 11.
	RetryLimit int `json:"retry_limit"`
	// QueueLimit bounds each radio's backlog per access category; 0: 128.
	QueueLimit int    `json:"queue_limit"`
	Seed       uint64 `json:"seed"`
}

func (c *MediumConfig) retryLimit() int {
	if c.RetryLimit > 0 {
		return c.RetryLimit
	}
	return 11
}

// Link is what tx's frames look like at rx: their link budget (both
// antennas' gains, a pair's extra loss), or a pair's fixed SNR.
func (c *MediumConfig) Link(tx, rx int) model.Link {
	a, b := c.Radios[tx], c.Radios[rx]
	if a.Gone || b.Gone {
		return goneLink // off the medium (medium_change.go)
	}
	lb := c.budget(a)
	lb.RxGainDBi = b.GainDBi
	if v, ok := pairLookup(c.SNR, a.Node, b.Node); ok {
		return lb.AtSNR(v)
	}
	lb.ExtraLossDB, _ = pairLookup(c.Loss, a.Node, b.Node)
	l, _ := lb.Between(a.Pos, b.Pos)
	return l
}

// budget is radio a's link budget as a transmitter, towards a receiver
// with an isotropic antenna. The noise is counted over 20 MHz whatever
// the channels' widths: a Link serves every PPDU between two radios
// (model.LinkBudget.NoiseWidthMHz says what that means for wide ones).
func (c *MediumConfig) budget(a MediumRadio) model.LinkBudget {
	return model.LinkBudget{TxPowerDBm: a.TxPowerDBm, TxGainDBi: a.GainDBi, PathLoss: c.PathLoss,
		NoiseFigureDB: c.NoiseFigureDB, NoiseWidthMHz: 20}
}

func pairLookup(m map[[2]string]float64, a, b string) (float64, bool) {
	if v, ok := m[[2]string{a, b}]; ok {
		return v, true
	}
	v, ok := m[[2]string{b, a}]
	return v, ok
}

// MediumStats is a snapshot of a running medium.
type MediumStats struct {
	Radios map[string]model.RadioStats `json:"radios"` // by node
	// PerLink: a multi-link radio's counters per channel (MHz) it used,
	// each link's own (its Radios entry is their sum).
	PerLink map[string]map[int]model.RadioStats `json:"per_link,omitempty"`
	// Frames from the kernel, deliveries and statuses sent, error
	// replies (deliveries the kernel refused), unknown transmitters.
	FramesIn   uint64 `json:"frames_in"`
	Deliveries uint64 `json:"deliveries"`
	Statuses   uint64 `json:"statuses"`
	NLErrors   uint64 `json:"nl_errors"`
	Unknown    uint64 `json:"unknown_transmitters"`
	// NoRate counts frames whose retry chain named no rate the model
	// knows (sent at the band's lowest rate instead).
	NoRate uint64 `json:"no_rate"`
	// ADDBADropped counts Block Ack agreement requests not delivered.
	ADDBADropped uint64 `json:"addba_dropped"`
	// BeaconsHeld counts beacons held for their radio's TBTT
	// (medium_tbtt.go).
	BeaconsHeld uint64 `json:"beacons_held,omitempty"`
	// Reordered counts frames held for an earlier one of their sender
	// (the receiver's Block Ack reorder buffer, medium_reorder.go).
	Reordered uint64 `json:"reordered,omitempty"`
	// LateMeanUs / LateMaxUs: how late the medium acted on its events
	// (real time behind medium time).
	LateMeanUs float64 `json:"late_mean_us"`
	LateMaxUs  float64 `json:"late_max_us"`
	// LateSumUs over LateEvents is LateMeanUs: the difference of two
	// snapshots gives the mean over the time between them.
	LateSumUs  float64       `json:"late_sum_us,omitempty"`
	LateEvents uint64        `json:"late_events,omitempty"`
	Uptime     time.Duration `json:"uptime_ns"`
	// Engine backend: frames for no associated station (dropped, as an
	// access point drops them), frames the kernel would not send, and
	// frames lost after the retry chain.
	NoStation  uint64 `json:"no_station,omitempty"`
	SendErrors uint64 `json:"send_errors,omitempty"`
	Lost       uint64 `json:"lost,omitempty"`
	// Duplicates: second copies of frames whose ACK was lost, dropped by
	// their receiver (engine backend; mac80211 does it on hwsim).
	Duplicates uint64 `json:"duplicates,omitempty"`
	// Positions and Links: where the radios are, and what each one's
	// frames look like at each other one, now.
	Positions map[string][3]float64 `json:"positions,omitempty"`
	Links     []LinkInfo            `json:"links,omitempty"`
	// Ranges: how far each access point reaches (MediumConfig.RangeM),
	// in metres; engine backend only.
	Ranges map[string]float64 `json:"ranges_m,omitempty"`
	// Capture: PPDUs written to and dropped from a running capture.
	CaptureDrops uint64 `json:"capture_drops,omitempty"`
	// Engine backend, networks of several access points: each station's
	// access point now, and the handovers so far (the last 1000).
	Assoc     map[string]string `json:"assoc,omitempty"`
	Handovers []Handover        `json:"handovers,omitempty"`
}

// LinkInfo is one direction between two radios.
type LinkInfo struct {
	From   string  `json:"from"`
	To     string  `json:"to"`
	RxDBm  float64 `json:"rx_dbm"`
	SNRdB  float64 `json:"snr_db"`
	Detect bool    `json:"detect"` // above the receiver's sensitivity
}

// MediumServer runs a lab's medium for mac80211_hwsim radios: the
// kernel's frames in, the model's receptions and statuses out, in real
// time.
type MediumServer struct {
	*mediumCore
	sock   *MediumSocket
	perm   map[[6]byte]int
	band   map[int]model.Band // radio → band of its last frame
	chains map[uint64]chain   // medium cookie → the kernel frame's chain
	cookie uint64
	ideal  map[[2]int]*idealTable // by {band, width}: multi-link radios' rates
	reo    *reorder[hwRx]         // the receivers' reorder buffers (medium_reorder.go)
	// roam: stations of networks of several APs, their APs' addresses,
	// and the handovers seen (medium_roam.go)
	roam      map[int]*hwRoam
	bssids    map[[6]byte]int
	handovers []Handover
	// held: beacons waiting for their radio's TBTT (medium_tbtt.go)
	held []heldBeacon
	// macs: each band's MAC parameters (AddRadio learns new bands')
	macs bandMACs
}

// NewMediumServer prepares a medium on a registered socket.
func NewMediumServer(sock *MediumSocket, cfg MediumConfig) (*MediumServer, error) {
	// each band's channel timing is its BSSs' mode's (bandMACs)
	macs := bandMACs{}
	for _, r := range cfg.Radios {
		if r.Mode != "" && r.FreqMHz != 0 && !r.MLO {
			macs.learn(r)
		}
	}
	core, err := newCore(cfg, model.MediumConfig{
		MAC:   macs.of,
		AMPDU: cfg.AMPDU,
		Seed:  cfg.Seed,
	})
	if err != nil {
		return nil, err
	}
	s := &MediumServer{mediumCore: core, sock: sock, perm: map[[6]byte]int{}, band: map[int]model.Band{}, chains: map[uint64]chain{},
		ideal: map[[2]int]*idealTable{}, reo: newReorder[hwRx](), macs: macs}
	for i, r := range cfg.Radios {
		s.perm[r.Perm] = i
		if r.MLO {
			s.m.AddMultiLinkRadio(i)
		} else {
			s.m.AddRadio(i, 0)
		}
		s.m.LearnAddr(r.Perm, i)
		for _, a := range r.Addrs {
			s.m.LearnAddr(a, i)
		}
	}
	s.watchRoaming()
	s.next = s.nextBeacon
	return s, nil
}

// Run serves until ctx ends or the socket fails; the medium's failure is
// the lab's (the kernel would silently fall back to instant delivery).
func (s *MediumServer) Run(ctx context.Context) error {
	return s.run(ctx, s.schedule, func() {})
}

// schedule is the medium: one locked OS thread with 1 ns timer slack that
// polls the hwsim socket itself and sleeps in ppoll (not Go's netpoller,
// which rounds sub-millisecond timeouts up to 1 ms and wakes goroutines
// late on a busy host) until the next event or a frame.
func (s *MediumServer) schedule(ctx context.Context) error {
	realtime()
	defer runtime.UnlockOSThread()
	var bt Batch
	var in []*HwFrame
	var addrs []*HwAddr
	var sendErr error
	deliver := func(d hwRx) {
		if err := s.sock.Deliver(&bt, d.rx, d.data, d.rate, d.sig, d.freq); err != nil {
			sendErr = err
		}
		s.stats.Deliveries++
	}
	emit := func(now time.Duration) func(any) {
		return func(ev any) {
			switch v := ev.(type) {
			case model.Air:
				s.record(v)
			case model.Reception:
				s.late(now - v.At)
				rx := s.cfg.Radios[v.To].Perm
				b := s.band[v.Frame.Radio]
				if v.Frame.Freq != 0 {
					b = bandOfFreq(v.Frame.Freq)
				}
				rate, sig := RxRateIndex(v.Rate, b), int(math.Round(v.SignalDBm))
				d := hwRx{rx, v.Frame.Data, rate, sig, v.Frame.Freq}
				if !s.reo.received(now, v.Frame, d, deliver) {
					return // held: an earlier frame of its sender is still on its way
				}
				deliver(d)
			case model.Status:
				s.late(now - v.At)
				defer s.reo.status(v.Frame, deliver) // after the status: a frame it released follows it
				hf := v.Frame.Cookie
				orig := s.chains[hf]
				delete(s.chains, hf)
				var rates [4]HwRate
				for i := range rates {
					rates[i] = HwRate{Idx: -1}
					if v.Counts[i] > 0 {
						rates[i] = HwRate{Idx: orig.rates[i].Idx, Count: uint8(min(v.Counts[i], 255))}
					}
				}
				if orig.fixed {
					n := v.Counts[0] + v.Counts[1] + v.Counts[2] + v.Counts[3]
					rates = [4]HwRate{{Idx: orig.rates[0].Idx, Count: uint8(min(n, 255))}, {Idx: -1}, {Idx: -1}, {Idx: -1}}
				}
				flags := orig.flags &^ hwsimTxStatAck
				if v.Acked {
					flags |= hwsimTxStatAck
				}
				tx := s.cfg.Radios[v.Frame.Radio].Perm
				if err := s.sock.TxInfo(&bt, tx, flags, orig.cookie, int(math.Round(v.AckSignalDBm)), rates); err != nil {
					sendErr = err
				}
				s.stats.Statuses++
			}
		}
	}
	sockFd := s.sock.Fd()
	for {
		if ctx.Err() != nil {
			return nil
		}
		in, addrs = in[:0], addrs[:0]
		for {
			msgs, nerr, more, err := s.sock.TryReceive(sockFd)
			if err != nil {
				return fmt.Errorf("wifi medium: %w", err)
			}
			s.mu.Lock()
			s.stats.NLErrors += uint64(nerr)
			s.mu.Unlock()
			for _, v := range msgs {
				switch x := v.(type) {
				case *HwFrame:
					in = append(in, x)
				case *HwAddr:
					addrs = append(addrs, x)
				}
			}
			if !more {
				break
			}
		}
		now := time.Since(s.start)
		s.mu.Lock()
		for _, a := range addrs {
			if i, ok := s.perm[a.Radio]; ok && a.Add {
				s.m.LearnAddr(a.Addr, i)
			}
		}
		s.m.Advance(now, emit(now))
		s.releaseBeacons(now)
		for _, f := range in {
			s.stats.FramesIn++
			if i, ok := s.perm[f.Transmitter]; ok && s.holdBeacon(now, i, f) {
				continue
			}
			if isADDBARequest(f.Data) {
				// No Block Ack agreement is ever made: with one, mac80211
				// marks every data frame as part of an A-MPDU and its
				// rate control (minstrel_ht) ignores statuses that lack
				// A-MPDU lengths, which hwsim cannot convey — rates then
				// never climb from the lowest. The request is reported
				// sent and not delivered (the originator times out and
				// sends frames singly); the medium still aggregates
				// queued frames for airtime (MediumConfig.AMPDU).
				s.stats.ADDBADropped++
				rates := [4]HwRate{{Idx: f.Rates[0].Idx, Count: 1}, {Idx: -1}, {Idx: -1}, {Idx: -1}}
				if err := s.sock.TxInfo(&bt, f.Transmitter, f.Flags|hwsimTxStatAck, f.Cookie, -50, rates); err != nil {
					sendErr = err
				}
				continue
			}
			s.submit(now, f)
		}
		s.m.Advance(now, emit(now))
		s.reo.expire(now, deliver)
		s.stats.Reordered = s.reo.Held
		s.mu.Unlock()
		if err := s.sock.Flush(&bt); err != nil {
			return err
		}
		if sendErr != nil {
			return sendErr
		}
		// Sleep until the next event or a frame.
		if err := s.wait(sockFd); err != nil {
			return err
		}
	}
}

type chain struct {
	rates  [4]HwRate
	flags  uint32
	cookie uint64
	fixed  bool
}

// submit turns a kernel frame into a medium frame (called with mu held).
func (s *MediumServer) submit(now time.Duration, f *HwFrame) {
	i, ok := s.perm[f.Transmitter]
	if !ok {
		// A radio emuctl did not announce (should not happen: one lab,
		// one netgroup). Give it an identity so its frames still cost
		// airtime.
		i = len(s.cfg.Radios)
		s.cfg.Radios = append(s.cfg.Radios, MediumRadio{Node: fmt.Sprintf("radio-%x", f.Transmitter), Perm: f.Transmitter, TxPowerDBm: model.DefaultTxPowerDBm})
		s.perm[f.Transmitter] = i
		s.m.AddRadio(i, 0)
		s.m.LearnAddr(f.Transmitter, i)
		s.stats.Unknown++
	}
	b := bandOfFreq(f.Freq)
	s.band[i] = b
	if s.roam != nil {
		s.sawFrame(now, i, f.Data)
	}
	mf := &model.MediumFrame{Radio: i, Cookie: s.nextCookie(f), Freq: f.Freq, Data: f.Data, NoAck: f.Flags&hwsimTxCtlNoAck != 0}
	c := chain{rates: f.Rates, flags: f.Flags, cookie: f.Cookie}
	// A fixed rate applies to unicast data frames, as `iw set bitrates`
	// does; management and group frames keep the driver's rates.
	unicastData := len(f.Data) >= 10 && (f.Data[0]>>2)&3 == 2 && f.Data[4]&1 == 0
	rc := &s.cfg.Radios[i]
	fx := rc.Fixed
	if rc.MLO {
		fx = rc.linkFixed(f.Freq)
	}
	if fx != nil && unicastData {
		lim := s.cfg.retryLimit()
		mf.Rates[0] = model.TxRate{Rate: *fx, Count: lim}
		c.fixed = true
	} else {
		k := 0
		for _, r := range f.Rates {
			if x, ok := RateOf(r, b); ok {
				mf.Rates[k] = model.TxRate{Rate: x, Count: int(r.Count)}
				c.rates[k] = r
				k++
			}
		}
		if k == 0 && rc.MLO {
			// hwsim's multi-link radios have no rate control: mac80211
			// names no rate for their data frames. Unicast goes at the
			// ideal rate for the link's SNR (the engine backend's
			// choice) with the retry limit, group frames once at the
			// lowest basic rate.
			x, n := lowestBasic(b), 1
			if f.Data[4]&1 == 0 {
				n = s.cfg.retryLimit()
				if r, ok := s.idealFor(i, f, b); ok {
					x = r
				}
			}
			mf.Rates[0] = model.TxRate{Rate: x, Count: n}
			c.rates[0] = HwRate{Idx: 0, Count: 1}
			c.fixed = true
			k = 1
		}
		if k == 0 { // no usable rate: the band's lowest
			s.stats.NoRate++
			if s.stats.NoRate <= 5 {
				fmt.Printf("wifi medium: frame from %s with no known rate: %+v\n", s.cfg.Radios[i].Node, f.Rates)
			}
			low := model.Rate{Class: model.OFDM, Kbps: 6000}
			if b == model.Band2G4 {
				low = model.Rate{Class: model.DSSS, Kbps: 1000}
			}
			mf.Rates[0] = model.TxRate{Rate: low, Count: 1}
			c.rates[0] = HwRate{Idx: 0, Count: 1}
		}
	}
	s.chains[mf.Cookie] = c
	if unicastData {
		// delivered in the order sent (medium_reorder.go)
		var ra [6]byte
		copy(ra[:], f.Data[4:10])
		if rx, ok := s.m.RadioOf(ra); ok {
			s.reo.track(mf, rx)
		}
	}
	if err := s.m.Submit(now, mf); err != nil {
		delete(s.chains, mf.Cookie)
		s.reo.untrack(mf)
		s.stats.NLErrors++
	}
}

// hwRx is one frame for hwsim to hand to a radio.
type hwRx struct {
	rx        [6]byte // the receiving radio's permanent address
	data      []byte
	rate      uint32
	sig, freq int
}

// linkFixed is a multi-link radio's fixed rate on the link at freq.
func (r *MediumRadio) linkFixed(freq int) *model.Rate {
	for _, l := range r.Links {
		if l.FreqMHz == freq {
			return l.Fixed
		}
	}
	return nil
}

// idealFor is the ideal rate (ns-3's IdealWifiManager, as on the engine
// backend) for radio i's unicast frame f on band b: the fastest of the
// link's HE rates (one spatial stream, its width) whose bit error rate at
// the SNR towards the receiver is ≤ 1e-6.
func (s *MediumServer) idealFor(i int, f *HwFrame, b model.Band) (model.Rate, bool) {
	var ra [6]byte
	copy(ra[:], f.Data[4:10])
	rx, ok := s.m.RadioOf(ra)
	if !ok {
		return model.Rate{}, false
	}
	width := 20
	for _, l := range s.cfg.Radios[i].Links {
		if l.FreqMHz == f.Freq && l.WidthMHz > 0 {
			width = l.WidthMHz
		}
	}
	key := [2]int{int(b), width}
	t := s.ideal[key]
	if t == nil {
		mode := s.cfg.Radios[i].Mode
		if mode == "" {
			mode = "ax"
		}
		t = newIdealTable(mode, b, width)
		s.ideal[key] = t
	}
	return t.pick(s.link(i, rx).SNRdB), true
}

func (s *MediumServer) nextCookie(*HwFrame) uint64 {
	s.cookie++
	return s.cookie
}

func bandOfFreq(freq int) model.Band {
	switch {
	case freq < 3000:
		return model.Band2G4
	case freq > 5935:
		return model.Band6G
	}
	return model.Band5G
}

// isADDBARequest reports whether an MPDU is an ADDBA Request (action
// frame, category Block Ack 3, action 0).
func isADDBARequest(d []byte) bool {
	return len(d) >= 26 && d[0] == 0xd0 && d[24] == 3 && d[25] == 0
}

// Capture writes the medium's PPDUs as pcapng with radiotap headers (see
// StartCapture): the MPDUs as the radios sent them.
func (s *MediumServer) Capture(w io.Writer, snaplen int) (stop func() (uint64, error), err error) {
	return s.StartCapture(w, snaplen, func(f *model.MediumFrame) []byte { return f.Data })
}
