package traffic

import (
	"fmt"
	"path/filepath"
	"runtime"

	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/topo"
	"github.com/vishvananda/netns"
)

// inNode runs fn on a fresh OS thread inside a node's network namespace.
// Sockets fn opens stay in that namespace and may be used from any
// goroutine afterwards. If switching back fails the thread stays locked,
// so the runtime discards it rather than reuse it in the wrong namespace.
func inNode(lab, node string, fn func() error) error {
	path := filepath.Join(emu.NetnsDir, topo.Namespace(lab, node))
	ns, err := netns.GetFromPath(path)
	if err != nil {
		return fmt.Errorf("node %s: namespace %s: %w", node, path, err)
	}
	defer ns.Close()
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := netns.Get()
		if err != nil {
			errc <- err
			return
		}
		defer orig.Close()
		if err := netns.Set(ns); err != nil {
			errc <- fmt.Errorf("enter node %s: %w", node, err)
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
