package lab_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/emuctl/emuctl/lab"
	"github.com/emuctl/emuctl/topo"
	"github.com/emuctl/emuctl/units"
)

// comparable renders a Spec as JSON data without what names its source:
// the file name, and positions ("file:line:col") kept for messages.
func comparable(t *testing.T, s *topo.Spec) any {
	t.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatal(err)
	}
	var strip func(any)
	strip = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				if k == "source" || k == "pos" || k == "at" || strings.HasSuffix(k, "_at") || strings.HasSuffix(k, "_pos") {
					delete(x, k)
					continue
				}
				strip(c)
			}
		case []any:
			for _, c := range x {
				strip(c)
			}
		}
	}
	strip(v)
	return v
}

// sameSpec checks that the builder resolves to the Spec topo gives the
// YAML, and that the builder's own YAML loads to it too.
func sameSpec(t *testing.T, b *lab.Topology, want *topo.Spec) {
	t.Helper()
	got, err := b.Spec()
	if err != nil {
		t.Fatalf("builder: %v\nits YAML:\n%s", err, b.YAML())
	}
	if g, w := comparable(t, got), comparable(t, want); !reflect.DeepEqual(g, w) {
		gj, _ := json.MarshalIndent(g, "", " ")
		wj, _ := json.MarshalIndent(w, "", " ")
		t.Fatalf("builder's Spec differs from the YAML's\nbuilder:\n%s\nYAML:\n%s\nbuilder's YAML:\n%s", gj, wj, b.YAML())
	}
	again, err := topo.Load("builder.yaml", b.YAML())
	if err != nil {
		t.Fatalf("the builder's YAML does not load: %v\n%s", err, b.YAML())
	}
	if !reflect.DeepEqual(comparable(t, again), comparable(t, want)) {
		t.Fatalf("the builder's YAML loads to another Spec:\n%s", b.YAML())
	}
}

// The builder gives the Spec of the repository's own topology files.
func TestBuilderMatchesTopologyFiles(t *testing.T) {
	load := func(path string) *topo.Spec {
		s, err := topo.LoadFile("../topologies/" + path)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	t.Run("linear3", func(t *testing.T) {
		b := lab.NewTopology("linear3").
			Host("h1").Host("h2").Host("h3").
			Switch("s1").Switch("s2").Switch("s3").
			Link("h1", "s1").Link("h2", "s2").Link("s2", "s1").Link("h3", "s3").Link("s3", "s2")
		sameSpec(t, b, load("linear3.yaml"))
	})
	t.Run("ring-stp", func(t *testing.T) {
		b := lab.NewTopology("ringstp").Host("h1").Host("h2").Host("h3")
		for _, s := range []string{"s1", "s2", "s3"} {
			b.Switch(s, lab.STP())
		}
		b.Link("h1", "s1").Link("h2", "s2").Link("h3", "s3").Link("s1", "s2").Link("s2", "s3").Link("s3", "s1")
		sameSpec(t, b, load("ring-stp.yaml"))
	})
	t.Run("routed", func(t *testing.T) {
		b := lab.NewTopology("routed").
			Addressing(lab.Addressing{Pool6: "fd00:10::/48"}).Routing("auto").
			Host("h1").Host("h2").Host("h3").Host("h4").
			Router("r1").Router("r2").Switch("s1").Switch("s2").
			Link("h1", "s1").Link("h2", "s1").Link("r1", "s1").Link("r1", "r2").
			Link("r2", "s2").Link("h3", "s2").Link("h4", "s2")
		sameSpec(t, b, load("routed.yaml"))
	})
	t.Run("wifi", func(t *testing.T) {
		b := lab.NewTopology("wifi").
			Host("srv").
			AccessPoint("ap1", lab.SSID("emuctl-lab"), lab.WiFi("mode", "n"), lab.WiFi("band", 2.4),
				lab.WiFi("channel", 6), lab.WiFi("width", 20), lab.WiFi("passphrase", "emuctl wifi lab")).
			Station("sta1", lab.AP("ap1")).Station("sta2", lab.AP("ap1")).
			Link("srv", "ap1", lab.Rate(units.Gbit))
		sameSpec(t, b, load("wifi.yaml"))
	})
}

// Everything the builder can say, against the same topology written as a
// file by hand.
func TestBuilderMatchesYAML(t *testing.T) {
	const file = `
name: full
addressing: {pool: 192.168.0.0/16, prefix: 24, p2p_prefix: 31}
defaults:
  link: {delay: 1ms, queue: 50}
  switch: ovs
nodes:
  h1:
    routes: ["10.99.0.0/24 via 192.168.0.3"]
    sysctls: {net.ipv4.tcp_sack: "0"}
    env: {GREETING: hello}
    start: ["sleep 1000"]
    tcp: {congestion_control: reno, sack: false}
  h2: {kind: host}
  r1: {kind: router}
  s1: {kind: switch, type: linux-bridge, stp: true}
  s2: {kind: switch}
links:
  - endpoints: [h1, s1]
    ip: {h1: 192.168.0.10/24}
    link: {rate: 10mbit, delay: 5ms, jitter: 1ms, jitter_dist: normal, loss: 0.5%, queue: 2bdp}
  - endpoints: ["h2:eth7", s1]
    mtu: 9000
    link:
      rate: 20mbit
      a->b: {loss: 1%, queue: 30000b}
      b->a: {rate: 5mbit, delay: 20ms, duplicate: 0.1%, corrupt: 0.01%}
  - endpoints: [r1, s1]
  - endpoints: [r1, s2]
    link: {ge: 1%/25%/100%/0%, backend: userspace}
`
	want, err := topo.Load("full.yaml", []byte(file))
	if err != nil {
		t.Fatal(err)
	}
	ms := time.Millisecond
	b := lab.NewTopology("full").
		Addressing(lab.Addressing{Pool: "192.168.0.0/16", Prefix: 24, P2PPrefix: 31}).
		DefaultLink(lab.Delay(ms), lab.Queue(50)).
		DefaultSwitch("ovs").
		Host("h1", lab.Route("10.99.0.0/24 via 192.168.0.3"), lab.Sysctl("net.ipv4.tcp_sack", "0"),
			lab.Env("GREETING", "hello"), lab.Start("sleep 1000"), lab.CC("reno"), lab.Field("tcp.sack", false)).
		Host("h2").
		Router("r1").
		Switch("s1", lab.LinuxBridge(), lab.STP()).
		Switch("s2").
		Link("h1", "s1", lab.IP("h1", "192.168.0.10/24"), lab.Rate(10*units.Mbit), lab.Delay(5*ms),
			lab.Jitter(ms), lab.JitterDist("normal"), lab.Loss(0.5), lab.QueueBDP(2)).
		Link("h2:eth7", "s1", lab.MTU(9000), lab.Rate(20*units.Mbit),
			lab.AtoB(lab.Loss(1), lab.QueueBytes(30000)),
			lab.BtoA(lab.Rate(5*units.Mbit), lab.Delay(20*ms), lab.Duplicate(0.1), lab.Corrupt(0.01))).
		Link("r1", "s1").
		Link("r1", "s2", lab.GilbertElliott(units.GilbertElliott{P: 1, R: 25, BadLoss: 100}), lab.Backend("userspace"))
	sameSpec(t, b, want)
	// positions in the Spec name the builder call, not a line of a file
	got, _ := b.Spec()
	if p := got.Links[1].Pos; !strings.HasPrefix(p, `Link("h2:eth7", "s1", MTU(9000)`) {
		t.Errorf("Links[1].Pos = %q, want the Link call", p)
	}
	if got.Source != `lab.NewTopology("full")` {
		t.Errorf("Source = %q", got.Source)
	}
}

// Bad input: one message per problem, naming the call and what would be
// valid, all at once.
func TestBuilderErrors(t *testing.T) {
	for _, c := range []struct {
		name string
		b    *lab.Topology
		want []string
	}{
		{"unknown node",
			lab.NewTopology("e1").Host("h1").Switch("s1").Link("h1", "s9"),
			[]string{`Link("h1", "s9"): links[0].endpoints[1]: unknown node "s9" (known: h1, s1; did you mean "s1"?)`}},
		{"bad lab name",
			lab.NewTopology("Bad.Name").Host("h1"),
			[]string{`NewTopology("Bad.Name"): name: lab name "Bad.Name" is not valid`}},
		{"duplicate node",
			lab.NewTopology("e2").Host("h1").Router("h1"),
			[]string{`Router("h1"): nodes.h1: duplicate key "h1" (first at Host("h1")): each key may appear once`}},
		{"option on the wrong kind",
			lab.NewTopology("e3").Host("h1", lab.STP()).Switch("s1", lab.CC("bbr")),
			[]string{`Host("h1", STP()): nodes.h1.stp:`, `Switch("s1", CC("bbr")): nodes.s1.tcp:`}},
		{"values out of range, all at once",
			lab.NewTopology("e4").Host("h1").Host("h2").
				Link("h1", "h2", lab.Delay(-time.Millisecond), lab.Loss(150), lab.Rate(10)),
			[]string{
				`Link("h1", "h2", Delay(-1ms), Loss(150%), Rate(10bit)): links[0].link.delay: duration "-1ms" is negative (valid: 0 .. 60s)`,
				`links[0].link.loss: percentage "150%" is out of range (valid: 0% .. 100%)`,
				`links[0].link.rate: rate "10bit" is out of range (valid: 1kbit .. 100gbit)`,
			}},
		{"link-only key in a direction",
			lab.NewTopology("e5").Host("h1").Host("h2").Link("h1", "h2", lab.AtoB(lab.MTU(9000))),
			[]string{`Link("h1", "h2", AtoB(MTU(9000))): links[0].link."a->b".mtu: unknown key "mtu" (valid: rate, delay, jitter`}},
		{"bdp queue without rate",
			lab.NewTopology("e6").Host("h1").Host("h2").Link("h1", "h2", lab.QueueBDP(2)),
			[]string{`Link("h1", "h2", QueueBDP(2)): links[0].link: queue 2bdp needs both rate and delay`}},
		{"bad address",
			lab.NewTopology("e7").Host("h1").Host("h2").Link("h1", "h2", lab.IP("h1", "10.0.0.300/24")),
			[]string{`Link("h1", "h2", IP("h1", "10.0.0.300/24")): links[0].ip.h1:`}},
		{"unknown key by Field",
			lab.NewTopology("e8").Host("h1", lab.Field("tcp.sak", false)),
			[]string{`Host("h1", Field("tcp.sak", false)): nodes.h1.tcp: unknown key "sak"`, `did you mean "sack"?`}},
		{"no nodes",
			lab.NewTopology("e9"),
			[]string{`NewTopology("e9"):`}},
	} {
		t.Run(c.name, func(t *testing.T) {
			spec, err := c.b.Spec()
			if err == nil {
				t.Fatalf("no error; spec %+v", spec)
			}
			t.Logf("%v", err)
			var es topo.Errors
			if !errors.As(err, &es) {
				t.Fatalf("error %T, want topo.Errors: %v", err, err)
			}
			for _, e := range es {
				if e.Line != 0 || e.Col != 0 || strings.Contains(e.Error(), "NewTopology(\"") && strings.Contains(e.Error(), ":1:") {
					t.Errorf("position of a generated line leaked: %v", e)
				}
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error does not contain\n  %s\ngot:\n%v", w, err)
				}
			}
		})
	}
}

// A Topology's YAML is a file emuctl reads, in the syntax a person writes.
func TestBuilderYAML(t *testing.T) {
	b := lab.NewTopology("demo").Host("h1").Host("h2").Switch("s1", lab.OVS()).
		Link("h1", "s1", lab.Rate(10*units.Mbit), lab.Delay(5*time.Millisecond), lab.AtoB(lab.Loss(1))).
		Link("h2", "s1", lab.IP("h2", "10.0.0.2/24")).
		Host("odd name", lab.Env("A", "yes"))
	want := `name: demo
nodes:
  h1: {kind: host}
  h2: {kind: host}
  s1: {kind: switch, type: ovs}
  "odd name": {kind: host, env: {A: "yes"}}
links:
  - {endpoints: [h1, s1], link: {rate: 10mbit, delay: 5ms, a->b: {loss: 1%}}}
  - {endpoints: [h2, s1], ip: {h2: 10.0.0.2/24}}
`
	if got := string(b.YAML()); got != want {
		t.Errorf("YAML:\n%s\nwant:\n%s", got, want)
	}
}
