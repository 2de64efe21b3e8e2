package model

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Class is a PHY's modulation class.
type Class int

// The PHY classes the model times.
const (
	DSSS Class = iota // 802.11b: DSSS 1, 2 Mbit/s; CCK (HR/DSSS) 5.5, 11 Mbit/s
	OFDM              // 802.11a/g legacy OFDM, 6–54 Mbit/s (ERP-OFDM on 2.4 GHz)
	HT                // 802.11n, HT-mixed format
	VHT               // 802.11ac
	HE                // 802.11ax, HE SU PPDU
)

func (c Class) String() string {
	return [...]string{"DSSS", "OFDM", "HT", "VHT", "HE"}[c]
}

// Band is the frequency band.
type Band int

// Bands.
const (
	Band2G4 Band = iota
	Band5G
	Band6G
)

func (b Band) String() string { return [...]string{"2.4 GHz", "5 GHz", "6 GHz"}[b] }

// Rate is one transmission rate: the class, and for OFDM classes the MCS,
// spatial streams, channel width and guard interval.
type Rate struct {
	Class Class
	// Kbps is the rate for DSSS and legacy OFDM (1000, 2000, 5500, 11000;
	// 6000 … 54000).
	Kbps int
	// MCS, NSS, WidthMHz and GI describe HT/VHT/HE rates. HT MCS 0–31
	// carry their own stream count (MCS 8–15 are 2 streams, …).
	MCS      int
	NSS      int
	WidthMHz int
	// GI is the guard interval: 800 ns (long, HT/VHT) or 400 ns (short);
	// HE: 800, 1600 or 3200 ns.
	GI time.Duration
	// ShortPreamble selects the 96 µs DSSS preamble (not for 1 Mbit/s).
	ShortPreamble bool
}

// modulation of an OFDM MCS: constellation size and code rate.
type modulation struct {
	m        int     // constellation points: 2 BPSK, 4 QPSK, 16, 64, 256, 1024 QAM
	num, den int     // code rate num/den
	bits     float64 // coded bits per subcarrier × code rate
}

func (m modulation) rate() float64 { return float64(m.num) / float64(m.den) }

var mcsMod = []modulation{ // VHT/HE MCS 0–11; HT MCS 0–7 are the first eight
	{2, 1, 2, 0.5}, {4, 1, 2, 1}, {4, 3, 4, 1.5}, {16, 1, 2, 2}, {16, 3, 4, 3},
	{64, 2, 3, 4}, {64, 3, 4, 4.5}, {64, 5, 6, 5}, {256, 3, 4, 6}, {256, 5, 6, 20.0 / 3},
	{1024, 3, 4, 7.5}, {1024, 5, 6, 25.0 / 3},
}

// legacyMod maps a legacy OFDM rate (kbit/s) to its modulation and N_DBPS.
var legacyMod = map[int]struct {
	mod  modulation
	ndbp int
}{
	6000: {modulation{2, 1, 2, 0.5}, 24}, 9000: {modulation{2, 3, 4, 0.75}, 36},
	12000: {modulation{4, 1, 2, 1}, 48}, 18000: {modulation{4, 3, 4, 1.5}, 72},
	24000: {modulation{16, 1, 2, 2}, 96}, 36000: {modulation{16, 3, 4, 3}, 144},
	48000: {modulation{64, 2, 3, 4}, 192}, 54000: {modulation{64, 3, 4, 4.5}, 216},
}

// LegacyOFDMRates are the 802.11a/g rates in kbit/s.
var LegacyOFDMRates = []int{6000, 9000, 12000, 18000, 24000, 36000, 48000, 54000}

// DSSSRates are the 802.11b rates in kbit/s.
var DSSSRates = []int{1000, 2000, 5500, 11000}

// dataSubcarriers is N_SD per class and width.
func dataSubcarriers(c Class, width int) int {
	switch c {
	case HT, VHT:
		return map[int]int{20: 52, 40: 108, 80: 234, 160: 468}[width]
	case HE:
		return map[int]int{20: 234, 40: 468, 80: 980, 160: 1960}[width]
	}
	return 48
}

// streams is the number of spatial streams of r.
func (r Rate) streams() int {
	if r.Class == HT {
		return r.MCS/8 + 1
	}
	if r.NSS == 0 {
		return 1
	}
	return r.NSS
}

func (r Rate) mod() modulation {
	switch r.Class {
	case OFDM:
		return legacyMod[r.Kbps].mod
	case HT:
		return mcsMod[r.MCS%8]
	case VHT, HE:
		return mcsMod[r.MCS]
	}
	return modulation{}
}

// Validate reports whether the rate exists.
func (r Rate) Validate() error {
	switch r.Class {
	case DSSS:
		for _, k := range DSSSRates {
			if k == r.Kbps {
				return nil
			}
		}
		return fmt.Errorf("DSSS/CCK has 1, 2, 5.5 and 11 Mbit/s, not %g", float64(r.Kbps)/1000)
	case OFDM:
		if _, ok := legacyMod[r.Kbps]; !ok {
			return fmt.Errorf("legacy OFDM has 6, 9, 12, 18, 24, 36, 48 and 54 Mbit/s, not %g", float64(r.Kbps)/1000)
		}
		return nil
	}
	w := r.WidthMHz
	switch r.Class {
	case HT:
		if r.MCS < 0 || r.MCS > 31 {
			return fmt.Errorf("HT MCS is 0–31, not %d", r.MCS)
		}
		if w != 20 && w != 40 {
			return fmt.Errorf("HT channels are 20 or 40 MHz wide, not %d", w)
		}
		if r.GI != 800*time.Nanosecond && r.GI != 400*time.Nanosecond {
			return fmt.Errorf("HT guard interval is 800 or 400 ns, not %v", r.GI)
		}
		return nil
	case VHT:
		if r.MCS < 0 || r.MCS > 9 {
			return fmt.Errorf("VHT MCS is 0–9, not %d", r.MCS)
		}
		if r.GI != 800*time.Nanosecond && r.GI != 400*time.Nanosecond {
			return fmt.Errorf("VHT guard interval is 800 or 400 ns, not %v", r.GI)
		}
	case HE:
		if r.MCS < 0 || r.MCS > 11 {
			return fmt.Errorf("HE MCS is 0–11, not %d", r.MCS)
		}
		if r.GI != 800*time.Nanosecond && r.GI != 1600*time.Nanosecond && r.GI != 3200*time.Nanosecond {
			return fmt.Errorf("HE guard interval is 800, 1600 or 3200 ns, not %v", r.GI)
		}
	}
	if dataSubcarriers(r.Class, w) == 0 {
		return fmt.Errorf("%v channels are 20, 40, 80 or 160 MHz wide, not %d", r.Class, w)
	}
	if n := r.streams(); n < 1 || n > 8 {
		return fmt.Errorf("%v has 1–8 spatial streams, not %d", r.Class, n)
	}
	if r.Class == VHT {
		// 802.11-2016 Table 21-30..: combinations whose N_DBPS is not an
		// integer (20 MHz MCS 9 at 1, 2, 4 streams, ...) or excluded.
		n := r.streams()
		x := float64(dataSubcarriers(VHT, w)) * r.mod().bits * float64(n)
		if x != math.Trunc(x) || (w == 80 && r.MCS == 6 && (n == 3 || n == 7)) || (w == 160 && r.MCS == 9 && n == 3) {
			return fmt.Errorf("VHT MCS %d with %d stream(s) does not exist at %d MHz", r.MCS, n, w)
		}
	}
	return nil
}

// symbol is the OFDM symbol duration of a data symbol.
func (r Rate) symbol() time.Duration {
	switch r.Class {
	case HT, VHT:
		if r.GI == 400*time.Nanosecond {
			return 3600 * time.Nanosecond
		}
		return 4 * time.Microsecond
	case HE:
		return 12800*time.Nanosecond + r.GI
	}
	return 4 * time.Microsecond
}

// NDBPS is the data bits per OFDM symbol (0 for DSSS).
func (r Rate) NDBPS() int {
	switch r.Class {
	case DSSS:
		return 0
	case OFDM:
		return legacyMod[r.Kbps].ndbp
	}
	w := r.WidthMHz
	if r.Class == HT {
		return int(math.Round(float64(dataSubcarriers(HT, w)) * r.mod().bits * float64(r.streams())))
	}
	return int(math.Round(float64(dataSubcarriers(r.Class, w)) * r.mod().bits * float64(r.streams())))
}

// Mbps is the PHY rate in Mbit/s.
func (r Rate) Mbps() float64 {
	switch r.Class {
	case DSSS, OFDM:
		return float64(r.Kbps) / 1000
	}
	return float64(r.NDBPS()) / (float64(r.symbol()) / float64(time.Microsecond))
}

func (r Rate) String() string {
	switch r.Class {
	case DSSS, OFDM:
		return strconv.FormatFloat(float64(r.Kbps)/1000, 'f', -1, 64) + " Mbit/s"
	}
	s := fmt.Sprintf("%v MCS %d", r.Class, r.MCS)
	if r.Class != HT {
		s += fmt.Sprintf(" %dSS", r.streams())
	}
	return s + fmt.Sprintf(" %d MHz GI %d ns (%.1f Mbit/s)", r.WidthMHz, r.GI.Nanoseconds(), r.Mbps())
}

// ceilDiv is ⌈a/b⌉ for positive integers.
func ceilDiv(a, b int) int { return (a + b - 1) / b }

// TxTime is the airtime of a PPDU carrying a PSDU of psdu bytes (the
// MPDU with its FCS, or the whole A-MPDU) at rate r in band b, from the
// first preamble symbol to the last symbol, including ERP-OFDM's 6 µs
// signal extension on 2.4 GHz (IEEE 802.11-2016 17.4.3, 19.4.3, 21.4.3;
// 802.11ax 27.4.3 for HE SU with 2x HE-LTF and no packet extension).
func TxTime(r Rate, psdu int, b Band) time.Duration {
	us := time.Microsecond
	ext := time.Duration(0)
	if b == Band2G4 && r.Class != DSSS {
		ext = 6 * us
	}
	switch r.Class {
	case DSSS:
		pre := 192 * us
		if r.ShortPreamble && r.Kbps != 1000 {
			pre = 96 * us
		}
		// ⌈8·L / R⌉ µs
		return pre + time.Duration(ceilDiv(8*psdu*1000, r.Kbps))*us
	case OFDM:
		nsym := ceilDiv(16+8*psdu+6, r.NDBPS())
		return 20*us + time.Duration(nsym)*4*us + ext
	case HT:
		nltf := map[int]int{1: 1, 2: 2, 3: 4, 4: 4}[r.streams()]
		nsym := ceilDiv(8*psdu+16+6*nes(r), r.NDBPS())
		return 32*us + time.Duration(nltf)*4*us + dataTime(r, nsym) + ext
	case VHT:
		nsym := ceilDiv(8*psdu+16+6*nes(r), r.NDBPS())
		return 36*us + time.Duration(ltfCount(r.streams()))*4*us + dataTime(r, nsym) + ext
	case HE:
		ltf := 6400*time.Nanosecond + r.GI // 2x HE-LTF
		nsym := ceilDiv(8*psdu+16+6*nes(r), r.NDBPS())
		return 36*us + time.Duration(ltfCount(r.streams()))*ltf + time.Duration(nsym)*r.symbol() + ext
	}
	return 0
}

// ltfCount is the number of VHT/HE long training fields for n streams:
// n, rounded up to even above one (3 → 4, 5 → 6, 7 → 8).
func ltfCount(n int) int {
	if n > 1 && n%2 == 1 {
		return n + 1
	}
	return n
}

// dataTime is the data symbols' duration: with the short GI it is rounded
// up to whole 4 µs symbols (HT/VHT TXTIME formulas).
func dataTime(r Rate, nsym int) time.Duration {
	if r.GI == 400*time.Nanosecond {
		t := time.Duration(nsym) * 3600 * time.Nanosecond
		return time.Duration(ceilDiv(int(t), int(4*time.Microsecond))) * 4 * time.Microsecond
	}
	return time.Duration(nsym) * 4 * time.Microsecond
}

// nes is the number of BCC encoders (one per 600 Mbit/s, HT/VHT BCC).
func nes(r Rate) int {
	if r.Class == HE {
		return 0 // LDPC: no tail bits
	}
	return max(1, int(math.Ceil(r.Mbps()/600.000001)))
}

// NonHTReference is the legacy rate (kbit/s) with the same modulation and
// coding as r, for choosing the control-response rate (802.11-2016
// 10.7.6.5.2 / 10.7.9).
func (r Rate) NonHTReference() int {
	switch r.Class {
	case DSSS, OFDM:
		return r.Kbps
	}
	m := r.mod()
	switch {
	case m.m == 2:
		return 6000
	case m.m == 4 && m.num == 1:
		return 12000
	case m.m == 4:
		return 18000
	case m.m == 16 && m.num == 1:
		return 24000
	case m.m == 16:
		return 36000
	case m.m == 64 && m.num == 2:
		return 48000
	}
	return 54000
}

// ControlRate is the rate of the ACK or Block Ack answering a frame sent
// at r: the highest rate of the basic rate set not above the eliciting
// frame's (non-HT reference) rate and of the same modulation class (DSSS
// or OFDM); when the basic set has none, the PHY's mandatory rates (1, 2,
// 5.5, 11 / 6, 12, 24 Mbit/s) stand in.
func ControlRate(r Rate, basic []int) Rate {
	ref := r.NonHTReference()
	cls := OFDM
	if r.Class == DSSS {
		cls = DSSS
	}
	pick := func(set []int) (int, bool) {
		best, ok := 0, false
		for _, k := range set {
			_, ofdm := legacyMod[k]
			if (cls == OFDM) != ofdm || k > ref {
				continue
			}
			if k > best {
				best, ok = k, true
			}
		}
		return best, ok
	}
	k, ok := pick(basic)
	if !ok {
		mand := []int{6000, 12000, 24000}
		if cls == DSSS {
			mand = []int{1000, 2000, 5500, 11000}
		}
		k, ok = pick(mand)
		if !ok {
			k = mand[0]
		}
	}
	return Rate{Class: cls, Kbps: k, ShortPreamble: r.ShortPreamble}
}

// ParseRate reads a rate for a mode: "54mbit", "54", "5.5mbit" for
// legacy modes; "mcs7" (HT: 0–31; VHT 0–9, HE 0–11) for n/ac/ax.
func ParseRate(mode Mode, s string, width, nss int, gi time.Duration) (Rate, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	if strings.HasPrefix(t, "mcs") {
		n, err := strconv.Atoi(strings.TrimPrefix(t, "mcs"))
		if err != nil {
			return Rate{}, fmt.Errorf("rate %q: want mcsN, e.g. mcs7", s)
		}
		var c Class
		switch mode {
		case ModeN:
			c = HT
		case ModeAC:
			c = VHT
		case ModeAX:
			c = HE
		default:
			return Rate{}, fmt.Errorf("rate %q: mode %s has no MCS rates (give Mbit/s, e.g. 54mbit)", s, mode)
		}
		if width == 0 {
			width = 20
		}
		if nss == 0 {
			nss = 1
		}
		if gi == 0 {
			gi = 800 * time.Nanosecond
		}
		r := Rate{Class: c, MCS: n, NSS: nss, WidthMHz: width, GI: gi}
		if c == HT {
			r.NSS = 0
		}
		return r, r.Validate()
	}
	t = strings.TrimSuffix(strings.TrimSuffix(t, "mbit"), "mbps")
	f, err := strconv.ParseFloat(t, 64)
	if err != nil {
		return Rate{}, fmt.Errorf("rate %q: want Mbit/s (e.g. 54mbit) or mcsN", s)
	}
	k := int(math.Round(f * 1000))
	if mode == ModeG {
		if _, ok := legacyMod[k]; !ok && k != 1000 && k != 2000 && k != 5500 && k != 11000 {
			return Rate{}, fmt.Errorf("rate %q: mode g has 1, 2, 5.5, 11 (DSSS/CCK) and 6, 9, 12, 18, 24, 36, 48, 54 Mbit/s (OFDM)", s)
		}
	}
	var r Rate
	if _, ok := legacyMod[k]; ok && mode != ModeB {
		r = Rate{Class: OFDM, Kbps: k}
	} else {
		r = Rate{Class: DSSS, Kbps: k}
		if mode != ModeB && mode != ModeG {
			if mode == ModeA {
				return Rate{}, fmt.Errorf("rate %q: mode a has 6, 9, 12, 18, 24, 36, 48, 54 Mbit/s (OFDM)", s)
			}
			return Rate{}, fmt.Errorf("rate %q: mode %s has 6, 9, 12, 18, 24, 36, 48, 54 Mbit/s (or mcsN)", s, mode)
		}
	}
	return r, r.Validate()
}
