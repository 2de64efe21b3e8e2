package emu

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/emuctl/emuctl/internal/testutil"
	"github.com/emuctl/emuctl/units"
)

// verify on a lab over two machines: a shaped cut link (8 Mbit/s, 5 ms,
// 2 % loss) and a shaped link inside machine m1 (12 Mbit/s, 3 ms) are
// measured by workers on their machines, each direction within verify's
// own bounds as on one machine; the cut's delay is the whole link's
// (underlay included), its directions carry the clock offset measured
// again just before them (the two stand-in machines share one clock: zero
// within the exchange's round trip) beside the one measured at up, the
// link inside a machine none.
func TestClusterVerify(t *testing.T) {
	needRoot(t)
	spec := clusterLab(t, "clv", "name: clv\n"+twoMachines+`
nodes:
  h1: {machine: m1}
  h2: {machine: m2}
  h3: {machine: m1}
links:
  - endpoints: [h1, h2]
    link: {rate: 8mbit, delay: 5ms, loss: 2%}
  - endpoints: [h1, h3]
    link: {rate: 12mbit, delay: 3ms}
`)
	st := clusterUp(t, spec)
	offsets := map[string]time.Duration{}
	for _, u := range st.Underlay {
		offsets[u.From+">"+u.To] = u.Offset
	}
	res := testutil.RetryStarved(t, "verify over two machines", true, func() []DirResult {
		res, err := Verify(context.Background(), "clv", VerifyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		return res
	})
	if len(res) != 4 {
		t.Fatalf("%d directions measured, want 4: %+v", len(res), res)
	}
	for _, r := range res {
		t.Logf("link %d %s (%s): delay min %v mean %v, rate %s, loss %.2f %% of %d, clock offset %v (at up %v); problems %v",
			r.Link, r.Dir, r.Backend, r.MinDelay, r.MeanDelay, r.Rate.TC(), float64(r.Loss), r.LossSent, r.ClockOffset, r.ClockOffsetUp, r.Problems)
		if !r.OK() {
			t.Errorf("link %d %s: %v", r.Link, r.Dir, r.Problems)
		}
		switch r.Link {
		case 0:
			want := offsets["m1>m2"]
			if r.Dir == "b->a" {
				want = offsets["m2>m1"]
			}
			if r.ClockOffsetUp != want || r.ClockNote != "" || r.ClockOffset.Abs() > 200*time.Microsecond || r.ClockOffset == want ||
				!strings.HasPrefix(r.Backend, "vxlan ") || r.WantRate != 8*units.Mbit || r.WantDelay != 5*time.Millisecond {
				t.Errorf("cut link %s: offset %v, at up %v (state %v), note %q, backend %q, want %v %v: want a fresh offset within 200 µs of one shared clock",
					r.Dir, r.ClockOffset, r.ClockOffsetUp, want, r.ClockNote, r.Backend, r.WantRate, r.WantDelay)
			}
		case 1:
			if r.ClockOffset != 0 || r.ClockOffsetUp != 0 || r.ClockNote != "" || r.Backend != "machine m1" {
				t.Errorf("link inside m1 %s: offset %v (at up %v, note %q), backend %q", r.Dir, r.ClockOffset, r.ClockOffsetUp, r.ClockNote, r.Backend)
			}
		}
	}
}
