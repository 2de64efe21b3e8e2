package tc

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// TraceBytes is what one delivery opportunity of a mahimahi trace carries:
// mahimahi's PACKET_SIZE, a 1500-byte IP packet plus the 4-byte tun_pi
// header its TUN device is opened with.
const TraceBytes = 1504

// TraceCost is what a frame of wire bytes costs on a traced direction:
// mahimahi counts IP bytes plus the 4-byte tun_pi, the engine sees the
// Ethernet frame (14-byte header). A 1514-byte frame costs exactly one
// opportunity, a 66-byte ACK 56 bytes of one.
func TraceCost(wire int) int { return max(1, wire-14+4) }

// Trace replays a mahimahi link trace in one direction instead of a
// Rate: each entry of Ms is one delivery opportunity of TraceBytes bytes at
// that millisecond of the trace. The replay follows mm-link exactly (the
// engine's traceStage): bytes, not packets, are delivered — a packet
// leaves at the opportunity carrying its last byte, small packets share
// an opportunity, bytes no packet is waiting for are lost — and a packet
// arriving during millisecond t can use only opportunities after t. With
// Loop the trace repeats with its last timestamp as the period (a trace
// starting at 0 then has two opportunities at each period boundary);
// without it the link delivers nothing after the last opportunity.
// Offset starts the replay that far into the trace. Traces are
// user-supplied files (mahimahi's own are GPL-3 and not shipped).
//
// A traced direction's queue is mahimahi's: Dir.QueuePackets and
// Dir.QueueBytes count the packets WAITING (not the one in transit) and
// their bytes at TraceCost, both zero is mahimahi's infinite queue, and
// the discipline is drop-tail or drop-head.
type Trace struct {
	File   string        `json:"file"` // where the opportunities came from, for messages
	Loop   bool          `json:"loop"`
	Offset time.Duration `json:"offset,omitempty"`
	// Ms are the opportunities in ms from the trace's start:
	// nondecreasing, the last one > 0.
	Ms []uint32 `json:"ms,omitempty"`
}

// Period is the trace's length: its last timestamp, in ms.
func (t *Trace) Period() uint32 {
	if t == nil || len(t.Ms) == 0 {
		return 0
	}
	return t.Ms[len(t.Ms)-1]
}

// Validate checks the opportunities and the offset.
func (t *Trace) Validate() error {
	if len(t.Ms) == 0 {
		return fmt.Errorf("trace %s has no delivery opportunities", t.File)
	}
	for i := 1; i < len(t.Ms); i++ {
		if t.Ms[i] < t.Ms[i-1] {
			return fmt.Errorf("trace %s: opportunity %d at %d ms comes before %d ms: timestamps must be nondecreasing", t.File, i+1, t.Ms[i], t.Ms[i-1])
		}
	}
	if t.Period() == 0 {
		return fmt.Errorf("trace %s: the last timestamp is 0: mahimahi needs a period > 0", t.File)
	}
	if t.Offset < 0 {
		return fmt.Errorf("trace %s: offset %v is negative", t.File, t.Offset)
	}
	return nil
}

// Summary is t without its opportunities (what status answers carry).
func (t *Trace) Summary() *Trace {
	if t == nil {
		return nil
	}
	s := *t
	s.Ms = nil
	return &s
}

// String describes the trace for logs and link show.
func (t *Trace) String() string {
	s := fmt.Sprintf("trace %s", t.File)
	if t.Loop {
		s += " loop"
	}
	if t.Offset > 0 {
		s += fmt.Sprintf(" offset %v", t.Offset)
	}
	return s
}

// TraceError is a problem at a line of a trace file (1-based line and
// column).
type TraceError struct {
	Line, Col int
	Msg       string
}

func (e *TraceError) Error() string { return fmt.Sprintf("%d:%d: %s", e.Line, e.Col, e.Msg) }

// ParseTrace reads a mahimahi trace: one unsigned integer (ms) per line,
// nondecreasing, no empty line, the last one > 0. Surrounding blanks and
// a CR are tolerated. Errors are *TraceError (line:col) or the reader's.
func ParseTrace(r io.Reader) ([]uint32, error) {
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
			return nil, &TraceError{line, 1, "empty line: each line is one delivery opportunity, a timestamp in ms"}
		}
		v, err := strconv.ParseUint(trimmed, 10, 32)
		if err != nil {
			return nil, &TraceError{line, col, fmt.Sprintf("%q is not a timestamp: each line is one unsigned integer, the ms of a 1504-byte delivery opportunity", trimmed)}
		}
		if n := len(ms); n > 0 && uint32(v) < ms[n-1] {
			return nil, &TraceError{line, col, fmt.Sprintf("timestamp %d comes before %d on line %d: a trace is nondecreasing", v, ms[n-1], line-1)}
		}
		ms = append(ms, uint32(v))
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	if len(ms) == 0 {
		return nil, &TraceError{1, 1, "the trace is empty: it needs at least one delivery opportunity (a timestamp in ms per line)"}
	}
	if ms[len(ms)-1] == 0 {
		return nil, &TraceError{line, 1, "the last timestamp is 0: the trace's period (its last timestamp) must be > 0"}
	}
	return ms, nil
}

// TraceStats describes a trace the way users compare them: its length,
// mean rate (each opportunity TraceBytes bytes), the worst and best whole
// second, and the longest time without an opportunity.
type TraceStats struct {
	Opportunities int
	Length        time.Duration
	MeanBps       float64
	MinBps        float64 // worst whole second (0 when shorter than 1 s)
	MaxBps        float64
	LongestGap    time.Duration
}

// Stats summarises ms (a valid trace).
func Stats(ms []uint32) TraceStats {
	s := TraceStats{Opportunities: len(ms)}
	if len(ms) == 0 {
		return s
	}
	period := ms[len(ms)-1]
	s.Length = time.Duration(period) * time.Millisecond
	s.MeanBps = float64(len(ms)) * TraceBytes * 8 / s.Length.Seconds()
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
			bps := float64(n) * TraceBytes * 8
			s.MinBps = min(s.MinBps, bps)
			s.MaxBps = max(s.MaxBps, bps)
		}
	}
	return s
}

// errTraceQueue explains which queues a traced direction has.
var errTraceQueue = errors.New("a traced direction's queue is mahimahi's: droptail or drophead with packets/bytes limits, or infinite (no limit); codel and pie on a trace are not implemented")
