package units

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// BitRate is a rate in bits per second. On a link it counts the Ethernet
// header too (what tc's rate and the wire count): a full 1514-byte frame
// carries 1448 bytes of TCP payload, so a 10 Mbit/s link delivers
// 10 × 1448/1514 Mbit/s of goodput.
type BitRate uint64

// Bit rates.
const (
	Bit  BitRate = 1
	Kbit BitRate = 1_000
	Mbit BitRate = 1_000_000
	Gbit BitRate = 1_000_000_000
	Tbit BitRate = 1_000_000_000_000
)

// The range ParseBitRate accepts.
const (
	MinBitRate = Kbit       // 1 kbit/s
	MaxBitRate = 100 * Gbit // 100 Gbit/s
)

// ByteRate is a rate in bytes per second: what netem's and TBF's kernel
// fields and tc's "mbps" (megaBYTES per second) hold.
type ByteRate uint64

// Bytes converts r to bytes per second, rounded to the nearest byte and
// never below 1 for a non-zero rate (a zero ByteRate means unlimited to
// the kernel).
func (r BitRate) Bytes() ByteRate {
	if r == 0 {
		return 0
	}
	return ByteRate(max(1, (uint64(r)+4)/8))
}

// Bits converts r to bits per second.
func (r ByteRate) Bits() BitRate { return BitRate(r * 8) }

// BitsPerSecond is r as a float, for arithmetic with times and sizes.
func (r BitRate) BitsPerSecond() float64 { return float64(r) }

// Mbps is r in Mbit/s.
func (r BitRate) Mbps() float64 { return float64(r) / 1e6 }

// rateUnits maps lower-cased suffixes to bit/s multipliers. A bare k/m/g/t
// means bits, as in "10M".
var rateUnits = map[string]float64{
	"bit": 1, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9, "tbit": 1e12,
	"k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12,
	"kibit": 1 << 10, "mibit": 1 << 20, "gibit": 1 << 30, "tibit": 1 << 40,
}

// ParseBitRate parses a bit rate: a decimal number followed by a tc-style
// unit bit, kbit, mbit, gbit, tbit (or kibit, mibit, ...; or just k, M, G,
// T meaning bits), case-insensitive, optionally followed by "/s": "10mbit",
// "1.5Gbit", "100kbit", "10M". The result lies in 1 kbit/s .. 100 Gbit/s.
// Byte units (tc's "mbps" is megaBYTES per second) and bare numbers
// (bytes/s in tc, Mbit/s in Mininet's bw=) are rejected as ambiguous.
func ParseBitRate(s string) (BitRate, error) {
	num, unit, ok := SplitNumber(s)
	if !ok {
		return 0, fmt.Errorf("rate %q is not a number with a unit (e.g. 10mbit, 1.5gbit, 100kbit)", s)
	}
	u := strings.TrimSuffix(strings.ToLower(unit), "/s")
	if u == "" {
		return 0, fmt.Errorf("rate %q has no unit: write e.g. %smbit or %skbit (a bare number means bytes/s in tc and Mbit/s in Mininet)", s, num, num)
	}
	mult, ok := rateUnits[u]
	if !ok {
		if isByteRate(u) {
			return 0, fmt.Errorf("rate %q is in bytes per second (tc reads %q as bytes/s): write bits instead, e.g. %smbit for megabits or multiply by 8", s, unit, num)
		}
		return 0, fmt.Errorf("rate %q has unknown unit %q (valid: bit, kbit, mbit, gbit, tbit, k, M, G, T)", s, unit)
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("rate %q: bad number %q", s, num)
	}
	v := f * mult
	if v < float64(MinBitRate) || v > float64(MaxBitRate) {
		return 0, fmt.Errorf("rate %q is out of range (valid: 1kbit .. 100gbit)", s)
	}
	return BitRate(math.Round(v)), nil
}

func isByteRate(u string) bool {
	switch u {
	case "bps", "kbps", "mbps", "gbps", "tbps", "b", "kb", "mb", "gb", "tb",
		"kibps", "mibps", "gibps", "tibps", "byte", "bytes", "kib", "mib", "gib":
		return true
	}
	return false
}

// String renders r exactly, with the largest tc unit that divides it, so
// ParseBitRate reads it back: 10000000 → "10mbit", 1500 → "1500bit".
func (r BitRate) String() string {
	for _, u := range []struct {
		name string
		mult BitRate
	}{{"tbit", Tbit}, {"gbit", Gbit}, {"mbit", Mbit}, {"kbit", Kbit}} {
		if r >= u.mult && r%u.mult == 0 {
			return strconv.FormatUint(uint64(r/u.mult), 10) + u.name
		}
	}
	return strconv.FormatUint(uint64(r), 10) + "bit"
}

// TC renders r the way tc shows it (bit, Kbit, Mbit, Gbit, with decimals):
// 1500000 → "1.5Mbit". For display; String is the exact form.
func (r BitRate) TC() string {
	switch {
	case r >= Gbit && r%Mbit == 0:
		return fmt.Sprintf("%gGbit", float64(r)/1e9)
	case r >= Mbit && r%Kbit == 0:
		return fmt.Sprintf("%gMbit", float64(r)/1e6)
	case r >= Kbit:
		return fmt.Sprintf("%gKbit", float64(r)/1e3)
	}
	return fmt.Sprintf("%dbit", uint64(r))
}

// String renders a byte rate as tc does for netem and TBF ("1.25MB/s"
// would be ambiguous): its bit rate followed by the byte count, e.g.
// "10Mbit (1250000 B/s)".
func (r ByteRate) String() string {
	return r.Bits().TC() + " (" + strconv.FormatUint(uint64(r), 10) + " B/s)"
}

// Set parses s with ParseBitRate (flag.Value).
func (r *BitRate) Set(s string) error {
	v, err := ParseBitRate(s)
	if err != nil {
		return err
	}
	*r = v
	return nil
}

// Type names the flag's value in help text (pflag.Value).
func (*BitRate) Type() string { return "rate" }
