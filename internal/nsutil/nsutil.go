// Package nsutil runs code inside a network namespace the one safe way Go
// allows, so every package that opens sockets or reads /proc/sys inside a
// node shares it.
package nsutil

import (
	"fmt"
	"runtime"

	"github.com/emuctl/emuctl/internal/sysctl"
	"github.com/vishvananda/netns"
)

// Do runs fn on a fresh OS thread switched into ns; a closed handle
// (netns.None()) runs fn in the caller's namespace. Sockets fn opens stay in
// ns and may be used from any goroutine afterwards; goroutines fn starts do
// not run in ns. If switching back fails the thread stays locked, so the
// runtime discards it instead of reusing it in the wrong namespace.
func Do(ns netns.NsHandle, fn func() error) error {
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
		end := sysctl.Begin() // a private procfs for this namespace's sysctls
		ferr := fn()
		end()
		if netns.Set(orig) == nil {
			runtime.UnlockOSThread()
		}
		errc <- ferr
	}()
	return <-errc
}

// DoPath is Do for the namespace mounted at path ("" = the caller's).
func DoPath(path string, fn func() error) error {
	if path == "" {
		return fn()
	}
	ns, err := netns.GetFromPath(path)
	if err != nil {
		return fmt.Errorf("namespace %s: %w", path, err)
	}
	defer ns.Close()
	return Do(ns, fn)
}
