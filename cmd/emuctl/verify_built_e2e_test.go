package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// verify --built: a lab as brought up and then changed reads back as its
// topology says (exit 0, a row per node); an address deleted behind
// emuctl's back is named, with exit status 1.
func TestVerifyBuiltCLI(t *testing.T) {
	needRoot(t)
	file := filepath.Join(t.TempDir(), "tvc.yaml")
	os.WriteFile(file, []byte("name: tvc\naddressing: {p2p_prefix: 24}\nnodes: {h1: {}, h2: {}, s1: {kind: switch}, r1: {kind: router}}\nlinks:\n"+
		"  - endpoints: [h1, s1]\n  - endpoints: [h2, s1]\n  - endpoints: [r1, s1]\n"), 0o644)
	must(t, run(t, "", "up", file), "up")
	t.Cleanup(func() { run(t, "", "down", "tvc") })
	must(t, run(t, "", "node", "add", "-l", "tvc", "h3"), "node add")
	must(t, run(t, "", "link", "add", "-l", "tvc", "h3", "s1", "--rate", "8mbit"), "link add")
	r := must(t, run(t, "", "verify", "-l", "tvc", "--built"), "verify --built")
	for _, want := range []string{"NODE", "h3  ", "h3-eth0 10.0.0.", "r1  ", "router", "s1-eth4"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("verify --built printed no %q:\n%s", want, r.stdout)
		}
	}
	if strings.Count(r.stdout, " ok\n") != 5 {
		t.Errorf("verify --built: want 5 nodes ok:\n%s", r.stdout)
	}
	out, err := exec.Command("sh", "-c", "ip -n tvc.h3 -4 -o addr show dev h3-eth0 | awk '{print $4}'").Output()
	addr := strings.TrimSpace(string(out))
	if err != nil || addr == "" {
		t.Fatalf("h3's address: %v %q", err, out)
	}
	if out, err := exec.Command("ip", "-n", "tvc.h3", "addr", "del", addr, "dev", "h3-eth0").CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	r = run(t, "", "verify", "-l", "tvc", "--built", "--json")
	if r.code != 1 || !strings.Contains(r.stdout, "interface h3-eth0 lacks address "+addr) || !strings.Contains(r.stderr, "1 of 5 nodes differ") {
		t.Errorf("verify --built after an address was deleted: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
}
