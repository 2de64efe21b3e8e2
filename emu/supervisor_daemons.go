package emu

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"time"

	"github.com/emuctl/emuctl/internal/proc"
)

// The supervisor keeps the lab's daemons running (hostapd, wpa_supplicant;
// next, whatever a node kind needs): the deploying process asks it to start
// one (op "daemon-start"); it starts the daemon inside its node through the
// exec helper (Command), restarts it when it exits — the node keeps its
// access point or association — and gives up after daemonBurst exits
// within daemonWindow, which `up` and `ls` report with the log (op
// "daemons"). Down stops the supervisor first; the supervisor then stops
// its daemons (SIGTERM, SIGKILL after daemonGrace) and never restarts one
// once it has been told to stop. A supervisor killed with SIGKILL leaves
// its daemons in the lab's namespaces, where teardown and clean find every
// process. One process per lab owns the link engines, the Wi-Fi medium and
// the daemons.
const (
	daemonBurst        = 5
	daemonWindow       = time.Minute
	daemonRestartDelay = 500 * time.Millisecond
	daemonGrace        = 2 * time.Second
)

// DaemonStatus is one daemon the lab's supervisor keeps.
type DaemonStatus struct {
	Node     string `json:"node"`
	What     string `json:"what"` // hostapd, wpa_supplicant
	PID      int    `json:"pid"`  // the current (or last) process
	Start    uint64 `json:"start"`
	Starts   int    `json:"starts"` // 1 + restarts
	Running  bool   `json:"running"`
	GaveUp   bool   `json:"gave_up,omitempty"` // exited daemonBurst times within daemonWindow
	LastExit string `json:"last_exit,omitempty"`
	Log      string `json:"log"`
}

// kept is one daemon under the supervisor.
type kept struct {
	argv  []string
	mu    sync.Mutex
	st    DaemonStatus
	cmd   *exec.Cmd
	exits []time.Time
	done  chan struct{} // closed when the keeping goroutine ends
	// stopped: its node is being removed; it is not restarted
	stopped bool
}

// daemons is the supervisor's set of kept daemons.
type daemons struct {
	lab      string
	mu       sync.Mutex
	byKey    map[string]*kept // node + "/" + what
	stopping bool
	stop     chan struct{}
}

func newDaemons(lab string) *daemons {
	return &daemons{lab: lab, byKey: map[string]*kept{}, stop: make(chan struct{})}
}

// start begins keeping argv on node; it returns once the first process
// runs (or could not be started).
func (ds *daemons) start(node, what string, argv []string, logPath string) (DaemonStatus, error) {
	if node == "" || what == "" || len(argv) == 0 || logPath == "" {
		return DaemonStatus{}, errors.New("daemon-start needs node, what, argv and log")
	}
	ds.mu.Lock()
	defer ds.mu.Unlock()
	if ds.stopping {
		return DaemonStatus{}, errors.New("the supervisor is stopping")
	}
	key := node + "/" + what
	if k := ds.byKey[key]; k != nil {
		return DaemonStatus{}, fmt.Errorf("%s of %s is already kept (pid %d)", what, node, k.status().PID)
	}
	k := &kept{argv: argv, st: DaemonStatus{Node: node, What: what, Log: logPath}, done: make(chan struct{})}
	if err := ds.launch(k); err != nil {
		return DaemonStatus{}, err
	}
	ds.byKey[key] = k
	go ds.keep(k)
	return k.status(), nil
}

// launch starts one process of k, its output appended to k's log.
func (ds *daemons) launch(k *kept) error {
	f, err := os.OpenFile(k.st.Log, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	defer f.Close()
	cmd, err := Command(ds.lab, k.st.Node, k.argv)
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr.Setsid = true // a signal to the supervisor's group is not theirs
	if err := cmd.Start(); err != nil {
		fmt.Fprintf(f, "emuctl: cannot start %s: %v\n", filepath.Base(k.argv[0]), err)
		return fmt.Errorf("node %s: start %s: %w", k.st.Node, k.st.What, err)
	}
	fmt.Fprintf(f, "emuctl: %s started (pid %d)\n", filepath.Base(k.argv[0]), cmd.Process.Pid)
	start, _ := proc.Start(cmd.Process.Pid)
	k.mu.Lock()
	k.cmd = cmd
	k.st.PID, k.st.Start, k.st.Running = cmd.Process.Pid, start, true
	k.st.Starts++
	k.mu.Unlock()
	return nil
}

// keep waits for k's process and restarts it, until the supervisor stops
// or the daemon exits too often.
func (ds *daemons) keep(k *kept) {
	defer close(k.done)
	for {
		k.mu.Lock()
		cmd := k.cmd
		k.mu.Unlock()
		err := cmd.Wait()
		now := time.Now()
		k.mu.Lock()
		k.st.Running = false
		k.st.LastExit = fmt.Sprint(err)
		if err == nil {
			k.st.LastExit = "exit status 0"
		}
		k.exits = append(k.exits, now)
		for len(k.exits) > 0 && now.Sub(k.exits[0]) > daemonWindow {
			k.exits = k.exits[1:]
		}
		burst := len(k.exits) >= daemonBurst
		k.mu.Unlock()
		ds.mu.Lock()
		stopping := ds.stopping
		ds.mu.Unlock()
		k.mu.Lock()
		stopped := k.stopped
		k.mu.Unlock()
		if stopping || stopped {
			return
		}
		name := filepath.Base(k.argv[0])
		if burst {
			k.mu.Lock()
			k.st.GaveUp = true
			k.mu.Unlock()
			appendLog(k.st.Log, fmt.Sprintf("emuctl: %s exited (%s) %d times within %v; giving up\n", name, k.st.LastExit, daemonBurst, daemonWindow))
			fmt.Printf("%s %s of %s gave up after %d exits within %v\n", now.Format(time.RFC3339), k.st.What, k.st.Node, daemonBurst, daemonWindow)
			return
		}
		appendLog(k.st.Log, fmt.Sprintf("emuctl: %s exited (%s); restarting\n", name, k.st.LastExit))
		select {
		case <-ds.stop:
			return
		case <-time.After(daemonRestartDelay):
		}
		ds.mu.Lock()
		k.mu.Lock()
		stopped = k.stopped
		k.mu.Unlock()
		if ds.stopping || stopped {
			ds.mu.Unlock()
			return
		}
		err = ds.launch(k)
		ds.mu.Unlock()
		if err != nil {
			k.mu.Lock()
			k.st.GaveUp, k.st.LastExit = true, err.Error()
			k.mu.Unlock()
			return
		}
	}
}

func appendLog(path, line string) {
	if f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600); err == nil {
		f.WriteString(line)
		f.Close()
	}
}

func (k *kept) status() DaemonStatus {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.st
}

// list returns every kept daemon's status, by node and name.
func (ds *daemons) list() []DaemonStatus {
	ds.mu.Lock()
	defer ds.mu.Unlock()
	out := make([]DaemonStatus, 0, len(ds.byKey))
	for _, k := range ds.byKey {
		out = append(out, k.status())
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Node != out[j].Node {
			return out[i].Node < out[j].Node
		}
		return out[i].What < out[j].What
	})
	return out
}

// stopNode stops node's daemons for good (a station removed while the
// lab runs): they are forgotten, SIGTERM, SIGKILL for any still running
// after grace. It returns their last status.
func (ds *daemons) stopNode(node string, grace time.Duration) []DaemonStatus {
	ds.mu.Lock()
	var ks []*kept
	for key, k := range ds.byKey {
		if k.st.Node == node {
			ks = append(ks, k)
			delete(ds.byKey, key)
		}
	}
	ds.mu.Unlock()
	for _, k := range ks {
		k.mu.Lock()
		k.stopped = true
		k.mu.Unlock()
	}
	endKept(ks, grace)
	var out []DaemonStatus
	for _, k := range ks {
		out = append(out, k.status())
	}
	return out
}

// endKept ends the daemons ks, told not to restart: SIGTERM, SIGKILL for
// any still running after grace; it returns once every keeper is done.
func endKept(ks []*kept, grace time.Duration) {
	signal := func(sig syscall.Signal) {
		for _, k := range ks {
			k.mu.Lock()
			if k.st.Running && k.cmd != nil && k.cmd.Process != nil {
				k.cmd.Process.Signal(sig)
			}
			k.mu.Unlock()
		}
	}
	signal(syscall.SIGTERM)
	timer := time.NewTimer(grace)
	defer timer.Stop()
wait:
	for _, k := range ks {
		select {
		case <-k.done:
		case <-timer.C:
			signal(syscall.SIGKILL)
			break wait
		}
	}
	for _, k := range ks {
		<-k.done
	}
}

// stopAll stops every daemon for good: no restarts from now on, SIGTERM,
// and SIGKILL for any still running after grace.
func (ds *daemons) stopAll(grace time.Duration) {
	ds.mu.Lock()
	if ds.stopping {
		ds.mu.Unlock()
		return
	}
	ds.stopping = true
	close(ds.stop)
	var ks []*kept
	for _, k := range ds.byKey {
		ks = append(ks, k)
	}
	ds.mu.Unlock()
	endKept(ks, grace)
}
