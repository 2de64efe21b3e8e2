package emu

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"github.com/emuctl/emuctl/internal/proc"
	"github.com/emuctl/emuctl/tc"
	"github.com/emuctl/emuctl/tc/engine"
	"github.com/emuctl/emuctl/wifi"
	"github.com/vishvananda/netns"
)

// The supervisor is the one long-lived process of a lab: emuctl re-executed
// as a hidden subcommand, detached, recorded in the lab's state, stopped by
// down. It owns the userspace link engines (goroutines, not processes, so
// hundreds of links are one process) and answers runtime changes on a unix
// socket in the state dir.
const superArg = "__emuctl_supervise"

func supervisorSock(lab string) string { return filepath.Join(stateDir(lab), "supervisor.sock") }

// startSupervisor starts the lab's supervisor and returns once every engine
// is running (or with the supervisor's error). The supervisor is detached,
// so nothing would stop it if this process died before recording it: it
// first waits for "go" on a pipe, which is sent only once its pid is in the
// lab's journal, and exits at once if the pipe closes without it.
func startSupervisor(ctx context.Context, lab string, j *journal) (*Proc, error) {
	self, err := os.Executable()
	if err != nil {
		return nil, err
	}
	logPath := filepath.Join(stateDir(lab), "supervisor.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	defer r.Close()
	gor, gow, err := os.Pipe()
	if err != nil {
		w.Close()
		return nil, err
	}
	defer gow.Close()
	if err := j.add("proc-intent", "supervisor"); err != nil {
		w.Close()
		gor.Close()
		return nil, err
	}
	cmd := exec.Command(self, superArg, lab)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.ExtraFiles = []*os.File{w, gor}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		w.Close()
		gor.Close()
		return nil, fmt.Errorf("start supervisor: %w", err)
	}
	w.Close()
	gor.Close()
	st, _ := proc.Start(cmd.Process.Pid)
	p := &Proc{Node: "", PID: cmd.Process.Pid, Start: st, Command: "supervisor", Log: logPath}
	go cmd.Wait() // reap it if it dies while we are still here
	crashPoint("supervisor-forked")
	if err := j.add("proc", fmt.Sprint(p.PID), fmt.Sprint(p.Start), "supervisor"); err != nil {
		stopPIDs(map[int]uint64{p.PID: p.Start}, time.Second)
		return nil, err
	}
	if _, err := gow.WriteString("go\n"); err != nil {
		stopPIDs(map[int]uint64{p.PID: p.Start}, time.Second)
		return nil, fmt.Errorf("start supervisor: %w", err)
	}
	gow.Close()
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(r).ReadString('\n')
		line <- s
	}()
	select {
	case s := <-line:
		if s == "READY\n" {
			return p, nil
		}
		time.Sleep(50 * time.Millisecond)
		tail, _ := os.ReadFile(logPath)
		stopPIDs(map[int]uint64{p.PID: p.Start}, time.Second)
		return nil, fmt.Errorf("supervisor failed: %s%s", s, lastLines(string(tail), 10))
	case <-time.After(20 * time.Second):
		stopPIDs(map[int]uint64{p.PID: p.Start}, time.Second)
		return nil, errors.New("supervisor did not become ready in 20s")
	case <-ctx.Done():
		stopPIDs(map[int]uint64{p.PID: p.Start}, time.Second)
		return nil, ctx.Err()
	}
}

// ensureSupervisor starts the lab's supervisor unless it runs already,
// recording it in the lab's state; started says whether this call started
// it (a new supervisor serves what the saved state records: engines, the
// medium).
func (d *deployer) ensureSupervisor(ctx context.Context) (started bool, err error) {
	d.stMu.Lock()
	for _, p := range d.st.Procs {
		if p.Command == "supervisor" {
			d.stMu.Unlock()
			return false, nil
		}
	}
	d.stMu.Unlock()
	p, err := startSupervisor(ctx, d.spec.Name, d.j)
	if err != nil {
		return false, err
	}
	d.stMu.Lock()
	d.st.Procs = append(d.st.Procs, *p)
	d.stMu.Unlock()
	return true, d.save()
}

// supervisorPID is the recorded pid of the lab's supervisor, 0 if none.
func (d *deployer) supervisorPID() int {
	d.stMu.Lock()
	defer d.stMu.Unlock()
	for _, p := range d.st.Procs {
		if p.Command == "supervisor" {
			return p.PID
		}
	}
	return 0
}

// runSupervisor is the supervisor process's main: start one engine per
// userspace link, say READY on fd 3, serve the control socket, and stop
// everything on SIGTERM.
func runSupervisor(lab string) error {
	ready := os.NewFile(3, "ready")
	// Wait for the deploying process to record this pid (startSupervisor);
	// if it died first, nobody knows this process: leave at once.
	gate := os.NewFile(4, "go")
	b := make([]byte, 3)
	n, _ := io.ReadFull(gate, b)
	gate.Close()
	if n != 3 || string(b) != "go\n" {
		return errOrphan
	}
	fail := func(err error) error {
		if ready != nil {
			fmt.Fprintf(ready, "%v\n", err)
		}
		return err
	}
	st, err := ReadState(lab)
	if err != nil {
		return fail(err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT, syscall.SIGHUP)
	defer stop()
	errc := make(chan error, len(st.Links)+2)
	sup := &supervisor{lab: lab, engines: map[int]*engine.Engine{}, byNetns: map[string]*engine.Engine{}, ctx: ctx, errc: errc, daemons: newDaemons(lab)}
	for _, ls := range st.Links {
		if ls.Backend != BackendEngine {
			continue
		}
		if err := sup.startEngine(ls); err != nil {
			return fail(err)
		}
	}
	if st.Medium != nil {
		if err := sup.startMedium(st.Medium); err != nil {
			return fail(err)
		}
	}
	if sup.mob = newMobRunner(st.Spec, sup.moveNode); sup.mob != nil {
		go sup.mob.run(ctx) // mobility.go
	}
	if len(st.Spec.Schedules) > 0 {
		sup.sched = newSchedRunner(ctx, lab, st.Spec)
		if sup.mob != nil {
			sup.sched.mobility = sup.mob.step
		}
	}
	localUpdate = func(li int, a, b tc.Dir) error {
		sup.mu.Lock()
		e := sup.engines[li] // run-time changes re-key them (syncEngines)
		sup.mu.Unlock()
		if e == nil {
			return fmt.Errorf("link %d has no userspace engine", li)
		}
		return e.Update(a, b)
	}
	os.Remove(supervisorSock(lab))
	l, err := net.Listen("unix", supervisorSock(lab))
	if err != nil {
		return fail(err)
	}
	defer l.Close()
	go sup.serve(l)
	fmt.Fprintf(ready, "READY\n")
	ready.Close()
	ready = nil
	fmt.Printf("%s supervisor of lab %s: %d engines running\n", time.Now().Format(time.RFC3339), lab, len(sup.engines))
	select {
	case <-ctx.Done():
	case err = <-errc:
		fmt.Printf("%s failed: %v\n", time.Now().Format(time.RFC3339), err)
	}
	stop()
	l.Close()
	if sup.sched != nil {
		sup.sched.stop("")
	}
	sup.daemons.stopAll(daemonGrace) // before the links and the medium they use
	sup.mu.Lock()
	for _, e := range sup.byNetns {
		e.Close()
	}
	sup.mu.Unlock()
	sup.wg.Wait()
	return err
}

// startEngine starts the userspace engine of one recorded link.
func (s *supervisor) startEngine(ls LinkState) error {
	h, err := netns.GetFromPath(filepath.Join(NetnsDir, ls.Netns))
	if err != nil {
		return fmt.Errorf("link %d: %w", ls.Index, err)
	}
	e, err := engine.New(h, engineIfA, engineIfB, ls.AtoB, ls.BtoA, uint64(ls.Index)+1)
	h.Close()
	if err != nil {
		return fmt.Errorf("link %d (%s): %w", ls.Index, ls.Name, err)
	}
	s.engines[ls.Index] = e
	s.byNetns[ls.Netns] = e
	s.wg.Add(1)
	go func(name string) {
		defer s.wg.Done()
		if err := e.Run(s.ctx); err != nil {
			s.mu.Lock()
			closed := s.byNetns[name] != e
			s.mu.Unlock()
			if !closed { // one a run-time change removed ends quietly
				select {
				case s.errc <- fmt.Errorf("link %s: %w", name, err):
				default: // the supervisor is ending already
				}
			}
		}
	}(ls.Netns)
	return nil
}

// syncEngines makes the running engines those the lab's state records
// after a run-time change (change.go): an engine is its link's namespace,
// so links renumbered by a removal keep theirs; new links get one, and
// removed links' engines stop. Called with s.mu held.
func (s *supervisor) syncEngines() error {
	st, err := ReadState(s.lab)
	if err != nil {
		return err
	}
	keep := map[string]bool{}
	s.engines = map[int]*engine.Engine{}
	var errs []error
	for _, ls := range st.Links {
		if ls.Backend != BackendEngine {
			continue
		}
		keep[ls.Netns] = true
		if e := s.byNetns[ls.Netns]; e != nil {
			s.engines[ls.Index] = e
			continue
		}
		if err := s.startEngine(ls); err != nil {
			errs = append(errs, err)
		}
	}
	for name, e := range s.byNetns {
		if !keep[name] {
			delete(s.byNetns, name)
			e.Close()
		}
	}
	return errors.Join(errs...)
}

// errOrphan ends a supervisor whose deploying process died before
// recording it.
var errOrphan = errors.New("supervisor: the deploying emuctl process died before recording this supervisor; exiting")

type supervisor struct {
	lab     string
	mu      sync.Mutex
	engines map[int]*engine.Engine    // by link index
	byNetns map[string]*engine.Engine // the same, by the link's namespace
	wg      sync.WaitGroup
	ctx     context.Context
	errc    chan error
	medium  labMedium
	daemons *daemons     // supervisor_daemons.go
	sched   *schedRunner // schedule.go; nil when the lab has no schedules
	mob     *mobRunner   // mobility.go; nil when no node moves
}

// moveNode puts a Wi-Fi node at pos on the medium.
func (s *supervisor) moveNode(node string, pos [3]float64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.moveLocked(node, pos)
}

// moveLocked is the one way a node moves, `emuctl wifi move` and mobility
// alike (s.mu held).
func (s *supervisor) moveLocked(node string, pos [3]float64) error {
	if s.medium == nil {
		return errors.New("the lab has no medium")
	}
	if err := s.medium.SetPosition(node, pos); err != nil {
		return err
	}
	if s.mob != nil {
		s.mob.moved(node, pos)
	}
	return nil
}

// labMedium is a running medium of either backend.
type labMedium interface {
	Stats() wifi.MediumStats
	SetPosition(node string, pos [3]float64) error
	SetPair(a, b string, snr, loss *float64) error
	Capture(w io.Writer, snaplen int) (stop func() (uint64, error), err error)
}

// startMedium registers and runs the lab's Wi-Fi medium; its death ends
// the supervisor with the medium's error.
func (s *supervisor) startMedium(ms *MediumState) error {
	if s.medium != nil {
		return nil
	}
	started := make(chan error, 1)
	var done <-chan error
	if ms.Backend == WiFiEngine {
		var srv *wifi.EtherMedium
		srv, done = serveEtherMedium(s.ctx, ms, started)
		if err := <-started; err != nil {
			return fmt.Errorf("wifi medium: %w", err)
		}
		s.medium = srv
	} else {
		var srv *wifi.MediumServer
		srv, done = serveMedium(s.ctx, ms, started)
		if err := <-started; err != nil {
			return fmt.Errorf("wifi medium: %w", err)
		}
		s.medium = srv
	}
	fmt.Printf("%s wifi medium serving %d radios in %s\n", time.Now().Format(time.RFC3339), len(ms.Radios), ms.Netns)
	go func() {
		if err := <-done; err != nil {
			if ms.Backend == WiFiEngine {
				s.errc <- fmt.Errorf("wifi medium: %w (the lab's Wi-Fi nodes are cut off)", err)
				return
			}
			s.errc <- fmt.Errorf("wifi medium: %w (the radios fall back to mac80211_hwsim's instant delivery: the lab is no longer emulating airtime)", err)
		}
	}()
	return nil
}

// ctlRequest is one request on the supervisor's control socket.
type ctlRequest struct {
	Op   string  `json:"op"` // "update" | "engines-sync" | "stats" | "medium" | "medium-stats" | "medium-move" | "medium-pair" | "medium-capture" | "medium-add" | "medium-remove" | "daemon-start" | "daemon-stop" | "daemons" | "schedule-start" | "schedule-stop" | "schedules" | "mobility-start" | "mobility-stop" | "mobility" | "mobility-sync"
	Link int     `json:"link"`
	AtoB *tc.Dir `json:"a_to_b,omitempty"`
	BtoA *tc.Dir `json:"b_to_a,omitempty"`
	// medium-move: Node to Pos; medium-pair: A and B get SNR or Loss (dB;
	// neither: the override is removed); medium-capture: Snaplen.
	Node    string      `json:"node,omitempty"`
	Pos     *[3]float64 `json:"pos,omitempty"`
	A       string      `json:"a,omitempty"`
	B       string      `json:"b,omitempty"`
	SNR     *float64    `json:"snr,omitempty"`
	Loss    *float64    `json:"loss,omitempty"`
	Snaplen int         `json:"snaplen,omitempty"`
	// daemon-start: keep Argv running on Node as What, output to Log;
	// daemon-stop: stop Node's daemons for good (its removal).
	// schedule-start: the schedule What, or every one whose t0 is Node;
	// schedule-stop: What ("" all). mobility-start: Node, or every node
	// whose t0 is What; mobility-stop: Node ("" all).
	What string   `json:"what,omitempty"`
	Argv []string `json:"argv,omitempty"`
	Log  string   `json:"log,omitempty"`
	// medium-add: a station's Radio on its port Ifindex (wifi_change.go);
	// medium-remove: Node's. mobility-sync: the lab's moving nodes as its
	// state's topology has them now.
	Radio   *wifi.MediumRadio `json:"radio,omitempty"`
	Ifindex int               `json:"ifindex,omitempty"`
}

type ctlResponse struct {
	Error  string               `json:"error,omitempty"`
	Stats  map[int]engine.Stats `json:"stats,omitempty"`
	Dirs   map[int][2]tc.Dir    `json:"dirs,omitempty"`
	Medium *wifi.MediumStats    `json:"medium,omitempty"`
	// Daemons: daemon-start's new daemon (one), or every kept daemon.
	Daemons []DaemonStatus `json:"daemons,omitempty"`
	// Schedules: what schedule-start started, or every schedule's status.
	Schedules []ScheduleStatus `json:"schedules,omitempty"`
	// Mobility: what mobility-start started, or every moving node.
	Mobility []MobilityStatus `json:"mobility,omitempty"`
	// Index: medium-add's radio.
	Index *int `json:"index,omitempty"`
}

func (s *supervisor) serve(l net.Listener) {
	for {
		c, err := l.Accept()
		if err != nil {
			return
		}
		go func() {
			defer c.Close()
			var req ctlRequest
			dec := json.NewDecoder(c)
			if err := dec.Decode(&req); err != nil {
				json.NewEncoder(c).Encode(ctlResponse{Error: err.Error()})
				return
			}
			if req.Op == "medium-capture" {
				s.capture(c, req)
				return
			}
			json.NewEncoder(c).Encode(s.handle(req))
		}()
	}
}

func (s *supervisor) handle(req ctlRequest) ctlResponse {
	switch req.Op {
	case "schedule-start", "schedule-stop", "schedules":
		return s.sched.handle(req) // its own lock: steps may take time
	case "mobility-start", "mobility-stop", "mobility":
		return s.mob.handle(req) // its own lock
	case "mobility-sync":
		st, err := ReadState(s.lab)
		if err != nil {
			return ctlResponse{Error: err.Error()}
		}
		if s.mob == nil {
			return ctlResponse{Error: "the lab has no Wi-Fi nodes"}
		}
		return ctlResponse{Mobility: s.mob.sync(st.Spec)}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch req.Op {
	case "daemon-start":
		ds, err := s.daemons.start(req.Node, req.What, req.Argv, req.Log)
		if err != nil {
			return ctlResponse{Error: err.Error()}
		}
		return ctlResponse{Daemons: []DaemonStatus{ds}}
	case "daemon-stop":
		return ctlResponse{Daemons: s.daemons.stopNode(req.Node, daemonGrace)}
	case "daemons":
		return ctlResponse{Daemons: s.daemons.list()}
	case "engines-sync":
		if err := s.syncEngines(); err != nil {
			return ctlResponse{Error: err.Error()}
		}
		return ctlResponse{}
	case "stats":
		out := ctlResponse{Stats: map[int]engine.Stats{}, Dirs: map[int][2]tc.Dir{}}
		for i, e := range s.engines {
			out.Stats[i] = e.Stats()
			a, b := e.Config()
			a.Trace, b.Trace = a.Trace.Summary(), b.Trace.Summary() // not the opportunities
			out.Dirs[i] = [2]tc.Dir{a, b}
		}
		return out
	case "medium":
		st, err := ReadState(s.lab)
		if err != nil {
			return ctlResponse{Error: err.Error()}
		}
		if st.Medium == nil {
			return ctlResponse{Error: "the lab's state records no medium"}
		}
		if err := s.startMedium(st.Medium); err != nil {
			return ctlResponse{Error: err.Error()}
		}
		return ctlResponse{}
	case "medium-stats":
		if s.medium == nil {
			return ctlResponse{Error: "the lab has no medium"}
		}
		ms := s.medium.Stats()
		return ctlResponse{Medium: &ms}
	case "medium-move":
		if s.medium == nil {
			return ctlResponse{Error: "the lab has no medium"}
		}
		if req.Pos == nil {
			return ctlResponse{Error: "medium-move: no position"}
		}
		if err := s.moveLocked(req.Node, *req.Pos); err != nil {
			return ctlResponse{Error: err.Error()}
		}
		return ctlResponse{}
	case "medium-add", "medium-remove":
		// the engine's medium takes a station on its port (Ifindex),
		// hwsim's by its radio's permanent address (wifi_change.go)
		var add func(r wifi.MediumRadio) (int, error)
		var remove func(node string) error
		switch m := s.medium.(type) {
		case *wifi.EtherMedium:
			add = func(r wifi.MediumRadio) (int, error) { return m.AddRadio(r, req.Ifindex) }
			remove = m.RemoveRadio
		case *wifi.MediumServer:
			add, remove = m.AddRadio, m.RemoveRadio
		default:
			return ctlResponse{Error: "the lab has no medium of emuctl's that takes stations while it runs"}
		}
		if req.Op == "medium-remove" {
			if err := remove(req.Node); err != nil {
				return ctlResponse{Error: err.Error()}
			}
			s.mob.forget(req.Node)
			return ctlResponse{}
		}
		if req.Radio == nil {
			return ctlResponse{Error: "medium-add: no radio"}
		}
		i, err := add(*req.Radio)
		if err != nil {
			return ctlResponse{Error: err.Error()}
		}
		return ctlResponse{Index: &i}
	case "medium-pair":
		if s.medium == nil {
			return ctlResponse{Error: "the lab has no medium"}
		}
		if err := s.medium.SetPair(req.A, req.B, req.SNR, req.Loss); err != nil {
			return ctlResponse{Error: err.Error()}
		}
		return ctlResponse{}
	case "update":
		e := s.engines[req.Link]
		if e == nil {
			return ctlResponse{Error: fmt.Sprintf("link %d has no userspace engine", req.Link)}
		}
		a, b := e.Config()
		if req.AtoB != nil {
			a = *req.AtoB
		}
		if req.BtoA != nil {
			b = *req.BtoA
		}
		if err := e.Update(a, b); err != nil {
			return ctlResponse{Error: err.Error()}
		}
		return ctlResponse{}
	}
	return ctlResponse{Error: "unknown op " + req.Op}
}

// capture streams the medium's PPDUs to c as pcapng, after a one-line
// JSON answer, until the client closes the connection.
func (s *supervisor) capture(c net.Conn, req ctlRequest) {
	s.mu.Lock()
	m := s.medium
	s.mu.Unlock()
	if m == nil {
		json.NewEncoder(c).Encode(ctlResponse{Error: "the lab has no medium"})
		return
	}
	// The answer goes first, unbuffered; the capture then writes to c.
	lw := &lateWriter{c: c}
	stop, err := m.Capture(lw, req.Snaplen)
	if err != nil {
		json.NewEncoder(c).Encode(ctlResponse{Error: err.Error()})
		return
	}
	lw.ack()
	gone := make(chan struct{})
	go func() {
		io.Copy(io.Discard, c) // returns when the client closes
		close(gone)
	}()
	select {
	case <-gone:
	case <-s.ctx.Done():
	}
	drops, _ := stop()
	if drops > 0 {
		fmt.Printf("%s medium capture: %d PPDUs did not fit the capture's buffer\n", time.Now().Format(time.RFC3339), drops)
	}
}

// lateWriter puts the capture's JSON answer before the first pcapng
// bytes, so the client can tell an error from a stream.
type lateWriter struct {
	c    net.Conn
	once sync.Once
	err  error
}

func (w *lateWriter) ack() error {
	w.once.Do(func() { w.err = json.NewEncoder(w.c).Encode(ctlResponse{}) })
	return w.err
}

func (w *lateWriter) Write(p []byte) (int, error) {
	if err := w.ack(); err != nil {
		return 0, err
	}
	return w.c.Write(p)
}

// supervisorCall sends one request to a lab's supervisor.
func supervisorCall(lab string, req ctlRequest) (*ctlResponse, error) {
	c, err := net.DialTimeout("unix", supervisorSock(lab), 2*time.Second)
	if err != nil {
		return nil, fmt.Errorf("lab %s: supervisor not reachable: %w", lab, err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	if err := json.NewEncoder(c).Encode(req); err != nil {
		return nil, err
	}
	var resp ctlResponse
	if err := json.NewDecoder(c).Decode(&resp); err != nil {
		return nil, err
	}
	if resp.Error != "" {
		return &resp, errors.New(resp.Error)
	}
	return &resp, nil
}
