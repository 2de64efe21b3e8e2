// Package mmtrace reads mahimahi link traces: one unsigned integer per
// line, the millisecond of a delivery opportunity of Bytes bytes. Pure: no
// I/O beyond the reader it is given, no OS dependencies; topo reads the
// files with it and tc/engine replays them.
package mmtrace

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"
)

// Bytes is what one delivery opportunity of a mahimahi trace carries:
// mahimahi's PACKET_SIZE, a 1500-byte IP packet plus the 4-byte tun_pi
// header its TUN device is opened with.
const Bytes = 1504

// Cost is what a frame of wire bytes costs on a traced direction:
// mahimahi counts IP bytes plus the 4-byte tun_pi, the engine sees the
// Ethernet frame (14-byte header). A 1514-byte frame costs exactly one
// opportunity, a 66-byte ACK 56 bytes of one.
func Cost(wire int) int { return max(1, wire-14+4) }

// Error is a problem at a line of a trace file (1-based line and
// column).
type Error struct {
	Line, Col int
	Msg       string
}

func (e *Error) Error() string { return fmt.Sprintf("%d:%d: %s", e.Line, e.Col, e.Msg) }

// Parse reads a mahimahi trace: one unsigned integer (ms) per line,
// nondecreasing, no empty line, the last one > 0. Surrounding blanks and
// a CR are tolerated. Errors are *Error (line:col) or the reader's.
func Parse(r io.Reader) ([]uint32, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var ms []uint32
	line := 0
	for sc.Scan() {
		line++
		raw := sc.Text()
		text := strings.TrimRight(raw, " \t\r")
		trimmed := strings.TrimLeft(text, " \t")
		col := len(text) - len(trimmed) + 1
		if trimmed == "" {
			return nil, &Error{line, 1, "empty line: each line is one delivery opportunity, a timestamp in ms"}
		}
		v, err := strconv.ParseUint(trimmed, 10, 32)
		if err != nil {
			return nil, &Error{line, col, fmt.Sprintf("%q is not a timestamp: each line is one unsigned integer, the ms of a 1504-byte delivery opportunity", trimmed)}
		}
		if n := len(ms); n > 0 && uint32(v) < ms[n-1] {
			return nil, &Error{line, col, fmt.Sprintf("timestamp %d comes before %d on line %d: a trace is nondecreasing", v, ms[n-1], line-1)}
		}
		ms = append(ms, uint32(v))
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(ms) == 0 {
		return nil, &Error{1, 1, "the trace is empty: it needs at least one delivery opportunity (a timestamp in ms per line)"}
	}
	if ms[len(ms)-1] == 0 {
		return nil, &Error{line, 1, "the last timestamp is 0: the trace's period (its last timestamp) must be > 0"}
	}
	return ms, nil
}

// Stats describes a trace the way users compare them: its length,
// mean rate (each opportunity Bytes bytes), the worst and best whole
// second, and the longest time without an opportunity.
type Stats struct {
	Opportunities int
	Length        time.Duration
	MeanBps       float64
	MinBps        float64 // worst whole second (0 when shorter than 1 s)
	MaxBps        float64
	LongestGap    time.Duration
}

// Summarize summarises ms (a valid trace).
func Summarize(ms []uint32) Stats {
	s := Stats{Opportunities: len(ms)}
	if len(ms) == 0 {
		return s
	}
	period := ms[len(ms)-1]
	s.Length = time.Duration(period) * time.Millisecond
	s.MeanBps = float64(len(ms)) * Bytes * 8 / s.Length.Seconds()
	perSec := make([]int, int(period/1000))
	prev := uint32(0)
	for _, v := range ms {
		if i := int(v / 1000); i < len(perSec) {
			perSec[i]++
		}
		if gap := time.Duration(v-prev) * time.Millisecond; gap > s.LongestGap {
			s.LongestGap = gap
		}
		prev = v
	}
	if len(perSec) > 0 {
		s.MinBps = math.Inf(1)
		for _, n := range perSec {
			bps := float64(n) * Bytes * 8
			s.MinBps = min(s.MinBps, bps)
			s.MaxBps = max(s.MaxBps, bps)
		}
	}
	return s
}

// LTE returns a synthetic LTE-like trace of length ms, deterministic for
// a seed: the cell's rate wanders around mean (a log-normal level redrawn
// every 0.5–1.5 s, as a moving user's channel and load change), a
// scheduler grants opportunities in bursts every 1–4 ms (as LTE's TTIs and
// HARQ make them), and now and then (about once every 15 s) the link goes
// silent for 0.2–0.8 s (a handover). Its statistics are computed, not
// claimed: Summarize it. No mahimahi trace is used or reproduced.
func LTE(seed uint64, meanBps float64, ms uint32) []uint32 {
	rng := rand.New(rand.NewPCG(seed, 0x4c5445)) // "LTE"
	perMs := meanBps / (Bytes * 8) / 1000        // opportunities per ms at the mean
	var out []uint32
	t, level, next := uint32(0), 1.0, uint32(0)
	debt := 0.0
	for t < ms {
		if t >= next {
			level = math.Exp(rng.NormFloat64()*0.6 - 0.18) // mean ≈ 1
			next = t + 500 + uint32(rng.IntN(1000))
			if rng.IntN(30) == 0 { // a handover: silence
				gap := 200 + uint32(rng.IntN(600))
				t += gap
				debt = 0
				continue
			}
		}
		step := 1 + uint32(rng.IntN(4))
		debt += perMs * level * float64(step)
		for ; debt >= 1; debt-- {
			out = append(out, t)
		}
		t += step
	}
	return append(out, ms)
}
