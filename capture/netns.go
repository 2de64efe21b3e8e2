package capture

import (
	"fmt"
	"runtime"

	"github.com/vishvananda/netns"
)

// inNetns runs fn on a fresh OS thread switched into the network namespace
// mounted at path ("" runs fn in the caller's namespace). If switching back
// fails the thread stays locked, so the runtime discards it instead of
// reusing a thread in the wrong namespace.
func inNetns(path string, fn func() error) error {
	if path == "" {
		return fn()
	}
	target, err := netns.GetFromPath(path)
	if err != nil {
		return fmt.Errorf("namespace %s: %w", path, err)
	}
	defer target.Close()
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := netns.Get()
		if err != nil {
			errc <- err
			return
		}
		defer orig.Close()
		if err := netns.Set(target); err != nil {
			errc <- fmt.Errorf("setns %s: %w", path, err)
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
