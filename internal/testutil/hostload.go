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
	// Lost is how long the timer's goroutine was held off the CPU in
	// all: the sum of its lateness over the wakes more than 5 ms late
	// (many stalls under 20 ms add up: the queue of a shaped link holds
	// a few ms, so each one empties it).
	Lost time.Duration
	// Steal is the largest share of one CPU's time the hypervisor gave to
	// other machines (/proc/stat's steal): a vCPU held off runs nothing,
	// and a timer on the other vCPU does not see it.
	Steal float64
	// Dur is how long the run took.
	Dur time.Duration
}

// Starved reports whether the run lacked CPU — the machine more than
// 90 % busy, a stall over 20 ms (the suites' bounds), more than 2 % of
// the run lost to stalls, or more than 2 % of a CPU stolen by the
// hypervisor (under half the 5 % a goodput bound allows) — and says how.
// With fills, the measurement itself may keep every core busy (a flow
// through the userspace link engine at tens of Mbit/s), so only a stall
// makes it invalid.
func (l HostLoad) Starved(fills bool) (bool, string) {
	switch {
	case l.Busy > 0.90 && !fills:
		return true, fmt.Sprintf("the machine was %.0f %% busy (all cores; > 90 %%)", 100*l.Busy)
	case l.Stall > 20*time.Millisecond:
		return true, fmt.Sprintf("a 2 ms timer woke %v late (> 20 ms)", l.Stall.Round(100*time.Microsecond))
	case l.Dur > 0 && l.Lost > l.Dur/50:
		return true, fmt.Sprintf("stalls took %v of the %v run (> 2 %%)", l.Lost.Round(100*time.Microsecond), l.Dur.Round(time.Millisecond))
	case l.Steal > 0.02:
		return true, fmt.Sprintf("the hypervisor stole %.1f %% of a CPU (> 2 %%)", 100*l.Steal)
	}
	return false, ""
}

func (l HostLoad) String() string {
	return fmt.Sprintf("machine %.0f %% busy, longest stall %v, stalls %v in all, steal %.1f %%", 100*l.Busy,
		l.Stall.Round(100*time.Microsecond), l.Lost.Round(100*time.Microsecond), 100*l.Steal)
}

// MeasureHost runs fn and returns the host's load meanwhile.
func MeasureHost(fn func()) HostLoad {
	c0 := cpuTimes()
	start := time.Now()
	w := WatchStalls()
	fn()
	r := w.stop()
	l := HostLoad{Stall: r.worst, Lost: r.lost, Dur: time.Since(start)}
	c1 := cpuTimes()
	if c1.total > c0.total {
		l.Busy = float64(c1.busy-c0.busy) / float64(c1.total-c0.total)
	}
	for i := range min(len(c0.cpus), len(c1.cpus)) {
		a, b := c0.cpus[i], c1.cpus[i]
		// less one jiffy: /proc/stat counts whole ticks, and one tick
		// of a short run (0-20 ms in 10) is no measure of it
		if stolen := b.steal - a.steal; b.total > a.total && stolen > 1 {
			l.Steal = max(l.Steal, float64(stolen-1)/float64(b.total-a.total))
		}
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
			t.Skipf("%s: invalid twice, not judged: %s (%v; it measured %v)", what, why, l, v)
		}
		t.Logf("%s: invalid (%s; %v; it measured %v): measuring once more", what, why, l, v)
	}
}

// testingT is the part of testing.TB RetryStarved uses.
type testingT interface {
	Helper()
	Logf(format string, args ...any)
	Skipf(format string, args ...any)
}

// cpuStat is /proc/stat in jiffies: the machine's busy and total time,
// and each CPU's steal and total time.
type cpuStat struct {
	busy, total uint64
	cpus        []struct{ steal, total uint64 }
}

func cpuTimes() cpuStat {
	var c cpuStat
	f, err := os.Open("/proc/stat")
	if err != nil {
		return c
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 9 || !strings.HasPrefix(fields[0], "cpu") {
			continue
		}
		var busy, total uint64
		for i, s := range fields[1:] {
			v, _ := strconv.ParseUint(s, 10, 64)
			if i >= 8 { // guest time is counted in user already
				break
			}
			total += v
			if i != 3 && i != 4 { // idle, iowait
				busy += v
			}
		}
		if fields[0] == "cpu" {
			c.busy, c.total = busy, total
			continue
		}
		steal, _ := strconv.ParseUint(fields[8], 10, 64)
		c.cpus = append(c.cpus, struct{ steal, total uint64 }{steal, total})
	}
	return c
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

// watched is what a watch saw: the longest stall, the time lost to
// those over 5 ms, those over 20 ms, and those over 5 ms.
type watched struct {
	worst, lost time.Duration
	stalls      []Stall
	over5       []Stall
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
				if late > 5*time.Millisecond {
					r.lost += late
					r.over5 = append(r.over5, Stall{At: t, Late: late})
				}
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

// StopOver5 ends the watch and returns every stall over 5 ms, oldest
// first: with Lost, a part of the run is judged as HostLoad.Starved
// judges a whole one (stalls over 5 ms taking more than 2 % of it).
func (w *StallWatch) StopOver5() []Stall { return w.stop().over5 }

// Lost is the time the stalls took.
func Lost(stalls []Stall) time.Duration {
	var d time.Duration
	for _, s := range stalls {
		d += s.Late
	}
	return d
}

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

// Timed reads a counter (bytes a kernel received, say) and the time of
// the read: the middle of a read that took under 1 ms. A read the reader
// was held off the CPU during is made again (up to 5 times; then the
// last is returned): its time could be anywhere in the stall, and a goodput
// window whose start was stamped 80 ms late read 1.027 × capacity.
func Timed(read func() int64) (int64, time.Time) {
	var n int64
	var at time.Time
	for range 5 {
		t0 := time.Now()
		n = read()
		t1 := time.Now()
		at = t0.Add(t1.Sub(t0) / 2)
		if t1.Sub(t0) < time.Millisecond {
			break
		}
	}
	return n, at
}
