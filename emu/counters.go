package emu

import (
	"time"

	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"

	"github.com/emuctl/emuctl/tc"
	"github.com/emuctl/emuctl/tc/engine"
	"github.com/emuctl/emuctl/topo"
)

// LinkCounters is one link's traffic counters at one instant, per
// direction, from its A end's interface (what A sent is a->b, what it
// received b->a) and, for a userspace link, its engine (queue now, drops).
type LinkCounters struct {
	Index  int           `json:"index"`
	A      string        `json:"a"`
	B      string        `json:"b"`
	StateA string        `json:"state_a"`
	AtoB   DirCounters   `json:"a_to_b"`
	BtoA   DirCounters   `json:"b_to_a"`
	Engine *engine.Stats `json:"engine,omitempty"`
	// Kernel is a kernel-shaped link's queues now, per direction, from
	// the qdiscs on each end's egress (a->b on A's, b->a on B's).
	Kernel *[2]KernelQueue `json:"kernel,omitempty"`
	// At is when this link's counters were read (the middle of the
	// read): rates divide by the time between two reads of the same
	// link, so a reader held off the CPU between links skews none. On a
	// lab over several machines it is the machine's, moved onto this
	// host's clock by one fixed shift per machine (counters_cluster.go).
	At time.Time `json:"at"`
	// Remote says why a link of a lab over several machines has no
	// counters (StateA "remote"): its machine's worker has not answered
	// yet, or failed.
	Remote string `json:"remote,omitempty"`
}

// KernelQueue is one direction of a kernel-shaped link, read from its
// qdiscs: the packets and bytes waiting at its rate limiter (tbf; or at
// its queue discipline where there is no rate), the drops there
// (overflow and a discipline's own), the packets an AQM marked instead,
// and netem's drops (its random loss).
type KernelQueue struct {
	Packets   uint32 `json:"packets"`
	Bytes     uint32 `json:"bytes"`
	Drops     uint32 `json:"drops"`
	AQMDrops  uint32 `json:"aqm_drops,omitempty"`
	Marks     uint32 `json:"marks,omitempty"`
	LossDrops uint32 `json:"loss_drops,omitempty"`
}

// kernelQueue sums up one egress tree (parents first).
func kernelQueue(qs []tc.Qdisc) KernelQueue {
	var q KernelQueue
	queued := false
	for _, x := range qs {
		s := x.Stats
		if s == nil {
			continue
		}
		switch x.Kind {
		case "netem":
			q.LossDrops += s.Drops
		default:
			// the first qdisc below netem holds the queue: tbf's counts
			// cover its child's (its backlog and its drops)
			if !queued {
				q.Packets, q.Bytes, q.Drops, queued = s.QLen, s.Backlog, s.Drops, true
			}
			q.Marks += s.Marks
			q.AQMDrops += s.AQMDrops()
		}
	}
	return q
}

// readKernelQueues reads both directions' trees of a kernel-shaped link
// (nil when an end cannot be read).
func (r *CounterReader) readKernelQueues(st *State, a, b topo.Endpoint) *[2]KernelQueue {
	var out [2]KernelQueue
	for k, ep := range []topo.Endpoint{a, b} {
		path, name := EndpointNetns(st, ep.Node, ep.Iface)
		conn, err := r.conn(path)
		if err != nil {
			return nil
		}
		link, err := conn.h.LinkByName(name)
		var qs []tc.Qdisc
		if err == nil {
			qs, err = tc.ReadTree(conn.ns, link)
		}
		if err != nil {
			r.drop(path)
			return nil
		}
		out[k] = kernelQueue(qs)
	}
	return &out
}

// DirCounters are one direction's totals.
type DirCounters struct {
	Bytes   uint64 `json:"bytes"`
	Packets uint64 `json:"packets"`
	Drops   uint64 `json:"drops"`
}

// Counters reads every link's counters (wireless hops included), at
// time t. A link whose end cannot be read is reported with state
// "missing". On a lab over several machines each machine's worker reads
// the links whose A end it holds, once (counters_cluster.go); a link
// whose machine did not answer has state "remote", no counters and why.
func Counters(lab string) (time.Time, []LinkCounters, error) {
	r := NewCounterReader()
	r.once = true
	defer r.Close()
	return r.Read(lab)
}

// CounterReader reads a lab's counters again and again (an event
// stream's ticks), keeping each namespace's netlink handle open between
// reads: opening them is most of a read's cost in a lab of hundreds of
// nodes. On a lab over several machines it keeps one worker per machine
// reading that machine's links every Interval (counters_cluster.go). Not
// safe for concurrent use.
type CounterReader struct {
	// Interval is how often the workers of a lab over several machines
	// read their links (0: DefaultWorkerInterval). A caller reading every
	// T sets it below T, so that each of its reads finds a newer line.
	Interval time.Duration

	open  map[string]*nsConn
	state StateCache
	once  bool // Counters: one read of each machine, no worker kept

	machines    map[string]*machineState // a lab over several machines' workers
	machinesLab string
	warnings    []string
}

type nsConn struct {
	ns netns.NsHandle
	h  *netlink.Handle
}

// NewCounterReader returns a reader; Close releases its handles.
func NewCounterReader() *CounterReader { return &CounterReader{open: map[string]*nsConn{}} }

// Close releases every namespace handle and ends the machines' workers.
func (r *CounterReader) Close() {
	r.closeStreams()
	for k, c := range r.open {
		c.h.Close()
		c.ns.Close()
		delete(r.open, k)
	}
}

// conn is the namespace's handle, opened once.
func (r *CounterReader) conn(path string) (*nsConn, error) {
	if c, ok := r.open[path]; ok {
		return c, nil
	}
	ns, err := netns.GetFromPath(path)
	if err != nil {
		return nil, err
	}
	h, err := netlink.NewHandleAt(ns, unix.NETLINK_ROUTE)
	if err != nil {
		ns.Close()
		return nil, err
	}
	c := &nsConn{ns, h}
	r.open[path] = c
	return c, nil
}

// drop forgets a namespace whose handle failed (it may be gone).
func (r *CounterReader) drop(path string) {
	if c, ok := r.open[path]; ok {
		c.h.Close()
		c.ns.Close()
		delete(r.open, path)
	}
}

// Read reads every link's counters now.
func (r *CounterReader) Read(lab string) (time.Time, []LinkCounters, error) {
	st, err := r.state.Read(lab)
	if err != nil {
		return time.Time{}, nil, err
	}
	if isController(st) {
		return r.readCluster(st)
	}
	e0 := time.Now()
	stats := engineStats(st)
	e1 := time.Now()
	engineAt := e0.Add(e1.Sub(e0) / 2)
	t := time.Now()
	out := make([]LinkCounters, 0, linkCount(st.Spec))
	for i := range linkCount(st.Spec) {
		a, b := linkEnds(st.Spec, i)
		c := LinkCounters{Index: i, A: a.String(), B: b.String(), StateA: "missing", At: t}
		if s, ok := stats[i]; ok {
			c.Engine = &s
		}
		r0 := time.Now()
		if !st.Spec.Here(a.Node) {
			// a worker's: on another machine of the lab, read there
			c.StateA = "remote"
		} else {
			r.readCounters(st, a, &c)
			r1 := time.Now()
			c.At = r0.Add(r1.Sub(r0) / 2)
			if ls, shaped := findLinkState(st.Links, i); shaped && (ls.Backend == BackendNetem || ls.Backend == BackendShaper) {
				c.Kernel = r.readKernelQueues(st, a, b)
			}
		}
		if c.Engine != nil {
			c.At = engineAt // its bytes are the engine's, read first
		}
		out = append(out, c)
	}
	return t, out, nil
}

func (r *CounterReader) readCounters(st *State, ep topo.Endpoint, c *LinkCounters) {
	path, name := EndpointNetns(st, ep.Node, ep.Iface)
	conn, err := r.conn(path)
	if err != nil {
		return
	}
	l, err := conn.h.LinkByName(name)
	if err != nil {
		r.drop(path) // gone, or a namespace made again under the name
		return
	}
	c.StateA = l.Attrs().OperState.String()
	if s := l.Attrs().Statistics; s != nil {
		c.AtoB = DirCounters{Bytes: s.TxBytes, Packets: s.TxPackets, Drops: s.TxDropped}
		c.BtoA = DirCounters{Bytes: s.RxBytes, Packets: s.RxPackets, Drops: s.RxDropped}
	}
}
