package traffic

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/emuctl/emuctl/topo"
)

func TestParseFlows(t *testing.T) {
	ff, err := ParseFlows("f.yaml", []byte(`
version: 1
lab: demo
x-slow: &slow {proto: udp, rate: 2mbit, size: 160}
defaults: {duration: 5s, interval: 50ms}
flows:
  - {name: bulk, from: h1, to: h2, cc: cubic, parallel: 2, reverse: true, sndbuf: 4MiB, nodelay: true}
  - <<: *slow
    from: h3
    to: h4
    start: 1.5s
    probe: icmp
    probe_rate: 20
    udp_packets: false
`))
	if err != nil {
		t.Fatal(err)
	}
	if ff.Lab != "demo" || len(ff.Flows) != 2 {
		t.Fatalf("%+v", ff)
	}
	a, b := ff.Flows[0], ff.Flows[1]
	if a.Name != "bulk" || a.Client != "h1" || a.Server != "h2" || a.Sock.CC != "cubic" || a.Parallel != 2 || !a.Reverse ||
		a.Sock.SndBuf != 4<<20 || !a.Sock.NoDelay || a.Duration != 5*time.Second || a.Interval != 50*time.Millisecond {
		t.Errorf("flow 0: %+v", a)
	}
	if b.Proto != UDP || b.Rate != 2_000_000 || b.Size != 160 || b.Start != 1500*time.Millisecond || b.Probe != ProbeICMP ||
		b.ProbeRate != 20 || b.KeepPackets == nil || *b.KeepPackets || b.Duration != 5*time.Second {
		t.Errorf("flow 1: %+v", b)
	}
	if a.Pos != "f.yaml:7:5" {
		t.Errorf("position %q", a.Pos)
	}
}

func TestParseFlowsErrors(t *testing.T) {
	_, err := ParseFlows("f.yaml", []byte(`
flows:
  - {from: h1, to: h2, protoo: tcp}
  - {from: h1, proto: sctp, duration: 10}
  - {from: h1, to: h2, rate: 10mbps, cc: cubicc, start: soon}
  - from: h1
    from: h2
    to: h3
  - {from: h1, to: h2, nodelay: yes, parallel: "2"}
other: 1
`))
	var es topo.Errors
	if !errors.As(err, &es) {
		t.Fatalf("error %v is not topo.Errors", err)
	}
	want := []string{
		`f.yaml:3:24: flows[0]: unknown key "protoo" (valid: name, from, to, dst, proto, engine, cc, start, duration, interval, reverse, parallel, ... (10 more); did you mean "proto"?)`,
		`f.yaml:4:5: flows[1]: no to: node (the server)`,
		`f.yaml:4:23: flows[1].proto: unknown value "sctp" (valid: tcp, mptcp, udp; did you mean "tcp"?)`,
		`f.yaml:4:39: flows[1].duration: duration "10" has no unit: write e.g. 10s or 10ms`,
		`f.yaml:5:30: flows[2].rate: rate "10mbps" is in bytes per second`,
		`f.yaml:5:42: flows[2].cc: congestion control "cubicc" is not available in this kernel`,
		`f.yaml:5:57: flows[2].start: duration "soon" is not valid (e.g. 20s, 100ms, 1m30s)`,
		`f.yaml:7:5: flows[3].from: duplicate key "from" (first at line 6): each key may appear once`,
		// the rules of topology files (internal/yamlpos): YAML's true and
		// false only, numbers written as numbers
		`f.yaml:9:33: flows[4].nodelay: must be true or false, got "yes"`,
		`f.yaml:9:48: flows[4].parallel: must be a whole number in 1 .. 128, got "2"`,
		`f.yaml:10:1: unknown key "other" (valid: version, lab, defaults, flows, capture)`,
	}
	if len(es) != len(want) {
		t.Errorf("%d errors, want %d:\n%v", len(es), len(want), err)
	}
	for i := range min(len(es), len(want)) {
		if !strings.HasPrefix(es[i].Error(), want[i]) {
			t.Errorf("error %d:\n got %s\nwant %s...", i, es[i], want[i])
		}
	}
	for _, bad := range []string{"", "flows: 3", "[1, 2]", "flows: []", "version: 2\nflows: [{from: a, to: b}]", "flows: [{from: a, to: b"} {
		if _, err := ParseFlows("x.yaml", []byte(bad)); err == nil || !strings.HasPrefix(err.Error(), "x.yaml") {
			t.Errorf("%q: error %v", bad, err)
		}
	}
}

// TestFlowsFileConcurrent runs two flows from a file: the second starts
// one second later on the same nodes; ports must not collide.
func TestFlowsFileConcurrent(t *testing.T) {
	needRoot(t)
	lab := gen(t, "single,3", "ttrfile", "")
	ff, err := ParseFlows("flows.yaml", []byte(`
flows:
  - {name: a, from: h1, to: h3, duration: 2s, cc: cubic}
  - {name: b, from: h2, to: h3, duration: 1s, start: 1s, cc: reno, probe: udp}
  - {name: c, from: h1, to: h3, duration: 1s, start: 500ms, proto: udp, rate: 1mbit}
`))
	if err != nil {
		t.Fatal(err)
	}
	r := run(t, lab, ff.Flows...)
	a, b, c := r.Flow("a"), r.Flow("b"), r.Flow("c")
	if a == nil || b == nil || c == nil {
		t.Fatalf("flows %v", r.Flows)
	}
	for _, x := range []struct {
		f           string
		start, dura float64
		cc          string
	}{{"a", 0, 2, "cubic"}, {"b", 1, 1, "reno"}, {"c", 0.5, 1, ""}} {
		f := r.Flow(x.f)
		if math.Abs(f.StartS-x.start) > 0.2 || math.Abs(f.EndS-f.StartS-x.dura) > 0.3 || f.CC != x.cc || f.BytesReceived == 0 {
			t.Errorf("flow %s: %.3f .. %.3f s, cc %q, %d bytes; want start %.1f for %.1f s, cc %q", x.f, f.StartS, f.EndS, f.CC, f.BytesReceived, x.start, x.dura, x.cc)
		}
	}
	if a.Dst == b.Dst {
		t.Errorf("two concurrent flows to h3 share the server socket %s", a.Dst)
	}
	if len(r.Probes) != 1 || r.Probes[0].Flow != "b" || math.Abs(r.Probes[0].Samples[0].TS-1) > 0.2 {
		t.Errorf("probe of flow b: %+v", r.Probes)
	}
	if math.Abs(r.DurationS-2) > 0.3 {
		t.Errorf("run lasted %.3f s, want about 2", r.DurationS)
	}
}
