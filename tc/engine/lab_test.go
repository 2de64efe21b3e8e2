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

func newEngineLab(t testing.TB, ab, ba tc.Dir, seed uint64) *engineLab {
	t.Helper()
	testutil.NeedRoot(t)
	netlab.SkipInLab(t)
	l := &engineLab{h1: netlab.NewNode(t, "h1"), e: netlab.NewNode(t, "eng"), h2: netlab.NewNode(t, "h2")}
	netlab.Veth(t, l.h1, "tct1", l.e, "tcta")
	netlab.Veth(t, l.e, "tctb", l.h2, "tct2")
	l.h1.Addr(t, "tct1", ip1+"/24")
	l.h2.Addr(t, "tct2", ip2+"/24")
	l.h1.Neigh(t, "tct1", ip2, l.h2.Link(t, "tct2").Attrs().HardwareAddr)
	l.h2.Neigh(t, "tct2", ip1, l.h1.Link(t, "tct1").Attrs().HardwareAddr)
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
	return l
}
