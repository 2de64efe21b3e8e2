package topo

import (
	"strings"
	"testing"
)

// Kind root is the machine's own namespace: its link ends get names and
// addresses like any, but no routes, TCP profile or settings of its own,
// and it is not a host (pingall, traffic and hosts files leave it out).
func TestKindRoot(t *testing.T) {
	s, err := Load("root.yaml", []byte(`
nodes:
  h1: {}
  r1: {kind: router}
  h2: {}
  root: {kind: root}
links:
  - endpoints: [h1, root]
    ip: {h1: [192.168.9.1/24], root: [192.168.9.2/24]}
  - endpoints: [h1, r1]
  - endpoints: [r1, h2]
`))
	if err != nil {
		t.Fatal(err)
	}
	root := s.Node("root")
	if root == nil || root.Kind != KindRoot || len(root.Interfaces) != 1 || root.Interfaces[0].Name != "root-eth0" ||
		root.Interfaces[0].Addrs[0].String() != "192.168.9.2/24" {
		t.Fatalf("root: %+v", root)
	}
	if len(root.Routes) != 0 || root.TCP != nil || len(root.Sysctls) != 0 {
		t.Errorf("root has routes %v, tcp %v, sysctls %v: the machine's are its own", root.Routes, root.TCP, root.Sysctls)
	}
	for _, h := range s.Hosts() {
		if h.Kind == KindRoot {
			t.Errorf("Hosts() lists %s", h.Name)
		}
	}
	if len(s.Hosts()) != 3 {
		t.Errorf("Hosts() = %d nodes, want 3", len(s.Hosts()))
	}
	withTCP, err := Load("tcp.yaml", []byte("defaults: {tcp: {congestion_control: reno}}\nnodes: {h1: {}, root: {kind: root}}\nlinks: [{endpoints: [h1, root]}]"))
	if err != nil {
		t.Fatal(err)
	}
	if withTCP.Node("root").TCP != nil || withTCP.Node("h1").TCP == nil {
		t.Errorf("defaults.tcp: root %v, h1 %v (want the default on h1 only)", withTCP.Node("root").TCP, withTCP.Node("h1").TCP)
	}
	// the written-out topology loads again as the same lab
	doc, err := Export(s)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := Load("again.yaml", doc)
	if err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	if specJSON(t, s) != specJSON(t, s2) {
		t.Errorf("round trip differs:\n%s", doc)
	}
}

// The machine's namespace may join its segments itself (scratchnet.py
// bridges them with its own OVS bridge): one subnet across them loads.
func TestKindRootSegmentsMayShareASubnet(t *testing.T) {
	_, err := Load("scratch.yaml", []byte(`addressing: {auto: false}
routing: none
nodes: {h0: {}, h1: {}, s0: {kind: root}}
links:
  - {endpoints: [h0, s0], ip: {h0: [192.168.123.1/24]}}
  - {endpoints: [h1, s0], ip: {h1: [192.168.123.2/24]}}
`))
	if err != nil {
		t.Fatal(err)
	}
}

func TestKindRootRefusals(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{"nodes: {h1: {}, root: {kind: root, sysctls: {net.ipv4.ip_forward: 1}}}", "1:36: nodes.root.sysctls: sysctls is not valid on kind root"},
		{"nodes: {h1: {}, root: {kind: root, routes: [{to: 10.9.0.0/16, via: 10.0.0.1}]}}", "routes is not valid on kind root"},
		{"nodes: {h1: {}, root: {kind: root, tcp: {cc: bbr}}}", "tcp is not valid on kind root"},
		{"nodes: {r1: {kind: root}, r2: {kind: root}}\nlinks: [{endpoints: [r1, r2]}]", "both endpoints (r1, r2) are of kind root"},
		{"nodes: {h1: {}, h2: {}, ra: {kind: root}, rb: {kind: root}}\nlinks: [{endpoints: [h1, 'ra:up0']}, {endpoints: [h2, 'rb:up0']}]", `interface "up0" of rb: ra (kind root too)`},
	} {
		_, err := Load("bad.yaml", []byte(c.doc))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s:\n  error %v\n  want one containing %q", c.doc, err, c.want)
		}
	}
}

func TestKindRootNotOverMachines(t *testing.T) {
	_, err := Load("m.yaml", []byte(`machines:
  a: {ssh: local, underlay: 192.168.100.11}
  b: {ssh: root@192.0.2.9, underlay: 192.168.100.12}
placement: auto
nodes:
  h1: {}
  h2: {}
  root: {kind: root}
links: [{endpoints: [h1, h2]}, {endpoints: [h1, root]}]
`))
	if err == nil || !strings.Contains(err.Error(), "root is of kind root, the machine's own namespace, which a lab over several machines does not have") {
		t.Fatalf("error %v", err)
	}
}
