package emu

import (
	"os"
	"runtime"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// WaitNetnsSettled waits until the kernel has caught up with freeing
// deleted network namespaces (which it does asynchronously, holding the
// locks namespace creation needs). Two signs must agree: three namespace
// creations in a row take under 3 ms, and — where /proc/slabinfo shows the
// net_namespace cache — the count of live namespaces has stopped falling
// for 60 ms (the kernel frees in phases, with fast creations between
// them, so the probe alone says "settled" too early). It returns how long
// that took. Benchmarks and the suite runner use it so one lab's teardown
// does not slow the next one's bring-up.
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
			if probeNetnsCreate() < 3*time.Millisecond {
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

func probeNetnsCreate() time.Duration {
	ch := make(chan time.Duration, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread dies with its namespace
		t := time.Now()
		unix.Unshare(unix.CLONE_NEWNET)
		ch <- time.Since(t)
	}()
	return <-ch
}
