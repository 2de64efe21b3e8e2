package topo

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

func gen(t *testing.T, g string, opt GenOptions) *Spec {
	t.Helper()
	s, err := Generate(g, opt)
	if err != nil {
		t.Fatalf("Generate(%q): %v", g, err)
	}
	again, _ := Generate(g, opt)
	if !reflect.DeepEqual(s, again) {
		t.Fatalf("Generate(%q) is not deterministic", g)
	}
	checkSpec(t, s)
	return s
}

func linkList(s *Spec) []string {
	var out []string
	for _, l := range s.Links {
		out = append(out, l.A.String()+"="+l.B.String())
	}
	return out
}

func nodeNames(s *Spec) string {
	var out []string
	for _, n := range s.Nodes {
		out = append(out, n.Name)
	}
	return strings.Join(out, " ")
}

func TestGenerateSingle(t *testing.T) {
	s := gen(t, "single,3", GenOptions{})
	if s.Name != "single3" || nodeNames(s) != "h1 h2 h3 s1" {
		t.Errorf("name %s nodes %s", s.Name, nodeNames(s))
	}
	want := []string{"h1:h1-eth0=s1:s1-eth1", "h2:h2-eth0=s1:s1-eth2", "h3:h3-eth0=s1:s1-eth3"}
	if got := linkList(s); !reflect.DeepEqual(got, want) {
		t.Errorf("links %q", got)
	}
	for i, h := range []string{"h1", "h2", "h3"} {
		if got := addrsOf(t, s, h, h+"-eth0"); got != "10.0.0."+string(rune('1'+i))+"/24" {
			t.Errorf("%s: %s", h, got)
		}
	}
	if d := gen(t, "single", GenOptions{}); nodeNames(d) != "h1 h2 s1" || d.Name != "single2" {
		t.Errorf("single default: %s %s", d.Name, nodeNames(d))
	}
	if d := gen(t, "minimal", GenOptions{}); nodeNames(d) != "h1 h2 s1" || d.Name != "minimal" {
		t.Errorf("minimal: %s %s", d.Name, nodeNames(d))
	} else if got := addrsOf(t, d, "h2", "h2-eth0"); got != "10.0.0.2/24" {
		t.Errorf("minimal h2: %s, want a /24 even for two hosts", got)
	}
}

func TestGenerateLinear(t *testing.T) {
	s := gen(t, "linear,3", GenOptions{})
	// Mininet LinearTopo: addLink(host, switch), then addLink(switch, last)
	want := []string{"h1:h1-eth0=s1:s1-eth1", "h2:h2-eth0=s2:s2-eth1", "s2:s2-eth2=s1:s1-eth2",
		"h3:h3-eth0=s3:s3-eth1", "s3:s3-eth2=s2:s2-eth3"}
	if got := linkList(s); !reflect.DeepEqual(got, want) {
		t.Errorf("links %q", got)
	}
	if s.Name != "linear3" || nodeNames(s) != "h1 h2 h3 s1 s2 s3" {
		t.Errorf("name %s nodes %s", s.Name, nodeNames(s))
	}
	s = gen(t, "linear,2,2", GenOptions{})
	if s.Name != "linear2x2" || nodeNames(s) != "h1s1 h1s2 h2s1 h2s2 s1 s2" {
		t.Errorf("name %s nodes %s", s.Name, nodeNames(s))
	}
	if got := addrsOf(t, s, "h1s2", "h1s2-eth0"); got != "10.0.0.2/24" {
		t.Errorf("h1s2: %s", got)
	}
	s = gen(t, "linear,200", GenOptions{})
	if len(s.Nodes) != 400 || len(s.Links) != 399 || s.Name != "linear200" {
		t.Errorf("linear,200: %d nodes %d links name %s", len(s.Nodes), len(s.Links), s.Name)
	}
	if got := addrsOf(t, s, "h200", "h200-eth0"); got != "10.0.0.200/24" {
		t.Errorf("h200: %s", got)
	}
}

func TestGenerateTree(t *testing.T) {
	s := gen(t, "tree,2,2", GenOptions{})
	// Mininet numbers switches depth-first: s2 and s3 are s1's children.
	want := []string{"s2:s2-eth1=h1:h1-eth0", "s2:s2-eth2=h2:h2-eth0", "s1:s1-eth1=s2:s2-eth3",
		"s3:s3-eth1=h3:h3-eth0", "s3:s3-eth2=h4:h4-eth0", "s1:s1-eth2=s3:s3-eth3"}
	if got := linkList(s); !reflect.DeepEqual(got, want) {
		t.Errorf("links %q", got)
	}
	s = gen(t, "tree,depth=3,fanout=10", GenOptions{})
	hosts, switches := 0, 0
	for _, n := range s.Nodes {
		if n.Kind == KindSwitch {
			switches++
		} else {
			hosts++
		}
	}
	if hosts != 1000 || switches != 111 || len(s.Links) != 1110 || s.Name != "tree3x10" {
		t.Errorf("tree,3,10: %d hosts %d switches %d links, name %s", hosts, switches, len(s.Links), s.Name)
	}
	// 1000 hosts need a /22: h256 is 10.0.1.0, a valid host address there
	for h, want := range map[string]string{"h1": "10.0.0.1/22", "h256": "10.0.1.0/22", "h1000": "10.0.3.232/22"} {
		if got := addrsOf(t, s, h, h+"-eth0"); got != want {
			t.Errorf("%s: %s, want %s", h, got, want)
		}
	}
	if d := gen(t, "tree", GenOptions{}); nodeNames(d) != "h1 h2 s1" {
		t.Errorf("tree default: %s", nodeNames(d))
	}
}

func TestGenerateDumbbell(t *testing.T) {
	s := gen(t, "dumbbell,2", GenOptions{Switch: "ovs", Link: "rate=10mbit,delay=5ms"})
	want := []string{"s1:s1-eth1=s2:s2-eth1", "h1:h1-eth0=s1:s1-eth2", "h2:h2-eth0=s1:s1-eth3",
		"h3:h3-eth0=s2:s2-eth2", "h4:h4-eth0=s2:s2-eth3"}
	if got := linkList(s); !reflect.DeepEqual(got, want) {
		t.Errorf("links %q", got)
	}
	for _, n := range s.Nodes {
		if n.Kind == KindSwitch && n.SwitchType != SwitchOVS {
			t.Errorf("%s is %s, want ovs", n.Name, n.SwitchType)
		}
	}
	for i, l := range s.Links {
		if l.Params == nil || l.Params.Rate != 10_000_000 || l.Params.Delay != 5*time.Millisecond {
			t.Errorf("links[%d] params %v", i, l.Params)
		}
	}
	if got := addrsOf(t, s, "h4", "h4-eth0"); got != "10.0.0.4/24" {
		t.Errorf("h4: %s", got)
	}
}

func TestGenerateName(t *testing.T) {
	s := gen(t, "single,2", GenOptions{Name: "mylab"})
	if s.Name != "mylab" || s.Source != "single,2" {
		t.Errorf("name %s source %s", s.Name, s.Source)
	}
}

func TestGenerateErrors(t *testing.T) {
	for _, c := range []struct {
		gen  string
		opt  GenOptions
		want string
	}{
		{"star,3", GenOptions{}, `star,3: unknown topology "star" (valid: minimal, single, linear, tree, dumbbell, wifi)`},
		{"minimal,3", GenOptions{}, `minimal takes no parameters`},
		{"lineer,3", GenOptions{}, `did you mean "linear"?`},
		{"linear,0", GenOptions{}, `linear,0: linear: k must be a whole number >= 1, got "0"`},
		{"linear,x", GenOptions{}, `k must be a whole number >= 1, got "x"`},
		{"tree,2,2,2", GenOptions{}, `tree takes at most 2 parameters (depth, fanout)`},
		{"tree,depht=2", GenOptions{}, `tree has no parameter "depht" (valid: depth, fanout; did you mean "depth"?)`},
		{"tree,10,10", GenOptions{}, `tree,10,10 would have more than 100000 nodes`},
		{"tree,100000,1", GenOptions{}, `would have more than 100000 nodes`},
		{"linear,99999999999999999999", GenOptions{}, `k must be a whole number >= 1`},
		{"single,200000", GenOptions{}, `would have more than 100000 nodes`},
		{"single,3", GenOptions{Switch: "obs"}, `unknown switch type "obs" (valid: linux-bridge, ovs; did you mean "ovs"?)`},
		{"single,3", GenOptions{Link: "rate=10mbps"}, `rate "10mbps" is in bytes per second`},
		{"single,3", GenOptions{Link: "jitter=1ms"}, `jitter 1ms needs a delay`},
		{"single,3", GenOptions{Name: "Bad.Name"}, `lab name "Bad.Name" is not valid`},
		{"single,3", GenOptions{Name: "h1234567890123456789012345678901234"}, `is 35 bytes: the limit is 32`},
		{"", GenOptions{}, `unknown topology ""`},
	} {
		_, err := Generate(c.gen, c.opt)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Generate(%q, %+v) = %v, want %q", c.gen, c.opt, err, c.want)
		}
	}
}

// TestGenerateFast: large generated labs resolve well under 100 ms.
func TestGenerateFast(t *testing.T) {
	for _, g := range []string{"linear,200", "tree,3,10"} {
		best := time.Hour
		for i := 0; i < 3; i++ {
			start := time.Now()
			if _, err := Generate(g, GenOptions{}); err != nil {
				t.Fatal(err)
			}
			best = min(best, time.Since(start))
		}
		t.Logf("%s: %v", g, best)
		if best > 100*time.Millisecond {
			t.Errorf("%s took %v, want well under 100ms", g, best)
		}
	}
}

func BenchmarkGenerateTree3x10(b *testing.B) {
	for b.Loop() {
		if _, err := Generate("tree,3,10", GenOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

// wifi,N is Mininet-WiFi's default topology: ap1 with stations sta1..staN
// in one L2 segment, addressed in order; --link shapes every wireless hop.
func TestGenerateWiFi(t *testing.T) {
	s := gen(t, "wifi,3", GenOptions{Link: "rate=54mbit,delay=2ms,loss=1%"})
	if got := nodeNames(s); got != "sta1 sta2 sta3 ap1" {
		t.Fatalf("nodes %s", got)
	}
	ap := s.Node("ap1")
	if ap.AP == nil || ap.Kind != KindSwitch || ap.AP.SSID != "wifi3" || ap.AP.Mode != WiFiModeN || ap.AP.Channel.FreqMHz != 2412 || ap.AP.Security != WiFiOpen {
		t.Fatalf("ap1: kind %s AP %+v", ap.Kind, ap.AP)
	}
	if !reflect.DeepEqual(ap.AP.Stations, []string{"sta1", "sta2", "sta3"}) {
		t.Errorf("ap1 stations %v", ap.AP.Stations)
	}
	for i, name := range []string{"sta1", "sta2", "sta3"} {
		n := s.Node(name)
		if n.Station == nil || n.Station.AP != "ap1" || len(n.Interfaces) != 1 || !n.Interfaces[0].Wireless {
			t.Fatalf("%s: %+v", name, n)
		}
		if got, want := n.Interfaces[0].Addrs[0].String(), fmt.Sprintf("10.0.0.%d/24", i+1); got != want {
			t.Errorf("%s address %s, want %s", name, got, want)
		}
		p := n.Station.Params
		if p == nil || p.Rate != 54_000_000 || p.Delay != 2*time.Millisecond || p.Loss != 1 {
			t.Errorf("%s wireless hop params %v", name, p)
		}
	}
	if len(s.Links) != 0 {
		t.Errorf("wifi,3 has wired links: %v", linkList(s))
	}
	if d := gen(t, "wifi", GenOptions{}); nodeNames(d) != "sta1 sta2 ap1" || d.Node("sta1").Station.Params != nil {
		t.Errorf("wifi default: %s", nodeNames(d))
	}
}
