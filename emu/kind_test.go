package emu

import (
	"path/filepath"
	"slices"
	"testing"

	"github.com/emuctl/emuctl/topo"
)

// The phases keep their names and order: fault injection, crash points,
// the journal and the soak test name them.
func TestKindPhaseOrder(t *testing.T) {
	d := &deployer{}
	names := func(ps []phase) []string {
		var out []string
		for _, p := range ps {
			out = append(out, p.name)
		}
		return out
	}
	up := []string{"namespaces", "nodes", "links", "externals", "shaping", "ovs", "wifi", "routes", "sysctls", "netcfg", "hosts", "wait", "start", "schedules"}
	if got := names(d.upPhases()); !slices.Equal(got, up) {
		t.Errorf("up's phases: %v, want %v", got, up)
	}
	base := []phase{{name: "namespaces"}, {name: "links"}, {name: "shaping"}, {name: "sysctls"}, {name: "netcfg"}, {name: "hosts"}, {name: "wait"}, {name: "routes"}}
	chg := []string{"namespaces", "links", "wifi", "shaping", "ovs", "sysctls", "netcfg", "hosts", "wait", "routes"}
	if got := names(d.withKindPhases(base, true)); !slices.Equal(got, chg) {
		t.Errorf("a change's phases: %v, want %v", got, chg)
	}
}

// Every node is of exactly one registered kind.
func TestNodeKinds(t *testing.T) {
	var specs []*topo.Spec
	files, _ := filepath.Glob("../topologies/*.yaml")
	for _, f := range files {
		s, err := topo.LoadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		specs = append(specs, s)
	}
	for _, sw := range []string{topo.SwitchLinuxBridge, topo.SwitchOVS} {
		s, err := topo.Generate("linear,2", topo.GenOptions{Name: "tkind", Switch: sw})
		if err != nil {
			t.Fatal(err)
		}
		specs = append(specs, s)
	}
	root, err := topo.Load("root.yaml", []byte("name: troot\nnodes:\n  h1: {}\n  r: {kind: root}\nlinks:\n  - {endpoints: [h1, r]}\n"))
	if err != nil {
		t.Fatal(err)
	}
	specs = append(specs, root)
	seen := map[string]bool{}
	for _, s := range specs {
		for i := range s.Nodes {
			n := &s.Nodes[i]
			var of []string
			for _, k := range nodeKinds {
				if k.is(n) {
					of = append(of, k.name())
				}
			}
			if len(of) != 1 {
				t.Errorf("%s: node %s (kind %s, type %q) is of kinds %v, want one", s.Name, n.Name, n.Kind, n.SwitchType, of)
				continue
			}
			seen[of[0]] = true
		}
	}
	for _, k := range nodeKinds {
		if !seen[k.name()] {
			t.Errorf("no node of kind %s in the samples", k.name())
		}
	}
}

// A link's kind: a wireless hop, the engine's, an ovs link when an end is
// an ovs switch, else a veth pair.
func TestLinkKinds(t *testing.T) {
	for _, c := range []struct {
		sw    string
		links []LinkState
		want  linkKind
	}{
		{topo.SwitchLinuxBridge, nil, vethLink{}},
		{topo.SwitchLinuxBridge, []LinkState{{Index: 0, Backend: BackendNetem}}, vethLink{kernel: true}},
		{topo.SwitchOVS, nil, ovsLink{}},
		{topo.SwitchOVS, []LinkState{{Index: 0, Backend: BackendShaper}}, ovsLink{kernel: true}},
		{topo.SwitchOVS, []LinkState{{Index: 0, Backend: BackendEngine}}, engineLink{}},
	} {
		s, err := topo.Generate("single,2", topo.GenOptions{Name: "tkind", Switch: c.sw})
		if err != nil {
			t.Fatal(err)
		}
		if got := kindOf(s, c.links, 0); got != c.want {
			t.Errorf("%s switch, links %v: link 0 is %#v, want %#v", c.sw, c.links, got, c.want)
		}
	}
	s, err := topo.LoadFile("../topologies/wifi.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if got := kindOf(s, nil, len(s.Links)); got != (wifiHop{}) {
		t.Errorf("wifi.yaml: link %d is %#v, want the first station's wireless hop", len(s.Links), got)
	}
}
