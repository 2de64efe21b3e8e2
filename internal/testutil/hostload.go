package testutil

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// HostLoad is how the machine fared while a timed test ran: a shared,
// noisy machine makes a run invalid rather than loosening a physics bound
// (the suites' fidelity checks C7 and C7b, for tests).
type HostLoad struct {
	// Busy is the whole machine's busy share (all cores together, 0..1).
	Busy float64
	// Stall is the longest a 2 ms timer woke late.
	Stall time.Duration
}

// Starved reports whether the run lacked CPU — the machine more than
// 90 % busy, or a stall over 20 ms (the suites' bounds) — and says how.
// With fills, the measurement itself may keep every core busy (a flow
// through the userspace link engine at tens of Mbit/s), so only a stall
// makes it invalid.
func (l HostLoad) Starved(fills bool) (bool, string) {
	switch {
	case l.Busy > 0.90 && !fills:
		return true, fmt.Sprintf("the machine was %.0f %% busy (all cores; > 90 %%)", 100*l.Busy)
	case l.Stall > 20*time.Millisecond:
		return true, fmt.Sprintf("a 2 ms timer woke %v late (> 20 ms)", l.Stall.Round(100*time.Microsecond))
	}
	return false, ""
}

func (l HostLoad) String() string {
	return fmt.Sprintf("machine %.0f %% busy, longest stall %v", 100*l.Busy, l.Stall.Round(100*time.Microsecond))
}

// MeasureHost runs fn and returns the host's load meanwhile.
func MeasureHost(fn func()) HostLoad {
	b0, t0 := cpuTotal()
	w := WatchStalls()
	fn()
	l := HostLoad{Stall: w.stop().worst}
	b1, t1 := cpuTotal()
	if t1 > t0 {
		l.Busy = float64(b1-b0) / float64(t1-t0)
	}
	return l
}

// RetryStarved runs a timed measurement up to twice: when the first run
// lacked CPU (HostLoad.Starved, fills as there) it is logged and made once
// more; when the second lacked it too the test is skipped as invalid
// (never judged on a starved run). It returns what the valid run's fn
// returned.
func RetryStarved[T any](t testingT, what string, fills bool, fn func() T) T {
	t.Helper()
	for try := 1; ; try++ {
		var v T
		l := MeasureHost(func() { v = fn() })
		starved, why := l.Starved(fills)
		if !starved {
			t.Logf("%s: %v", what, l)
			return v
		}
		if try == 2 {
			t.Skipf("%s: invalid twice, not judged: %s (%v)", what, why, l)
		}
		t.Logf("%s: invalid (%s; %v): measuring once more", what, why, l)
	}
}

// testingT is the part of testing.TB RetryStarved uses.
type testingT interface {
	Helper()
	Logf(format string, args ...any)
	Skipf(format string, args ...any)
}

// cpuTotal is the machine's busy and total jiffies (/proc/stat's cpu line).
func cpuTotal() (busy, total uint64) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return 0, 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 5 || fields[0] != "cpu" {
			continue
		}
		for i, s := range fields[1:] {
			v, _ := strconv.ParseUint(s, 10, 64)
			total += v
			if i != 3 && i != 4 { // idle, iowait
				busy += v
			}
		}
		return busy, total
	}
	return 0, 0
}

// Stall is a moment the test process was held off the CPU: a 2 ms timer
// that woke Late late, at At.
type Stall struct {
	At   time.Time
	Late time.Duration
}

// StallWatch records the stalls over 20 ms (HostLoad.Starved's bound)
// while a timed measurement runs, so that a test can leave unjudged the
// part of it that lacked CPU rather than the whole run.
type StallWatch struct {
	done chan struct{}
	res  chan watched
}

// watched is what a watch saw: the longest stall, and those over 20 ms.
type watched struct {
	worst  time.Duration
	stalls []Stall
}

// WatchStalls starts watching; Stop ends it and returns the stalls.
func WatchStalls() *StallWatch {
	w := &StallWatch{done: make(chan struct{}), res: make(chan watched, 1)}
	go func() {
		var r watched
		const tick = 2 * time.Millisecond
		for {
			t := time.Now()
			select {
			case <-w.done:
				w.res <- r
				return
			case <-time.After(tick):
				late := time.Since(t) - tick
				r.worst = max(r.worst, late)
				if late > 20*time.Millisecond {
					r.stalls = append(r.stalls, Stall{At: t, Late: late})
				}
			}
		}
	}()
	return w
}

// Stop ends the watch and returns the stalls seen, oldest first.
func (w *StallWatch) Stop() []Stall { return w.stop().stalls }

func (w *StallWatch) stop() watched {
	close(w.done)
	return <-w.res
}

// During returns the stalls that overlap [from, to).
func During(stalls []Stall, from, to time.Time) []Stall {
	var in []Stall
	for _, s := range stalls {
		if s.At.Before(to) && s.At.Add(s.Late+2*time.Millisecond).After(from) {
			in = append(in, s)
		}
	}
	return in
}
