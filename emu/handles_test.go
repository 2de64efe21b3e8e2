package emu

import (
	"context"
	"os"
	"sync/atomic"
	"testing"
	"time"
)

func openFDs() int {
	ents, _ := os.ReadDir("/proc/self/fd")
	return len(ents)
}

// A deploy holds at most maxOpenNodes namespaces' handles at once: with
// the bound set to 16, a 111-node lab (which would need 222 descriptors
// held from creation to the end) stays within the bound plus what the
// workers have in hand, reopens namespaces as phases need them, and works.
func TestDescriptorsIndependentOfLabSize(t *testing.T) {
	needRoot(t)
	old := maxOpenNodes
	maxOpenNodes = 16
	defer func() { maxOpenNodes = old }()
	base := openFDs()
	var peak atomic.Int64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			if n := int64(openFDs()); n > peak.Load() {
				peak.Store(n)
			}
			select {
			case <-stop:
				return
			case <-time.After(200 * time.Microsecond):
			}
		}
	}()
	spec := gen(t, "tree,2,10", "tfd") // 111 nodes
	up(t, spec, Options{Workers: 4})
	close(stop)
	<-done
	extra := int(peak.Load()) - base
	// 2 per held node, 4 workers each holding up to three nodes (a link's
	// two ends and an engine namespace) and a few sockets, the journal,
	// the lock, the anchor.
	bound := 2*16 + 4*3*2 + 4*4 + 16
	t.Logf("%d nodes: peak %d descriptors above the %d before (bound %d; holding every node would need %d)", len(spec.Nodes), extra, base, bound, 2*len(spec.Nodes))
	if extra > bound {
		t.Errorf("peak %d extra descriptors, want <= %d", extra, bound)
	}
	// h1 reaches every host (the far ones over two switches).
	for _, h := range spec.Hosts()[1:] {
		dst, _ := PrimaryAddr(h)
		if _, err := Ping(context.Background(), "tfd", "h1", dst, 2*time.Second); err != nil {
			t.Errorf("h1 -> %s: %v", h.Name, err)
		}
	}
}
