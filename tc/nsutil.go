package tc

import (
	"fmt"
	"runtime"

	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// inNS runs fn on a fresh OS thread switched into ns (netns.None() = the
// caller's namespace). Sockets fn opens stay in ns and may be used from any
// goroutine afterwards. If switching back fails the thread stays locked so
// the runtime discards it instead of reusing it in the wrong namespace.
func inNS(ns netns.NsHandle, fn func() error) error {
	if !ns.IsOpen() {
		return fn()
	}
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := netns.Get()
		if err != nil {
			errc <- fmt.Errorf("current netns: %w", err)
			return
		}
		defer orig.Close()
		if err := netns.Set(ns); err != nil {
			errc <- fmt.Errorf("setns: %w", err)
			return
		}
		ferr := fn()
		if netns.Set(orig) == nil {
			runtime.UnlockOSThread()
		}
		errc <- ferr
	}()
	return <-errc
}

// inThrowawayNS runs fn on a thread inside a new, empty network namespace
// that disappears when fn returns. The thread is never unlocked, so the
// runtime ends it with the goroutine and the namespace goes with it.
func inThrowawayNS(fn func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			errc <- fmt.Errorf("unshare network namespace: %w", err)
			return
		}
		errc <- fn()
	}()
	return <-errc
}
