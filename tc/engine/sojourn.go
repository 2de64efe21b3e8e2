package engine

import (
	"math"
	"math/bits"
	"time"
)

// sojournHist counts queueing delays (how long a packet waited before
// its transmission started) in logarithmic buckets: 32 per doubling
// from 1 µs, so a percentile read from it is within 2.2 % of the exact
// value; delays below 1 µs share bucket 0. Fixed size (28 doublings,
// up to ~4.5 minutes), no allocation per packet.
type sojournHist struct {
	n      uint64
	max    int64
	bucket [hBuckets]uint64
}

const (
	hPerOctave = 32
	hOctaves   = 28
	hBuckets   = hPerOctave*hOctaves + 1
)

func (h *sojournHist) add(ns int64) {
	h.n++
	h.max = max(h.max, ns)
	h.bucket[hIndex(ns)]++
}

// hIndex is the bucket of a delay in ns: 0 below 1 µs, then
// 1 + 32·log2(µs) rounded down.
func hIndex(ns int64) int {
	us := float64(ns) / 1e3
	if us < 1 {
		return 0
	}
	oct := bits.Len64(uint64(us)) - 1
	frac := us/float64(uint64(1)<<oct) - 1 // [0, 1)
	i := 1 + oct*hPerOctave + int(math.Log2(1+frac)*hPerOctave)
	return min(i, hBuckets-1)
}

// hLower is the lower bound (ns) of bucket i.
func hLower(i int) float64 {
	if i == 0 {
		return 0
	}
	return 1e3 * math.Exp2(float64(i-1)/hPerOctave)
}

// quantile returns the q-quantile (0..1), interpolating inside the
// bucket geometrically; 0 when empty. It never exceeds the maximum.
func (h *sojournHist) quantile(q float64) time.Duration {
	if h.n == 0 {
		return 0
	}
	rank := q * float64(h.n)
	var seen float64
	for i, c := range h.bucket {
		if c == 0 {
			continue
		}
		if seen+float64(c) >= rank {
			lo := hLower(i)
			hi := hLower(i + 1)
			if i == 0 {
				return time.Duration(min(float64(h.max), (rank/float64(c))*1e3))
			}
			f := (rank - seen) / float64(c)
			v := lo * math.Pow(hi/lo, f)
			return time.Duration(min(v, float64(h.max)))
		}
		seen += float64(c)
	}
	return time.Duration(h.max)
}

// Sojourn summarises the queueing delay of the packets a direction
// transmitted: how long each waited in its bottleneck queue before its
// transmission started (the one in service does not wait for itself),
// for every discipline, drop-tail included. Percentiles come from a
// histogram with 2.2 % resolution.
type Sojourn struct {
	Packets uint64        `json:"packets"`
	P50     time.Duration `json:"p50"`
	P95     time.Duration `json:"p95"`
	P99     time.Duration `json:"p99"`
	Max     time.Duration `json:"max"`
}

func (h *sojournHist) summary() Sojourn {
	return Sojourn{Packets: h.n, P50: h.quantile(0.5), P95: h.quantile(0.95), P99: h.quantile(0.99), Max: time.Duration(h.max)}
}
