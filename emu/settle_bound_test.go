package emu

import (
	"testing"
	"time"
)

// TestNetnsFastCreate: the settle probe's bound is 3 ms on a normal host
// and follows the fastest creation timed on a slow one (the kernel lab
// under QEMU TCG: 3.0-3.4 ms at best, 4-5 ms typical, so a fixed 3 ms
// never passed and every suite run waited the full 120 s), capped well
// below a creation the kernel blocks (0.5-0.8 s while it frees).
func TestNetnsFastCreate(t *testing.T) {
	saved := netnsFastest.Load()
	defer netnsFastest.Store(saved)
	for _, c := range []struct{ fastest, want time.Duration }{
		{0, 3 * time.Millisecond},                        // nothing timed yet
		{300 * time.Microsecond, 3 * time.Millisecond},   // an idle host
		{3 * time.Millisecond, 12 * time.Millisecond},    // the kernel lab
		{600 * time.Millisecond, 100 * time.Millisecond}, // only blocked ones seen
	} {
		netnsFastest.Store(int64(c.fastest))
		if got := NetnsFastCreate(); got != c.want {
			t.Errorf("fastest %v: bound %v, want %v", c.fastest, got, c.want)
		}
	}
	// the probe keeps the fastest
	netnsFastest.Store(0)
	needRoot(t)
	a := probeNetnsCreate()
	b := probeNetnsCreate()
	if got := time.Duration(netnsFastest.Load()); got != min(a, b) {
		t.Errorf("after probes of %v and %v the fastest is %v", a, b, got)
	}
}
