package units

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Bytes is a size in bytes: a buffer, a queue limit, a transfer.
type Bytes int64

// Sizes. K, M and G are binary (as in iperf3's -w and the kernel's
// buffers); kB, MB and GB are decimal.
const (
	Byte Bytes = 1
	KB   Bytes = 1_000
	MB   Bytes = 1_000_000
	GB   Bytes = 1_000_000_000
	KiB  Bytes = 1 << 10
	MiB  Bytes = 1 << 20
	GiB  Bytes = 1 << 30
)

// byteUnits maps lower-cased suffixes to multipliers. Bare k, m, g are
// binary, as in iperf3's -w.
var byteUnits = map[string]Bytes{
	"b": 1, "byte": 1, "bytes": 1,
	"k": KiB, "kb": KB, "kib": KiB,
	"m": MiB, "mb": MB, "mib": MiB,
	"g": GiB, "gb": GB, "gib": GiB,
}

// ByteUnit returns the multiplier of a size unit ("kB", "MiB", "b", ...;
// case-insensitive), and whether it is one.
func ByteUnit(u string) (Bytes, bool) {
	m, ok := byteUnits[strings.ToLower(u)]
	return m, ok
}

// MaxBytes bounds ParseBytes: a socket buffer is an int in the kernel.
const MaxBytes = 1<<31 - 1

// ParseBytes parses a size: bytes ("262144"), or with a unit ("256KiB",
// "4MiB", "1MB", "1500b"; bare K, M, G are binary, as in iperf3's -w).
// The result is a whole number of bytes in 0 .. 2 GiB.
func ParseBytes(s string) (Bytes, error) {
	num, unit, ok := SplitNumber(s)
	mult := Byte
	if ok && unit != "" {
		mult, ok = ByteUnit(unit)
	}
	if !ok {
		return 0, fmt.Errorf("size %q is not valid (e.g. 262144, 256KiB, 4MiB)", s)
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("size %q is not valid (e.g. 262144, 256KiB, 4MiB)", s)
	}
	v := f * float64(mult)
	if v > MaxBytes {
		return 0, fmt.Errorf("size %q is too large (at most 2 GiB)", s)
	}
	if v != math.Trunc(v) {
		return 0, fmt.Errorf("size %q is not a whole number of bytes", s)
	}
	return Bytes(v), nil
}

// String renders b with the largest binary unit that divides it, so
// ParseBytes reads it back: 4194304 → "4MiB", 1500 → "1500b".
func (b Bytes) String() string {
	for _, u := range []struct {
		name string
		mult Bytes
	}{{"GiB", GiB}, {"MiB", MiB}, {"KiB", KiB}} {
		if b >= u.mult && b%u.mult == 0 {
			return strconv.FormatInt(int64(b/u.mult), 10) + u.name
		}
	}
	return strconv.FormatInt(int64(b), 10) + "b"
}

// Set parses s with ParseBytes (flag.Value).
func (b *Bytes) Set(s string) error {
	v, err := ParseBytes(s)
	if err != nil {
		return err
	}
	*b = v
	return nil
}

// Type names the flag's value in help text (pflag.Value).
func (*Bytes) Type() string { return "size" }
