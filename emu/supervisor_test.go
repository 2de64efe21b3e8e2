package emu

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/emuctl/emuctl/internal/proc"
)

// TestEngineLabOneSupervisor: the shaping phase starts the lab's
// supervisor through ensureSupervisor, like the Wi-Fi daemons and the
// medium: one supervisor process, recorded once in the state and once in
// the journal, runs the link engines and keeps daemons; asking again
// starts none; down ends it.
func TestEngineLabOneSupervisor(t *testing.T) {
	const lab = "tsup1"
	st := daemonLab(t, lab)
	var recorded []Proc
	for _, p := range st.Procs {
		if p.Command == "supervisor" {
			recorded = append(recorded, p)
		}
	}
	if len(recorded) != 1 {
		t.Fatalf("state records %d supervisors: %+v", len(recorded), st.Procs)
	}
	sup := recorded[0]
	if !proc.Alive(sup.PID, sup.Start) {
		t.Fatalf("recorded supervisor %d is not running", sup.PID)
	}
	if live := supervisorsOf(lab); len(live) != 1 || live[0] != sup.PID {
		t.Fatalf("supervisor processes of %s: %v, want just the recorded %d", lab, live, sup.PID)
	}
	n := 0
	for _, p := range readJournal(lab).Procs {
		if p.Command == "supervisor" {
			n++
			if p.PID != sup.PID || p.Start != sup.Start {
				t.Errorf("journal records supervisor %d/%d, state %d/%d", p.PID, p.Start, sup.PID, sup.Start)
			}
		}
	}
	if n != 1 {
		t.Errorf("journal records %d supervisors, want 1", n)
	}

	// the same process runs the engine and keeps daemons
	resp, err := supervisorCall(lab, ctlRequest{Op: "stats"})
	if err != nil {
		t.Fatal(err)
	}
	if len(resp.Stats) != 1 {
		t.Errorf("the supervisor runs %d engines, want 1", len(resp.Stats))
	}
	startKept(t, lab, "h1", "sleeper", "sleep", "300")
	if ds := keptStatus(t, lab, "sleeper"); ds.Running {
		b, _ := os.ReadFile("/proc/" + strconv.Itoa(ds.PID) + "/status")
		if !strings.Contains(string(b), "\nPPid:\t"+strconv.Itoa(sup.PID)+"\n") {
			t.Errorf("the daemon's parent is not the supervisor %d:\n%s", sup.PID, b)
		}
	}

	// a second ask (the Wi-Fi phase's) finds it and starts nothing
	d := &deployer{spec: st.Spec, st: st}
	started, err := d.ensureSupervisor(context.Background())
	if err != nil || started {
		t.Fatalf("ensureSupervisor on a lab whose supervisor runs: started %v, %v", started, err)
	}
	if got := d.supervisorPID(); got != sup.PID {
		t.Errorf("supervisorPID %d, want %d", got, sup.PID)
	}
	if live := supervisorsOf(lab); len(live) != 1 {
		t.Errorf("after a second ask: supervisor processes %v", live)
	}

	if err := Down(lab, nil); err != nil {
		t.Fatal(err)
	}
	if proc.Alive(sup.PID, sup.Start) && !isZombie(sup.PID) {
		t.Errorf("supervisor %d survived down", sup.PID)
	}
	requireGone(t, lab)
}
