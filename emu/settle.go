package emu

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// WaitNetnsSettled waits until the kernel has caught up with freeing
// deleted network namespaces (which it does asynchronously, holding the
// locks namespace creation needs). Two signs must agree: three namespace
// creations in a row are fast (NetnsFastCreate: under 3 ms, or on a slow
// machine under 4 × the fastest creation this process has seen), and —
// where /proc/slabinfo shows the net_namespace cache — the count of live
// namespaces has stopped falling for 60 ms (the kernel frees in phases,
// with fast creations between them, so the probe alone says "settled" too
// early). It returns how long that took. Benchmarks and the suite runner
// use it so one lab's teardown does not slow the next one's bring-up.
func WaitNetnsSettled(max time.Duration) time.Duration {
	const every = 30 * time.Millisecond
	t0 := time.Now()
	fast, stable := 0, 0
	last, haveSlab := netnsObjects()
	if !haveSlab {
		stable = 2
	}
	for time.Since(t0) < max {
		if fast < 3 {
			if probeNetnsCreate() < NetnsFastCreate() {
				fast++
				continue
			}
			fast = 0
		}
		if fast >= 3 && stable >= 2 {
			break
		}
		time.Sleep(every)
		if haveSlab {
			n, _ := netnsObjects()
			// The probes' own namespaces are freed too (up to three per
			// look): only a larger fall means the kernel is still
			// freeing a lab (11,000 namespaces fall by ~12 per 30 ms).
			if n < last-3 {
				stable, fast = 0, 0
			} else {
				stable++
			}
			last = n
		}
	}
	return time.Since(t0)
}

// netnsObjects returns the active objects of the net_namespace slab cache.
func netnsObjects() (int, bool) {
	b, err := os.ReadFile("/proc/slabinfo")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) > 2 && f[0] == "net_namespace" {
			n, err := strconv.Atoi(f[1])
			return n, err == nil
		}
	}
	return 0, false
}

// netnsFastest is the fastest namespace creation the probe has timed in
// this process (ns; 0: none yet).
var netnsFastest atomic.Int64

// Creating a namespace takes 0.2-1 ms on an idle host and blocks for
// 0.5-0.8 s at a time while the kernel frees deleted ones. Under software
// emulation (the kernel lab: QEMU TCG) an idle creation alone takes
// several ms, so a fixed bound would never pass there: the bound is 3 ms
// or, where even the fastest creation seen is slower than that allows,
// netnsSlowFactor × the fastest, at most netnsSlowCap — still far below a
// blocked creation, even if the first ones timed were blocked.
const (
	netnsFastBound  = 3 * time.Millisecond
	netnsSlowFactor = 4
	netnsSlowCap    = 100 * time.Millisecond
)

// NetnsFastCreate is the bound under which WaitNetnsSettled's probe counts
// a namespace creation as fast: netnsFastBound, or netnsSlowFactor × the
// fastest creation timed so far if that is more (at most netnsSlowCap).
func NetnsFastCreate() time.Duration {
	return min(netnsSlowCap, max(netnsFastBound, netnsSlowFactor*time.Duration(netnsFastest.Load())))
}

func probeNetnsCreate() time.Duration {
	ch := make(chan time.Duration, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with its namespace
		t := time.Now()
		err := unix.Unshare(unix.CLONE_NEWNET)
		d := time.Since(t)
		if err == nil {
			for {
				f := netnsFastest.Load()
				if (f != 0 && f <= int64(d)) || netnsFastest.CompareAndSwap(f, int64(d)) {
					break
				}
			}
		}
		ch <- d
	}()
	return <-ch
}
