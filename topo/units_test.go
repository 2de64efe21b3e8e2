package topo

import (
	"strings"
	"testing"
	"time"
)

func TestParseRate(t *testing.T) {
	for in, want := range map[string]uint64{
		"10mbit": 10_000_000, "1.5Gbit": 1_500_000_000, "100kbit": 100_000, "10M": 10_000_000,
		"10m": 10_000_000, "1kbit": 1000, "100gbit": 100_000_000_000, "1000bit": 1000,
		"2kibit": 2048, "1mibit": 1 << 20, "0.1tbit": 100_000_000_000, "10Mbit/s": 10_000_000,
		" 5 mbit ": 5_000_000, "1.5k": 1500, "007mbit": 7_000_000, "1.mbit": 1_000_000, ".5mbit": 500_000,
	} {
		got, err := ParseRate(in)
		if err != nil || got != want {
			t.Errorf("ParseRate(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for in, msg := range map[string]string{
		"10mbps": "bytes per second", "10MBps": "bytes per second", "10kb": "bytes per second",
		"10": "no unit", "10000000": "no unit", "0.9kbit": "out of range", "999bit": "out of range",
		"100.1gbit": "out of range", "1tbit": "out of range", "0mbit": "out of range",
		"-1mbit": "not a number", "mbit": "not a number", "": "not a number", "1e6bit": "unknown unit",
		"10 furlongs": "unknown unit", "nan": "not a number", "inf": "not a number", "0x10mbit": "unknown unit",
		"1..5mbit": "not a number", "99999999999999999999999999999999999mbit": "not a number",
	} {
		if _, err := ParseRate(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseRate(%q) = %v, want error containing %q", in, err, msg)
		}
	}
}

func TestFormatRate(t *testing.T) {
	for in, want := range map[uint64]string{10_000_000: "10mbit", 1500: "1500bit", 1_500_000: "1500kbit", 2_000_000_000_000: "2tbit", 0: "0bit"} {
		if got := FormatRate(in); got != want {
			t.Errorf("FormatRate(%d) = %q, want %q", in, got, want)
		}
		if in >= MinRate && in <= MaxRate {
			if back, err := ParseRate(FormatRate(in)); err != nil || back != in {
				t.Errorf("round trip %d: %d %v", in, back, err)
			}
		}
	}
}

func TestParseDuration(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"5ms": 5 * time.Millisecond, "1.5ms": 1500 * time.Microsecond, "250us": 250 * time.Microsecond,
		"250µs": 250 * time.Microsecond, "1s": time.Second, "5msec": 5 * time.Millisecond,
		"100usec": 100 * time.Microsecond, "2sec": 2 * time.Second, "0": 0, "0ms": 0,
		"59.999s": 59999 * time.Millisecond, "1m": 0, "100ns": 100,
	} {
		got, err := ParseDuration(in)
		if in == "1m" {
			if err == nil {
				t.Errorf("ParseDuration(1m) accepted a minute")
			}
			continue
		}
		if err != nil || got != want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for in, msg := range map[string]string{
		"5": "no unit", "-5ms": "negative", "60s": "too long", "1h": "too long", "+5ms": "not valid",
		"5 parsecs": "not valid", "": "not valid", "ms": "not valid", "9999999999999999999s": "not valid",
	} {
		if _, err := ParseDuration(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParseDuration(%q) = %v, want error containing %q", in, err, msg)
		}
	}
}

func TestParsePercent(t *testing.T) {
	for in, want := range map[string]float64{"1%": 1, "0.5%": 0.5, "1": 1, "0.01": 0.01, "100%": 100, "0": 0, " 2 % ": 2} {
		got, err := ParsePercent(in)
		if err != nil || got != want {
			t.Errorf("ParsePercent(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for in, msg := range map[string]string{"101%": "out of range", "-1%": "not a number", "1%%": "not a number", "abc": "not a number", "": "not a number", "1e2": "not a number", "NaN": "not a number"} {
		if _, err := ParsePercent(in); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("ParsePercent(%q) = %v, want error containing %q", in, err, msg)
		}
	}
}

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
