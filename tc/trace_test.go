package tc

import (
	"errors"
	"testing"
	"time"
)

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
