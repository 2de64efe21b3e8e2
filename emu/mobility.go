package emu

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/emuctl/emuctl/topo"
	"github.com/emuctl/emuctl/wifi/mobility"
)

// Mobility (topo Node.Mobility) runs in the lab's supervisor: one
// goroutine wakes every mobilityPeriod and puts every moving node where
// its path (wifi/mobility) says it is now, through the same call as
// `emuctl wifi move` (supervisor.moveLocked). A node's path starts at its
// t0: when up finishes, when traffic starts, or on `emuctl wifi mobility
// start` (or a schedule step); starting again starts the path over.

// mobilityPeriod is how often moving nodes are placed: 20 Hz, twice the
// 10 Hz a node's position must be kept at.
const mobilityPeriod = 50 * time.Millisecond

// MobilityStatus is one moving node of a running lab.
type MobilityStatus struct {
	Node    string    `json:"node"`
	Model   string    `json:"model"` // topo.MobilityString
	T0      string    `json:"t0"`
	Running bool      `json:"running"`
	Started time.Time `json:"started,omitzero"`
	// Finished: a waypoint path past its last waypoint (the node stays
	// there; nothing more to apply).
	Finished bool `json:"finished,omitempty"`
	// Pos is the position last applied; Moves how many times it was
	// applied since the start, RateHz their rate (moves over the time from
	// the first to the last), MaxGap the longest time between two.
	Pos    [3]float64    `json:"pos"`
	Moves  uint64        `json:"moves"`
	RateHz float64       `json:"rate_hz"`
	MaxGap time.Duration `json:"max_gap_ns"`
	Error  string        `json:"error,omitempty"`
}

type mobNode struct {
	name        string
	spec        *mobility.Spec
	path        mobility.Path
	end         time.Duration // a waypoint path's last time; 0 for models
	t0          time.Time
	running     bool
	finished    bool
	moves       uint64
	first, last time.Time
	maxGap      time.Duration
	err         string
}

// mobRunner moves a lab's nodes along their paths.
type mobRunner struct {
	move  func(node string, pos [3]float64) error
	mu    sync.Mutex
	nodes []*mobNode            // references after the nodes they follow
	pos   map[string][3]float64 // every Wi-Fi node's position as last set
}

// newMobRunner returns nil when spec has no Wi-Fi node (none can move,
// nor be added: a station needs an access point); with Wi-Fi nodes and
// none that moves, a runner with nothing to do, which stations added
// while the lab runs may join (sync).
func newMobRunner(spec *topo.Spec, move func(string, [3]float64) error) *mobRunner {
	r := &mobRunner{move: move, pos: map[string][3]float64{}}
	r.placeNew(spec)
	if len(r.pos) == 0 { // only Wi-Fi nodes move (topo)
		return nil
	}
	r.nodes = movingInOrder(spec, nil)
	return r
}

// placeNew records where spec puts each Wi-Fi node r has no position of.
func (r *mobRunner) placeNew(spec *topo.Spec) {
	for _, n := range spec.Nodes {
		if _, ok := r.pos[n.Name]; ok {
			continue
		}
		switch {
		case n.AP != nil:
			r.pos[n.Name] = n.AP.Position
		case n.Station != nil:
			r.pos[n.Name] = n.Station.Position
		}
	}
}

// movingInOrder is spec's moving nodes but those in have, a group member
// after its reference (topo refuses cycles).
func movingInOrder(spec *topo.Spec, have map[string]bool) []*mobNode {
	var out []*mobNode
	done := maps.Clone(have)
	if done == nil {
		done = map[string]bool{}
	}
	for progress := true; progress; {
		progress = false
		for _, n := range spec.Nodes {
			m := n.Mobility
			if m == nil || done[n.Name] || m.Model == mobility.ReferencePoint && !refReady(spec, m.Reference, done) {
				continue
			}
			done[n.Name], progress = true, true
			out = append(out, &mobNode{name: n.Name, spec: m})
		}
	}
	return out
}

// sync follows nodes added to and removed from the lab while it runs: a
// new Wi-Fi node's position is known, a new moving one joins (its path
// started now when its t0 is up), and a node the lab no longer has is
// forgotten. It returns every moving node's status.
func (r *mobRunner) sync(spec *topo.Spec) []MobilityStatus {
	r.mu.Lock()
	have := map[string]bool{}
	kept := r.nodes[:0]
	for _, n := range r.nodes {
		if spec.Node(n.name) != nil {
			kept = append(kept, n)
			have[n.name] = true
		}
	}
	r.nodes = kept
	for name := range r.pos {
		if spec.Node(name) == nil {
			delete(r.pos, name)
		}
	}
	r.placeNew(spec)
	added := movingInOrder(spec, have)
	r.nodes = append(r.nodes, added...)
	r.mu.Unlock()
	for _, n := range added {
		if n.spec.T0 == topo.T0Up {
			if _, err := r.start(n.name, ""); err != nil {
				r.mu.Lock()
				n.err = err.Error()
				r.mu.Unlock()
			}
		}
	}
	return r.status()
}

// forget drops a node removed from the lab (its path and position).
func (r *mobRunner) forget(node string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.nodes = slices.DeleteFunc(r.nodes, func(n *mobNode) bool { return n.name == node })
	delete(r.pos, node)
}

// refReady: the reference does not move, or is placed already.
func refReady(spec *topo.Spec, ref string, done map[string]bool) bool {
	n := spec.Node(ref)
	return n == nil || n.Mobility == nil || done[ref]
}

// current is a Path that is wherever the runner last put a node: a group
// member follows its reference as it is, whenever it started.
type current struct {
	r    *mobRunner
	node string
}

func (c current) At(time.Duration) [3]float64 { return c.r.pos[c.node] } // r.mu held by tick

// start starts (over) the named node's path, or with t0 set every node's
// whose t0 it is; it returns the nodes started.
func (r *mobRunner) start(node, t0 string) ([]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, n := range r.nodes {
		if node != "" && n.name != node || node == "" && n.spec.T0 != t0 {
			continue
		}
		var ref mobility.Path
		if n.spec.Model == mobility.ReferencePoint {
			ref = current{r: r, node: n.spec.Reference}
		}
		p, err := mobility.New(*n.spec, ref)
		if err != nil {
			return out, fmt.Errorf("%s: %w", n.name, err)
		}
		*n = mobNode{name: n.name, spec: n.spec, path: p, t0: time.Now(), running: true}
		if n.spec.Model == mobility.Waypoints {
			n.end = n.spec.Waypoints[len(n.spec.Waypoints)-1].T
		}
		out = append(out, n.name)
	}
	if node != "" && len(out) == 0 {
		return nil, fmt.Errorf("node %q has no mobility (moving nodes: %s)", node, r.names())
	}
	return out, nil
}

// stop stops the named node ("" every one) where it is.
func (r *mobRunner) stop(node string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	found := false
	for _, n := range r.nodes {
		if node == "" || n.name == node {
			n.running, found = false, true
		}
	}
	if !found {
		return fmt.Errorf("node %q has no mobility (moving nodes: %s)", node, r.names())
	}
	return nil
}

func (r *mobRunner) names() string {
	var s []string
	for _, n := range r.nodes {
		s = append(s, n.name)
	}
	sort.Strings(s)
	return fmt.Sprint(s)
}

// step carries out a schedule's mobility step.
func (r *mobRunner) step(node, action string) error {
	if action == "start" {
		_, err := r.start(node, "")
		return err
	}
	return r.stop(node)
}

// moved records a position set by anyone (wifi move included).
func (r *mobRunner) moved(node string, pos [3]float64) {
	r.mu.Lock()
	r.pos[node] = pos
	r.mu.Unlock()
}

// run places the running nodes every mobilityPeriod until ctx ends.
func (r *mobRunner) run(ctx context.Context) {
	tk := time.NewTicker(mobilityPeriod)
	defer tk.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tk.C:
			r.tick()
		}
	}
}

type placement struct {
	n   *mobNode
	pos [3]float64
}

// tick computes every running node's position now, then applies each
// (outside r.mu: the move takes the supervisor's lock).
func (r *mobRunner) tick() {
	now := time.Now()
	var todo []placement
	r.mu.Lock()
	for _, n := range r.nodes {
		if !n.running {
			continue
		}
		t := now.Sub(n.t0)
		p := n.path.At(t)
		r.pos[n.name] = p // members placed later in this tick follow it
		todo = append(todo, placement{n, p})
		if n.end > 0 && t > n.end {
			n.running, n.finished = false, true
		}
	}
	r.mu.Unlock()
	for _, pl := range todo {
		err := r.move(pl.n.name, pl.pos)
		at := time.Now()
		r.mu.Lock()
		n := pl.n
		if err != nil {
			n.err = err.Error()
		} else {
			n.err = "" // e.g. a medium that was not serving yet now is
			if n.moves > 0 {
				n.maxGap = max(n.maxGap, at.Sub(n.last))
			} else {
				n.first = at
			}
			n.moves++
			n.last = at
		}
		r.mu.Unlock()
	}
}

func (r *mobRunner) status() []MobilityStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []MobilityStatus
	for _, n := range r.nodes {
		s := MobilityStatus{Node: n.name, Model: topo.MobilityString(n.spec), T0: n.spec.T0, Running: n.running, Started: n.t0,
			Finished: n.finished, Pos: r.pos[n.name], Moves: n.moves, MaxGap: n.maxGap, Error: n.err}
		if n.moves > 1 {
			s.RateHz = float64(n.moves-1) / n.last.Sub(n.first).Seconds()
		}
		out = append(out, s)
	}
	return out
}

// handle answers the mobility ops of the control socket.
func (r *mobRunner) handle(req ctlRequest) ctlResponse {
	none := r == nil
	if !none {
		r.mu.Lock()
		none = len(r.nodes) == 0
		r.mu.Unlock()
	}
	if none {
		return ctlResponse{Error: "no node of the lab has mobility"}
	}
	switch req.Op {
	case "mobility-start":
		names, err := r.start(req.Node, req.What)
		if err != nil {
			return ctlResponse{Error: err.Error()}
		}
		var out []MobilityStatus
		for _, n := range names {
			out = append(out, MobilityStatus{Node: n, Running: true})
		}
		return ctlResponse{Mobility: out}
	case "mobility-stop":
		if err := r.stop(req.Node); err != nil {
			return ctlResponse{Error: err.Error()}
		}
		return ctlResponse{}
	case "mobility":
		return ctlResponse{Mobility: r.status()}
	}
	return ctlResponse{Error: "unknown op " + req.Op}
}

// StartMobility starts (over) a lab's node's path, or with t0 every
// path starting at t0 ("up", "traffic"); it returns the nodes started.
func StartMobility(lab, node, t0 string) ([]string, error) {
	resp, err := supervisorCall(lab, ctlRequest{Op: "mobility-start", Node: node, What: t0})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, s := range resp.Mobility {
		out = append(out, s.Node)
	}
	return out, nil
}

// StopMobility stops a lab's node where it is ("" every moving node).
func StopMobility(lab, node string) error {
	_, err := supervisorCall(lab, ctlRequest{Op: "mobility-stop", Node: node})
	return err
}

// Mobility lists a lab's moving nodes: where each is, whether it runs and
// how often the supervisor placed it.
func Mobility(lab string) ([]MobilityStatus, error) {
	resp, err := supervisorCall(lab, ctlRequest{Op: "mobility"})
	if err != nil {
		return nil, err
	}
	return resp.Mobility, nil
}

// hasMobilityT0 reports whether a node of spec starts moving at t0.
func hasMobilityT0(spec *topo.Spec, t0 string) bool {
	for _, n := range spec.Nodes {
		if n.Mobility != nil && n.Mobility.T0 == t0 {
			return true
		}
	}
	return false
}

// StartTrafficMobility starts the paths whose t0 is traffic, if the lab
// has any (a flow run calls it as its flows start).
func StartTrafficMobility(lab string) ([]string, error) {
	st, err := ReadState(lab)
	if err != nil {
		return nil, err
	}
	if !hasMobilityT0(st.Spec, topo.T0Traffic) {
		return nil, nil
	}
	return StartMobility(lab, "", topo.T0Traffic)
}
