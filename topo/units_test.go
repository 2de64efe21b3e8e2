package topo

import (
	"strings"
	"testing"
	"time"
)

func TestParseQueue(t *testing.T) {
	for in, want := range map[string]Queue{
		"100": {Packets: 100}, "100p": {Packets: 100}, "100packets": {Packets: 100},
		"150kB": {Bytes: 150_000}, "64KiB": {Bytes: 65536}, "1500b": {Bytes: 1500}, "1500bytes": {Bytes: 1500},
		"1MB": {Bytes: 1_000_000}, "1MiB": {Bytes: 1 << 20}, "1.5KiB": {Bytes: 1536}, "4GiB": {Bytes: 1 << 32},
		"2bdp": {BDP: 2}, "0.5bdp": {BDP: 0.5},
	} {
		got, err := ParseQueue(in)
		if err != nil || *got != want {
			t.Errorf("ParseQueue(%q) = %+v, %v; want %+v", in, got, err, want)
		}
	}
	for in, msg := range map[string]string{
		"0": "1 .. 16777216", "1.5": "whole number", "99999999": "1 .. 16777216", "0b": "1 .. 4GiB",
		"5GiB": "1 .. 4GiB", "0.1b": "whole number", "10mbit": "is a rate", "10kbps": "is a rate",
		"0bdp": "> 0", "2000bdp": "<= 1000", "10 pallets": "unknown unit", "": "not valid", "-1": "not valid",
	} {
		if _, err := ParseQueue(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseQueue(%q) = %v, want error containing %q", in, err, msg)
		}
	}
}

func TestParseLinkParams(t *testing.T) {
	p, err := ParseLinkParams("rate=10mbit,delay=5ms,jitter=1ms,loss=1%,queue=100")
	if err != nil {
		t.Fatal(err)
	}
	want := LinkParams{Rate: 10_000_000, Delay: 5 * time.Millisecond, Jitter: time.Millisecond, Loss: 1, Queue: &Queue{Packets: 100}}
	if p.Rate != want.Rate || p.Delay != want.Delay || p.Jitter != want.Jitter || p.Loss != want.Loss || *p.Queue != *want.Queue {
		t.Errorf("got %+v", p)
	}
	if s := p.String(); s != "rate=10mbit,delay=5ms,jitter=1ms,loss=1%,queue=100" {
		t.Errorf("String() = %q", s)
	}
	if back, err := ParseLinkParams(p.String()); err != nil || back.String() != p.String() {
		t.Errorf("round trip: %v %v", back, err)
	}
	if p, err := ParseLinkParams(""); p != nil || err != nil {
		t.Errorf("empty: %v %v", p, err)
	}
	if p, err := ParseLinkParams(" RATE = 1gbit , delay=100us "); err != nil || p.Rate != 1e9 || p.String() != "rate=1gbit,delay=100us" {
		t.Errorf("spaces/case: %v %v", p, err)
	}
	for in, msg := range map[string]string{
		"rate=10mbit,rate=1mbit": "rate given twice", "delay": "not key=value", "bw=10": "Mininet's bw is in Mbit/s",
		"rate=10mbps": "bytes per second", "jitter=1ms": "needs a delay", "queue=2bdp,rate=1mbit": "needs both rate and delay",
		"loss=1%,los=2%": `did you mean "loss"?`, "delay=": "not key=value",
	} {
		if _, err := ParseLinkParams(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseLinkParams(%q) = %v, want error containing %q", in, err, msg)
		}
	}
}

func TestLinkParamsDir(t *testing.T) {
	a := &LinkParams{Rate: 1000}
	p := &LinkParams{Rate: 5000, Delay: time.Millisecond, AtoB: a}
	if got := p.Dir(true); got.Rate != 1000 {
		t.Errorf("a->b: %+v", got)
	}
	if got := p.Dir(false); got.Rate != 5000 || got.AtoB != nil {
		t.Errorf("b->a: %+v", got)
	}
	var nilp *LinkParams
	if got := nilp.Dir(true); got.Rate != 0 || nilp.String() != "" {
		t.Errorf("nil: %+v", got)
	}
}

func TestDidYouMean(t *testing.T) {
	for _, c := range []struct {
		in   string
		list []string
		want string
	}{
		{"hots", kinds, "host"}, {"mut", linkKeys, "mtu"}, {"congestion", tcpKeys, "congestion_control"},
		{"xyz", kinds, ""}, {"h9", []string{"h1", "h2"}, "h1"}, {"rotuer", kinds, "router"},
	} {
		got := didYouMean(c.in, c.list)
		if c.want == "" && got != "" || c.want != "" && !strings.Contains(got, `"`+c.want+`"`) {
			t.Errorf("didYouMean(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
