package traffic

import (
	"slices"
	"sync"
	"time"

	"github.com/emuctl/emuctl/analysis"
	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/tc/engine"
)

// queueSampleEvery is how often the bottleneck queues are read while the
// flows run (occupancy percentiles; the kernel's queueing delay).
const queueSampleEvery = 20 * time.Millisecond

// queueWatch follows the shaped directions the flows cross: their queue
// occupancy every queueSampleEvery, and the counters a queue discipline
// keeps (the engine's before and after; the kernel leaf's xstats). On a
// lab over several machines each machine's directions are watched there
// (split_queues.go) and gathered here when the flows end.
type queueWatch struct {
	st      *emu.State
	dirs    []emu.LinkDir
	sampler *emu.QueueSampler
	stop    chan struct{}
	done    chan struct{}

	mu      sync.Mutex
	samples map[emu.LinkDir][]emu.QueueSample

	engBefore, engAfter map[emu.LinkDir]engine.DirStats
	leafStats           map[emu.LinkDir][2]*aqmLeaf // before, after

	remote []*queueRole // a lab over several machines: one per machine
	errs   []string     // machines whose queues could not be read
	// what the sending machines said of their directions (a lab over
	// several machines): the backend, the queue limit in force
	backend    map[emu.LinkDir]string
	queueLimit map[emu.LinkDir]int
}

type aqmLeaf struct {
	Kind          string `json:"kind"`
	Marks, Drops  uint32
	Limit, AQMDrp uint32
}

// hopDirs are the directions hops cross, once each, in order.
func hopDirs(st *emu.State, hops []hop) []emu.LinkDir {
	seen := map[emu.LinkDir]bool{}
	var dirs []emu.LinkDir
	for _, h := range hops {
		d := emu.LinkDir{Link: h.link, AToB: h.aToB}
		if h.link < len(st.Spec.Links) && !seen[d] {
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	return dirs
}

// watchQueues starts sampling the directions hops cross; nil when nothing
// can be read.
func watchQueues(st *emu.State, hops []hop) *queueWatch {
	return watchDirs(st, hopDirs(st, hops))
}

// watchDirs starts sampling dirs on this machine; nil when nothing can be
// read.
func watchDirs(st *emu.State, dirs []emu.LinkDir) *queueWatch {
	s, err := emu.NewQueueSampler(st, dirs)
	if err != nil || len(dirs) == 0 {
		return nil
	}
	w := newQueueWatch(st, dirs)
	w.sampler = s
	w.engBefore, _ = emu.EngineDirStats(st.Lab, dirs)
	w.readLeaves(0)
	go w.loop()
	return w
}

func newQueueWatch(st *emu.State, dirs []emu.LinkDir) *queueWatch {
	return &queueWatch{st: st, dirs: dirs, stop: make(chan struct{}), done: make(chan struct{}),
		samples: map[emu.LinkDir][]emu.QueueSample{}, leafStats: map[emu.LinkDir][2]*aqmLeaf{},
		backend: map[emu.LinkDir]string{}, queueLimit: map[emu.LinkDir]int{}}
}

func (w *queueWatch) loop() {
	defer close(w.done)
	t := time.NewTicker(queueSampleEvery)
	defer t.Stop()
	for {
		select {
		case <-w.stop:
			return
		case <-t.C:
		}
		for d, v := range w.sampler.Sample() {
			w.mu.Lock()
			w.samples[d] = append(w.samples[d], v)
			w.mu.Unlock()
		}
	}
}

func (w *queueWatch) readLeaves(k int) {
	for _, d := range w.dirs {
		q, ok, err := emu.QueueLeaf(w.st, d)
		if err != nil || !ok || q.Stats == nil {
			continue
		}
		l := &aqmLeaf{Kind: q.Kind, Marks: q.Stats.Marks, Drops: q.Stats.Drops, Limit: q.Stats.LimitDrops, AQMDrp: q.Stats.AQMDrops()}
		v := w.leafStats[d]
		v[k] = l
		w.leafStats[d] = v
	}
}

// finish stops sampling and reads the counters after the run (on a lab
// over several machines: gathers what each machine watched).
func (w *queueWatch) finish() {
	if w == nil {
		return
	}
	if w.sampler == nil { // a lab over several machines: no sampler here
		w.gather()
		return
	}
	close(w.stop)
	<-w.done
	w.sampler.Close()
	w.readLeaves(1)
	if w.engBefore != nil {
		w.engAfter, _ = emu.EngineDirStats(w.st.Lab, w.dirs)
	}
}

// annotate adds what was watched on direction d to a result link.
func (w *queueWatch) annotate(l *analysis.Link, d emu.LinkDir, rate float64) {
	if w == nil {
		return
	}
	w.mu.Lock()
	ss := w.samples[d]
	w.mu.Unlock()
	if b := w.backend[d]; b != "" {
		l.Backend = b
	}
	if q := w.queueLimit[d]; q > 0 {
		l.QueuePackets = q
	}
	if len(ss) > 0 {
		pk := make([]float64, len(ss))
		var delays []float64
		for i, s := range ss {
			pk[i] = float64(s.Packets)
			if s.Kernel && rate > 0 {
				delays = append(delays, float64(s.Bytes)*8/rate*1e3)
			}
		}
		slices.Sort(pk)
		l.QueueP50Pkts, l.QueueP95Pkts = quantile(pk, 0.5), quantile(pk, 0.95)
		l.QueueSamples, l.QueueSampleMs = len(ss), float64(queueSampleEvery)/1e6
		if len(delays) > 0 {
			slices.Sort(delays)
			l.SojournP50Ms, l.SojournP95Ms, l.SojournP99Ms = quantile(delays, 0.5), quantile(delays, 0.95), quantile(delays, 0.99)
			l.SojournFrom = "backlog/rate sampled"
		}
	}
	if ls := w.leafStats[d]; ls[0] != nil && ls[1] != nil {
		l.Discipline = ls[1].Kind
		l.Marks = int64(ls[1].Marks) - int64(ls[0].Marks)
		l.AQMDrops = int64(ls[1].AQMDrp) - int64(ls[0].AQMDrp)
	}
	if b, ok := w.engBefore[d]; ok {
		if a, ok2 := w.engAfter[d]; ok2 {
			l.Discipline = a.Discipline
			l.Marks, l.AQMDrops = int64(a.Marks-b.Marks), int64(a.AQMDrops-b.AQMDrops)
			// the engine's own counters: what the node's interface to it
			// counts is not the link's (suites read the same)
			l.SentPackets = int64(a.OutPackets - b.OutPackets)
			l.DroppedPackets = int64(a.QueueDrops + a.AQMDrops - b.QueueDrops - b.AQMDrops)
			l.RandomDrops = int64(a.LossDrops - b.LossDrops)
			ms := func(x time.Duration) float64 { return float64(x) / 1e6 }
			l.SojournP50Ms, l.SojournP95Ms, l.SojournP99Ms = ms(a.Sojourn.P50), ms(a.Sojourn.P95), ms(a.Sojourn.P99)
			l.SojournFrom = "every packet"
		}
	}
}

// quantile of sorted values (nearest rank).
func quantile(sorted []float64, q float64) float64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[max(0, min(i, len(sorted)-1))]
}
