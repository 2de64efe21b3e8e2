package testutil

import (
	"runtime"
	"testing"

	"github.com/vishvananda/netns"
)

// NewNetns creates an anonymous network namespace and returns a handle to
// it, closed when t ends (the kernel frees the namespace with its last
// reference). The thread that created it is never unlocked: it is in the
// new namespace, so the runtime discards it rather than reuse it.
func NewNetns(t testing.TB) netns.NsHandle {
	t.Helper()
	NeedRoot(t)
	return newNetns(t, "", netns.New)
}

// NewNamedNetns creates a network namespace named name in /run/netns (so
// `ip netns exec` can start processes in it, with that namespace's /sys)
// and returns a handle to it; when t ends the handle is closed and the
// name deleted.
func NewNamedNetns(t testing.TB, name string) netns.NsHandle {
	t.Helper()
	NeedRoot(t)
	h := newNetns(t, name, func() (netns.NsHandle, error) { return netns.NewNamed(name) })
	t.Cleanup(func() {
		if err := netns.DeleteNamed(name); err != nil {
			t.Errorf("delete netns %s: %v", name, err)
		}
	})
	return h
}

func newNetns(t testing.TB, name string, create func() (netns.NsHandle, error)) netns.NsHandle {
	t.Helper()
	type res struct {
		h   netns.NsHandle
		err error
	}
	ch := make(chan res, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread is in the new namespace
		h, err := create()
		ch <- res{h, err}
	}()
	r := <-ch
	if r.err != nil {
		t.Fatalf("create netns %s: %v", name, r.err)
	}
	t.Cleanup(func() { r.h.Close() })
	return r.h
}
