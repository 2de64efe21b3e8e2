package traffic

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/tc/engine"
)

// Queue samples on labs over several machines. A link direction queues on
// the machine that sends it: its shaping before encapsulation (a cut
// link), or the whole link there (both ends on one machine), kernel or
// engine. The traffic role "queues" on that machine watches its
// directions as watchQueues does on one machine — occupancy every
// queueSampleEvery, the discipline's counters before and after — from
// before the flows start until the controller says stop, and sends it all
// back in one line; the machines at once.

// queueJob is what a machine's queues role is asked (its first line).
type queueJob struct {
	Dirs []emu.LinkDir `json:"dirs"`
}

// wireQueueDir is what a machine watched of one direction.
type wireQueueDir struct {
	Dir       emu.LinkDir       `json:"dir"`
	Samples   []emu.QueueSample `json:"samples,omitempty"`
	Leaf      [2]*aqmLeaf       `json:"leaf"` // before, after
	EngBefore *engine.DirStats  `json:"eng_before,omitempty"`
	EngAfter  *engine.DirStats  `json:"eng_after,omitempty"`
	// Backend and QueueLimit are how the machine shapes the direction
	// (its own record; the limit in packets, 0 for a byte limit).
	Backend    string `json:"backend,omitempty"`
	QueueLimit int    `json:"queue_limit,omitempty"`
}

// queueRole is one machine's running queues role.
type queueRole struct {
	machine string
	p       *halfProc
}

// sendingNode is the node whose machine sends direction d (and so holds
// its queue).
func sendingNode(st *emu.State, d emu.LinkDir) string {
	l := st.Spec.Links[d.Link]
	return pick(d.AToB, l.A.Node, l.B.Node)
}

func pick[T any](aToB bool, a, b T) T {
	if aToB {
		return a
	}
	return b
}

// queuesHere is the queues role: the directions named on stdin's first
// line, watched on this machine until stdin says "stop" (or ends), then
// "result" and what was watched, as JSON, on stdout.
func queuesHere(lab string, stdin io.Reader, stdout io.Writer) error {
	in := bufio.NewScanner(stdin)
	var job queueJob
	st, err := roleJob("queues", lab, in, &job)
	if err != nil {
		return err
	}
	for _, d := range job.Dirs {
		if d.Link < 0 || d.Link >= len(st.Spec.Links) {
			return fmt.Errorf("lab %s has no link %d", lab, d.Link)
		}
		if n := sendingNode(st, d); !st.Spec.Here(n) {
			return fmt.Errorf("lab %s: link %d's %s end (node %s) is not on this machine", lab, d.Link, pick(d.AToB, "A", "B"), n)
		}
	}
	w := watchDirs(st, job.Dirs)
	fmt.Fprintln(stdout, "ready")
	for in.Scan() && in.Text() != "stop" {
	}
	w.finish()
	out := []wireQueueDir{}
	if w != nil {
		for _, d := range w.dirs {
			wd := wireQueueDir{Dir: d, Samples: w.samples[d], Leaf: w.leafStats[d]}
			if b, ok := w.engBefore[d]; ok {
				wd.EngBefore = &b
			}
			if a, ok := w.engAfter[d]; ok {
				wd.EngAfter = &a
			}
			for _, ls := range st.Links {
				if ls.Index == d.Link {
					dir := pick(d.AToB, ls.AtoB, ls.BtoA)
					wd.Backend = ls.Backend
					wd.QueueLimit, _ = dir.QueueLimits(emu.LinkMTU(st.Spec, d.Link))
				}
			}
			out = append(out, wd)
		}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "result %s\n", b)
	return err
}

// watchQueuesCluster starts the queues role on every machine that sends a
// direction hops cross, and waits until each watches (a machine that
// fails is named in errs, its directions left unsampled).
func watchQueuesCluster(st *emu.State, hops []hop) *queueWatch {
	dirs := hopDirs(st, hops)
	if len(dirs) == 0 {
		return nil
	}
	c := st.Spec.Cluster
	byMachine := map[string][]emu.LinkDir{}
	nodeOn := map[string]string{}
	for _, d := range dirs {
		n := sendingNode(st, d)
		m := c.Nodes[n]
		byMachine[m] = append(byMachine[m], d)
		nodeOn[m] = n
	}
	w := newQueueWatch(st, dirs)
	var mu sync.Mutex
	var wg sync.WaitGroup
	for m, ds := range byMachine {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p, line, err := startRoleProc(st.Lab, nodeOn[m], queueJob{Dirs: ds}, "queues", st.Lab)
			if err == nil && line != "ready" {
				p.close()
				err = fmt.Errorf("the queues role said %q, not ready", line)
			}
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				w.errs = append(w.errs, fmt.Sprintf("machine %s: %v", m, err))
				return
			}
			w.remote = append(w.remote, &queueRole{machine: m, p: p})
		}()
	}
	wg.Wait()
	return w
}

// gather stops every machine's queues role and keeps what it watched.
func (w *queueWatch) gather() {
	var wg sync.WaitGroup
	for _, r := range w.remote {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var got []wireQueueDir
			err := r.p.say("stop")
			if err == nil {
				err = r.p.resultInto(&got)
			}
			r.p.close()
			w.mu.Lock()
			defer w.mu.Unlock()
			if err != nil {
				w.errs = append(w.errs, fmt.Sprintf("machine %s: %v", r.machine, err))
				return
			}
			for _, wd := range got {
				w.samples[wd.Dir] = wd.Samples
				w.leafStats[wd.Dir] = wd.Leaf
				if wd.Backend != "" {
					w.backend[wd.Dir] = wd.Backend
				}
				if wd.QueueLimit > 0 {
					w.queueLimit[wd.Dir] = wd.QueueLimit
				}
				if wd.EngBefore != nil && wd.EngAfter != nil {
					if w.engBefore == nil {
						w.engBefore, w.engAfter = map[emu.LinkDir]engine.DirStats{}, map[emu.LinkDir]engine.DirStats{}
					}
					w.engBefore[wd.Dir], w.engAfter[wd.Dir] = *wd.EngBefore, *wd.EngAfter
				}
			}
		}()
	}
	wg.Wait()
	sort.Strings(w.errs)
}

// failed is what could not be read ("" when all was).
func (w *queueWatch) failed() string {
	if w == nil {
		return ""
	}
	return strings.Join(w.errs, "; ")
}
