package emu

import (
	"testing"

	"github.com/emuctl/emuctl/topo"
)

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
