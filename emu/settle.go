package emu

import (
	"runtime"
	"time"

	"golang.org/x/sys/unix"
)

// WaitNetnsSettled waits until the kernel has caught up with freeing
// deleted network namespaces (which it does asynchronously, holding the
// locks namespace creation needs), judged by three namespace creations in a
// row taking under 3 ms. It returns how long that took. Benchmarks use it so
// one run's teardown does not slow the next run's bring-up.
func WaitNetnsSettled(max time.Duration) time.Duration {
	t0 := time.Now()
	fast := 0
	for fast < 3 && time.Since(t0) < max {
		d := probeNetnsCreate()
		if d < 3*time.Millisecond {
			fast++
		} else {
			fast = 0
			time.Sleep(50 * time.Millisecond)
		}
	}
	return time.Since(t0)
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
