package testutil

import (
	"testing"
	"time"
)

// TestMeasureHost: a busy loop on one goroutine shows as busy time, a
// sleep as little, and the stall probe ran (a stall is never negative).
func TestMeasureHost(t *testing.T) {
	idle := MeasureHost(func() { time.Sleep(300 * time.Millisecond) })
	busy := MeasureHost(func() {
		for t0 := time.Now(); time.Since(t0) < 300*time.Millisecond; {
		}
	})
	t.Logf("sleeping: %v; spinning: %v", idle, busy)
	if idle.Stall < 0 || busy.Stall < 0 || busy.Busy <= 0 {
		t.Errorf("sleeping %+v, spinning %+v", idle, busy)
	}
	// the busy comparison needs a core to spare: on a machine others
	// keep wholly busy, sleeping shows 100 % as well (not judged)
	if idle.Busy < 0.9 && busy.Busy <= idle.Busy {
		t.Errorf("spinning not busier than sleeping: sleeping %+v, spinning %+v", idle, busy)
	}
	if s, why := (HostLoad{Busy: 0.95}).Starved(false); !s || why == "" {
		t.Error("95 % busy is starved")
	}
	if s, _ := (HostLoad{Busy: 0.95}).Starved(true); s {
		t.Error("95 % busy of its own is not starved")
	}
	if s, _ := (HostLoad{Stall: 25 * time.Millisecond}).Starved(true); !s {
		t.Error("a 25 ms stall is starved")
	}
	if s, _ := (HostLoad{Stall: 15 * time.Millisecond, Lost: 70 * time.Millisecond, Dur: 3 * time.Second}).Starved(true); !s {
		t.Error("70 ms of stalls in 3 s is starved")
	}
	if s, _ := (HostLoad{Stall: 15 * time.Millisecond, Lost: 50 * time.Millisecond, Dur: 3 * time.Second}).Starved(true); s {
		t.Error("50 ms of stalls in 3 s is not starved")
	}
	if s, why := (HostLoad{Steal: 0.05}).Starved(true); !s || why == "" {
		t.Error("5 % stolen is starved")
	}
	if s, _ := (HostLoad{Steal: 0.01}).Starved(true); s {
		t.Error("1 % stolen is not starved")
	}
	if c := cpuTimes(); len(c.cpus) == 0 || c.total == 0 || c.busy > c.total {
		t.Errorf("/proc/stat read as %+v", c)
	}
}

// During keeps exactly the stalls overlapping the window, and a watch
// that saw no stall returns none.
func TestStallsDuring(t *testing.T) {
	t0 := time.Now()
	stalls := []Stall{
		{At: t0, Late: 30 * time.Millisecond},                              // [0, 32 ms)
		{At: t0.Add(time.Second), Late: 50 * time.Millisecond},             // [1 s, 1.052 s)
		{At: t0.Add(1990 * time.Millisecond), Late: 25 * time.Millisecond}, // spans 2 s
	}
	for _, c := range []struct {
		from, to time.Duration
		want     int
	}{
		{0, time.Second, 1},
		{40 * time.Millisecond, time.Second, 0},
		{time.Second, 2 * time.Second, 2},
		{2 * time.Second, 3 * time.Second, 1},
		{3 * time.Second, 4 * time.Second, 0},
	} {
		if got := During(stalls, t0.Add(c.from), t0.Add(c.to)); len(got) != c.want {
			t.Errorf("During [%v, %v): %d stalls, want %d", c.from, c.to, len(got), c.want)
		}
	}
	w := WatchStalls()
	time.Sleep(50 * time.Millisecond)
	for _, s := range w.Stop() {
		if s.Late <= 20*time.Millisecond {
			t.Errorf("a stall of %v recorded (only those over 20 ms are)", s.Late)
		}
	}
	w = WatchStalls()
	time.Sleep(50 * time.Millisecond)
	for _, s := range w.StopOver5() {
		if s.Late <= 5*time.Millisecond {
			t.Errorf("a stall of %v recorded by StopOver5 (only those over 5 ms are)", s.Late)
		}
	}
	if got := Lost([]Stall{{Late: 6 * time.Millisecond}, {Late: 15 * time.Millisecond}}); got != 21*time.Millisecond {
		t.Errorf("Lost: %v, want 21ms", got)
	}
}
