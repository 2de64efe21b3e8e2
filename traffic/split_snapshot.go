package traffic

import (
	"encoding/json"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/emuctl/emuctl/emu"
)

// Snapshots of nodes on other machines (a lab over several machines): the
// traffic role reads them where the nodes are, as snapshot does here,
// and sends them back; one role per machine, the machines at once.

// snapJob is what a machine's snapshot role is asked (its stdin).
type snapJob struct {
	Nodes     []string        `json:"nodes"`
	Endpoints map[string]bool `json:"endpoints"`
}

// wireSnap is a nodeSnap on the wire.
type wireSnap struct {
	Sysctls  map[string]string `json:"sysctls,omitempty"`
	Counters map[string]int64  `json:"counters,omitempty"`
	Ifaces   []wireIface       `json:"ifaces,omitempty"`
}

type wireIface struct {
	Name     string      `json:"name"`
	Offloads string      `json:"offloads"`
	Qdiscs   []wireQdisc `json:"qdiscs,omitempty"`
}

type wireQdisc struct {
	Kind           string `json:"kind"`
	Root           bool   `json:"root,omitempty"`
	Packets, Drops int64
}

func toWireSnap(s *nodeSnap) wireSnap {
	w := wireSnap{Sysctls: s.sysctls, Counters: s.counters}
	for _, ii := range s.ifaces {
		wi := wireIface{Name: ii.name, Offloads: ii.offloads}
		for _, q := range ii.qdiscs {
			wi.Qdiscs = append(wi.Qdiscs, wireQdisc{Kind: q.kind, Root: q.root, Packets: q.packets, Drops: q.drops})
		}
		w.Ifaces = append(w.Ifaces, wi)
	}
	return w
}

func (w wireSnap) snap() *nodeSnap {
	s := &nodeSnap{sysctls: w.Sysctls, counters: w.Counters}
	for _, wi := range w.Ifaces {
		ii := ifaceInfo{name: wi.Name, offloads: wi.Offloads}
		for _, q := range wi.Qdiscs {
			ii.qdiscs = append(ii.qdiscs, qdiscStat{kind: q.Kind, root: q.Root, packets: q.Packets, drops: q.Drops})
		}
		s.ifaces = append(s.ifaces, ii)
	}
	return s
}

// snapshotHere is the snapshot role: the nodes of this machine named on
// stdin, as JSON on stdout.
func snapshotHere(lab string, stdin io.Reader, stdout io.Writer) error {
	var job snapJob
	if err := json.NewDecoder(stdin).Decode(&job); err != nil {
		return fmt.Errorf("traffic snapshot: job: %w", err)
	}
	st, err := emu.ReadState(lab)
	if err != nil {
		return err
	}
	for _, n := range job.Nodes {
		if st.Spec.Node(n) == nil || !st.Spec.Here(n) {
			return fmt.Errorf("lab %s has no node %s on this machine", lab, n)
		}
	}
	out := map[string]wireSnap{}
	for n, s := range snapshot(lab, job.Nodes, job.Endpoints) {
		out[n] = toWireSnap(s)
	}
	return json.NewEncoder(stdout).Encode(out)
}

// snapshotNodes is snapshot for any lab: on a lab over several machines
// each machine reads its own nodes (at once); a machine that fails is
// left out and named in the error.
func snapshotNodes(st *emu.State, nodes []string, endpoints map[string]bool) (map[string]*nodeSnap, error) {
	c := st.Spec.Cluster
	if c == nil {
		return snapshot(st.Lab, nodes, endpoints), nil
	}
	byMachine := map[string][]string{}
	for _, n := range nodes {
		byMachine[c.Nodes[n]] = append(byMachine[c.Nodes[n]], n)
	}
	out := map[string]*nodeSnap{}
	var mu sync.Mutex
	var errs []string
	var wg sync.WaitGroup
	for m, ns := range byMachine {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := remoteSnapshot(st.Lab, ns, endpoints)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				errs = append(errs, fmt.Sprintf("machine %s: %v", m, err))
				return
			}
			for n, s := range got {
				out[n] = s
			}
		}()
	}
	wg.Wait()
	if len(errs) > 0 {
		sort.Strings(errs)
		return out, fmt.Errorf("node snapshots: %s", strings.Join(errs, "; "))
	}
	return out, nil
}

// remoteSnapshot runs the snapshot role on the machine of nodes (all on
// one machine).
func remoteSnapshot(lab string, nodes []string, endpoints map[string]bool) (map[string]*nodeSnap, error) {
	cmd, _, err := emu.MachineCommand(lab, nodes[0], splitRole, "snapshot", lab)
	if err != nil {
		return nil, err
	}
	ep := map[string]bool{}
	for _, n := range nodes {
		ep[n] = endpoints[n]
	}
	in, _ := json.Marshal(snapJob{Nodes: nodes, Endpoints: ep})
	cmd.Stdin = strings.NewReader(string(in))
	var errBuf strings.Builder
	cmd.Stderr = &errBuf
	b, err := cmd.Output()
	if err != nil {
		if msg := strings.TrimSpace(errBuf.String()); msg != "" {
			return nil, fmt.Errorf("%s", msg)
		}
		return nil, err
	}
	var w map[string]wireSnap
	if err := json.Unmarshal(b, &w); err != nil {
		return nil, err
	}
	out := map[string]*nodeSnap{}
	for n, s := range w {
		out[n] = s.snap()
	}
	return out, nil
}
