package wifi

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"runtime"
	"sync"
	"time"

	"github.com/emuctl/emuctl/tc/engine"
	"github.com/emuctl/emuctl/wifi/model"
	"golang.org/x/sys/unix"
)

// The engine backend's medium: where the kernel has no mac80211_hwsim,
// every access point and station gets a veth pair instead of a radio —
// the node's wireless interface on one end, a port in the lab's medium
// namespace on the other — and the medium carries Ethernet frames between
// the ports as 802.11 data frames: the same model (airtime, EDCA
// contention, collisions, per-attempt errors from the SNR, retries,
// A-MPDU, ACK and Block Ack airtime) as the hwsim medium, with the
// infrastructure BSS's forwarding done here as mac80211 would do it in an
// access point: a station sends every frame to its AP (to-DS, acknowledged
// unicast), the AP relays frames between its own stations and re-sends
// group frames to them; it drops frames for stations it does not have.
//
// There is no management plane: stations are associated from the start
// (no beacons, probes, authentication or key exchange on the air), so
// security only costs its per-frame overhead (CCMP header and MIC). Rates
// are fixed (rate:) or chosen by ns-3's ideal manager (ideal.go) from the
// link's SNR. A frame that fails its whole retry chain, or finds its
// radio's queue full, is lost.

// EtherMedium runs a lab's engine medium.
type EtherMedium struct {
	*mediumCore
	sock      *etherSock
	byIfindex map[int]int
	byMAC     map[[6]byte]int
	ifindex   []int
	ideal     map[int]*idealTable // by AP radio
	seq       map[seqKey]uint16   // next sequence number
	macs      bandMACs            // each band's MAC parameters (AddRadio learns new bands')

	frames sync.Pool // *eframe
	// relays are frames an AP received that it sends again (group
	// frames, intra-BSS unicast), submitted once Advance has returned:
	// the model is not changed from inside its own event callback.
	relays []relay
	// recent holds the sequence numbers each receiver took lately from
	// each transmitter and TID: a retransmission of a frame whose ACK was
	// lost arrives again, and a receiver drops the copy (as mac80211
	// does, by sequence number).
	recent map[dupKey]*seqWindow
	// reo delivers each transmitter's unicast QoS data in the order sent
	// (the receiver's Block Ack reorder buffer, medium_reorder.go).
	reo *reorder[etherRx]
	// roam: the stations that roam between their network's access
	// points, and the handovers so far (ether_roam.go)
	roam      map[int]*roamer
	roamOrder []int // the roaming stations, in radio order
	handovers []Handover
	// ctl: radios added and removed while it runs (ether_change.go)
	ctl ctlQueue
}

// etherRx is one frame radio to received from radio from; it outlives
// its eframe (which is recycled on its status) while held in order.
type etherRx struct {
	to, from, tid int
	seq           uint16
	unicast       bool // addressed to one radio on the air
	buf           []byte
}

type dupKey struct{ rx, tx, tid int }

// seqKey is a sequence-number space: transmitter, receiver (-1: group
// frames) and TID.
type seqKey struct{ tx, rx, tid int }

// seqWindow remembers the last 64 sequence numbers received.
type seqWindow struct {
	seq [64]uint16
	n   int
}

func (w *seqWindow) seen(seq uint16) bool {
	for i := 0; i < min(w.n, len(w.seq)); i++ {
		if w.seq[i] == seq {
			return true
		}
	}
	w.seq[w.n%len(w.seq)] = seq
	w.n++
	return false
}

type relay struct {
	ap  int
	buf []byte
}

func (s *EtherMedium) resubmit(ap int, b []byte) { s.relays = append(s.relays, relay{ap, b}) }

// advance runs the model up to now and puts the relays it produced on
// the air (their own receptions may relay again only for group frames,
// which a station's AP never receives back).
func (s *EtherMedium) advance(now time.Duration, emit func(any)) {
	s.m.Advance(now, emit)
	for len(s.relays) > 0 {
		rs := s.relays
		s.relays = nil
		for _, r := range rs {
			s.submit(now, r.ap, r.buf)
		}
		s.m.Advance(now, emit)
	}
}

// eframe is one 802.11 data frame of the engine medium. buf is the frame a
// node sent (virtio_net_hdr + Ethernet frame); the station's frame and
// its AP's relay share it, and deliveries queued for sending hold it until
// the socket is flushed (each received frame gets a buffer of its own).
type eframe struct {
	mf   model.MediumFrame
	hdr  [26]byte
	buf  []byte
	from int
}

// Port is one radio's veth end in the medium namespace, with its index.
type Port struct {
	Name    string
	Ifindex int
}

// NewEtherMedium prepares the engine medium on the ports of cfg.Radios
// (ifindex by radio). It opens its socket, so it must be called on a
// thread inside the medium namespace (nsutil); the socket stays there.
func NewEtherMedium(cfg MediumConfig, ifindex []int) (*EtherMedium, error) {
	s, err := newEtherMedium(cfg, ifindex)
	if err != nil {
		return nil, err
	}
	if s.sock, err = openEtherSock(); err != nil {
		unix.Close(s.efd)
		return nil, err
	}
	return s, nil
}

// newEtherMedium is NewEtherMedium without the socket.
func newEtherMedium(cfg MediumConfig, ifindex []int) (*EtherMedium, error) {
	if len(ifindex) != len(cfg.Radios) {
		return nil, fmt.Errorf("engine medium: %d ports for %d radios", len(ifindex), len(cfg.Radios))
	}
	macs := bandMACs{}
	for _, r := range cfg.Radios {
		if r.AP < 0 && r.FreqMHz != 0 {
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
	s := &EtherMedium{mediumCore: core, byIfindex: map[int]int{}, byMAC: map[[6]byte]int{}, ifindex: ifindex,
		ideal: map[int]*idealTable{}, seq: map[seqKey]uint16{}, recent: map[dupKey]*seqWindow{}, reo: newReorder[etherRx](), macs: macs}
	s.frames.New = func() any { return new(eframe) }
	for i, r := range cfg.Radios {
		if r.Gone {
			continue // removed while it ran (ether_change.go): no port
		}
		if r.FreqMHz == 0 {
			return nil, fmt.Errorf("engine medium: radio of %s has no channel", r.Node)
		}
		if r.AP >= len(cfg.Radios) || r.AP == i || (r.AP >= 0 && (cfg.Radios[r.AP].AP >= 0 || cfg.Radios[r.AP].Adhoc > 0)) {
			return nil, fmt.Errorf("engine medium: station %s names no access point", r.Node)
		}
		s.byIfindex[ifindex[i]] = i
		s.byMAC[r.MAC] = i
		s.m.AddRadio(i, r.FreqMHz)
		s.m.LearnAddr(r.MAC, i)
		if r.AP < 0 {
			s.ideal[i] = apIdeal(r)
		}
		for _, j := range r.ESS {
			if j < 0 || j >= len(cfg.Radios) || cfg.Radios[j].AP >= 0 {
				return nil, fmt.Errorf("engine medium: station %s's network names a radio that is no access point", r.Node)
			}
		}
	}
	s.initRoaming()
	s.next = s.nextBack
	return s, nil
}

// bandMACs are each band's MAC parameters, read as the band's first
// channel is opened (model.Medium.channel): its first BSS's mode's
// (802.11b's 20 µs slots, no QoS in legacy modes), 802.11n's where no
// radio says.
type bandMACs map[model.Band]model.MAC

// learn takes r's BSS's parameters for its band, unless the band has some.
func (m bandMACs) learn(r MediumRadio) {
	b := bandOfFreq(r.FreqMHz)
	if _, ok := m[b]; !ok {
		m[b] = model.DefaultMAC(modelMode(r.Mode), b, r.QoS)
	}
}

// of is band b's parameters.
func (m bandMACs) of(b model.Band) model.MAC {
	if x, ok := m[b]; ok {
		return x
	}
	return model.DefaultMAC(model.ModeN, b, true)
}

// apIdeal is an access point's rate table (its BSS's mode, band, width
// and preamble).
func apIdeal(r MediumRadio) *idealTable {
	t := newIdealTable(r.Mode, bandOfFreq(r.FreqMHz), r.WidthMHz)
	if r.ShortPreamble {
		t.shortPreamble()
	}
	return t
}

func modelMode(m string) model.Mode {
	switch m {
	case "a":
		return model.ModeA
	case "b":
		return model.ModeB
	case "g":
		return model.ModeG
	case "ac":
		return model.ModeAC
	case "ax", "be":
		return model.ModeAX
	}
	return model.ModeN
}

// Run serves until ctx ends or the socket fails. Radios added or removed
// from now on wait for the medium's thread (ether_change.go).
func (s *EtherMedium) Run(ctx context.Context) error {
	s.ctl.running.Store(true)
	return s.run(ctx, s.schedule, s.sock.close)
}

// Close releases a medium that was never run.
func (s *EtherMedium) Close() {
	s.sock.close()
	unix.Close(s.efd)
}

func (s *EtherMedium) schedule(ctx context.Context) error {
	realtime()
	defer runtime.UnlockOSThread()
	defer s.ctl.running.Store(false) // changes are made directly again
	var in [][]byte
	var from []int
	for {
		if ctx.Err() != nil {
			return nil
		}
		s.runCtl()
		in, from = in[:0], from[:0]
		for {
			n, err := s.sock.recv(func(raw []byte, ifindex int) {
				r, ok := s.byIfindex[ifindex]
				if !ok {
					return
				}
				if engine.SplitGSO(raw, func(n int) []byte {
					b := make([]byte, engine.VnetHdrLen+n)
					in, from = append(in, b), append(from, r)
					return b
				}) {
					return
				}
				in, from = append(in, append(make([]byte, 0, len(raw)), raw...)), append(from, r)
			})
			if err != nil {
				return fmt.Errorf("wifi medium: %w", err)
			}
			if n < etherBatchLen {
				break
			}
		}
		now := time.Since(s.start)
		s.mu.Lock()
		emit := s.emitter(now)
		s.advance(now, emit)
		if s.roam != nil {
			s.finishHandovers(now)
		}
		for i, b := range in {
			s.stats.FramesIn++
			s.submit(now, from[i], b)
		}
		clear(in)
		s.reo.expire(now, s.received)
		s.advance(now, emit)
		s.stats.Reordered = s.reo.Held
		s.mu.Unlock()
		if n := s.sock.flush(); n > 0 {
			s.mu.Lock()
			s.stats.SendErrors += uint64(n)
			s.mu.Unlock()
		}
		if err := s.wait(s.sock.fd); err != nil {
			return err
		}
	}
}

// emitter handles the model's events due by now (under mu).
func (s *EtherMedium) emitter(now time.Duration) func(any) {
	return func(ev any) {
		switch v := ev.(type) {
		case model.Air:
			s.record(v)
		case model.Reception:
			s.late(now - v.At)
			ef := v.Frame.Ref.(*eframe)
			d := etherRx{v.To, ef.from, ef.tid(), binary.LittleEndian.Uint16(ef.hdr[22:24]) >> 4, ef.hdr[4]&1 == 0, ef.buf}
			if s.reo.received(now, v.Frame, d, s.received) {
				s.received(d)
			}
		case model.Status:
			s.late(now - v.At)
			s.reo.status(v.Frame, s.received) // a frame it released follows it
			ef := v.Frame.Ref.(*eframe)
			if !v.Acked {
				s.stats.Lost++
			}
			s.stats.Statuses++
			*ef = eframe{}
			s.frames.Put(ef)
		}
	}
}

// submit puts a frame radio r's node sent on the air (under mu).
func (s *EtherMedium) submit(now time.Duration, r int, b []byte) {
	eth := b[engine.VnetHdrLen:]
	if len(eth) < 14 {
		return
	}
	var da, sa [6]byte
	copy(da[:], eth[0:6])
	copy(sa[:], eth[6:12])
	rc := &s.cfg.Radios[r]
	group := da[0]&1 != 0
	rx := -1
	var a1, a3 [6]byte
	var toDS, ibss bool
	if rc.Adhoc > 0 {
		// an ad hoc member: straight to the member addressed (ether_adhoc.go)
		var ok bool
		if rx, ok = s.adhocPeer(r, da, group); !ok {
			return
		}
		a1, a3, ibss = da, AdhocBSSID(rc.Adhoc), true
	} else if rc.AP >= 0 {
		// a station: everything goes to its access point (held while it
		// hands over)
		if s.offAir(r) {
			s.hold(r, b)
			return
		}
		rx, a1, a3, toDS = rc.AP, s.cfg.Radios[rc.AP].MAC, da, true
	} else if group {
		a1, a3 = da, sa
	} else {
		j, ok := s.byMAC[da]
		if !ok || s.cfg.Radios[j].AP != r {
			s.stats.NoStation++
			if ok {
				s.missed(j) // a station that roamed away from r
			}
			return
		}
		if s.offAir(j) {
			s.stats.NoStation++
			s.missed(j)
			return
		}
		rx, a1, a3 = j, da, sa
	}
	tid := frameTID(eth)
	ef := s.frames.Get().(*eframe)
	*ef = eframe{buf: b, from: r}
	h := ef.hdr[:]
	hl := 24
	h[0] = 0x08 // data
	if rc.QoS {
		h[0], hl = 0x88, 26 // QoS data
		h[24], h[25] = byte(tid), 0
	}
	h[1] = 0
	switch {
	case ibss: // neither to nor from a DS
	case toDS:
		h[1] |= 0x01
	default:
		h[1] |= 0x02
	}
	if rc.CryptoBytes > 0 {
		h[1] |= 0x40 // protected
	}
	copy(h[4:10], a1[:])
	copy(h[10:16], rc.MAC[:])
	copy(h[16:22], a3[:])
	// sequence numbers as mac80211 gives them: per receiver and TID for
	// unicast (QoS) data, one counter per transmitter for group frames;
	// a receiver's duplicate window then sees a contiguous sequence
	k := seqKey{r, rx, tid}
	binary.LittleEndian.PutUint16(h[22:24], s.seq[k]<<4)
	s.seq[k] = (s.seq[k] + 1) & 0xfff
	ef.mf = model.MediumFrame{Radio: r, Freq: rc.FreqMHz, Data: h[:hl], Extra: model.LLCBytes + len(eth) - 14 + rc.CryptoBytes, Ref: ef}
	if rx < 0 {
		// an access point's (or an ad hoc member's) group frame: lowest
		// basic rate, no ACK, no retry. A station's group frame is unicast to its AP (to-DS,
		// addressed to the BSSID): acknowledged and retried at the data
		// rate like any other, and a collision does not lose it.
		ef.mf.Rates[0] = model.TxRate{Rate: lowestBasic(bandOfFreq(rc.FreqMHz)), Count: 1}
	} else {
		ef.mf.Rates[0] = model.TxRate{Rate: s.rateFor(r, rx), Count: s.cfg.retryLimit()}
	}
	if rx >= 0 {
		s.reo.track(&ef.mf, rx) // unicast QoS data: delivered in order
	}
	if err := s.m.Submit(now, &ef.mf); err != nil {
		s.reo.untrack(&ef.mf)
		s.stats.NLErrors++
		*ef = eframe{}
		s.frames.Put(ef)
	}
}

// tid is the frame's TID (0 for non-QoS data).
func (ef *eframe) tid() int {
	if ef.hdr[0] == 0x88 {
		return int(ef.hdr[24] & 7)
	}
	return 0
}

// rateFor is the rate of tx's unicast data to rx: fixed, or ideal for
// the link's SNR now.
func (s *EtherMedium) rateFor(tx, rx int) model.Rate {
	if f := s.cfg.Radios[tx].Fixed; f != nil {
		return *f
	}
	ap := tx
	if s.cfg.Radios[tx].AP >= 0 {
		ap = s.cfg.Radios[tx].AP
	}
	return s.ideal[ap].pick(s.link(tx, rx).SNRdB)
}

// lowestBasic is the rate of group frames: the lowest basic rate
// (hostapd's defaults: 1 Mbit/s on 2.4 GHz, 6 Mbit/s elsewhere).
func lowestBasic(b model.Band) model.Rate {
	if b == model.Band2G4 {
		return model.Rate{Class: model.DSSS, Kbps: 1000}
	}
	return model.Rate{Class: model.OFDM, Kbps: 6000}
}

// frameTID is the 802.1d priority mac80211 gives an IP packet: the top
// three bits of its DSCP (cfg80211_classify8021d's default mapping).
func frameTID(eth []byte) int {
	switch binary.BigEndian.Uint16(eth[12:14]) {
	case 0x0800:
		if len(eth) > 15 {
			return int(eth[15] >> 5)
		}
	case 0x86dd:
		if len(eth) > 15 {
			tc := eth[14]<<4 | eth[15]>>4
			return int(tc >> 5)
		}
	}
	return 0
}

// received handles one frame arriving at radio d.to, in order (under mu).
func (s *EtherMedium) received(d etherRx) {
	r, from := d.to, d.from
	eth := d.buf[engine.VnetHdrLen:]
	if d.unicast { // drop a retransmission's second copy
		k := dupKey{r, from, d.tid}
		w := s.recent[k]
		if w == nil {
			w = &seqWindow{}
			s.recent[k] = w
		}
		if w.seen(d.seq) {
			s.stats.Duplicates++
			return
		}
	}
	var da, sa [6]byte
	copy(da[:], eth[0:6])
	copy(sa[:], eth[6:12])
	group := da[0]&1 != 0
	rc := &s.cfg.Radios[r]
	if rc.Adhoc > 0 {
		// an ad hoc member: its own network's frames, handed up (it
		// forwards nothing)
		if s.cfg.Radios[from].Adhoc == rc.Adhoc {
			s.deliver(r, d.buf)
		}
		return
	}
	if rc.AP < 0 {
		// an access point: only its stations' frames
		if s.cfg.Radios[from].AP != r {
			return
		}
		if group {
			s.deliver(r, d.buf)
			s.resubmit(r, d.buf) // and to every station
			return
		}
		if j, ok := s.byMAC[da]; ok && j != r && s.cfg.Radios[j].AP == r {
			s.resubmit(r, d.buf) // intra-BSS relay
			return
		}
		s.deliver(r, d.buf)
		return
	}
	// a station: only its own access point's frames, and not the echo of
	// its own group frames; none while it hands over
	if from != rc.AP || (group && sa == rc.MAC) || s.offAir(r) {
		if !group {
			s.missed(r) // a roaming station's: from the AP it left, or while off the air
		}
		return
	}
	s.deliver(r, d.buf)
}

func (s *EtherMedium) deliver(r int, b []byte) {
	if s.ifindex[r] < 0 {
		s.stats.NoStation++ // a radio removed while it ran
		return
	}
	s.sock.queue(b, s.ifindex[r])
	s.stats.Deliveries++
}

// MPDU returns a frame as it goes on the air (header, LLC/SNAP, the
// Ethernet payload), for captures. Nothing is encrypted on the engine, so
// a protected BSS's frames are written in the clear (protected bit off,
// no CCMP header or MIC, which still count as airtime), for Wireshark.
func (s *EtherMedium) MPDU(f *model.MediumFrame) []byte {
	ef, ok := f.Ref.(*eframe)
	if !ok || ef.buf == nil {
		return f.Data
	}
	eth := ef.buf[engine.VnetHdrLen:]
	out := make([]byte, 0, len(f.Data)+8+len(eth))
	out = append(out, f.Data...)
	out[1] &^= 0x40
	out = append(out, 0xaa, 0xaa, 0x03, 0, 0, 0, eth[12], eth[13])
	return append(out, eth[14:]...)
}

// Capture writes the medium's PPDUs as pcapng with radiotap headers (see
// StartCapture).
func (s *EtherMedium) Capture(w io.Writer, snaplen int) (stop func() (uint64, error), err error) {
	return s.StartCapture(w, snaplen, s.MPDU)
}
