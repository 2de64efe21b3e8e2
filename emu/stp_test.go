package emu

import (
	"path/filepath"
	"testing"

	"github.com/emuctl/emuctl/topo"
	"github.com/vishvananda/netns"
)

// A ring of switches with STP comes up converged: one port blocks the loop,
// the rest forward, and every host reaches every other.
func TestSTPRing(t *testing.T) {
	needRoot(t)
	spec, err := topo.LoadFile("../topologies/ring-stp.yaml")
	if err != nil {
		t.Fatal(err)
	}
	topo.Rename(spec, "tstp")
	st := up(t, spec, Options{})
	counts := map[string]int{}
	for _, sw := range []string{"s1", "s2", "s3"} {
		h, err := netns.GetFromPath(filepath.Join(NetnsDir, topo.Namespace("tstp", sw)))
		if err != nil {
			t.Fatal(err)
		}
		states, err := bridgePortStates(h)
		h.Close()
		if err != nil {
			t.Fatal(err)
		}
		for port, s := range states {
			counts[s]++
			t.Logf("%s %s %s", sw, port, s)
		}
	}
	if counts["blocking"] != 1 || counts["forwarding"] != 8 {
		t.Errorf("want 1 blocking and 8 forwarding ports, got %v", counts)
	}
	requirePingAll(t, st)
}
