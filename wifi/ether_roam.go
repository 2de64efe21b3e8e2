package wifi

import (
	"slices"
	"time"

	"github.com/emuctl/emuctl/tc/engine"
	"github.com/emuctl/emuctl/wifi/model"
)

// Roaming on the engine medium. Access points that share an SSID and are
// bridged to one wired segment form one network (an ESS); a station that
// names the network (MediumRadio.ESS) may be associated with any of them.
// The engine has no management plane, so the medium decides as a
// station's roaming logic would: whenever the radios' links change (a
// station or an AP moved, a pair's SNR or loss was set), a station whose
// access point it hears worse than another of its network's by at least
// the hysteresis — or no longer hears at all (its preambles are below the
// medium's detection threshold) — hands over:
//
//   - it is off the air for Roaming.OffAir (by default the airtime of the
//     management exchange a reassociation takes, OffAirTime): the frames
//     its node sends meanwhile are held (up to the queue limit) and sent
//     once it is back, frames for it are dropped, as an access point
//     drops frames for a station it does not have;
//   - then it is its new AP's (on the new AP's channel), the held frames
//     go out, and the new AP's node receives, as from the station, the
//     802.2 XID "layer 2 update" frame hostapd sends when a station
//     associates (IEEE 802.11F): a broadcast from the station's address,
//     so the bridges of the wired side learn where the station is now.
//
// Each handover is recorded (MediumStats.Handovers).

// Roaming is how a station of an ESS roams on the engine medium.
type Roaming struct {
	// HysteresisDB: another access point of the network must be heard
	// this much better (SNR, dB) than the current one before the station
	// hands over (it always does when it no longer hears the current one).
	HysteresisDB float64 `json:"hysteresis_db"`
	// OffAir is how long a handover keeps the station off the air.
	OffAir time.Duration `json:"off_air_ns"`
	// LeastLoaded: Mininet-WiFi's association control llf (least loaded
	// first) instead of the strongest signal: the station leaves its
	// access point for another it hears that has two stations fewer than
	// its own has with it (Mininet-WiFi's rule: load + 2 < its AP's), the
	// least loaded of those (ties: the best heard); when it no longer
	// hears its access point, the least loaded of those it hears. The
	// hysteresis does not apply.
	LeastLoaded bool `json:"least_loaded,omitempty"`
}

// DefaultHysteresisDB is the hysteresis a station gets when its topology
// names none.
const DefaultHysteresisDB = 3

// Management frame bodies (bytes with header, without FCS) of the exchange
// a reassociation takes, as hostapd and wpa_supplicant send them for a
// short SSID with the basic rate IEs, HT/VHT capabilities left out: what
// OffAirTime charges.
var reassocExchange = []int{
	70,  // probe request (directed to the network)
	250, // probe response
	30,  // authentication (open system), station → AP
	30,  // authentication, AP → station
	120, // reassociation request
	110, // reassociation response
}

// eapolExchange is the 4-way handshake's EAPOL-Key frames (data frames
// with LLC/SNAP) a protected network adds after the reassociation.
var eapolExchange = []int{131, 153, 185, 131}

// OffAirTime is the default time a handover keeps a station off the air:
// every frame of the probe, authentication and reassociation exchange
// (and a protected network's 4-way handshake) at the band's lowest basic
// rate (1 Mbit/s DSSS on 2.4 GHz, 6 Mbit/s OFDM elsewhere, as hostapd's
// defaults), each after AIFS of the voice access category (management
// frames are sent on it) and its mean backoff (CWmin/2 slots), and
// acknowledged after SIFS; plus scan, the time the station spends
// scanning before it decides (0: its background scans came before).
func OffAirTime(mode string, freqMHz int, protected bool, scan time.Duration) time.Duration {
	b := bandOfFreq(freqMHz)
	mac := model.DefaultMAC(modelMode(mode), b, true)
	r := lowestBasic(b)
	frames := slices.Clone(reassocExchange)
	if protected {
		frames = append(frames, eapolExchange...)
	}
	vo := mac.Param[model.VO]
	access := mac.AIFS(model.VO) + time.Duration(vo.CWMin)*mac.Slot/2
	var t time.Duration
	for _, n := range frames {
		t += access + model.TxTime(r, n+model.FCSBytes, b) + mac.SIFS + mac.ACKTime(r)
	}
	return t + scan
}

// Handover is one station's move from one access point to another.
type Handover struct {
	Station string `json:"station"`
	From    string `json:"from"`
	To      string `json:"to"`
	// At is when it began (the medium's clock: since it started), Time
	// the same on the wall clock.
	At   time.Duration `json:"at_ns"`
	Time time.Time     `json:"time"`
	// FromSNRdB and ToSNRdB are the SNRs at which the station heard the
	// two access points when it decided.
	FromSNRdB float64 `json:"from_snr_db"`
	ToSNRdB   float64 `json:"to_snr_db"`
	// OffAir is how long it was off the air: the configured time, or
	// more when the medium acted late.
	OffAir time.Duration `json:"off_air_ns"`
	// Done: it is back on the air. Held counts the frames its node sent
	// meanwhile (sent once back), Dropped those beyond the queue limit,
	// the frames for it that found it off the air, and those sent to it
	// by, or reaching, the access point it left (what that AP still had
	// queued, and what came before the wired side learned).
	Done    bool `json:"done"`
	Held    int  `json:"held"`
	Dropped int  `json:"dropped"`
}

// maxHandovers bounds the handovers a medium keeps (the oldest go).
const maxHandovers = 1000

// roamer is a station's roaming state.
type roamer struct {
	offUntil time.Duration // 0: on the air
	held     [][]byte
	ho       int // its handover in progress, an index into s.handovers
}

// initRoaming prepares the stations that roam (under construction).
func (s *EtherMedium) initRoaming() {
	for i, r := range s.cfg.Radios {
		if len(r.ESS) > 1 && r.Roam != nil {
			if s.roam == nil {
				s.roam = map[int]*roamer{}
			}
			s.roam[i] = &roamer{ho: -1}
			s.roamOrder = append(s.roamOrder, i) // radio order
		}
	}
}

// SetPosition moves a node's radio; a station of an ESS may hand over.
func (s *EtherMedium) SetPosition(node string, pos [3]float64) error {
	if err := s.mediumCore.SetPosition(node, pos); err != nil {
		return err
	}
	s.roamNow()
	return nil
}

// SetPair changes a pair's SNR or loss; a station of an ESS may hand over.
func (s *EtherMedium) SetPair(a, b string, snr, loss *float64) error {
	if err := s.mediumCore.SetPair(a, b, snr, loss); err != nil {
		return err
	}
	s.roamNow()
	return nil
}

// roamNow decides, with the links as they are now, which stations hand
// over, and wakes the medium's thread for the end of their time off the
// air.
func (s *EtherMedium) roamNow() {
	if s.roam == nil || s.start.IsZero() {
		return
	}
	s.mu.Lock()
	n := s.roamCheck(time.Since(s.start))
	s.mu.Unlock()
	if n > 0 {
		s.wake()
	}
}

// roamCheck hands over every station that should (under mu); it returns
// how many did.
func (s *EtherMedium) roamCheck(now time.Duration) int {
	started := 0
	for _, i := range s.roamOrder {
		st := s.roam[i]
		if st.offUntil > 0 {
			continue // in a handover
		}
		r := &s.cfg.Radios[i]
		cur := r.AP
		curL := s.link(cur, i)
		if r.Roam.LeastLoaded {
			if to, ok := s.leastLoaded(i); ok {
				s.handover(now, i, to, curL, s.link(to, i))
				started++
			}
			continue
		}
		best, bestL := cur, curL
		for _, j := range r.ESS {
			if j == cur {
				continue
			}
			if l := s.link(j, i); hears(l) && (!hears(bestL) || l.SNRdB > bestL.SNRdB) {
				best, bestL = j, l
			}
		}
		if best == cur || hears(curL) && bestL.SNRdB < curL.SNRdB+r.Roam.HysteresisDB {
			continue
		}
		s.handover(now, i, best, curL, bestL)
		started++
	}
	return started
}

// leastLoaded is where station i goes under llf (under mu): among the
// access points of its network it hears, the one with the fewest
// stations (ties: the one heard best), if it no longer hears its own or
// that one has two stations fewer than its own has with i (Mininet-WiFi's
// associationControl('llf') rule, which keeps stations from bouncing
// between equally loaded APs).
func (s *EtherMedium) leastLoaded(i int) (int, bool) {
	r := &s.cfg.Radios[i]
	load := s.apLoad()
	best := -1
	var bestL model.Link
	for _, j := range r.ESS {
		if j == r.AP {
			continue
		}
		l := s.link(j, i)
		if !hears(l) {
			continue
		}
		if best < 0 || load[j] < load[best] || load[j] == load[best] && l.SNRdB > bestL.SNRdB {
			best, bestL = j, l
		}
	}
	if best < 0 {
		return 0, false
	}
	if !hears(s.link(r.AP, i)) || load[best]+2 < load[r.AP] {
		return best, true
	}
	return 0, false
}

// apLoad counts the stations associated with each access point (by
// radio index), those in a handover with the one they are moving to.
func (s *EtherMedium) apLoad() map[int]int {
	load := map[int]int{}
	for _, r := range s.cfg.Radios {
		if r.AP >= 0 && !r.Gone {
			load[r.AP]++
		}
	}
	return load
}

// LeastLoadedAP is the access point a station (radio i of radios) that
// associates under llf picks when the lab is built: among those of its
// network it hears, the one with the fewest stations in load (ties: the
// one heard best); when it hears none, the one heard best.
func LeastLoadedAP(cfg *MediumConfig, i int, load map[int]int) int {
	r := &cfg.Radios[i]
	best, heard := r.AP, false
	for _, j := range r.ESS {
		l := cfg.Link(j, i)
		h := hears(l)
		switch {
		case h && !heard:
			best, heard = j, true
		case h && (load[j] < load[best] || load[j] == load[best] && l.SNRdB > cfg.Link(best, i).SNRdB):
			best = j
		case !heard && l.SNRdB > cfg.Link(best, i).SNRdB:
			best = j
		}
	}
	return best
}

// hears: a station detects the preambles of an access point's frames
// (ns-3's threshold preamble detection, the medium's own rule: −82 dBm and
// 4 dB of SNR), so it can be associated with it.
func hears(l model.Link) bool {
	return l.Detected(model.DefaultDetectDBm, model.DefaultDetectSNRdB)
}

// handover takes station i off the air and makes it AP to's (under mu).
func (s *EtherMedium) handover(now time.Duration, i, to int, fromL, toL model.Link) {
	r := &s.cfg.Radios[i]
	st := s.roam[i]
	h := Handover{Station: r.Node, From: s.cfg.Radios[r.AP].Node, To: s.cfg.Radios[to].Node, At: now,
		Time: s.start.Add(now), FromSNRdB: round2(fromL.SNRdB), ToSNRdB: round2(toL.SNRdB), OffAir: r.Roam.OffAir}
	if len(s.handovers) >= maxHandovers {
		s.handovers = slices.Delete(s.handovers, 0, 1)
		for _, o := range s.roam {
			if o.ho > 0 {
				o.ho--
			}
		}
	}
	s.handovers = append(s.handovers, h)
	st.ho = len(s.handovers) - 1
	r.AP = to
	st.offUntil = max(now+r.Roam.OffAir, 1)
}

// nextBack is when the next station comes back on the air (under mu).
func (s *EtherMedium) nextBack() (time.Duration, bool) {
	var t time.Duration
	ok := false
	for _, st := range s.roam {
		if st.offUntil > 0 && (!ok || st.offUntil < t) {
			t, ok = st.offUntil, true
		}
	}
	return t, ok
}

// finishHandovers puts back on the air the stations whose time off it is
// over (under mu): on their new AP's channel, with the frames held, and
// the new AP's node told where the station is.
func (s *EtherMedium) finishHandovers(now time.Duration) {
	if t, ok := s.nextBack(); !ok || now < t {
		return // nobody is back yet (the medium's every turn comes here)
	}
	for _, i := range s.roamOrder {
		st := s.roam[i]
		if st.offUntil == 0 || now < st.offUntil {
			continue
		}
		r := &s.cfg.Radios[i]
		ap := &s.cfg.Radios[r.AP]
		st.offUntil = 0
		if st.ho >= 0 {
			h := &s.handovers[st.ho]
			h.Done, h.OffAir = true, now-h.At
		}
		r.FreqMHz, r.WidthMHz = ap.FreqMHz, ap.WidthMHz
		s.m.AddRadio(i, r.FreqMHz)
		s.deliver(r.AP, l2Update(r.MAC))
		held := st.held
		st.held = nil
		for _, b := range held {
			s.submit(now, i, b)
		}
	}
}

// offAir reports whether station i is in a handover (under mu).
func (s *EtherMedium) offAir(i int) bool {
	st := s.roam[i]
	return st != nil && st.offUntil > 0
}

// hold keeps a frame station i's node sent while it was off the air
// (under mu); beyond the queue limit it is dropped.
func (s *EtherMedium) hold(i int, b []byte) {
	st := s.roam[i]
	var h *Handover
	if st.ho >= 0 {
		h = &s.handovers[st.ho]
	}
	if len(st.held) >= s.queueLimit() {
		if h != nil {
			h.Dropped++
		}
		return
	}
	st.held = append(st.held, b)
	if h != nil {
		h.Held++
	}
}

// missed counts a frame for station i that found it off the air, or at
// an access point it left, against its last handover.
func (s *EtherMedium) missed(i int) {
	if st := s.roam[i]; st != nil && st.ho >= 0 {
		s.handovers[st.ho].Dropped++
	}
}

func (s *EtherMedium) queueLimit() int {
	if s.cfg.QueueLimit > 0 {
		return s.cfg.QueueLimit
	}
	return 128
}

// l2Update is the frame hostapd sends into the bridge for a station that
// associated, as mac80211 builds it (ieee80211_send_layer2_update; IEEE
// 802.11F): broadcast, from the station's address, an 802.2 LLC XID
// response (DSAP 0, SSAP 1, control 0xaf, format 0x81, LLC type 1,
// receive window 0), padded to 60 bytes; with the virtio-net header the
// medium's ports carry.
func l2Update(sta [6]byte) []byte {
	b := make([]byte, engine.VnetHdrLen+60)
	eth := b[engine.VnetHdrLen:]
	for i := range 6 {
		eth[i] = 0xff
	}
	copy(eth[6:12], sta[:])
	eth[12], eth[13] = 0, 6 // length: the 6 bytes of LLC and XID
	copy(eth[14:20], []byte{0x00, 0x01, 0xaf, 0x81, 0x01, 0x00})
	return b
}

// associations are the stations' access points now, by node.
func (s *EtherMedium) associations() map[string]string {
	out := map[string]string{}
	for _, r := range s.cfg.Radios {
		if r.AP >= 0 {
			out[r.Node] = s.cfg.Radios[r.AP].Node
		}
	}
	return out
}

// Stats is the medium's counters, with the stations' associations and
// the handovers so far.
func (s *EtherMedium) Stats() MediumStats {
	st := s.mediumCore.Stats()
	s.mu.Lock()
	defer s.mu.Unlock()
	st.Assoc = s.associations()
	if len(s.handovers) > 0 {
		st.Handovers = slices.Clone(s.handovers)
	}
	return st
}
