package topo

import (
	"encoding/json"
	"net/netip"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// specJSON is a Spec as compared across a round trip: its positions and
// document left out (a written-out document has other lines).
func specJSON(t *testing.T, s *Spec) string {
	t.Helper()
	c := *s
	c.Source, c.Document = "", nil
	c.Links = append([]Link(nil), s.Links...)
	for i := range c.Links {
		c.Links[i].Pos = ""
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	return PlaceFree(string(b))
}

// TestTopologyRoundTrip: every good file, written out as the lab stands
// (Topology), loads back to the same Spec.
func TestTopologyRoundTrip(t *testing.T) {
	files, _ := filepath.Glob("testdata/good/*.yaml")
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".yaml"), func(t *testing.T) {
			s := mustLoad(t, file)
			doc, err := Topology(s)
			if err != nil {
				t.Fatal(err)
			}
			back, err := Load("back.yaml", doc)
			if err != nil {
				t.Fatalf("written-out topology does not load: %v\n%s", err, doc)
			}
			if a, b := specJSON(t, s), specJSON(t, back); a != b {
				t.Errorf("round trip changed the Spec\n--- was:\n%s\n--- now:\n%s", a, b)
			}
		})
	}
}

// TestExportGenerated: generated labs written out load back to the same
// Spec (what a run-time change of a generated lab starts from).
func TestExportGenerated(t *testing.T) {
	for _, g := range []struct {
		gen string
		opt GenOptions
	}{{"tree,2,3", GenOptions{}}, {"linear,3,2", GenOptions{Link: "rate=10mbit,delay=5ms,queue=50"}}, {"single,4", GenOptions{Switch: SwitchOVS}}, {"dumbbell,2", GenOptions{}}} {
		s, err := Generate(g.gen, g.opt)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := Export(s)
		if err != nil {
			t.Fatalf("%s: %v", g.gen, err)
		}
		back, err := Load(s.Source, doc)
		if err != nil {
			t.Fatalf("%s: %v\n%s", g.gen, err, doc)
		}
		if a, b := specJSON(t, s), specJSON(t, back); a != b {
			t.Errorf("%s: export changed the Spec\n--- was:\n%s\n--- now:\n%s", g.gen, a, b)
		}
	}
	if s, _ := Generate("wifi,2", GenOptions{}); s != nil {
		if _, err := Export(s); err == nil || !strings.Contains(err.Error(), "Wi-Fi") {
			t.Errorf("wifi generator exported: %v", err)
		}
	}
}

const editLab = `name: ed
nodes:
  h1: {}
  h2: {}
  s1: {kind: switch}
  r1: {kind: router}
  r2: {kind: router}
  h9: {}
links:
  - endpoints: [h1, s1]
  - endpoints: [h2, s1]
    link: {rate: 10mbit, delay: 5ms}
  - endpoints: [s1, r1]
  - endpoints: [r1, h9]
  - endpoints: [r1, r2]
`

func addr(t *testing.T, s *Spec, node, iface string) string {
	t.Helper()
	ifc := s.Node(node).Iface(iface)
	if ifc == nil {
		t.Fatalf("%s has no %s (has %+v)", node, iface, s.Node(node).Interfaces)
	}
	if len(ifc.Addrs) == 0 {
		return ""
	}
	return ifc.Addrs[0].String()
}

func TestEditAddRemove(t *testing.T) {
	s, err := Load("ed.yaml", []byte(editLab))
	if err != nil {
		t.Fatal(err)
	}
	h1 := addr(t, s, "h1", "h1-eth0")
	// a host on the switch: the switch's next interface, an address in
	// the segment's subnet, and routes to it from h9 via r1
	s2, err := AddNode(s, NodeRequest{Name: "h3"})
	if err != nil {
		t.Fatal(err)
	}
	s3, err := AddLink(s2, LinkRequest{A: "h3", B: "s1", Params: "rate=20mbit,delay=2ms"})
	if err != nil {
		t.Fatal(err)
	}
	if len(s3.Links) != 6 || s3.Links[5].A.String() != "h3:h3-eth0" || s3.Links[5].B.String() != "s1:s1-eth4" {
		t.Fatalf("new link: %+v", s3.Links[len(s3.Links)-1])
	}
	p3 := netip.MustParsePrefix(addr(t, s3, "h3", "h3-eth0"))
	seg := netip.MustParsePrefix(h1).Masked()
	if !seg.Contains(p3.Addr()) || p3.Bits() != seg.Bits() {
		t.Errorf("h3 got %s, want an address in h1's segment %s", p3, seg)
	}
	if s3.Links[5].Params == nil || s3.Links[5].Params.Rate != 20_000_000 || s3.Links[5].Params.Delay.Milliseconds() != 2 {
		t.Errorf("params: %+v", s3.Links[5].Params)
	}
	if addr(t, s3, "h1", "h1-eth0") != h1 {
		t.Errorf("h1 renumbered")
	}
	// a new point-to-point link gets a subnet no other segment has
	s4, err := AddLink(s3, LinkRequest{A: "h3", B: "r1"})
	if err != nil {
		t.Fatal(err)
	}
	pa := netip.MustParsePrefix(addr(t, s4, "h3", "h3-eth1"))
	for _, n := range s4.Nodes {
		for _, ifc := range n.Interfaces {
			for _, a := range ifc.Addrs {
				if n.Name != "h3" && n.Name != "r1" && pa.Masked().Contains(a.Addr()) {
					t.Errorf("new subnet %s overlaps %s:%s %s", pa.Masked(), n.Name, ifc.Name, a)
				}
			}
		}
	}
	// removing a link renumbers nothing and renames nothing; the next
	// link on h1 takes the freed name
	s5, err := RemoveLink(s4, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(s5.Links) != 6 || s5.Node("h1").Interfaces != nil {
		t.Errorf("after del: %d links, h1 %+v", len(s5.Links), s5.Node("h1").Interfaces)
	}
	if addr(t, s5, "h3", "h3-eth0") != p3.String() || addr(t, s5, "h2", "h2-eth0") != addr(t, s, "h2", "h2-eth0") {
		t.Errorf("renumbered after a del")
	}
	s6, err := AddLink(s5, LinkRequest{A: "h1", B: "r1", IP: map[string][]string{"h1": {"10.99.0.1/30"}, "r1": {"10.99.0.2/30"}}})
	if err != nil {
		t.Fatal(err)
	}
	if got := addr(t, s6, "h1", "h1-eth0"); got != "10.99.0.1/30" {
		t.Errorf("explicit address: %s", got)
	}
	// removing a node takes its links
	s7, err := RemoveNode(s6, "r1")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range s7.Links {
		if l.A.Node == "r1" || l.B.Node == "r1" {
			t.Errorf("link %s <-> %s left on a removed node", l.A, l.B)
		}
	}
	if s7.Node("r1") != nil || len(s7.Links) != 2 {
		t.Logf("%s", s7.Document)
		t.Errorf("r1 still there or links %d", len(s7.Links))
	}
	// the edited document is the lab as it stands: it loads to the same Spec
	back, err := Load("x", s7.Document)
	if err != nil || specJSON(t, back) != specJSON(t, s7) {
		t.Errorf("document of the edited lab: %v", err)
	}
}

func TestEditRoutesFollow(t *testing.T) {
	s, err := Load("ed.yaml", []byte(editLab))
	if err != nil {
		t.Fatal(err)
	}
	s2, err := AddNode(s, NodeRequest{Name: "h4"})
	if err == nil {
		s2, err = AddLink(s2, LinkRequest{A: "h4", B: "r2"})
	}
	if err != nil {
		t.Fatal(err)
	}
	sub := netip.MustParsePrefix(addr(t, s2, "h4", "h4-eth0")).Masked()
	via := netip.MustParsePrefix(addr(t, s2, "r2", "r2-eth0")).Addr()
	found := false
	for _, r := range s2.Node("r1").Routes {
		found = found || r.Dst == sub && r.Via == via
	}
	if !found {
		t.Errorf("r1 has no route to the new subnet %s via r2 (%s): %+v", sub, via, s2.Node("r1").Routes)
	}
	// and removing the link takes the route away again
	s3, err := RemoveNode(s2, "h4")
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range s3.Node("r1").Routes {
		if r.Dst == sub {
			t.Errorf("r1 keeps a route to %s after h4 left", sub)
		}
	}
}

func TestEditRefusals(t *testing.T) {
	s, err := Load("ed.yaml", []byte(editLab))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		do   func() error
		want string
	}{
		{"duplicate", func() error { _, err := AddNode(s, NodeRequest{Name: "h1"}); return err }, `already has a node "h1"`},
		{"bad name", func() error { _, err := AddNode(s, NodeRequest{Name: "9x"}); return err }, "not valid"},
		{"bad kind", func() error { _, err := AddNode(s, NodeRequest{Name: "x", Kind: "hots"}); return err }, "did you mean"},
		{"unknown end", func() error { _, err := AddLink(s, LinkRequest{A: "h1", B: "s9"}); return err }, `unknown node "s9"`},
		{"long iface", func() error {
			s2, err := AddNode(s, NodeRequest{Name: "averyveryverylonghost"})
			if err != nil {
				return err
			}
			_, err = AddLink(s2, LinkRequest{A: "averyveryverylonghost", B: "s1"})
			return err
		}, "15"},
		{"outside the segment", func() error {
			_, err := AddLink(s, LinkRequest{A: "r1", B: "s1", IP: map[string][]string{"r1": {"10.200.1.1/24"}}})
			return err
		}, "same L2 segment"},
		{"outside the plan", func() error {
			_, err := AddLink(s, LinkRequest{A: "r1", B: "h1", IP: map[string][]string{"r1": {"192.168.1.1/24"}}})
			return err
		}, "outside the lab's plan"},
		{"bad params", func() error { _, err := AddLink(s, LinkRequest{A: "h1", B: "r1", Params: "rate=fast"}); return err }, "rate"},
		{"node keys not a mapping", func() error { _, err := AddNode(s, NodeRequest{Name: "x", Entry: "[1, 2]"}); return err }, "not a YAML mapping"},
		{"bad node key", func() error {
			_, err := AddNode(s, NodeRequest{Name: "x", Kind: KindSwitch, SwitchType: SwitchOVS, Entry: "{fail_mode: loud}"})
			return err
		}, "fail_mode"},
		{"unknown node key", func() error { _, err := AddNode(s, NodeRequest{Name: "x", Entry: "{colour: red}"}); return err }, "colour"},
		{"no such link", func() error { _, err := RemoveLink(s, 9); return err }, "does not exist"},
		{"no such node", func() error { _, err := RemoveNode(s, "h7"); return err }, `no node "h7"`},
	} {
		err := c.do()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
	// nothing above changed s
	if len(s.Nodes) != 6 || len(s.Links) != 5 {
		t.Errorf("the Spec changed")
	}
}

// Node keys given at run time (NodeRequest.Entry) are the file's, checked
// as up checks them.
func TestEditNodeKeys(t *testing.T) {
	s, err := Load("ed.yaml", []byte(editLab))
	if err != nil {
		t.Fatal(err)
	}
	s2, err := AddNode(s, NodeRequest{Name: "s9", Kind: KindSwitch, SwitchType: SwitchOVS, OVSNames: OVSNamesTopology,
		Entry: `{"fail_mode": "secure", "protocols": ["OpenFlow13"]}`})
	if err != nil {
		t.Fatal(err)
	}
	n := s2.Node("s9")
	if n == nil || n.OVS == nil || n.OVS.FailMode != "secure" || !n.OVS.TopologyNames() || !slices.Equal(n.OVS.Protocols, []string{"OpenFlow13"}) {
		t.Fatalf("s9 added with keys: %+v", n)
	}
	s3, err := AddNode(s, NodeRequest{Name: "h8", Entry: "{sysctls: {net.ipv4.tcp_ecn: 1}}"})
	if err != nil {
		t.Fatal(err)
	}
	if sc := s3.Node("h8").Sysctls; !slices.ContainsFunc(sc, func(kv KV) bool { return kv.Key == "net.ipv4.tcp_ecn" && kv.Value == "1" }) {
		t.Errorf("h8's sysctls %v", sc)
	}
}

// A lab renamed at up (--name) keeps its MACs through changes.
func TestEditRenamed(t *testing.T) {
	s, err := Load("ed.yaml", []byte(editLab))
	if err != nil {
		t.Fatal(err)
	}
	mac := s.Node("h1").Interfaces[0].MAC
	if err := Rename(s, "other"); err != nil {
		t.Fatal(err)
	}
	s2, err := AddNode(s, NodeRequest{Name: "h7"})
	if err != nil {
		t.Fatal(err)
	}
	if s2.Name != "other" || s2.Node("h1").Interfaces[0].MAC != mac {
		t.Errorf("renamed lab after a change: name %s, h1's MAC %s (was %s)", s2.Name, s2.Node("h1").Interfaces[0].MAC, mac)
	}
	doc, err := Topology(s2)
	if err != nil || !strings.Contains(string(doc), "name: other") {
		t.Errorf("topology of a renamed lab: %v\n%s", err, doc)
	}
}

// An ovs switch's names: topology survives the lab written out as it
// stands (emuctl inspect --topology) after a run-time change, from a YAML
// document and from a JSON one (as the Mininet layer writes), and loads
// back as the same setting.
func TestTopologyKeepsOVSNames(t *testing.T) {
	for _, doc := range []string{
		"name: on\nnodes:\n  h1: {}\n  s1: {kind: switch, type: ovs, names: topology}\nlinks: [{endpoints: [h1, s1]}]\n",
		`{"name": "on", "nodes": {"h1": {}, "s1": {"kind": "switch", "type": "ovs", "names": "topology"}}, "links": [{"endpoints": ["h1", "s1"]}]}`,
	} {
		s, err := Load("on.yaml", []byte(doc))
		if err != nil {
			t.Fatal(err)
		}
		if !s.Node("s1").OVS.TopologyNames() {
			t.Fatalf("s1: %+v", s.Node("s1").OVS)
		}
		s2, err := AddNode(s, NodeRequest{Name: "h2"})
		if err != nil {
			t.Fatal(err)
		}
		out, err := Topology(s2)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(out), "names: topology") {
			t.Errorf("written-out topology lost names: topology:\n%s", out)
		}
		back, err := Load("back.yaml", out)
		if err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		if a, b := specJSON(t, s2), specJSON(t, back); a != b {
			t.Errorf("round trip changed the Spec\n--- was:\n%s\n--- now:\n%s", a, b)
		}
	}
}
