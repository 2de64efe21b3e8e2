package traffic

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseDuration parses a flow duration, offset or interval: Go syntax
// ("20s", "100ms", "1m30s"); a bare number needs a unit.
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(s)
	if _, err := strconv.ParseFloat(s, 64); err == nil && s != "0" {
		return 0, fmt.Errorf("duration %q has no unit: write e.g. %ss or %sms", s, s, s)
	}
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, fmt.Errorf("duration %q is not valid (e.g. 20s, 100ms, 1m30s)", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("duration %q is negative", s)
	}
	return d, nil
}

var byteUnits = map[string]int64{"": 1, "b": 1, "k": 1 << 10, "kb": 1e3, "kib": 1 << 10, "m": 1 << 20,
	"mb": 1e6, "mib": 1 << 20, "g": 1 << 30, "gb": 1e9, "gib": 1 << 30}

// ParseBytes parses a buffer size: bytes ("262144"), or with a unit
// ("256KiB", "4MiB", "1MB"; bare K/M/G are binary, as in iperf3's -w).
func ParseBytes(s string) (int, error) {
	t := strings.ToLower(strings.TrimSpace(s))
	i := len(t)
	for i > 0 && (t[i-1] < '0' || t[i-1] > '9') && t[i-1] != '.' {
		i--
	}
	mult, ok := byteUnits[t[i:]]
	v, err := strconv.ParseFloat(t[:i], 64)
	if !ok || err != nil || v < 0 {
		return 0, fmt.Errorf("size %q is not valid (e.g. 262144, 256KiB, 4MiB)", s)
	}
	n := v * float64(mult)
	if n > 1<<31-1 {
		return 0, fmt.Errorf("size %q is too large (at most 2 GiB)", s)
	}
	return int(n), nil
}
