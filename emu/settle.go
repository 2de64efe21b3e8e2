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
// for 300 ms (the kernel frees in phases, with fast creations between
// them, so the probe alone says "settled" too early). It returns how long
// that took. Benchmarks and the suite runner use it so one lab's teardown
// does not slow the next one's bring-up.
func WaitNetnsSettled(max time.Duration) time.Duration {
	t0 := time.Now()
	fast, stable := 0, 0
	last, haveSlab := netnsObjects()
	if !haveSlab {
		stable = 3
	}
	for (fast < 3 || stable < 3) && time.Since(t0) < max {
		if fast < 3 {
			if probeNetnsCreate() < 3*time.Millisecond {
				fast++
			} else {
				fast = 0
			}
		}
		if fast >= 3 && stable >= 3 {
			break
		}
		time.Sleep(100 * time.Millisecond)
		if haveSlab {
			n, _ := netnsObjects()
			// The probe's own namespaces are freed too (one per probe):
			// only a larger fall means the kernel is still freeing a lab.
			if n < last-2 {
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
