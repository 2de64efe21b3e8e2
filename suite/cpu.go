package suite

import (
	"bufio"
	"context"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// cpuLoad is the host's CPU load during a run: Max is the busiest core's
// busy share (0..1) over the whole traffic period, Peak the busiest
// core in any one-second sample. Mininet-HiFi's lesson: an emulator that
// runs out of CPU produces numbers that look plausible and are wrong, so
// a saturated core marks the run invalid.
type cpuLoad struct {
	Max, Peak float64
	// Total is the whole machine's busy share (all cores together).
	Total float64
	OK    bool
	// StallMs is the longest a 2 ms timer woke late during the run: a
	// host that stops scheduling the emulator (CPU contention, a VM's
	// steal) shows here, as it would in every delay measured.
	StallMs float64
	// Stalls are the spans (wall clock) in which that timer woke more
	// than stallSpanMin late, for leaving the delay samples they overlap
	// out of the delay bounds (analysis/stalls.go). Not serialised.
	Stalls []stallSpan `json:"-"`
}

// stallSpan is one span in which the host did not schedule the runner.
type stallSpan struct{ from, to time.Time }

// stallSpanMin is the lateness from which a stall span is recorded: below
// it, the delay bounds' own 2 ms allowance for a userspace link covers it.
const stallSpanMin = 2 * time.Millisecond

// maxStallSpans bounds the spans kept per run (a host that stalls more
// often than that fails the fidelity checks anyway).
const maxStallSpans = 4096

// cpuTimes is one core's busy and total jiffies.
type cpuTimes struct{ busy, total uint64 }

// readCPU reads per-core times from /proc/stat.
func readCPU() map[string]cpuTimes {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return nil
	}
	defer f.Close()
	out := map[string]cpuTimes{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 8 || !strings.HasPrefix(fields[0], "cpu") {
			continue
		}
		var t cpuTimes
		for i, s := range fields[1:] {
			v, _ := strconv.ParseUint(s, 10, 64)
			if i >= 8 { // guest times are already in user/nice
				break
			}
			t.total += v
			if i != 3 && i != 4 { // idle, iowait
				t.busy += v
			}
		}
		out[fields[0]] = t
	}
	return out
}

// busiest returns the largest busy share (0..1) of any core between
// two readings.
func busiest(a, b map[string]cpuTimes) (float64, bool) {
	best, ok := 0.0, false
	for k, tb := range b {
		if k == "cpu" {
			continue // the machine's total, see total
		}
		ta, found := a[k]
		if !found || tb.total <= ta.total {
			continue
		}
		share := float64(tb.busy-ta.busy) / float64(tb.total-ta.total)
		if share > best {
			best = share
		}
		ok = true
	}
	return best, ok
}

// total returns the machine's busy share (0..1), all cores together.
func total(a, b map[string]cpuTimes) (float64, bool) {
	ta, tb := a["cpu"], b["cpu"]
	if tb.total <= ta.total {
		return 0, false
	}
	return float64(tb.busy-ta.busy) / float64(tb.total-ta.total), true
}

// cpuMonitor samples /proc/stat every second until stopped.
type cpuMonitor struct {
	start  map[string]cpuTimes
	mu     sync.Mutex
	peak   float64
	stall  time.Duration
	spans  []stallSpan
	cancel context.CancelFunc
	done   chan struct{}
}

func startCPU() *cpuMonitor {
	ctx, cancel := context.WithCancel(context.Background())
	m := &cpuMonitor{start: readCPU(), cancel: cancel, done: make(chan struct{})}
	stallDone := make(chan struct{})
	go func() {
		defer close(stallDone)
		const tick = 2 * time.Millisecond
		for ctx.Err() == nil {
			t0 := time.Now()
			time.Sleep(tick)
			now := time.Now()
			if late := now.Sub(t0) - tick; late > 0 {
				m.mu.Lock()
				m.stall = max(m.stall, late)
				if late > stallSpanMin && len(m.spans) < maxStallSpans {
					m.spans = append(m.spans, stallSpan{from: t0.Add(tick), to: now})
				}
				m.mu.Unlock()
			}
		}
	}()
	go func() {
		defer func() { <-stallDone }()
		defer close(m.done)
		prev := m.start
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				cur := readCPU()
				if b, ok := busiest(prev, cur); ok {
					m.mu.Lock()
					m.peak = max(m.peak, b)
					m.mu.Unlock()
				}
				prev = cur
			}
		}
	}()
	return m
}

func (m *cpuMonitor) stop() cpuLoad {
	m.cancel()
	<-m.done
	end := readCPU()
	mx, ok := busiest(m.start, end)
	tot, _ := total(m.start, end)
	m.mu.Lock()
	defer m.mu.Unlock()
	return cpuLoad{Max: mx, Peak: max(m.peak, mx), Total: tot, OK: ok, StallMs: float64(m.stall) / float64(time.Millisecond),
		Stalls: m.spans}
}
