package emu

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/emuctl/emuctl/internal/testutil"
	"github.com/emuctl/emuctl/tc"
)

// Links that end on an ovs switch (whose ports live in the root namespace
// under emuctl's port names): verify measures them, link show reads their
// state and qdiscs, link set changes a kernel-shaped one in place, and
// link down/up pulls and plugs the cable.
func TestOVSLinkEndsVerifyShowSet(t *testing.T) {
	needOVS(t)
	spec := loadYAML(t, "tove", `name: tove
nodes:
  h1: {}
  h2: {}
  s1: {kind: switch, type: ovs}
links:
  - {endpoints: [h1, s1], link: {rate: 20mbit, delay: 5ms}}
  - {endpoints: [h2, s1], link: {rate: 10mbit, backend: kernel}}
`)
	st := up(t, spec, Options{})
	requirePingAll(t, st)
	// clean --check (Leaks) lists the lab's OVS rows while they exist
	if l := strings.Join(Leaks(), "\n"); !strings.Contains(l, "open vswitch rows of tove") {
		t.Errorf("Leaks does not list the lab's OVS rows:\n%s", l)
	}

	// judged only on a run that had the CPU: a host stall during the rate
	// train reads as a slow link (CI once: b->a 17.26 of 20 Mbit/s, while
	// every other run here measures 20.00)
	res := testutil.RetryStarved(t, "verify through OVS", true, func() []DirResult {
		res, err := Verify(context.Background(), "tove", VerifyOptions{LossProbes: 500})
		if err != nil {
			t.Fatal(err)
		}
		return res
	})
	if len(res) != 4 {
		t.Fatalf("verify measured %d directions, want 4", len(res))
	}
	for _, r := range res {
		t.Logf("%s %s (%s): delay %v rate %.2f Mbit/s loss %.2f%% problems %v", r.Name, r.Dir, r.Backend, r.MinDelay, float64(r.Rate)/1e6, r.Loss, r.Problems)
		if r.Link == 0 && !r.OK() {
			t.Errorf("link 0 %s: %v", r.Dir, r.Problems)
		}
		for _, p := range r.Problems {
			if strings.Contains(p, "measurement failed") {
				t.Errorf("link %d %s could not be measured: %s", r.Link, r.Dir, p)
			}
		}
	}

	links, err := ShowLinks("tove")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range links[:2] {
		t.Logf("link %d %s (%s/%s) %s qdiscs %v", l.Index, l.B, l.StateA, l.StateB, l.Backend, l.Qdiscs)
		if l.StateA != "up" || l.StateB != "up" {
			t.Errorf("link %d: states %s/%s, want up/up (the switch end is an OVS port in the root namespace)", l.Index, l.StateA, l.StateB)
		}
	}
	if q := strings.Join(links[1].Qdiscs, " "); !strings.Contains(q, "s1:s1-eth2") || !strings.Contains(q, "tbf") {
		t.Errorf("link 1 qdiscs %v: want the TBF on the OVS port too", links[1].Qdiscs)
	}

	// link set on the kernel-shaped link reaches the OVS port's qdiscs
	if _, err := SetLink("tove", 1, "b->a", func(d *tc.Dir) { d.Rate = 5e6 }); err != nil {
		t.Fatal(err)
	}
	links, _ = ShowLinks("tove")
	if q := strings.Join(links[1].Qdiscs, " "); !strings.Contains(q, "5Mbit") {
		t.Errorf("after link set b->a rate 5mbit: %v", links[1].Qdiscs)
	}

	// pull and plug the cable at both ends
	dst, _ := PrimaryAddr(spec.Node("h2"))
	if err := SetLinkState("tove", 1, false); err != nil {
		t.Fatal(err)
	}
	if _, err := Ping(context.Background(), "tove", "h1", dst, 500*time.Millisecond); err == nil {
		t.Error("h2 answered with its link down")
	}
	if err := SetLinkState("tove", 1, true); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		if _, err := Ping(context.Background(), "tove", "h1", dst, 500*time.Millisecond); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("h2 does not answer after link up")
		}
	}
}
