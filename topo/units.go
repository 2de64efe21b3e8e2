package topo

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Rate limits (bit/s).
const (
	MinRate uint64 = 1_000           // 1 kbit/s
	MaxRate uint64 = 100_000_000_000 // 100 Gbit/s
)

// MaxDelay bounds delay and jitter: anything longer is a typo.
const MaxDelay = 60 * time.Second

// rateUnits maps lower-cased suffixes to bit/s multipliers. A bare k/m/g/t
// means bits, as in "10M".
var rateUnits = map[string]float64{
	"bit": 1, "kbit": 1e3, "mbit": 1e6, "gbit": 1e9, "tbit": 1e12,
	"k": 1e3, "m": 1e6, "g": 1e9, "t": 1e12,
	"kibit": 1 << 10, "mibit": 1 << 20, "gibit": 1 << 30, "tibit": 1 << 40,
}

// ParseRate parses a bit rate in bit/s: a decimal number followed by a
// tc-style unit bit, kbit, mbit, gbit, tbit (or kibit, mibit, ...; or just
// k, M, G, T meaning bits), case-insensitive, optionally followed by "/s":
// "10mbit", "1.5Gbit", "100kbit", "10M". The result lies in 1 kbit/s ..
// 100 Gbit/s. Byte units (tc's "mbps" is megaBYTES per second) and bare
// numbers (bytes/s in tc, Mbit/s in Mininet's bw=) are rejected as ambiguous.
func ParseRate(s string) (uint64, error) {
	num, unit, ok := splitNumber(s)
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
	if v < float64(MinRate) || v > float64(MaxRate) {
		return 0, fmt.Errorf("rate %q is out of range (valid: 1kbit .. 100gbit)", s)
	}
	return uint64(math.Round(v)), nil
}

func isByteRate(u string) bool {
	switch u {
	case "bps", "kbps", "mbps", "gbps", "tbps", "b", "kb", "mb", "gb", "tb",
		"kibps", "mibps", "gibps", "tibps", "byte", "bytes", "kib", "mib", "gib":
		return true
	}
	return false
}

// FormatRate renders a rate in bit/s with the largest exact tc unit:
// 10000000 -> "10mbit", 1500 -> "1500bit".
func FormatRate(bps uint64) string {
	for _, u := range []struct {
		name string
		mult uint64
	}{{"tbit", 1e12}, {"gbit", 1e9}, {"mbit", 1e6}, {"kbit", 1e3}} {
		if bps >= u.mult && bps%u.mult == 0 {
			return strconv.FormatUint(bps/u.mult, 10) + u.name
		}
	}
	return strconv.FormatUint(bps, 10) + "bit"
}

// tcDurationUnits are tc spellings accepted besides Go's.
var tcDurationUnits = map[string]string{"usec": "us", "usecs": "us", "msec": "ms", "msecs": "ms", "sec": "s", "secs": "s"}

// ParseDuration parses a delay or jitter: Go duration syntax ("5ms",
// "1.5ms", "250us", "250µs", "1s") or tc's "5msec", "250usec", "1sec".
// It must be >= 0 and < 60s. A bare number is rejected: it needs a unit.
func ParseDuration(s string) (time.Duration, error) {
	t := strings.TrimSpace(s)
	num, unit, ok := splitNumber(t)
	if ok && unit == "" {
		if num == "0" {
			return 0, nil
		}
		return 0, fmt.Errorf("duration %q has no unit: write e.g. %sms or %sus", s, num, num)
	}
	if ok {
		if u, tc := tcDurationUnits[strings.ToLower(unit)]; tc {
			unit = u
		}
		t = num + unit
	}
	d, err := time.ParseDuration(t)
	if err != nil || strings.HasPrefix(t, "+") {
		return 0, fmt.Errorf("duration %q is not valid (e.g. 5ms, 250us, 1.5s)", s)
	}
	if d < 0 {
		return 0, fmt.Errorf("duration %q is negative (valid: 0 .. 60s)", s)
	}
	if d >= MaxDelay {
		return 0, fmt.Errorf("duration %q is too long (valid: 0 .. 60s)", s)
	}
	return d, nil
}

// ParsePercent parses a loss probability in percent: "1%", "0.5%", or a
// plain number that also means percent ("1" = 1%, "0.01" = 0.01%, not 1%).
// The range is 0..100.
func ParsePercent(s string) (float64, error) {
	t := strings.TrimSpace(s)
	t = strings.TrimSpace(strings.TrimSuffix(t, "%"))
	num, unit, ok := splitNumber(t)
	if !ok || unit != "" {
		return 0, fmt.Errorf("percentage %q is not a number (e.g. 1%%, 0.5%%; a plain number also means percent)", s)
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("percentage %q is not a number", s)
	}
	if f < 0 || f > 100 {
		return 0, fmt.Errorf("percentage %q is out of range (valid: 0%% .. 100%%)", s)
	}
	return f, nil
}

// Queue limits.
const (
	MaxQueuePackets = 1 << 24
	MaxQueueBytes   = 1 << 32
	MaxQueueBDP     = 1000
)

var byteUnits = map[string]int64{
	"b": 1, "byte": 1, "bytes": 1,
	"kb": 1e3, "mb": 1e6, "gb": 1e9,
	"kib": 1 << 10, "mib": 1 << 20, "gib": 1 << 30,
}

// ParseQueue parses a queue limit: a number of packets ("100"), a size in
// bytes ("1500b", "150kB" = 150000 bytes, "64KiB" = 65536 bytes, "1MB"), or
// a multiple of the bandwidth-delay product ("2bdp", "0.5bdp"), which then
// needs a rate and a delay on the link.
func ParseQueue(s string) (*Queue, error) {
	num, unit, ok := splitNumber(strings.TrimSpace(s))
	if !ok {
		return nil, fmt.Errorf("queue %q is not valid (e.g. 100 packets, 150kB, 64KiB, 2bdp)", s)
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return nil, fmt.Errorf("queue %q: bad number %q", s, num)
	}
	u := strings.ToLower(unit)
	switch {
	case u == "" || u == "p" || u == "pkt" || u == "pkts" || u == "packets":
		if f != math.Trunc(f) || f < 1 || f > MaxQueuePackets {
			return nil, fmt.Errorf("queue %q: packets must be a whole number in 1 .. %d", s, MaxQueuePackets)
		}
		return &Queue{Packets: int(f)}, nil
	case u == "bdp":
		if f <= 0 || f > MaxQueueBDP {
			return nil, fmt.Errorf("queue %q: bdp multiple must be > 0 and <= %d", s, MaxQueueBDP)
		}
		return &Queue{BDP: f}, nil
	case byteUnits[u] != 0:
		v := f * float64(byteUnits[u])
		if v != math.Trunc(v) || v < 1 || v > MaxQueueBytes {
			return nil, fmt.Errorf("queue %q: bytes must be a whole number in 1 .. 4GiB", s)
		}
		return &Queue{Bytes: int64(v)}, nil
	case strings.HasSuffix(u, "bit") || strings.HasSuffix(u, "bps"):
		return nil, fmt.Errorf("queue %q is a rate; a queue is packets (100), bytes (150kB, 64KiB) or a BDP multiple (2bdp)", s)
	}
	return nil, fmt.Errorf("queue %q has unknown unit %q (valid: packets as a plain number, b, kB, KiB, MB, MiB, bdp)", s, unit)
}

// splitNumber splits "1.5gbit" into "1.5" and "gbit". The number is plain
// decimal digits with at most one dot (no sign, exponent, hex, inf or nan).
func splitNumber(s string) (num, unit string, ok bool) {
	s = strings.TrimSpace(s)
	i, dots, digits := 0, 0, 0
	for ; i < len(s); i++ {
		c := s[i]
		if c == '.' {
			dots++
			continue
		}
		if c < '0' || c > '9' {
			break
		}
		digits++
	}
	if digits == 0 || dots > 1 || len(s[:i]) > 32 {
		return "", "", false
	}
	return s[:i], strings.TrimSpace(s[i:]), true
}

// Gilbert-Elliott defaults, as in netem's "loss gemodel p r": a packet in
// the bad state is always lost, one in the good state never.
const (
	DefaultGEBadLoss  = 100.0
	DefaultGEGoodLoss = 0.0
)

// ParseGilbertElliott parses Gilbert-Elliott burst loss in --link syntax:
// "p/r[/bad_loss[/good_loss]]", each a percentage ("1%/25%",
// "1%/25%/90%/0.1%"), in the order of netem's "loss gemodel p r 1-h 1-k".
// bad_loss defaults to 100%, good_loss to 0%; r must be above 0.
func ParseGilbertElliott(s string) (*GilbertElliott, error) {
	parts := strings.Split(s, "/")
	if len(parts) < 2 || len(parts) > 4 {
		return nil, fmt.Errorf("ge %q is not p/r[/bad_loss[/good_loss]] in percent (e.g. 1%%/25%% or 1%%/25%%/100%%/0%%, netem's gemodel p r 1-h 1-k)", clip(s))
	}
	g := GilbertElliott{BadLoss: DefaultGEBadLoss, GoodLoss: DefaultGEGoodLoss}
	fields := []*float64{&g.P, &g.R, &g.BadLoss, &g.GoodLoss}
	var msgs []string
	for i, part := range parts {
		v, err := ParsePercent(part)
		if err != nil {
			msgs = append(msgs, geNames[i]+": "+err.Error())
			continue
		}
		*fields[i] = v
	}
	if len(msgs) > 0 {
		return nil, fmt.Errorf("ge %q: %s", clip(s), strings.Join(msgs, "; "))
	}
	if msg := g.check(); msg != "" {
		return nil, fmt.Errorf("ge %q: %s", clip(s), msg)
	}
	return &g, nil
}

// geNames are the ge keys in positional (netem) order.
var geNames = []string{"p", "r", "bad_loss", "good_loss"}

// check returns what is wrong with a complete model, or "".
func (g *GilbertElliott) check() string {
	if g.R == 0 {
		return "r 0% never leaves the bad state (a dead link once it is entered): use r > 0, or loss: 100% for a link that drops everything"
	}
	return ""
}
