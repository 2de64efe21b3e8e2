package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/emuctl/emuctl/analysis"
)

// TestTrafficCLI runs `emuctl traffic` as a user types it: a TCP flow with
// a JSON result, a flows file, JSON on stdout, a bad flag, and Ctrl-C.
func TestTrafficCLI(t *testing.T) {
	needRoot(t)
	const lab = "ttre2e"
	run(t, "", "down", lab)
	must(t, run(t, "", "up", "--topo", "single,2", "--name", lab))
	defer run(t, "", "down", lab)
	dir := t.TempDir()

	out := filepath.Join(dir, "tcp.json")
	r := must(t, run(t, "", "traffic", "-l", lab, "--from", "h1", "--to", "h2", "-t", "1s", "--cc", "reno", "--probe", "icmp", "--json", out))
	if !strings.Contains(r.stdout, "h1->h2") || !strings.Contains(r.stdout, "reno") || !strings.Contains(r.stdout, "probe p1") ||
		!strings.Contains(r.stdout, "f1 limited by: ") {
		t.Errorf("summary:\n%s", r.stdout)
	}
	res, err := analysis.Load(out)
	if err != nil {
		t.Fatalf("result file: %v", err)
	}
	if len(res.Flows) != 1 || res.Flows[0].CC != "reno" || len(res.Flows[0].Samples) < 8 || len(res.Probes) != 1 {
		t.Errorf("result: %d flows, %d probes", len(res.Flows), len(res.Probes))
	}

	flows := filepath.Join(dir, "flows.yaml")
	os.WriteFile(flows, []byte("lab: "+lab+"\nflows:\n  - {name: bulk, from: h1, to: h2, duration: 1s}\n  - {name: voice, from: h2, to: h1, proto: udp, rate: 64kbit, size: 160, duration: 1s, start: 200ms}\n"), 0o644)
	r = must(t, run(t, "", "traffic", "--flows", flows, "--json", "-"))
	if res, err := analysis.Decode(strings.NewReader(r.stdout)); err != nil || len(res.Flows) != 2 {
		t.Errorf("--json -: %v\n%s", err, r.stdout)
	}
	if !strings.Contains(r.stderr, "voice udp: sent") {
		t.Errorf("summary not on stderr with --json -:\n%s", r.stderr)
	}

	os.WriteFile(flows, []byte("flows:\n  - {from: h1, to: h2, durration: 1s}\n"), 0o644)
	if r = run(t, "", "traffic", "-l", lab, "--flows", flows); r.code == 0 || !strings.Contains(r.stderr, `flows.yaml:2:24: flows[0]: unknown key "durration"`) {
		t.Errorf("bad flows file: exit %d\n%s", r.code, r.stderr)
	}
	if r = run(t, "", "traffic", "-l", lab, "--from", "h1", "--to", "h7"); r.code == 0 || !strings.Contains(r.stderr, `unknown node "h7"`) {
		t.Errorf("unknown node: exit %d\n%s", r.code, r.stderr)
	}

	// Ctrl-C: stops at once, prints what was measured, leaves nothing.
	cmd := exec.Command(bin, "traffic", "-l", lab, "--from", "h1", "--to", "h2", "-t", "60s", "--engine", "iperf3")
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGINT)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("emuctl traffic did not stop within 10 s of SIGINT")
	}
	if !strings.Contains(o.String(), "h1->h2") || !strings.Contains(e.String(), "interrupted") {
		t.Errorf("after SIGINT:\nstdout: %s\nstderr: %s", o.String(), e.String())
	}
	if ps, _ := exec.Command("pgrep", "-x", "iperf3").Output(); len(ps) > 0 {
		// Not ours to kill; only report iperf3 processes inside this lab.
		for _, pid := range strings.Fields(string(ps)) {
			if ns, _ := os.Readlink("/proc/" + pid + "/ns/net"); ns != "" && inLab(lab, ns) {
				t.Errorf("iperf3 pid %s still runs in lab %s", pid, lab)
			}
		}
	}
}

// inLab reports whether a namespace link ("net:[inode]") is one of the
// lab's namespaces.
func inLab(lab, ns string) bool {
	ents, _ := os.ReadDir("/run/netns")
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), lab+".") {
			continue
		}
		var st syscall.Stat_t
		if syscall.Stat("/run/netns/"+e.Name(), &st) == nil && strings.Contains(ns, "["+strconv.FormatUint(st.Ino, 10)+"]") {
			return true
		}
	}
	return false
}
