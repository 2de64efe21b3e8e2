package tc

import (
	"errors"
	"strings"
	"testing"
	"time"
)

func TestParseTrace(t *testing.T) {
	ms, err := ParseTrace(strings.NewReader("0\n3\n3\r\n 7\n10\n"))
	if err != nil || len(ms) != 5 || ms[4] != 10 {
		t.Fatalf("ParseTrace = %v, %v", ms, err)
	}
	for _, c := range []struct{ in, want string }{
		{"", "1:1: the trace is empty"},
		{"5\n4\n", "2:1: timestamp 4 comes before 5 on line 1"},
		{"1\n\n2\n", "2:1: empty line"},
		{"1\n  x2\n", `2:3: "x2" is not a timestamp`},
		{"0\n0\n", "2:1: the last timestamp is 0"},
		{"-1\n", `1:1: "-1" is not a timestamp`},
	} {
		_, err := ParseTrace(strings.NewReader(c.in))
		var te *TraceError
		if !errors.As(err, &te) || !strings.HasPrefix(err.Error(), c.want) {
			t.Errorf("ParseTrace(%q) = %v, want %q...", c.in, err, c.want)
		}
	}
}

func TestTraceStats(t *testing.T) {
	// 2 s: the first second one opportunity a millisecond (12.032 Mbit/s),
	// then a 600 ms outage and 400 opportunities.
	var ms []uint32
	for i := uint32(1); i <= 1000; i++ {
		ms = append(ms, i)
	}
	for i := uint32(1600); i < 2000; i++ {
		ms = append(ms, i)
	}
	ms = append(ms, 2000)
	s := Stats(ms)
	if s.Length != 2*time.Second || s.LongestGap != 600*time.Millisecond || s.Opportunities != 1401 {
		t.Errorf("stats %+v", s)
	}
	if s.MaxBps != 999*TraceBytes*8 || s.MinBps != 401*TraceBytes*8 {
		t.Errorf("1-s min/max %v/%v", s.MinBps, s.MaxBps)
	}
}

// TestPlanRefusesTrace: netem cannot replay a trace; the refusal wraps
// ErrNotSupported so backend choice can move the link to the engine.
func TestPlanRefusesTrace(t *testing.T) {
	d := Dir{Trace: &Trace{File: "x", Ms: []uint32{1, 2}}, Delay: time.Millisecond}
	if _, err := PlanKernel(d, 1500); !errors.Is(err, ErrNotSupported) {
		t.Errorf("PlanKernel with a trace: %v", err)
	}
	if _, err := PlanShaper(d, 1500); !errors.Is(err, ErrNotSupported) {
		t.Errorf("PlanShaper with a trace: %v", err)
	}
	bad := []Dir{
		{Trace: &Trace{File: "x", Ms: []uint32{1, 2}}, Rate: 1e6},
		{Trace: &Trace{File: "x", Ms: []uint32{1, 2}}, AQM: &AQM{Discipline: CoDel}},
		{Trace: &Trace{File: "x", Ms: []uint32{2, 1}}},
		{Trace: &Trace{File: "x", Ms: []uint32{1, 2}}, Order: []string{"loss", "link"}},
		{Order: []string{"loss", "link", "delay"}},
	}
	for _, d := range bad {
		if d.Validate() == nil {
			t.Errorf("%+v validated", d)
		}
	}
}
