package main

import (
	"os/exec"
	"strings"
	"testing"
)

// A lab over two local machines as a user types it: up, ls, exec across
// the cut (by host name, exit status kept), cli pingall, link show naming
// the tunnel, verify refusing, down leaving nothing.
func TestClusterUpExecCLIDown(t *testing.T) {
	needRoot(t)
	must(t, run(t, "", "up", "--name", "tce2e", "topologies/cluster-linear.yaml"))
	t.Cleanup(func() { run(t, "", "down", "tce2e") })
	if ls := must(t, run(t, "", "ls")); !strings.Contains(ls.stdout, "tce2e") {
		t.Errorf("ls:\n%s", ls.stdout)
	}
	must(t, run(t, "", "exec", "--lab", "tce2e", "h1", "--", "ping", "-c2", "-W2", "h3"))
	if r := run(t, "", "exec", "--lab", "tce2e", "h3", "--", "sh", "-c", "hostname; exit 3"); r.code != 3 || strings.TrimSpace(r.stdout) != "h3" {
		t.Errorf("exec on the other machine: exit %d, output %q (want 3, h3)", r.code, r.stdout)
	}
	cli := must(t, run(t, "pingall\nexit\n", "cli", "--lab", "tce2e"))
	if !strings.Contains(cli.stdout, "Results: 0% dropped (6/6 received)") {
		t.Errorf("cli pingall:\n%s", cli.stdout)
	}
	if ls := must(t, run(t, "", "link", "show", "--lab", "tce2e")); !strings.Contains(ls.stdout, "vxlan 10000: m1 <-> m2") {
		t.Errorf("link show:\n%s", ls.stdout)
	}
	if r := run(t, "", "verify", "--lab", "tce2e"); r.code == 0 || !strings.Contains(r.stderr, "several machines") {
		t.Errorf("verify: exit %d, %s", r.code, r.stderr)
	}
	must(t, run(t, "", "down", "tce2e"))
	if out, _ := exec.Command("ip", "netns", "list").CombinedOutput(); strings.Contains(string(out), "tce2e") {
		t.Errorf("namespaces left:\n%s", out)
	}
}
