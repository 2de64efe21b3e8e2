package emu

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/emuctl/emuctl/internal/proc"
	"github.com/emuctl/emuctl/topo"
)

// daemonLab is a lab with a supervisor (a link on the userspace engine),
// whose supervisor the test asks to keep daemons.
func daemonLab(t *testing.T, name string) *State {
	t.Helper()
	needRoot(t)
	return up(t, loadYAML(t, name, "name: "+name+"\nnodes: {h1: {}, h2: {}}\nlinks: [{endpoints: [h1, h2], link: {rate: 10mbit, backend: userspace}}]\n"), Options{})
}

func startKept(t *testing.T, lab, node, what string, argv ...string) DaemonStatus {
	t.Helper()
	logPath := filepath.Join(stateDir(lab), what+".log")
	resp, err := supervisorCall(lab, ctlRequest{Op: "daemon-start", Node: node, What: what, Argv: argv, Log: logPath})
	if err != nil {
		t.Fatalf("daemon-start %s: %v", what, err)
	}
	return resp.Daemons[0]
}

func keptStatus(t *testing.T, lab, what string) DaemonStatus {
	t.Helper()
	ds, err := Daemons(lab)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range ds {
		if d.What == what {
			return d
		}
	}
	t.Fatalf("the supervisor keeps no %s: %+v", what, ds)
	return DaemonStatus{}
}

// waitKept polls until cond holds for the daemon (or fails after 10 s).
func waitKept(t *testing.T, lab, what string, cond func(DaemonStatus) bool) DaemonStatus {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		d := keptStatus(t, lab, what)
		if cond(d) {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: condition not reached in 10 s: %+v", what, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func netnsOf(t *testing.T, pid int) uint64 {
	t.Helper()
	var st syscall.Stat_t
	if err := syscall.Stat("/proc/"+strconv.Itoa(pid)+"/ns/net", &st); err != nil {
		t.Fatalf("pid %d: %v", pid, err)
	}
	return st.Ino
}

// TestSupervisorKeepsDaemons: the lab's supervisor starts a daemon inside
// its node, restarts it when it dies (a new process, the log says so),
// gives up after daemonBurst exits within a minute, and down stops the
// daemons it keeps — one that ignores SIGTERM too, after the grace.
func TestSupervisorKeepsDaemons(t *testing.T) {
	const lab = "tkeep"
	daemonLab(t, lab)
	d := startKept(t, lab, "h1", "sleeper", "sleep", "300")
	if !d.Running || d.Starts != 1 || d.PID <= 0 {
		t.Fatalf("started: %+v", d)
	}
	want, err := nsInode(filepath.Join(NetnsDir, topo.Namespace(lab, "h1")))
	if err != nil {
		t.Fatal(err)
	}
	// the exec helper enters the node, then execs the daemon (same pid)
	var got uint64
	for deadline := time.Now().Add(2 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if got = netnsOf(t, d.PID); got == want {
			break
		}
	}
	if got != want {
		t.Errorf("daemon runs in netns %d, not h1's %d", got, want)
	}
	if _, err := supervisorCall(lab, ctlRequest{Op: "daemon-start", Node: "h1", What: "sleeper", Argv: []string{"sleep", "1"}, Log: "/dev/null"}); err == nil || !strings.Contains(err.Error(), "already kept") {
		t.Errorf("a second sleeper on h1: %v, want 'already kept'", err)
	}

	// killed: restarted as a new process
	first := d.PID
	syscall.Kill(first, syscall.SIGKILL)
	d = waitKept(t, lab, "sleeper", func(d DaemonStatus) bool { return d.Running && d.PID != first })
	if d.Starts != 2 || d.GaveUp {
		t.Errorf("after one kill: %+v", d)
	}
	log, _ := os.ReadFile(d.Log)
	if !strings.Contains(string(log), "restarting") || strings.Count(string(log), "started (pid") != 2 {
		t.Errorf("log does not tell the restart:\n%s", log)
	}

	// its node removed (daemon-stop): ended for good, not restarted,
	// forgotten; a daemon of the same name can be kept again
	resp, err := supervisorCall(lab, ctlRequest{Op: "daemon-stop", Node: "h1"})
	if err != nil || len(resp.Daemons) != 1 || resp.Daemons[0].Running {
		t.Fatalf("daemon-stop h1: %+v, %v", resp.Daemons, err)
	}
	time.Sleep(daemonRestartDelay + 200*time.Millisecond)
	if proc.Alive(d.PID, d.Start) && !isZombie(d.PID) {
		t.Errorf("sleeper (pid %d) survived daemon-stop", d.PID)
	}
	if resp, _ := supervisorCall(lab, ctlRequest{Op: "daemons"}); slices.ContainsFunc(resp.Daemons, func(x DaemonStatus) bool { return x.Node == "h1" }) {
		t.Errorf("h1's daemons after daemon-stop: %+v", resp.Daemons)
	}
	d = startKept(t, lab, "h1", "sleeper", "sleep", "300")

	// a daemon that exits at once: given up after daemonBurst starts
	startKept(t, lab, "h2", "crasher", "sh", "-c", "exit 3")
	c := waitKept(t, lab, "crasher", func(d DaemonStatus) bool { return d.GaveUp })
	if c.Starts != daemonBurst || c.Running || c.LastExit != "exit status 3" {
		t.Errorf("crasher: %+v, want %d starts, given up, exit status 3", c, daemonBurst)
	}
	if log, _ := os.ReadFile(c.Log); !strings.Contains(string(log), "giving up") {
		t.Errorf("crasher's log does not say it gave up:\n%s", log)
	}

	// one that ignores SIGTERM: down still ends it (SIGKILL after the grace)
	stubborn := startKept(t, lab, "h2", "stubborn", "sh", "-c", "trap '' TERM; while :; do sleep 0.05; done")
	for deadline := time.Now().Add(2 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(stubborn.PID) + "/cmdline")
		if strings.Contains(string(b), "trap") { // the shell runs (not yet the exec helper)
			time.Sleep(50 * time.Millisecond) // and has set its trap
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("stubborn never ran: %q", b)
		}
	}
	keeper := d.PID
	t0 := time.Now()
	if err := Down(lab, nil); err != nil {
		t.Fatal(err)
	}
	took := time.Since(t0)
	for _, p := range []DaemonStatus{{What: "sleeper", PID: keeper, Start: d.Start}, stubborn} {
		if proc.Alive(p.PID, p.Start) && !isZombie(p.PID) {
			b, _ := os.ReadFile("/proc/" + strconv.Itoa(p.PID) + "/cmdline")
			t.Errorf("daemon %s (pid %d, %q) survived down", p.What, p.PID, b)
		}
	}
	t.Logf("down with a SIGTERM-proof daemon took %v (grace %v)", took, daemonGrace)
	if took < daemonGrace {
		t.Errorf("down took %v: the SIGTERM-proof daemon cannot have had its grace", took)
	}
	requireGone(t, lab)
}

// TestSupervisorKilledDaemonsCleaned: a supervisor killed with SIGKILL
// leaves its daemons in the node; down (and clean) still removes them.
func TestSupervisorKilledDaemonsCleaned(t *testing.T) {
	const lab = "tkeep2"
	st := daemonLab(t, lab)
	d := startKept(t, lab, "h1", "sleeper", "sleep", "300")
	var sup Proc
	for _, p := range st.Procs {
		if p.Command == "supervisor" {
			sup = p
		}
	}
	if sup.PID == 0 {
		t.Fatal("no supervisor recorded")
	}
	syscall.Kill(sup.PID, syscall.SIGKILL)
	time.Sleep(100 * time.Millisecond)
	if !proc.Alive(d.PID, d.Start) {
		t.Fatal("the daemon died with its supervisor: nothing left to test")
	}
	if err := Down(lab, nil); err != nil {
		t.Fatal(err)
	}
	if proc.Alive(d.PID, d.Start) && !isZombie(d.PID) {
		t.Errorf("daemon %d survived down after its supervisor was killed", d.PID)
	}
	requireGone(t, lab)
}
