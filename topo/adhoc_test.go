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

// TestAdhocMeshRefused: 802.11s mesh is refused wherever it is asked for,
// saying why.
func TestAdhocMeshRefused(t *testing.T) {
	for _, doc := range []string{
		"wifi: {mesh: {m: {}}}\nnodes: {s1: {kind: station, wifi: {adhoc: x}}}\n",
		"wifi: {adhoc: {x: {}}}\nnodes: {s1: {kind: station, wifi: {mesh: m}}}\n",
	} {
		_, err := Load("m.yaml", []byte(doc))
		if err == nil || !strings.Contains(err.Error(), "no HWMP path selection") {
			t.Errorf("mesh not refused with the reason: %v", err)
		}
	}
}
