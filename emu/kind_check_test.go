package emu

import (
	"context"
	"os/exec"
	"strings"
	"testing"

	"github.com/emuctl/emuctl/topo"
)

// builtProblems is VerifyBuilt's problems by node.
func builtProblems(t *testing.T, lab string) map[string][]string {
	t.Helper()
	res, err := VerifyBuilt(lab)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]string{}
	for _, b := range res {
		if len(b.Ifaces) == 0 && len(b.Problems) == 0 && b.Kind != "switch" {
			t.Errorf("node %s (%s): nothing read back", b.Node, b.Kind)
		}
		if !b.OK() {
			out[b.Node] = b.Problems
		}
	}
	return out
}

// Every kind reads back what it built, up's and a run-time change's alike,
// and names what was changed behind its back.
func TestVerifyBuilt(t *testing.T) {
	needOVS(t)
	spec := loadYAML(t, "tvb", `name: tvb
addressing: {p2p_prefix: 24}
nodes:
  h1: {}
  h2: {}
  h3: {}
  r1: {kind: router}
  s1: {kind: switch}
  o1: {kind: switch, type: ovs}
links:
  - endpoints: [h1, s1]
  - endpoints: [s1, r1]
    mtu: 9000
  - endpoints: [r1, o1]
  - endpoints: [h2, o1]
  - endpoints: [h3, r1]
    link: {rate: 20mbit, delay: 2ms}
`)
	up(t, spec, Options{})
	res, err := VerifyBuilt("tvb")
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]string{}
	for _, b := range res {
		kinds[b.Node] = b.Kind
		if !b.OK() {
			t.Errorf("after up: %s (%s): %s", b.Node, b.Kind, strings.Join(b.Problems, "; "))
		}
		if b.Node == "r1" && b.Sysctls["net.ipv4.ip_forward"] != "1" {
			t.Errorf("r1 read back ip_forward %q", b.Sysctls["net.ipv4.ip_forward"])
		}
		if b.Node == "o1" && (b.Bridge == "" || len(b.Ifaces) != 2) {
			t.Errorf("o1 read back bridge %q, %d ports", b.Bridge, len(b.Ifaces))
		}
	}
	if kinds["o1"] != "ovs switch" || kinds["s1"] != "switch" || kinds["r1"] != "router" {
		t.Errorf("kinds read back: %v", kinds)
	}

	// run-time changes are read back as if they had been in the file
	ctx := context.Background()
	if _, err := AddNode(ctx, "tvb", topo.NodeRequest{Name: "h4"}, Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := AddLink(ctx, "tvb", topo.LinkRequest{A: "h4", B: "s1", Params: "rate=10mbit"}, Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := AddLink(ctx, "tvb", topo.LinkRequest{A: "h4", B: "o1"}, Options{}); err != nil {
		t.Fatal(err)
	}
	if p := builtProblems(t, "tvb"); len(p) > 0 {
		t.Errorf("after the adds: %v", p)
	}
	st, _ := ReadState("tvb")
	h4 := st.Spec.Node("h4")
	if len(h4.Interfaces) != 2 {
		t.Fatalf("h4 has %d interfaces", len(h4.Interfaces))
	}

	// what is changed behind emuctl's back is named, node by node
	run := func(args ...string) {
		t.Helper()
		if out, err := exec.Command("ip", args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %v: %v: %s", args, err, out)
		}
	}
	h1a := st.Spec.Node("h1").Interfaces[0].Addrs[0]
	run("-n", "tvb.h1", "addr", "del", h1a.String(), "dev", "h1-eth0")
	run("-n", "tvb.s1", "link", "set", "s1-eth1", "nomaster")
	run("-n", "tvb.r1", "link", "set", "r1-eth0", "mtu", "1500")
	run("netns", "exec", "tvb.r1", "sysctl", "-qw", "net.ipv4.ip_forward=0")
	run("-n", "tvb.h4", "link", "set", "h4-eth0", "address", "02:00:00:00:00:99")
	p := builtProblems(t, "tvb")
	want := map[string]string{
		"h1": "interface h1-eth0 lacks address " + h1a.String(),
		"s1": "interface s1-eth1 is not a port of bridge s1",
		"r1": "interface r1-eth0 has MTU 1500, the topology says 9000",
		"h4": "interface h4-eth0 has MAC 02:00:00:00:00:99",
	}
	for node, w := range want {
		if !strings.Contains(strings.Join(p[node], "; "), w) {
			t.Errorf("%s: problems %q, want one saying %q", node, p[node], w)
		}
	}
	if !strings.Contains(strings.Join(p["r1"], "; "), "net.ipv4.ip_forward is 0") {
		t.Errorf("r1: problems %q, want ip_forward named", p["r1"])
	}
	if len(p) != len(want) {
		t.Errorf("problems on %d nodes, want %d: %v", len(p), len(want), p)
	}

	// an OVS port taken out of the switch's bridge
	var port, bridge string
	for _, br := range st.OVS.Bridges {
		if br.Node == "o1" {
			bridge, port = br.Name, br.Ports[0].Name
		}
	}
	sh2(t, "ovs-vsctl", "--db="+st.OVS.DB, "del-port", bridge, port)
	if p := builtProblems(t, "tvb"); !strings.Contains(strings.Join(p["o1"], "; "), "is not a port of OVS bridge "+bridge) {
		t.Errorf("o1 after its port %s was deleted: %q", port, p["o1"])
	}
}
