package topo

import (
	"slices"
	"strings"
	"testing"
)

// TestAdhocSpec: an ad hoc network's members are stations without an
// access point on one L2 segment of their own (one subnet from the
// lab's plan, apart from an AP's), with the network's channel and mode
// and its rate unless a member says rate: auto.
func TestAdhocSpec(t *testing.T) {
	s := mustLoad(t, "testdata/good/wifi_adhoc.yaml")
	a := s.Adhoc("chain")
	if a == nil || !slices.Equal(a.Members, []string{"a", "b", "c"}) || a.Mode != WiFiModeG || a.Channel.FreqMHz != 2412 {
		t.Fatalf("ad hoc network chain: %+v", a)
	}
	if bss := a.BSS(); bss.Security != WiFiOpen || bss.Channel != a.Channel || bss.SSID != "chain" {
		t.Errorf("its BSS view %+v", bss)
	}
	sub := func(node string) string {
		n := s.Node(node)
		for _, ifc := range n.Interfaces {
			if ifc.Wireless && len(ifc.Addrs) > 0 {
				return ifc.Addrs[0].Masked().String()
			}
		}
		return ""
	}
	if sub("a") == "" || sub("a") != sub("b") || sub("b") != sub("c") || sub("d") == sub("a") {
		t.Errorf("subnets a %s b %s c %s (one ad hoc segment), d %s (its AP's, another)", sub("a"), sub("b"), sub("c"), sub("d"))
	}
	for _, m := range []string{"a", "b", "c"} {
		n := s.Node(m)
		if !n.AdhocStation() || n.Station.AP != "" || n.Station.Adhoc != "chain" {
			t.Errorf("%s: %+v, want a station of chain without an AP", m, n.Station)
		}
	}
	if s.Node("d").AdhocStation() {
		t.Error("d, a station of ap1, reported as ad hoc")
	}
	if s.Node("a").Station.Rate != "54mbit" || s.Node("b").Station.Rate != "" {
		t.Errorf("rates a %q (the network's 54mbit), b %q (its own auto)", s.Node("a").Station.Rate, s.Node("b").Station.Rate)
	}
}

// TestMeshSpec: a mesh is declared and joined like an ad hoc network
// (one segment, the network's channel), marked Mesh; an explicit engine
// backend refuses it, saying why; a member names its network with the
// key of its kind, and mode b and 6 GHz are refused with what would do.
func TestMeshSpec(t *testing.T) {
	s, err := Load("m.yaml", []byte(`wifi:
  mesh: {m1: {mode: n, channel: 6}}
  adhoc: {i1: {}}
nodes:
  a: {kind: station, wifi: {mesh: m1}}
  b: {kind: station, position: [30, 0], wifi: {mesh: m1}}
  c: {kind: station, wifi: {adhoc: i1}}
`))
	if err != nil {
		t.Fatal(err)
	}
	m, i := s.Adhoc("m1"), s.Adhoc("i1")
	if m == nil || !m.Mesh || m.Mode != WiFiModeN || m.Channel.FreqMHz != 2437 || !slices.Equal(m.Members, []string{"a", "b"}) {
		t.Fatalf("mesh m1: %+v", m)
	}
	if i == nil || i.Mesh {
		t.Errorf("ad hoc i1: %+v", i)
	}
	if !s.Node("a").AdhocStation() || s.Node("a").Station.Adhoc != "m1" {
		t.Errorf("a: %+v", s.Node("a").Station)
	}
	for _, c := range []struct{ doc, want string }{
		{"wifi: {backend: engine, mesh: {m: {}}}\nnodes: {s1: {kind: station, wifi: {mesh: m}}}\n", "m.yaml:1:17: wifi.backend: mesh m: 802.11s mesh runs on the hwsim backend only"},
		{"wifi: {mesh: {m: {}}}\nnodes: {s1: {kind: station, wifi: {adhoc: m}}}\n", "no ad hoc network \"m\" is declared"},
		{"wifi: {mesh: {m: {}}}\nnodes: {s1: {kind: station, wifi: {adhoc: m}}}\n", "m is declared under wifi.mesh: name it with mesh: m"},
		{"wifi: {adhoc: {x: {}}}\nnodes: {s1: {kind: station, wifi: {mesh: x}}}\n", "no mesh \"x\" is declared"},
		{"wifi: {mesh: {m: {mode: b}}}\nnodes: {s1: {kind: station, wifi: {mesh: m}}}\n", "a mesh cannot be 802.11b only"},
		{"wifi: {mesh: {m: {band: 6}}}\nnodes: {s1: {kind: station, wifi: {mesh: m}}}\n", "mesh SAE"},
		{"wifi: {mesh: {m: {}}, adhoc: {m: {}}}\nnodes: {s1: {kind: station, wifi: {mesh: m}}}\n", "share one set of names"},
		{"wifi: {mesh: {m: {}}}\nnodes: {s1: {kind: station, wifi: {mesh: m, adhoc: m}}}\n", "give adhoc: or mesh:, not both"},
		{"wifi: {mesh: {m: {}}}\nnodes: {s1: {kind: station}}\n", "mesh m has no stations: give its members wifi: {mesh: m}"},
	} {
		_, err := Load("m.yaml", []byte(c.doc))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want %q", c.doc, err, c.want)
		}
	}
}
