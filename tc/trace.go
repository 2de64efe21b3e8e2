package tc

import (
	"errors"
	"fmt"
	"time"
)

// Trace replays a mahimahi link trace in one direction instead of a
// Rate: each entry of Ms is one delivery opportunity of mmtrace.Bytes bytes at
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
// their bytes at mmtrace.Cost, both zero is mahimahi's infinite queue, and
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

// errTraceQueue explains which queues a traced direction has.
var errTraceQueue = errors.New("a traced direction's queue is mahimahi's: droptail or drophead with packets/bytes limits, or infinite (no limit); codel and pie on a trace are not implemented")
