package engine

import (
	"context"
	"testing"
	"time"

	"github.com/emuctl/emuctl/internal/testutil"
	"github.com/emuctl/emuctl/internal/testutil/netlab"
	"github.com/emuctl/emuctl/tc"
)

// engineLab is h1 (tct1, 10.9.0.1) <-> [tcta engine tctb] <-> h2 (tct2, 10.9.0.2).
type engineLab struct {
	h1, e, h2 *netlab.Node
	eng       *Engine
	done      chan error
}

const ip1, ip2 = "10.9.0.1", "10.9.0.2"

// engineNodes builds h1 (tct1, ip1) <-> eng (tcta, tctb) <-> h2 (tct2,
// ip2) with static ARP entries (loss never hits ARP), for an engine on
// tcta/tctb; it skips without root and in the kernel lab.
func engineNodes(t testing.TB) (h1, e, h2 *netlab.Node) {
	t.Helper()
	testutil.NeedRoot(t)
	netlab.SkipInLab(t)
	return labNodes(t)
}

// labNodes is engineNodes without its gates, for the tests that compare
// the engine with the kernel inside the lab.
func labNodes(t testing.TB) (h1, e, h2 *netlab.Node) {
	t.Helper()
	h1, e, h2 = netlab.NewNode(t, "h1"), netlab.NewNode(t, "eng"), netlab.NewNode(t, "h2")
	netlab.Veth(t, h1, "tct1", e, "tcta")
	netlab.Veth(t, e, "tctb", h2, "tct2")
	h1.Addr(t, "tct1", ip1+"/24")
	h2.Addr(t, "tct2", ip2+"/24")
	h1.Neigh(t, "tct1", ip2, h2.Link(t, "tct2").Attrs().HardwareAddr)
	h2.Neigh(t, "tct2", ip1, h1.Link(t, "tct1").Attrs().HardwareAddr)
	return h1, e, h2
}

func newEngineLab(t testing.TB, ab, ba tc.Dir, seed uint64) *engineLab {
	t.Helper()
	l := &engineLab{}
	l.h1, l.e, l.h2 = engineNodes(t)
	l.start(t, ab, ba, seed)
	return l
}

// start runs an engine on eng's tcta/tctb until the test ends.
func (l *engineLab) start(t testing.TB, ab, ba tc.Dir, seed uint64) {
	t.Helper()
	eng, err := New(l.e.NS, "tcta", "tctb", ab, ba, seed)
	if err != nil {
		t.Fatalf("engine.New: %v", err)
	}
	l.eng = eng
	ctx, cancel := context.WithCancel(context.Background())
	l.done = make(chan error, 1)
	go func() { l.done <- eng.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-l.done:
			if err != nil {
				t.Errorf("engine Run: %v", err)
			}
		case <-time.After(5 * time.Second):
			t.Errorf("engine did not stop within 5 s")
		}
	})
}
