package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/emuctl/emuctl/emu"
)

// node add / link add / link del / node del through the CLI: what was
// added is seen by ls, link show, exec, traffic and verify exactly as if
// it had been in the file; inspect --topology brings up the same lab;
// bad input is refused, naming the command, and changes nothing.
func TestNodeLinkAddDelCLI(t *testing.T) {
	needRoot(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "tnc.yaml")
	os.WriteFile(file, []byte("name: tnc\nnodes: {h1: {}, h2: {}, s1: {kind: switch}, r1: {kind: router}}\nlinks:\n"+
		"  - endpoints: [h1, s1]\n  - endpoints: [h2, s1]\n  - endpoints: [r1, s1]\n"), 0o644)
	must(t, run(t, "", "up", file), "up")
	t.Cleanup(func() { run(t, "", "down", "tnc") })
	must(t, run(t, "", "node", "add", "-l", "tnc", "h3"), "node add")
	r := must(t, run(t, "", "link", "add", "-l", "tnc", "h3", "s1", "--rate", "8mbit", "--delay", "4ms"), "link add")
	if !strings.Contains(r.stdout, "link 3 added") || !strings.Contains(r.stdout, "h3:h3-eth0 <-> s1:s1-eth4") {
		t.Errorf("link add printed %q", r.stdout)
	}
	must(t, run(t, "", "node", "add", "-l", "tnc", "h4"), "node add")
	must(t, run(t, "", "link", "add", "-l", "tnc", "h4", "r1", "--ip", "h4=10.0.9.2/30,r1=10.0.9.1/30"), "link add")
	// seen by ls, link show, exec
	if r := must(t, run(t, "", "ls"), "ls"); !strings.Contains(r.stdout, "tnc") || !strings.Contains(r.stdout, " 6 ") {
		t.Errorf("ls after adding two nodes:\n%s", r.stdout)
	}
	var links []emu.LinkInfo
	if err := json.Unmarshal([]byte(must(t, run(t, "", "link", "show", "-l", "tnc", "--json"), "link show").stdout), &links); err != nil || len(links) != 5 {
		t.Fatalf("link show: %v, %d links", err, len(links))
	}
	if links[3].AtoB.Rate != 8_000_000 || links[3].AtoB.Delay.Milliseconds() != 4 || links[4].A != "h4:h4-eth0" {
		t.Errorf("link show of the added links: %+v / %+v", links[3], links[4])
	}
	if r := must(t, run(t, "", "exec", "-l", "tnc", "h4", "--", "cat", "/etc/hosts"), "exec"); !strings.Contains(r.stdout, "10.0.9.2\th4") || !strings.Contains(r.stdout, "\th3") {
		t.Errorf("h4's /etc/hosts:\n%s", r.stdout)
	}
	// verify measures the added link against its parameters
	r = must(t, run(t, "", "verify", "-l", "tnc", "--json"), "verify")
	if !strings.Contains(r.stdout, "h3:h3-eth0") {
		t.Errorf("verify does not measure the added link:\n%s", r.stdout)
	}
	// traffic through the added link and across r1 to h4
	r = must(t, run(t, "", "traffic", "-l", "tnc", "--from", "h4", "--to", "h3", "--time", "3s", "--json"), "traffic")
	var res struct {
		Flows []struct {
			Received float64 `json:"bytes_received"`
			Start    float64 `json:"start_s"`
			End      float64 `json:"end_s"`
		} `json:"flows"`
	}
	if err := json.Unmarshal([]byte(r.stdout), &res); err != nil || len(res.Flows) != 1 {
		t.Fatalf("traffic: %v\n%s", err, r.stdout)
	}
	f := res.Flows[0]
	if g := f.Received * 8 / (f.End - f.Start) / (8e6 * 1448 / 1514); g < 0.85 || g > 1.02 {
		t.Errorf("goodput h4 -> h3 over the added 8 Mbit/s link: %.3f x capacity", g)
	} else {
		t.Logf("goodput h4 -> h3 over the added link (whole flow, slow start included): %.3f x capacity", g)
	}
	// a traced link: its uplink trace named relative to the working
	// directory (the checkout's root), on the link engine, in link show
	trace := filepath.Join(dir, "const.trace")
	var tb strings.Builder
	for ms := 1; ms <= 1000; ms++ {
		fmt.Fprintf(&tb, "%d\n", ms)
	}
	os.WriteFile(trace, []byte(tb.String()), 0o644)
	root, _ := filepath.Abs("../..")
	rel, _ := filepath.Rel(root, trace)
	must(t, run(t, "", "node", "add", "-l", "tnc", "h5"), "node add")
	r = must(t, run(t, "", "link", "add", "-l", "tnc", "h5", "s1", "--uplink-trace", rel, "--downlink-trace", trace, "--trace-offset", "100ms", "--queue", "50", "--delay", "3ms"), "link add --trace")
	if !strings.Contains(r.stdout, "link 5 added") || !strings.Contains(r.stdout, "(userspace)") {
		t.Errorf("traced link add printed %q", r.stdout)
	}
	links = nil
	json.Unmarshal([]byte(must(t, run(t, "", "link", "show", "-l", "tnc", "--json"), "link show").stdout), &links)
	if len(links) != 6 || links[5].AtoB.Trace == nil || links[5].AtoB.Trace.File != trace || links[5].BtoA.Trace.Offset.Milliseconds() != 100 || links[5].Stats == nil {
		t.Fatalf("link show of the traced link: %+v", links)
	}
	// bad input: refused, naming the command, nothing changed
	before := must(t, run(t, "", "inspect", "--topology", "-l", "tnc"), "inspect").stdout
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"node", "add", "-l", "tnc", "h1"}, `already has a node "h1"`},
		{[]string{"link", "add", "-l", "tnc", "h1", "s9"}, `link add h1 s9: endpoints[1]: unknown node "s9"`},
		{[]string{"link", "add", "-l", "tnc", "h1", "r1", "--ip", "h1=192.168.4.1/30"}, "outside the lab's plan"},
		{[]string{"link", "add", "-l", "tnc", "h1", "r1", "--rate", "fast"}, `rate "fast"`},
		{[]string{"link", "add", "-l", "tnc", "h1", "r1", "--trace", "/nonexistent/up.trace"}, `trace file "/nonexistent/up.trace" not found`},
		{[]string{"link", "add", "-l", "tnc", "h1", "r1", "--trace", trace, "--backend", "kernel"}, "backend: kernel cannot replay a trace"},
		{[]string{"link", "add", "-l", "tnc", "h1", "r1", "--trace-loop", "false"}, "trace_loop without a trace"},
		{[]string{"link", "add", "-l", "tnc", "h1", "r1", "--link", "delay=1ms", "--trace", trace}, "a --link string has no trace"},
		{[]string{"link", "del", "-l", "tnc", "h9-s1"}, `no link "h9-s1"`},
		{[]string{"node", "del", "-l", "tnc", "h9"}, `no node "h9"`},
		{[]string{"node", "add", "-l", "tnc", "x", "--kind", "hub"}, "valid kinds are host, router, switch"},
	} {
		r := run(t, "", c.args...)
		if r.code == 0 || !strings.Contains(r.stderr, c.want) {
			t.Errorf("%v: exit %d, stderr %q; want an error with %q", c.args, r.code, r.stderr, c.want)
		}
	}
	if after := must(t, run(t, "", "inspect", "--topology", "-l", "tnc"), "inspect").stdout; after != before {
		t.Errorf("a refused change changed the lab:\n%s\n%s", before, after)
	}
	// the lab as it stands, written out, comes up again the same
	out := filepath.Join(dir, "again.yaml")
	os.WriteFile(out, []byte(before), 0o644)
	must(t, run(t, "", "link", "del", "-l", "tnc", "h3:s1"), "link del")
	must(t, run(t, "", "node", "del", "-l", "tnc", "h4"), "node del")
	must(t, run(t, "", "link", "del", "-l", "tnc", "h5-s1"), "link del of the traced link")
	if r := must(t, run(t, "", "link", "show", "-l", "tnc"), "link show"); strings.Contains(r.stdout, "h3-eth0") || strings.Contains(r.stdout, "h4") || strings.Contains(r.stdout, "h5") {
		t.Errorf("removed links still shown:\n%s", r.stdout)
	}
	must(t, run(t, "", "down", "tnc"), "down")
	must(t, run(t, "", "up", out), "up of the written-out lab")
	if r := must(t, run(t, "", "exec", "-l", "tnc", "h4", "--", "cat", "/etc/hosts"), "exec"); !strings.Contains(r.stdout, "10.0.9.2\th4") {
		t.Errorf("the written-out lab lost h4's address:\n%s", r.stdout)
	}
	var again []emu.LinkInfo
	json.Unmarshal([]byte(must(t, run(t, "", "link", "show", "-l", "tnc", "--json"), "link show").stdout), &again)
	if len(again) != 6 || again[3].AtoB.Rate != 8_000_000 || again[5].AtoB.Trace == nil || again[5].AtoB.Trace.File != trace {
		t.Errorf("the written-out lab's links: %+v", again)
	}
	if r := must(t, run(t, "pingall\nexit\n", "cli", "tnc"), "cli"); !strings.Contains(r.stdout, "0% dropped") {
		t.Errorf("pingall of the written-out lab:\n%s", r.stdout)
	}
}
