package topo

import (
	"net/netip"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// TestGoodFiles loads every testdata/good/*.yaml, checks the invariants
// every Spec must hold, and compares a text dump with its .golden file.
func TestGoodFiles(t *testing.T) {
	files, err := filepath.Glob("testdata/good/*.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no good files: %v", err)
	}
	for _, file := range files {
		t.Run(strings.TrimSuffix(filepath.Base(file), ".yaml"), func(t *testing.T) {
			spec := mustLoad(t, file)
			checkSpec(t, spec)
			got := dump(spec)
			golden := strings.TrimSuffix(file, ".yaml") + ".golden"
			if *update {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if got != string(want) {
				t.Errorf("Spec differs from %s\n--- got:\n%s--- want:\n%s", golden, got, want)
			}
		})
	}
}

func mustLoad(t *testing.T, file string) *Spec {
	t.Helper()
	spec, err := LoadFile(file)
	if err != nil {
		t.Fatalf("LoadFile(%s):\n%v", file, err)
	}
	again, err := LoadFile(file)
	if err != nil || !reflect.DeepEqual(spec, again) {
		t.Fatalf("two loads of %s differ (err %v)", file, err)
	}
	return spec
}

var macRE = regexp.MustCompile(`^[0-9a-f]{2}(:[0-9a-f]{2}){5}$`)

// checkSpec verifies what emu relies on: consistent links and interfaces,
// valid unique names, unique locally administered MACs, unique addresses.
func checkSpec(t *testing.T, s *Spec) {
	t.Helper()
	if msg := checkLabName(s.Name); msg != "" {
		t.Errorf("lab name: %s", msg)
	}
	macs := map[string]string{}
	addrs := map[netip.Addr]string{}
	seenNode := map[string]bool{}
	for _, n := range s.Nodes {
		if seenNode[n.Name] {
			t.Errorf("node %s twice", n.Name)
		}
		seenNode[n.Name] = true
		names := map[string]bool{}
		for _, ifc := range n.Interfaces {
			where := n.Name + ":" + ifc.Name
			if msg := checkIfaceName(ifc.Name); msg != "" {
				t.Errorf("%s: %s", where, msg)
			}
			if names[ifc.Name] {
				t.Errorf("%s: interface name twice", where)
			}
			names[ifc.Name] = true
			if ifc.External != nil {
				if ifc.Link != -1 || ifc.MAC != "" {
					t.Errorf("%s: external interface with link %d mac %q", where, ifc.Link, ifc.MAC)
				}
			} else {
				if !macRE.MatchString(ifc.MAC) || ifc.MAC[:2] != "02" {
					t.Errorf("%s: MAC %q is not locally administered unicast 02:...", where, ifc.MAC)
				}
				if other, dup := macs[ifc.MAC]; dup {
					t.Errorf("%s: MAC %s also on %s", where, ifc.MAC, other)
				}
				macs[ifc.MAC] = where
				if ifc.Wireless {
					if ifc.Link != -1 || (n.AP == nil) == (n.Station == nil) {
						t.Errorf("%s: wireless interface with link %d on a node that is not exactly one of AP or station", where, ifc.Link)
					}
					continue
				}
				if ifc.Link < 0 || ifc.Link >= len(s.Links) {
					t.Fatalf("%s: link index %d out of range", where, ifc.Link)
				}
				l := s.Links[ifc.Link]
				self, peer := l.A, l.B
				if l.B.Node == n.Name && l.B.Iface == ifc.Name {
					self, peer = l.B, l.A
				}
				if self.Node != n.Name || self.Iface != ifc.Name || ifc.Peer != peer.String() {
					t.Errorf("%s: link %d is %s -- %s, peer %q", where, ifc.Link, l.A, l.B, ifc.Peer)
				}
				if ifc.MTU < 68 {
					t.Errorf("%s: mtu %d", where, ifc.MTU)
				}
			}
			if n.Kind == KindSwitch && len(ifc.Addrs) > 0 {
				t.Errorf("%s: switch port with addresses", where)
			}
			for _, a := range ifc.Addrs {
				if other, dup := addrs[a.Addr()]; dup {
					t.Errorf("%s: address %s also on %s", where, a, other)
				}
				addrs[a.Addr()] = where
			}
		}
	}
	for i, l := range s.Links {
		for _, e := range []Endpoint{l.A, l.B} {
			n := s.Node(e.Node)
			if n == nil {
				t.Errorf("links[%d]: no node %s", i, e.Node)
				continue
			}
			found := false
			for _, ifc := range n.Interfaces {
				found = found || ifc.Name == e.Iface && ifc.Link == i
			}
			if !found {
				t.Errorf("links[%d]: %s has no interface for the link", i, e)
			}
		}
	}
}

// routesOf renders a node's routes as "dst via dev [auto]" strings.
func routesOf(t *testing.T, s *Spec, node string) []string {
	t.Helper()
	n := s.Node(node)
	if n == nil {
		t.Fatalf("no node %s", node)
	}
	var out []string
	for _, r := range n.Routes {
		x := r.Dst.String() + " via " + r.Via.String() + " dev " + r.Dev
		if r.Auto {
			x += " auto"
		}
		out = append(out, x)
	}
	return out
}

func addrsOf(t *testing.T, s *Spec, node, iface string) string {
	t.Helper()
	n := s.Node(node)
	if n == nil {
		t.Fatalf("no node %s", node)
	}
	for _, ifc := range n.Interfaces {
		if ifc.Name == iface {
			var parts []string
			for _, a := range ifc.Addrs {
				parts = append(parts, a.String())
			}
			return strings.Join(parts, " ")
		}
	}
	t.Fatalf("no interface %s:%s", node, iface)
	return ""
}

func TestRoutedTwoRouters(t *testing.T) {
	s := mustLoad(t, "../topologies/routed.yaml")
	want := map[string][]string{
		"h1": {"0.0.0.0/0 via 10.0.0.3 dev h1-eth0 auto", "::/0 via fd00:10::3 dev h1-eth0 auto"},
		"h4": {"0.0.0.0/0 via 10.0.1.3 dev h4-eth0 auto", "::/0 via fd00:10:0:1::3 dev h4-eth0 auto"},
		"r1": {"10.0.1.0/24 via 10.0.2.2 dev r1-eth1 auto", "fd00:10:0:1::/64 via fd00:10:0:2::2 dev r1-eth1 auto"},
		"r2": {"10.0.0.0/24 via 10.0.2.1 dev r2-eth0 auto", "fd00:10::/64 via fd00:10:0:2::1 dev r2-eth0 auto"},
	}
	for node, w := range want {
		if got := routesOf(t, s, node); !reflect.DeepEqual(got, w) {
			t.Errorf("%s routes:\n got %q\nwant %q", node, got, w)
		}
	}
	for iface, w := range map[string]string{
		"h1:h1-eth0": "10.0.0.1/24 fd00:10::1/64",
		"h3:h3-eth0": "10.0.1.1/24 fd00:10:0:1::1/64",
		"r1:r1-eth0": "10.0.0.3/24 fd00:10::3/64",
		"r1:r1-eth1": "10.0.2.1/30 fd00:10:0:2::1/64",
		"r2:r2-eth0": "10.0.2.2/30 fd00:10:0:2::2/64",
	} {
		node, name, _ := strings.Cut(iface, ":")
		if got := addrsOf(t, s, node, name); got != w {
			t.Errorf("%s: got %s, want %s", iface, got, w)
		}
	}
}

func TestRoutersExplicitAndShortestPath(t *testing.T) {
	s := mustLoad(t, "testdata/good/routers.yaml")
	want := map[string][]string{
		// LAN b is reachable through r1 and r2: r1 wins (h1-eth0 first);
		// LAN c goes straight through r2 on the /31 p2p link.
		"h1": {"172.16.1.0/24 via 172.16.0.1 dev h1-eth0 auto", "172.16.0.4/31 via 172.16.0.3 dev h1-eth1 auto"},
		// the explicit route wins; the others need two gateways: no default
		"h2": {"172.16.0.4/31 via 172.16.1.2 dev ", "172.16.0.0/31 via 172.16.1.2 dev h2-eth0 auto", "172.16.0.2/31 via 172.16.1.3 dev h2-eth0 auto"},
		// the explicit default already covers every remote subnet
		"h3": {"0.0.0.0/0 via 172.16.0.5 dev "},
		"r2": {"172.16.0.0/31 via 172.16.1.2 dev r2-eth0 auto"},
	}
	for node, w := range want {
		if got := routesOf(t, s, node); !reflect.DeepEqual(got, w) {
			t.Errorf("%s routes:\n got %q\nwant %q", node, got, w)
		}
	}
}

func TestSubnets(t *testing.T) {
	s := mustLoad(t, "testdata/good/subnets.yaml")
	for iface, w := range map[string]string{
		"h1:h1-eth0": "192.168.5.10/24 fd00:5::a/64",
		"h2:h2-eth0": "192.168.5.2/24 fd00:5::1/64", // .1 is taken by h3
		"h3:h3-eth0": "192.168.5.1/24 fd00:5::2/64",
		"h1:h1-eth1": "10.9.9.0/31",
		"h2:h2-eth1": "10.9.9.1/31",
		"h1:h1-eth2": "10.0.0.1/28", // 7 interfaces do not fit prefix: 29
		"h7:h7-eth0": "10.0.0.7/28",
		"h8:h8-eth0": "10.0.0.18/30",
	} {
		node, name, _ := strings.Cut(iface, ":")
		if got := addrsOf(t, s, node, name); got != w {
			t.Errorf("%s: got %s, want %s", iface, got, w)
		}
	}
}

func TestNaming(t *testing.T) {
	s := mustLoad(t, "testdata/good/naming.yaml")
	var got []string
	for _, l := range s.Links {
		got = append(got, l.A.String()+"="+l.B.String())
	}
	want := []string{"h1:h1-eth0=s1:s1-eth1", "h1:h1-eth1=s1:uplink", "h1:h1-eth2=s1:s1-eth3",
		"h2:h2-eth0=s1:s1-eth4", "h2:h2-eth1=s1:s1-eth5", "h2:h2-eth2=s1:s1-eth6"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("links:\n got %q\nwant %q", got, want)
	}
}

func TestAutoFalse(t *testing.T) {
	s, err := Load("auto.yaml", []byte(`
addressing: {auto: false}
nodes: {h1: {}, h2: {}, h3: {}, s1: {kind: switch}}
links:
  - {endpoints: [h1, s1], ip: {h1: 10.1.1.1/24}}
  - {endpoints: [h2, s1]}
  - {endpoints: [h3, h2]}
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := addrsOf(t, s, "h1", "h1-eth0"); got != "10.1.1.1/24" {
		t.Errorf("h1: %s", got)
	}
	for _, ifc := range []string{"h2:h2-eth0", "h2:h2-eth1", "h3:h3-eth0"} {
		node, name, _ := strings.Cut(ifc, ":")
		if got := addrsOf(t, s, node, name); got != "" {
			t.Errorf("%s got %s with auto: false", ifc, got)
		}
	}
	if s.Name != "auto" {
		t.Errorf("name %q, want auto (from the file name)", s.Name)
	}
}

func TestLabNameFrom(t *testing.T) {
	for in, want := range map[string]string{
		"topologies/My Lab.yaml": "my-lab",
		"a/b/linear3.yml":        "linear3",
		"--x--.yaml":             "x",
		"---.yaml":               "lab",
		"Über_Lab.YAML":          "ber_lab",
		"x.y.z":                  "x-y-z",
		strings.Repeat("a", 40):  strings.Repeat("a", 32),
	} {
		if got := labNameFrom(in); got != want || checkLabName(got) != "" {
			t.Errorf("labNameFrom(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestErrorFormat(t *testing.T) {
	_, err := Load("t.yaml", []byte("nodes: {h1: {kind: hots}}\nlinks: [{endpoints: [h1, h9]}]\n"))
	es, ok := err.(Errors)
	if !ok || len(es) != 2 {
		t.Fatalf("got %T %v", err, err)
	}
	e := es[0]
	if e.File != "t.yaml" || e.Line != 1 || e.Col != 20 || e.Path != "nodes.h1.kind" {
		t.Errorf("got %+v", *e)
	}
	want := `t.yaml:1:20: nodes.h1.kind: unknown kind "hots" (valid: host, router, switch, ap, station, root; did you mean "host"?)` + "\n" +
		`t.yaml:2:26: links[0].endpoints[1]: unknown node "h9" (known: h1; did you mean "h1"?)`
	if err.Error() != want {
		t.Errorf("got\n%s\nwant\n%s", err, want)
	}
	var target *Error
	if !errorsAs(err, &target) || target != es[0] {
		t.Errorf("errors.As did not find the first *Error")
	}
	if got := (&Error{File: "f", Msg: "m"}).Error(); got != "f: m" {
		t.Errorf("got %q", got)
	}
	if got := (&Error{File: "f", Line: 3, Path: "p", Msg: "m"}).Error(); got != "f:3: p: m" {
		t.Errorf("got %q", got)
	}
}
