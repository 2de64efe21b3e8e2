package labstate

import (
	"github.com/emuctl/emuctl/tc"
	"github.com/emuctl/emuctl/tc/engine"
)

// Link backends, as recorded in State.Links and shown by inspect.
const (
	BackendNetem  = "netem"         // kernel netem (+ its rate and queue) on each end's egress
	BackendShaper = "kernel-shaper" // kernel TBF/HTB only: rate and queue, no delay or loss
	BackendEngine = "userspace"     // the userspace link engine in the link's own namespace
)

// LinkState is what was made of one shaped link.
type LinkState struct {
	Index   int    `json:"index"`
	Name    string `json:"name"` // "a <-> b"
	Backend string `json:"backend"`
	// Netns is the link's own namespace (userspace engine only).
	Netns string `json:"netns,omitempty"`
	AtoB  tc.Dir `json:"a_to_b"`
	BtoA  tc.Dir `json:"b_to_a"`
	// Warning says what a pinned layout distorts, when it does.
	Warning string `json:"warning,omitempty"`
}

// LinkInfo is what `emuctl link show` prints for one link.
type LinkInfo struct {
	Index int `json:"index"`
	// Kind is how the link is made: veth, ovs, engine or wifi (a
	// station's wireless hop).
	Kind    string        `json:"kind"`
	A       string        `json:"a"`
	B       string        `json:"b"`
	Backend string        `json:"backend"`
	AtoB    tc.Dir        `json:"a_to_b"`
	BtoA    tc.Dir        `json:"b_to_a"`
	StateA  string        `json:"state_a"`
	StateB  string        `json:"state_b"`
	Stats   *engine.Stats `json:"engine_stats,omitempty"`
	Qdiscs  []string      `json:"qdiscs,omitempty"` // installed tree per end (kernel backends)
	Warning string        `json:"warning,omitempty"`
	// QueueLimits are the bottleneck queues' bounds in force, a->b and
	// b->a: the parameters' own, else the defaults the backend applies
	// (tc.Dir.QueueLimits; a trace's queue is its own, 0 = unbounded).
	// Zero for a direction without a queue of emuctl's (no rate or trace;
	// a wireless hop; an OVS port's QoS queue).
	QueueLimits [2]QueueLimit `json:"queue_limits"`
}

// QueueLimit is one direction's queue bound: packets or bytes (0: none).
type QueueLimit struct {
	Packets int   `json:"packets,omitempty"`
	Bytes   int64 `json:"bytes,omitempty"`
}
