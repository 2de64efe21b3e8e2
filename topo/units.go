package topo

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/emuctl/emuctl/units"
)

// Queue limits.
const (
	MaxQueuePackets = 1 << 24
	MaxQueueBytes   = 1 << 32
	MaxQueueBDP     = 1000
)

// ParseQueue parses a queue limit: a number of packets ("100"), a size in
// bytes ("1500b", "150kB" = 150000 bytes, "64KiB" = 65536 bytes, "1MB"), or
// a multiple of the bandwidth-delay product ("2bdp", "0.5bdp"), which then
// needs a rate and a delay on the link.
//
// A queue with a discipline is written as tc would: the discipline, then
// its parameters ("codel", "fq_codel limit 1000 target 5ms ecn", "red
// limit 400 min 20 max 60 probability 10% ecn"; see queue.go).
func ParseQueue(s string) (*Queue, error) {
	if f := strings.Fields(s); len(f) > 0 && isWord(f[0]) {
		return parseDisciplineString(s)
	}
	num, unit, ok := units.SplitNumber(s)
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
	case byteUnit(u) != 0:
		v := f * float64(byteUnit(u))
		if v != math.Trunc(v) || v < 1 || v > MaxQueueBytes {
			return nil, fmt.Errorf("queue %q: bytes must be a whole number in 1 .. 4GiB", s)
		}
		return &Queue{Bytes: units.Bytes(v)}, nil
	case strings.HasSuffix(u, "bit") || strings.HasSuffix(u, "bps"):
		return nil, fmt.Errorf("queue %q is a rate; a queue is packets (100), bytes (150kB, 64KiB) or a BDP multiple (2bdp)", s)
	}
	return nil, fmt.Errorf("queue %q has unknown unit %q (valid: packets as a plain number, b, kB, KiB, MB, MiB, bdp)", s, unit)
}

// isWord reports whether s starts with a letter, as a discipline's name
// does and a size never does.
func isWord(s string) bool {
	c := s[0]
	return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// byteUnit is the multiplier of a size unit (0 for none). Bare k, m, g
// mean packets' neighbours here, so only b, kB, KiB and the like count.
func byteUnit(u string) units.Bytes {
	if len(u) == 1 && u != "b" {
		return 0
	}
	m, _ := units.ByteUnit(u)
	return m
}
