package model

import (
	"fmt"
	"strings"
	"time"
)

// Mode is a Wi-Fi mode as hostapd names it (hw_mode plus ieee80211n/ac/ax).
type Mode string

// Modes.
const (
	ModeA  Mode = "a"
	ModeB  Mode = "b"
	ModeG  Mode = "g"
	ModeN  Mode = "n"
	ModeAC Mode = "ac"
	ModeAX Mode = "ax"
)

// ParseMode reads a mode name.
func ParseMode(s string) (Mode, error) {
	m := Mode(strings.ToLower(strings.TrimSpace(s)))
	switch m {
	case ModeA, ModeB, ModeG, ModeN, ModeAC, ModeAX:
		return m, nil
	}
	return "", fmt.Errorf("mode %q: want a, b, g, n, ac or ax", s)
}

// DefaultBand is the band a mode runs on unless told: b and g on 2.4 GHz,
// the others on 5 GHz.
func (m Mode) DefaultBand() Band {
	if m == ModeB || m == ModeG {
		return Band2G4
	}
	return Band5G
}

// AC is an EDCA access category.
type AC int

// Access categories, in 802.11 order.
const (
	BE AC = iota
	BK
	VI
	VO
)

func (a AC) String() string { return [...]string{"BE", "BK", "VI", "VO"}[a] }

// ParseAC reads an access category name.
func ParseAC(s string) (AC, error) {
	switch strings.ToUpper(s) {
	case "BE", "":
		return BE, nil
	case "BK":
		return BK, nil
	case "VI":
		return VI, nil
	case "VO":
		return VO, nil
	}
	return 0, fmt.Errorf("access category %q: want BE, BK, VI or VO", s)
}

// TIDAC maps a QoS TID to its access category (802.11-2016 Table 10-1).
func TIDAC(tid int) AC {
	switch tid & 7 {
	case 1, 2:
		return BK
	case 4, 5:
		return VI
	case 6, 7:
		return VO
	}
	return BE
}

// EDCA is one access category's contention parameters.
type EDCA struct {
	AIFSN        int
	CWMin, CWMax int
	// TXOP is the TXOP limit (0: one frame exchange per access).
	TXOP time.Duration
}

// MAC is the timing of one BSS's channel.
type MAC struct {
	Band  Band
	Slot  time.Duration
	SIFS  time.Duration
	QoS   bool
	Param map[AC]EDCA
	// BasicRates are the BSS basic rates (kbit/s): control responses are
	// sent at the highest of them not above the data rate.
	BasicRates []int
	// RetryLimit is the number of attempts per MPDU (0: retry without
	// end, as Bianchi's model assumes).
	RetryLimit int
	// Bianchi: after a collision everyone resumes after the colliding
	// frame plus DIFS (Bianchi's Tc = H + P + DIFS), not after the ACK
	// timeout (senders) and EIFS (the others) as 802.11 says.
	Bianchi bool
}

// DefaultMAC is the channel timing emuctl's access points get: 9 µs slots
// (short slot on 2.4 GHz, no 802.11b stations), SIFS 16 µs (10 µs on
// 2.4 GHz, whose OFDM frames carry the 6 µs signal extension instead),
// WMM's default EDCA parameter set for stations (BE 3/15/1023, BK
// 7/15/1023, VI 2/7/15, VO 2/3/7), hostapd's default basic rates, and
// mac80211_hwsim's retry budget (11 attempts). Mode b: 20 µs slots, CW
// 31–1023, SIFS 10 µs.
func DefaultMAC(m Mode, b Band, qos bool) MAC {
	c := MAC{Band: b, Slot: 9 * time.Microsecond, SIFS: 16 * time.Microsecond, QoS: qos, RetryLimit: 11}
	if b == Band2G4 {
		c.SIFS = 10 * time.Microsecond
	}
	cwmin := 15
	if m == ModeB {
		c.Slot = 20 * time.Microsecond
		cwmin = 31
	}
	if qos {
		c.Param = map[AC]EDCA{
			BE: {AIFSN: 3, CWMin: cwmin, CWMax: 1023},
			BK: {AIFSN: 7, CWMin: cwmin, CWMax: 1023},
			VI: {AIFSN: 2, CWMin: (cwmin+1)/2 - 1, CWMax: cwmin, TXOP: 3008 * time.Microsecond},
			VO: {AIFSN: 2, CWMin: (cwmin+1)/4 - 1, CWMax: (cwmin+1)/2 - 1, TXOP: 1504 * time.Microsecond},
		}
	} else {
		d := EDCA{AIFSN: 2, CWMin: cwmin, CWMax: 1023}
		c.Param = map[AC]EDCA{BE: d, BK: d, VI: d, VO: d}
	}
	switch {
	case b == Band2G4 && m == ModeB:
		c.BasicRates = []int{1000, 2000}
	case b == Band2G4:
		c.BasicRates = []int{1000, 2000, 5500, 11000} // hostapd's hw_mode=g default
	default:
		c.BasicRates = []int{6000, 12000, 24000}
	}
	return c
}

// AIFS is the arbitration interframe space of an access category
// (DIFS = SIFS + 2 slots without QoS).
func (c MAC) AIFS(ac AC) time.Duration {
	return c.SIFS + time.Duration(c.Param[ac].AIFSN)*c.Slot
}

// sifsAfter is the gap between a frame and its response: SIFS, which on
// 2.4 GHz follows the ERP-OFDM signal extension already counted in the
// frame's airtime.
func (c MAC) sifsAfter() time.Duration { return c.SIFS }

// Frame sizes (bytes), IEEE 802.11-2016 9.3.
const (
	ACKBytes       = 14 // FC 2, duration 2, RA 6, FCS 4
	BlockAckBytes  = 32 // compressed, 64-bit bitmap
	BlockAckReqLen = 24
	FCSBytes       = 4
	LLCBytes       = 8 // LLC/SNAP before the IP header
	IPv4Bytes      = 20
	UDPBytes       = 8
	TCPBytes       = 32 // 20 + timestamps option (Linux and ns-3 default)
	delimiterBytes = 4  // A-MPDU subframe delimiter
)

// MACHeader is the data frame header: 26 bytes for QoS data, 24 without.
func (c MAC) MACHeader() int {
	if c.QoS {
		return 26
	}
	return 24
}

// MPDUBytes is the MPDU length (header, LLC/SNAP, IP packet, FCS) of an
// IP packet of ipLen bytes.
func (c MAC) MPDUBytes(ipLen int) int { return c.MACHeader() + LLCBytes + ipLen + FCSBytes }

// ACKTime is the airtime of an ACK answering a frame sent at r.
func (c MAC) ACKTime(r Rate) time.Duration {
	return TxTime(ControlRate(r, c.BasicRates), ACKBytes, c.Band)
}

// BATime is the airtime of a compressed Block Ack answering r.
func (c MAC) BATime(r Rate) time.Duration {
	return TxTime(ControlRate(r, c.BasicRates), BlockAckBytes, c.Band)
}

// ACKTimeout is how long a sender waits for an ACK before it counts the
// attempt as failed: SIFS + slot + PHY-RX-START delay (25 µs OFDM, 192 µs
// DSSS long preamble), then it contends again after AIFS.
func (c MAC) ACKTimeout(r Rate) time.Duration {
	start := 25 * time.Microsecond
	if ControlRate(r, c.BasicRates).Class == DSSS {
		start = 192 * time.Microsecond
	}
	return c.SIFS + c.Slot + start
}

// EIFS is what a station that received a frame in error waits instead of
// AIFS: SIFS + an ACK at the lowest basic rate + AIFS.
func (c MAC) EIFS(ac AC) time.Duration {
	lowest := c.BasicRates[0]
	for _, k := range c.BasicRates {
		lowest = min(lowest, k)
	}
	cls := OFDM
	if _, ok := legacyMod[lowest]; !ok {
		cls = DSSS
	}
	return c.SIFS + TxTime(Rate{Class: cls, Kbps: lowest}, ACKBytes, c.Band) + c.AIFS(ac)
}

// Aggregation limits.
const (
	MaxAMPDUSubframes = 64
	PPDUMaxTime       = 5484 * time.Microsecond // aPPDUMaxTime (HT/VHT/HE)
)

// MaxAMPDUBytes is the largest A-MPDU a class carries (HT 65 535,
// VHT 1 048 575, HE 6 500 631 bytes).
func MaxAMPDUBytes(c Class) int {
	switch c {
	case HT:
		return 65535
	case VHT:
		return 1048575
	case HE:
		return 6500631
	}
	return 0
}

// AMPDUBytes is the A-MPDU length of n MPDUs of mpdu bytes: each
// subframe is a 4-byte delimiter and the MPDU padded to 4 bytes (the
// last one unpadded).
func AMPDUBytes(n, mpdu int) int {
	if n <= 0 {
		return 0
	}
	sub := delimiterBytes + mpdu
	padded := (sub + 3) / 4 * 4
	return (n-1)*padded + sub
}

// MaxMPDUsPerAMPDU is how many MPDUs of mpdu bytes one A-MPDU at r can
// carry: bounded by the 64-frame Block Ack window (or window), the
// class's length limit and aPPDUMaxTime.
func MaxMPDUsPerAMPDU(r Rate, mpdu int, b Band, window int) int {
	if r.Class < HT {
		return 1
	}
	if window <= 0 || window > MaxAMPDUSubframes {
		window = MaxAMPDUSubframes
	}
	n := window
	for n > 1 && (AMPDUBytes(n, mpdu) > MaxAMPDUBytes(r.Class) || TxTime(r, AMPDUBytes(n, mpdu), b) > PPDUMaxTime) {
		n--
	}
	return n
}
