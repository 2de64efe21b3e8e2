package emu

import (
	"github.com/emuctl/emuctl/tc"
	"github.com/emuctl/emuctl/tc/engine"
	"github.com/emuctl/emuctl/topo"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// Reading the bottleneck queues of a running lab while traffic runs:
// how many packets and bytes wait in each shaped link direction now. A
// kernel-shaped direction's queue is the leaf of its egress tree (the
// discipline's qdisc, the bottleneck netem, or the fifo under tbf); an
// engine's is its queue length from the supervisor. Sampled often, it
// gives queue occupancy percentiles on either backend, and on the kernel
// an estimate of the queueing delay (backlog × 8 / rate) where the engine
// measures every packet's.

// LinkDir names one direction of a topology link.
type LinkDir struct {
	Link int
	AToB bool
}

// QueueSample is one reading of a direction's queue.
type QueueSample struct {
	Packets int   // waiting (and, on the engine, in transmission)
	Bytes   int64 // kernel only (the engine counts packets)
	Kernel  bool
}

// QueueSampler reads a lab's bottleneck queues; Close releases it.
type QueueSampler struct {
	lab    string
	kernel map[LinkDir]*kernelEnd
	engine []LinkDir
}

type kernelEnd struct {
	ns   netns.NsHandle
	link netlink.Link
}

// NewQueueSampler prepares to read the given directions (those without a
// rate are skipped: they never queue).
func NewQueueSampler(st *State, dirs []LinkDir) (*QueueSampler, error) {
	s := &QueueSampler{lab: st.Lab, kernel: map[LinkDir]*kernelEnd{}}
	for _, d := range dirs {
		ls, ok := findLinkState(st.Links, d.Link)
		if !ok || d.Link >= len(st.Spec.Links) {
			continue
		}
		dir := ls.BtoA
		if d.AToB {
			dir = ls.AtoB
		}
		if dir.Rate == 0 {
			continue
		}
		if ls.Backend == BackendEngine {
			s.engine = append(s.engine, d)
			continue
		}
		l := st.Spec.Links[d.Link]
		ep := l.B
		if d.AToB {
			ep = l.A
		}
		ns, h, name, err := openEnd(st, ep)
		if err != nil {
			s.Close()
			return nil, err
		}
		link, err := h.LinkByName(name)
		h.Close()
		if err != nil {
			ns.Close()
			s.Close()
			return nil, err
		}
		s.kernel[d] = &kernelEnd{ns: ns, link: link}
	}
	return s, nil
}

// Sample reads every direction once (directions that could not be read
// are missing).
func (s *QueueSampler) Sample() map[LinkDir]QueueSample {
	out := map[LinkDir]QueueSample{}
	for d, k := range s.kernel {
		tree, err := tc.ReadTree(k.ns, k.link)
		if err != nil || len(tree) == 0 || tree[len(tree)-1].Stats == nil {
			continue
		}
		st := tree[len(tree)-1].Stats
		out[d] = QueueSample{Packets: int(st.QLen), Bytes: int64(st.Backlog), Kernel: true}
	}
	if len(s.engine) > 0 {
		if resp, err := supervisorCall(s.lab, ctlRequest{Op: "stats"}); err == nil {
			for _, d := range s.engine {
				if es, ok := resp.Stats[d.Link]; ok {
					ds := es.BToA
					if d.AToB {
						ds = es.AToB
					}
					out[d] = QueueSample{Packets: ds.QueueLen}
				}
			}
		}
	}
	return out
}

// Close releases the namespace handles.
func (s *QueueSampler) Close() {
	for _, k := range s.kernel {
		k.ns.Close()
	}
	s.kernel = nil
}

// EngineDirStats are the link engine's counters of the given directions
// now (an engine-less lab, or a lab without those links, gives none).
func EngineDirStats(lab string, dirs []LinkDir) (map[LinkDir]engine.DirStats, error) {
	resp, err := supervisorCall(lab, ctlRequest{Op: "stats"})
	if err != nil {
		return nil, err
	}
	out := map[LinkDir]engine.DirStats{}
	for _, d := range dirs {
		if es, ok := resp.Stats[d.Link]; ok {
			if d.AToB {
				out[d] = es.AToB
			} else {
				out[d] = es.BToA
			}
		}
	}
	return out, nil
}

// QueueLeaf is the discipline qdisc of a kernel-shaped direction's tree
// now, with its counters (xstats: marks, early drops); ok false when the
// direction is not kernel-shaped or has no discipline.
func QueueLeaf(st *State, d LinkDir) (tc.Qdisc, bool, error) {
	ls, ok := findLinkState(st.Links, d.Link)
	if !ok || ls.Backend == BackendEngine || d.Link >= len(st.Spec.Links) {
		return tc.Qdisc{}, false, nil
	}
	l := st.Spec.Links[d.Link]
	ep := pick(d.AToB, l.A, l.B)
	ns, h, name, err := openEnd(st, ep)
	if err != nil {
		return tc.Qdisc{}, false, err
	}
	defer ns.Close()
	defer h.Close()
	link, err := h.LinkByName(name)
	if err != nil {
		return tc.Qdisc{}, false, err
	}
	tree, err := tc.ReadTree(ns, link)
	if err != nil {
		return tc.Qdisc{}, false, err
	}
	if len(tree) == 0 || tree[len(tree)-1].AQM == nil {
		return tc.Qdisc{}, false, nil
	}
	return tree[len(tree)-1], true, nil
}

func pick(aToB bool, a, b topo.Endpoint) topo.Endpoint {
	if aToB {
		return a
	}
	return b
}
