//go:build linux

package tc

import (
	"fmt"
	"runtime"

	"golang.org/x/sys/unix"
)

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
