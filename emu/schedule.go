package emu

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"

	"github.com/emuctl/emuctl/tc"
	"github.com/emuctl/emuctl/topo"
	"golang.org/x/sys/unix"
)

// Schedules (topo.Schedule) run in the lab's supervisor: each started
// schedule is a goroutine that sleeps until a step is due and applies it
// the way `emuctl link set` / `link down|up` would — under the lab's lock,
// to the state and to the link: an engine link's engine is updated in
// place (its queued frames re-timed to a new rate), a netem link's qdiscs
// are changed in place ("tc change": frames already queued keep the times
// netem gave them; a change that alters the tree's shape, such as adding
// loss to a rate-only link, replaces it and drops its queue). Every step
// is logged, with how late it took effect, in schedule.log in the lab's
// state dir (StepLog, one JSON object a line); traffic results and
// reports carry the steps of their run.

// StepLog is one applied (or failed) step.
type StepLog struct {
	Schedule string        `json:"schedule"`
	Rep      int           `json:"rep"`  // repetition, from 0
	Step     int           `json:"step"` // index in the schedule's steps
	Planned  time.Duration `json:"planned"`
	Due      time.Time     `json:"due"`
	Applied  time.Time     `json:"applied"`
	Late     time.Duration `json:"late"` // Applied − Due
	// where the lateness went: the timer's wake-up after Due, the wait
	// for the lab's lock, and the change itself
	Woke    time.Duration `json:"woke"`
	Locked  time.Duration `json:"locked"`
	Took    time.Duration `json:"took"`
	Link    int           `json:"link"`
	Dir     string        `json:"dir,omitempty"`      // "" both, a->b, b->a
	RateBps float64       `json:"rate_bps,omitempty"` // the rate it set, if any
	What    string        `json:"what"`
	Error   string        `json:"error,omitempty"`
}

// ScheduleStatus is a schedule of a running lab.
type ScheduleStatus struct {
	Name    string    `json:"name"`
	T0      string    `json:"t0"`
	Running bool      `json:"running"`
	Started time.Time `json:"started,omitzero"`
	Applied int       `json:"applied"` // steps applied since the last start
	Steps   int       `json:"steps"`   // per repetition
	Repeat  string    `json:"repeat,omitempty"`
}

func scheduleLogPath(lab string) string { return filepath.Join(stateDir(lab), "schedule.log") }

// ScheduleLog reads a lab's step log (empty when no step ran).
func ScheduleLog(lab string) ([]StepLog, error) {
	f, err := os.Open(scheduleLogPath(lab))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []StepLog
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var s StepLog
		if err := json.Unmarshal(sc.Bytes(), &s); err != nil {
			return out, fmt.Errorf("%s: %w", scheduleLogPath(lab), err)
		}
		out = append(out, s)
	}
	return out, sc.Err()
}

// StepsBetween are the logged steps applied in [from, to].
func StepsBetween(lab string, from, to time.Time) []StepLog {
	all, _ := ScheduleLog(lab)
	var out []StepLog
	for _, s := range all {
		if !s.Applied.Before(from) && !s.Applied.After(to) {
			out = append(out, s)
		}
	}
	return out
}

// schedRunner runs a lab's schedules inside its supervisor.
type schedRunner struct {
	lab  string
	spec *topo.Spec
	ctx  context.Context

	startMu sync.Mutex // serialises start and stop
	mu      sync.Mutex // guards running, last and the runs' counts
	running map[string]*schedRun
	last    map[string]ScheduleStatus
	logMu   sync.Mutex
	// mobility starts ("start") or stops a node's path (the supervisor's
	// mobility runner, mobility.go); nil when no node moves.
	mobility func(node, action string) error
}

type schedRun struct {
	t0      time.Time
	cancel  context.CancelFunc
	done    chan struct{}
	applied int
}

func newSchedRunner(ctx context.Context, lab string, spec *topo.Spec) *schedRunner {
	return &schedRunner{lab: lab, spec: spec, ctx: ctx, running: map[string]*schedRun{}, last: map[string]ScheduleStatus{}}
}

// start starts the named schedule now (a running one starts over).
func (r *schedRunner) start(name string) error {
	s := r.spec.Schedule(name)
	if s == nil {
		return fmt.Errorf("lab %s has no schedule %q (it has: %s)", r.lab, name, r.names())
	}
	r.startMu.Lock() // one start or stop at a time
	defer r.startMu.Unlock()
	r.mu.Lock()
	old := r.running[name]
	r.mu.Unlock()
	if old != nil { // start over: the old run ends first (it takes r.mu as it ends)
		old.cancel()
		<-old.done
	}
	ctx, cancel := context.WithCancel(r.ctx)
	run := &schedRun{t0: time.Now(), cancel: cancel, done: make(chan struct{})}
	r.mu.Lock()
	r.running[name] = run
	r.mu.Unlock()
	go func() {
		defer close(run.done)
		r.run(ctx, s, run)
		r.mu.Lock()
		if r.running[name] == run {
			delete(r.running, name)
		}
		r.last[name] = r.statusOf(s, run, false)
		r.mu.Unlock()
	}()
	return nil
}

// startT0 starts every schedule whose t0 is kind; it returns their names.
func (r *schedRunner) startT0(kind string) []string {
	var out []string
	for _, s := range r.spec.Schedules {
		if s.T0 == kind {
			if r.start(s.Name) == nil {
				out = append(out, s.Name)
			}
		}
	}
	return out
}

// stop stops the named schedule, or every one with name "".
func (r *schedRunner) stop(name string) error {
	if name != "" && r.spec.Schedule(name) == nil {
		return fmt.Errorf("lab %s has no schedule %q (it has: %s)", r.lab, name, r.names())
	}
	r.startMu.Lock()
	defer r.startMu.Unlock()
	r.mu.Lock()
	var runs []*schedRun
	for n, run := range r.running {
		if name == "" || n == name {
			runs = append(runs, run)
		}
	}
	r.mu.Unlock()
	for _, run := range runs {
		run.cancel()
		<-run.done
	}
	return nil
}

func (r *schedRunner) names() string {
	var ns []string
	for _, s := range r.spec.Schedules {
		ns = append(ns, s.Name)
	}
	if len(ns) == 0 {
		return "none"
	}
	return fmt.Sprint(ns)
}

func (r *schedRunner) statusOf(s *topo.Schedule, run *schedRun, running bool) ScheduleStatus {
	st := ScheduleStatus{Name: s.Name, T0: s.T0, Running: running, Steps: len(s.Steps)}
	if run != nil {
		st.Started, st.Applied = run.t0, run.applied
	}
	if s.Repeat != nil {
		st.Repeat = fmt.Sprintf("every %v", s.Repeat.Every)
		if s.Repeat.Count > 0 {
			st.Repeat += fmt.Sprintf(", %d runs", s.Repeat.Count)
		}
	}
	return st
}

// status lists every schedule of the lab.
func (r *schedRunner) status() []ScheduleStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []ScheduleStatus
	for i := range r.spec.Schedules {
		s := &r.spec.Schedules[i]
		if run := r.running[s.Name]; run != nil {
			out = append(out, r.statusOf(s, run, true))
		} else if st, ok := r.last[s.Name]; ok {
			out = append(out, st)
		} else {
			out = append(out, r.statusOf(s, nil, false))
		}
	}
	return out
}

// run applies s's steps on time from run.t0 until the last repetition
// ends or ctx is done.
func (r *schedRunner) run(ctx context.Context, s *topo.Schedule, run *schedRun) {
	reps, every := 1, time.Duration(0)
	if s.Repeat != nil {
		reps, every = s.Repeat.Count, s.Repeat.Every
	}
	for rep := 0; reps == 0 || rep < reps; rep++ {
		base := run.t0.Add(time.Duration(rep) * every)
		for k, step := range s.Steps {
			due := base.Add(step.At)
			if wait := time.Until(due); wait > 0 {
				t := time.NewTimer(wait)
				select {
				case <-ctx.Done():
					t.Stop()
					return
				case <-t.C:
				}
			} else if ctx.Err() != nil {
				return
			}
			woke := time.Now()
			var locked time.Time
			var err error
			if step.Mobility != "" { // the supervisor's own state: no lab lock
				locked, err = woke, r.moveStep(step)
			} else {
				locked, err = r.apply(ctx, step)
			}
			now := time.Now()
			e := StepLog{Schedule: s.Name, Rep: rep, Step: k, Planned: time.Duration(rep)*every + step.At, Due: due, Applied: now,
				Late: now.Sub(due), Link: step.Link, Dir: step.Dir, What: step.String(),
				Woke: max(0, woke.Sub(due)), Locked: locked.Sub(woke), Took: now.Sub(locked)}
			if step.Set != nil && step.Set.Rate != nil {
				e.RateBps = float64(*step.Set.Rate)
			}
			if err != nil {
				e.Error = err.Error()
			}
			r.log(e)
			r.mu.Lock()
			run.applied++
			r.mu.Unlock()
		}
	}
}

// moveStep starts or stops a node's path.
func (r *schedRunner) moveStep(step topo.Step) error {
	if r.mobility == nil {
		return fmt.Errorf("node %s has no mobility", step.Ref)
	}
	return r.mobility(step.Ref, step.Mobility)
}

// apply carries out one step under the lab's lock; locked is when it
// had the lock.
func (r *schedRunner) apply(ctx context.Context, step topo.Step) (locked time.Time, err error) {
	unlock, err := lockLabWait(ctx, r.lab)
	locked = time.Now()
	if err != nil {
		return locked, err
	}
	defer unlock()
	return locked, r.applyLocked(step)
}

func (r *schedRunner) applyLocked(step topo.Step) error {
	st, err := ReadState(r.lab)
	if err != nil {
		return err
	}
	if step.State != "" {
		return setLinkState(st, step.Link, step.State == "up")
	}
	mtu := 1500
	if step.Link < len(st.Spec.Links) {
		l := st.Spec.Links[step.Link]
		if ifc := findIface(st.Spec.Node(l.A.Node), l.A.Iface); ifc != nil && ifc.MTU > 0 {
			mtu = ifc.MTU
		}
	}
	if _, err := changeLink(st, step.Link, step.Dir, applySet(step.Set, mtu)); err != nil {
		return err
	}
	return writeState(st)
}

// applySet returns the change a step's parameters make to a direction.
func applySet(s *topo.ParamSet, mtu int) func(*tc.Dir) {
	return func(d *tc.Dir) {
		if s == nil {
			return
		}
		if s.Rate != nil {
			d.Rate = *s.Rate
		}
		if s.Delay != nil {
			d.Delay = *s.Delay
		}
		if s.Jitter != nil {
			d.Jitter = *s.Jitter
		}
		if s.Loss != nil {
			d.Loss, d.GE = *s.Loss, nil
		}
		if s.Duplicate != nil {
			d.Duplicate = *s.Duplicate
		}
		if s.Corrupt != nil {
			d.Corrupt = *s.Corrupt
		}
		if q := s.Queue; q != nil {
			d.QueuePackets, d.QueueBytes = q.Packets, q.Bytes
			if q.BDP > 0 {
				bdp := float64(d.Rate) / 8 * (2 * d.Delay).Seconds() * q.BDP
				d.QueuePackets, d.QueueBytes = max(2, int(bdp/float64(frameBytes(mtu))+0.999)), 0
			}
			d.AQM = QueueAQM(q, mtu)
		}
	}
}

// log appends e to the lab's step log.
func (r *schedRunner) log(e StepLog) {
	r.logMu.Lock()
	defer r.logMu.Unlock()
	f, err := os.OpenFile(scheduleLogPath(r.lab), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		fmt.Printf("%s schedule log: %v\n", time.Now().Format(time.RFC3339), err)
		return
	}
	defer f.Close()
	b, _ := json.Marshal(e)
	f.Write(append(b, '\n'))
	status := "applied"
	if e.Error != "" {
		status = "FAILED: " + e.Error
	}
	fmt.Printf("%s schedule %s rep %d step %d: %s %s (%.1f ms late: woke %.1f, lock %.1f, change %.1f)\n", time.Now().Format(time.RFC3339Nano), e.Schedule, e.Rep, e.Step, e.What, status,
		float64(e.Late)/1e6, float64(e.Woke)/1e6, float64(e.Locked)/1e6, float64(e.Took)/1e6)
}

// lockLabWait takes the lab's lock, retrying every 2 ms while another
// emuctl process holds it, until ctx is done.
func lockLabWait(ctx context.Context, lab string) (func(), error) {
	for {
		unlock, err := flockRun("."+lab+".lock", unix.LOCK_NB)
		if !errors.Is(err, unix.EWOULDBLOCK) {
			return unlock, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// StartSchedule starts a lab's schedule by name, or with t0 "up" or
// "traffic" every schedule of that start reference; it returns what
// started.
func StartSchedule(lab, name, t0 string) ([]string, error) {
	resp, err := supervisorCall(lab, ctlRequest{Op: "schedule-start", What: name, Node: t0})
	if err != nil {
		return nil, err
	}
	var out []string
	for _, s := range resp.Schedules {
		out = append(out, s.Name)
	}
	return out, nil
}

// StopSchedule stops a lab's schedule ("" every one).
func StopSchedule(lab, name string) error {
	_, err := supervisorCall(lab, ctlRequest{Op: "schedule-stop", What: name})
	return err
}

// Schedules lists a lab's schedules and whether they run.
func Schedules(lab string) ([]ScheduleStatus, error) {
	st, err := ReadState(lab)
	if err != nil {
		return nil, err
	}
	if len(st.Spec.Schedules) == 0 {
		return nil, nil
	}
	resp, err := supervisorCall(lab, ctlRequest{Op: "schedules"})
	if err != nil {
		return nil, err
	}
	return resp.Schedules, nil
}

// StartTrafficSchedules starts the schedules whose t0 is traffic, if the
// lab has any (a flow run calls it as its flows start).
func StartTrafficSchedules(lab string) ([]string, error) {
	st, err := ReadState(lab)
	if err != nil {
		return nil, err
	}
	for _, s := range st.Spec.Schedules {
		if s.T0 == topo.T0Traffic {
			return StartSchedule(lab, "", topo.T0Traffic)
		}
	}
	return nil, nil
}

// handleSchedule answers the schedule ops of the control socket.
func (r *schedRunner) handle(req ctlRequest) ctlResponse {
	if r == nil {
		return ctlResponse{Error: "the lab has no schedules"}
	}
	switch req.Op {
	case "schedule-start":
		var names []string
		switch {
		case req.What != "":
			if err := r.start(req.What); err != nil {
				return ctlResponse{Error: err.Error()}
			}
			names = []string{req.What}
		case req.Node != "":
			names = r.startT0(req.Node)
		default:
			return ctlResponse{Error: "schedule-start: no schedule named"}
		}
		sort.Strings(names)
		var out []ScheduleStatus
		for _, n := range names {
			out = append(out, ScheduleStatus{Name: n, Running: true})
		}
		return ctlResponse{Schedules: out}
	case "schedule-stop":
		if err := r.stop(req.What); err != nil {
			return ctlResponse{Error: err.Error()}
		}
		return ctlResponse{}
	case "schedules":
		return ctlResponse{Schedules: r.status()}
	}
	return ctlResponse{Error: "unknown op " + req.Op}
}
