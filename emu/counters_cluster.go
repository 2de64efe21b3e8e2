package emu

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/emuctl/emuctl/topo"
)

// Counters of a lab over several machines: a link's counters are read on
// the machine of its A end, by that machine's worker (`__emuctl_worker
// counters <lab> <interval>`), which reads its own links with a
// CounterReader as a lone lab's reader does and writes one JSON line per
// interval (counterLine) until its input closes — the controller's end
// of the pipe or of the SSH session, so it dies with the controller, even
// one killed with SIGKILL. A reader on the controller keeps one such
// worker per machine (started at its first read, again when it dies,
// closed by Close) and fills each link from the newest line of its
// machine: one process and, over SSH, one session per machine, whatever
// the rate of reads. A one-shot reader (Counters) asks each machine once
// (interval 0: one line).

// counterLine is one read of a machine's links (those whose A end is
// there), stamped on the machine's clock.
type counterLine struct {
	T     time.Time      `json:"t"`
	Links []LinkCounters `json:"links"`
}

// DefaultWorkerInterval is how often the workers of a lab over several
// machines read their links for a CounterReader whose Interval is 0.
const DefaultWorkerInterval = 100 * time.Millisecond

// counterStream is one machine's counters worker, as the controller
// sees it.
type counterStream struct {
	machine string
	started time.Time
	done    chan struct{} // closed once the worker has ended and been waited for

	mu     sync.Mutex
	cmd    *exec.Cmd
	stdin  io.Closer
	closed bool         // by close: start no worker
	line   *counterLine // the newest, its stamps on this host's clock
	err    error        // why the worker ended (once done)
}

// startCounterStream starts machine m's counters worker in the
// background (over SSH its binary may first be copied there), its lines
// read as they come. Pdeathsig follows the forking thread, so the
// goroutine that starts the worker keeps its thread until it has ended.
func startCounterStream(lab string, m topo.Machine, every time.Duration) *counterStream {
	s := &counterStream{machine: m.Name, started: time.Now(), done: make(chan struct{})}
	go s.run(lab, m, every)
	return s
}

func (s *counterStream) run(lab string, m topo.Machine, every time.Duration) {
	defer close(s.done)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	fail := func(err error) {
		s.mu.Lock()
		s.err = fmt.Errorf("machine %s's counters worker: %w", m.Name, err)
		s.mu.Unlock()
	}
	if m.Local() && !machineExists(lab, m.Name) {
		fail(errors.New("the machine does not exist (any more)"))
		return
	}
	cmd, err := workerCommand(context.Background(), lab, m, "counters", lab, every.String())
	if err != nil {
		fail(err)
		return
	}
	stdin, err1 := cmd.StdinPipe()
	stdout, err2 := cmd.StdoutPipe()
	if err := errors.Join(err1, err2); err != nil {
		fail(err)
		return
	}
	var stderr tailBuffer
	cmd.Stderr = &stderr
	cmd.WaitDelay = 2 * time.Second
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		fail(errors.New("closed"))
		return
	}
	err = cmd.Start()
	if err == nil {
		s.cmd, s.stdin = cmd, stdin
	}
	s.mu.Unlock()
	if err != nil {
		fail(err)
		return
	}
	// The worker's stamps are on its machine's clock: they are moved onto
	// this one by a fixed shift, its first line's arrival — so the
	// difference between two reads of a link, which the rates divide by,
	// is the machine's own, and the stamps carry this process's
	// monotonic clock.
	var base, first time.Time
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 64*1024), 64<<20)
	for sc.Scan() {
		now := time.Now()
		var l counterLine
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil {
			continue
		}
		if base.IsZero() {
			base, first = now, l.T
		}
		l.T = base.Add(l.T.Sub(first))
		for i := range l.Links {
			l.Links[i].At = base.Add(l.Links[i].At.Sub(first))
		}
		s.mu.Lock()
		s.line = &l
		s.mu.Unlock()
	}
	stdin.Close()
	err = cmd.Wait()
	msg := stderr.last()
	if msg == "" && err != nil {
		msg = err.Error()
	}
	if msg == "" {
		msg = "ended"
	}
	fail(errors.New(msg))
}

// newest is the stream's newest line (nil: none yet) and, once the
// worker has ended, why.
func (s *counterStream) newest() (*counterLine, error) {
	select {
	case <-s.done:
	default:
		s.mu.Lock()
		defer s.mu.Unlock()
		return s.line, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.line, s.err
}

// close ends the worker (its input closes) and waits for it; SIGKILL
// after 3 s.
func (s *counterStream) close() {
	s.mu.Lock()
	s.closed = true
	if s.stdin != nil {
		s.stdin.Close()
	}
	s.mu.Unlock()
	select {
	case <-s.done:
		return
	case <-time.After(3 * time.Second):
	}
	s.mu.Lock()
	cmd := s.cmd
	s.mu.Unlock()
	if cmd != nil && cmd.Process != nil {
		cmd.Process.Signal(syscall.SIGKILL) // the worker this reader started
	}
	<-s.done
}

// tailBuffer keeps the last 4 kB written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (b *tailBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	if len(b.buf) > 4096 {
		b.buf = b.buf[len(b.buf)-4096:]
	}
	return len(p), nil
}

// last is the last non-empty line written.
func (b *tailBuffer) last() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	lines := strings.Split(strings.TrimSpace(string(b.buf)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// machineState is what a reader knows of one machine's worker.
type machineState struct {
	stream  *counterStream
	backoff time.Duration // before the next start after a failure
	warned  string        // the failure last told (Warnings), "" once a line came
}

// staleAfter is how old a machine's newest line may be before its links
// are no longer filled from it (its worker stalled or its session hangs).
func staleAfter(every time.Duration) time.Duration { return max(3*time.Second, 20*every) }

// readCluster is Read on a controller's record of a lab over several
// machines: each link from its A end's machine.
func (r *CounterReader) readCluster(st *State) (time.Time, []LinkCounters, error) {
	c := st.Spec.Cluster
	every := r.Interval
	if every <= 0 {
		every = DefaultWorkerInterval
	}
	lines := map[string]*counterLine{}
	why := map[string]string{} // machine -> why its links are not filled
	if r.once {
		lines, why = oneShotCounters(st)
	} else {
		if r.machines == nil || r.machinesLab != st.Lab {
			r.closeStreams()
			r.machines, r.machinesLab = map[string]*machineState{}, st.Lab
		}
		now := time.Now()
		ends := map[string]bool{} // the machines that hold a link's A end
		for i := range linkCount(st.Spec) {
			a, _ := linkEnds(st.Spec, i)
			ends[c.Nodes[a.Node]] = true
		}
		for _, m := range c.Machines {
			if !ends[m.Name] {
				continue
			}
			ms := r.machines[m.Name]
			if ms == nil {
				ms = &machineState{backoff: time.Second}
				r.machines[m.Name] = ms
			}
			if ms.stream == nil {
				ms.stream = startCounterStream(st.Lab, m, every)
			}
			line, err := ms.stream.newest()
			switch {
			case err != nil:
				why[m.Name] = err.Error()
				if ms.warned != err.Error() {
					ms.warned = err.Error()
					r.warnings = append(r.warnings, err.Error()+" (its links show no counters until it is started again)")
				}
				if now.Sub(ms.stream.started) >= ms.backoff {
					ms.backoff = min(2*ms.backoff, 30*time.Second)
					ms.stream = startCounterStream(st.Lab, m, every) // read from the next tick on
				}
			case line == nil:
				why[m.Name] = "machine " + m.Name + "'s counters worker has not answered yet"
			case now.Sub(line.T) > staleAfter(every):
				why[m.Name] = fmt.Sprintf("machine %s's counters worker has sent nothing for %v", m.Name, now.Sub(line.T).Round(time.Second))
			default:
				lines[m.Name] = line
				ms.warned, ms.backoff = "", time.Second
			}
		}
	}
	t := time.Now()
	byMachine := map[string]map[int]LinkCounters{}
	for name, l := range lines {
		byIndex := map[int]LinkCounters{}
		for _, lc := range l.Links {
			byIndex[lc.Index] = lc
		}
		byMachine[name] = byIndex
	}
	out := make([]LinkCounters, 0, linkCount(st.Spec))
	for i := range linkCount(st.Spec) {
		a, b := linkEnds(st.Spec, i)
		m := c.Nodes[a.Node]
		lc, ok := byMachine[m][i]
		if !ok || lc.A != a.String() || lc.B != b.String() {
			lc = LinkCounters{Index: i, A: a.String(), B: b.String(), StateA: "remote", At: t, Remote: why[m]}
			if lc.Remote == "" && lines[m] != nil {
				lc.Remote = "machine " + m + "'s worker does not have this link"
			}
		}
		out = append(out, lc)
	}
	return t, out, nil
}

// oneShotCounters asks every machine's worker for one read, at once.
func oneShotCounters(st *State) (map[string]*counterLine, map[string]string) {
	c := st.Spec.Cluster
	lines, why := map[string]*counterLine{}, map[string]string{}
	var mu sync.Mutex
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	parallel(ctx, len(c.Machines), c.Machines, func(m topo.Machine) error {
		var l counterLine
		err := func() error {
			if m.Local() && !machineExists(st.Lab, m.Name) {
				return errors.New("the machine does not exist (any more)")
			}
			t0 := time.Now()
			out, err := runWorker(ctx, st.Lab, m, nil, "counters", st.Lab, "0")
			t1 := time.Now()
			if err != nil {
				return err
			}
			if err := json.Unmarshal([]byte(out), &l); err != nil {
				return fmt.Errorf("its line: %w", err)
			}
			// the machine's clock onto this one's: its read was about
			// the middle of the call
			mid := t0.Add(t1.Sub(t0) / 2)
			for i := range l.Links {
				l.Links[i].At = mid.Add(l.Links[i].At.Sub(l.T))
			}
			l.T = mid
			return nil
		}()
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			why[m.Name] = fmt.Sprintf("machine %s's counters worker: %v", m.Name, err)
		} else {
			lines[m.Name] = &l
		}
		return nil
	})
	return lines, why
}

// Warnings returns what went wrong since the last call, each once: a
// machine's counters worker that failed (told again only after it has
// worked in between).
func (r *CounterReader) Warnings() []string {
	w := r.warnings
	r.warnings = nil
	return w
}

// closeStreams ends every machine's counters worker and waits for them.
func (r *CounterReader) closeStreams() {
	var wg sync.WaitGroup
	for _, ms := range r.machines {
		if ms.stream != nil {
			wg.Add(1)
			go func(s *counterStream) {
				defer wg.Done()
				s.close()
			}(ms.stream)
		}
	}
	wg.Wait()
	r.machines = nil
}

// workerCounters is `__emuctl_worker counters <lab> <interval>`: the
// counters of the links whose A end is on this machine, one JSON line
// per interval until stdin closes (interval 0: one line).
func workerCounters(lab, interval string) error {
	every, err := time.ParseDuration(interval)
	if err != nil || every < 0 {
		return fmt.Errorf("counters: interval %q: want a duration such as 100ms (0: one read)", interval)
	}
	eof := make(chan struct{})
	if every > 0 {
		go func() {
			io.Copy(io.Discard, os.Stdin)
			close(eof)
		}()
	}
	r := NewCounterReader()
	defer r.Close()
	out := bufio.NewWriter(os.Stdout)
	enc := json.NewEncoder(out)
	var tick *time.Ticker
	if every > 0 {
		tick = time.NewTicker(every)
		defer tick.Stop()
	}
	for {
		t, cs, err := r.Read(lab)
		if err != nil {
			return err
		}
		line := counterLine{T: t, Links: make([]LinkCounters, 0, len(cs))}
		for _, c := range cs {
			if c.StateA != "remote" { // its A end is on another machine
				line.Links = append(line.Links, c)
			}
		}
		if err := enc.Encode(line); err != nil {
			return err
		}
		if err := out.Flush(); err != nil {
			return err // the controller is gone
		}
		if every == 0 {
			return nil
		}
		select {
		case <-eof:
			return nil
		case <-tick.C:
		}
	}
}
