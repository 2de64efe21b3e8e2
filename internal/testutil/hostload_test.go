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
	if busy.Busy <= idle.Busy || busy.Busy <= 0 || idle.Stall < 0 || busy.Stall < 0 {
		t.Errorf("sleeping %+v, spinning %+v", idle, busy)
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
}
