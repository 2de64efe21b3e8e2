package emu

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/emuctl/emuctl/topo"
)

// constantTrace writes a mahimahi trace with one delivery opportunity a
// millisecond (1504 bytes each: one full frame, 12.03 Mbit/s of IP) and
// returns its path.
func constantTrace(t *testing.T) string {
	t.Helper()
	var b strings.Builder
	for ms := 1; ms <= 1000; ms++ {
		fmt.Fprintf(&b, "%d\n", ms)
	}
	path := filepath.Join(t.TempDir(), "const12.trace")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// A traced link added to a running lab replays its trace on the link
// engine from the moment it comes up, carries TCP at the trace's
// capacity, is written out by the lab's topology, and goes without a
// trace of it when removed — by link del or with its node.
func TestChangeAddTracedLink(t *testing.T) {
	needRoot(t)
	ctx := context.Background()
	trace := constantTrace(t)
	spec := loadYAML(t, "tctr", "name: tctr\naddressing: {p2p_prefix: 24}\nnodes: {h1: {}, h2: {}, s1: {kind: switch}}\nlinks:\n  - endpoints: [h1, s1]\n  - endpoints: [h2, s1]\n")
	up(t, spec, Options{})
	before := labObjects("tctr")
	if _, err := AddNode(ctx, "tctr", topo.NodeRequest{Name: "h3"}, Options{}); err != nil {
		t.Fatal(err)
	}
	// bad input changes nothing: a missing file, a trace that is not one,
	// a backend that cannot replay it
	bad := filepath.Join(filepath.Dir(trace), "bad.trace")
	os.WriteFile(bad, []byte("5\n3\n"), 0o644)
	mid := labObjects("tctr")
	for _, c := range []struct{ entry, want string }{
		{"{link: {trace: /nonexistent/up.trace}}", `trace file "/nonexistent/up.trace" not found (looked in: /nonexistent/up.trace)`},
		{"{link: {trace: " + bad + "}}", bad + ":2:1"},
		{"{link: {trace: " + trace + ", backend: kernel}}", "backend: kernel cannot replay a trace"},
	} {
		_, err := AddLink(ctx, "tctr", topo.LinkRequest{A: "h3", B: "s1", Entry: c.entry}, Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("link add %s: %v, want an error with %q", c.entry, err, c.want)
		} else {
			t.Logf("refused: %v", err)
		}
	}
	if got := labObjects("tctr"); strings.Join(got, ",") != strings.Join(mid, ",") {
		t.Fatalf("a refused add changed the host: %v, was %v", got, mid)
	}

	t0 := time.Now()
	st, err := AddLink(ctx, "tctr", topo.LinkRequest{A: "h3", B: "s1", Entry: "{link: {trace: {file: " + trace + "}, queue: 100}}"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t1 := time.Now()
	li := len(st.Spec.Links) - 1
	ls, ok := findLinkState(st.Links, li)
	if !ok || ls.Backend != BackendEngine || ls.Netns == "" || ls.BtoA.Trace == nil {
		t.Fatalf("the traced link's recorded shaping: %+v", ls)
	}
	// the replay's clock started when the link came up (the engine's
	// start, inside AddLink): the opportunities offered so far are those
	// of the time since then, one a millisecond — at least those since
	// the add returned up to when link show began (its counters are read
	// somewhere between then and its return), at most those since the
	// add began
	time.Sleep(50 * time.Millisecond)
	tb := time.Now()
	infos, err := ShowLinks("tctr")
	t2 := time.Now()
	if err != nil || len(infos) != 3 || infos[li].Stats == nil {
		t.Fatalf("link show: %v %+v", err, infos)
	}
	opps := infos[li].Stats.BToA.TraceOpps
	lo, hi := uint64(tb.Sub(t1)/time.Millisecond), uint64(t2.Sub(t0)/time.Millisecond)+1
	t.Logf("added in %v; %d opportunities offered by link show, which began %v and returned %v after the add returned (%d..%d)", t1.Sub(t0), opps, tb.Sub(t1), t2.Sub(t1), lo, hi)
	if opps < lo || opps > hi {
		t.Errorf("the trace offered %d opportunities by link show, want %d..%d: its replay did not start when the link came up", opps, lo, hi)
	}
	if tr := infos[li].BtoA.Trace; tr == nil || tr.File != trace || len(tr.Ms) > 0 {
		t.Errorf("link show's b->a trace: %+v (want the file, no opportunities)", tr)
	}
	// capacity: 1000 opportunities a second, one 1514-byte frame each
	// (1448 bytes of TCP payload)
	want := 1000 * 1448 * 8.0
	got := bulk(t, "tctr", "h1", "h3", 5*time.Second, 2*time.Second, "cubic", nil)
	ratio := got / want
	t.Logf("goodput over the added traced link %.3f Mbit/s = %.3f x the trace's %.3f Mbit/s of payload", got/1e6, ratio, want/1e6)
	if ratio < 0.93 || ratio > 1.02 {
		t.Errorf("goodput %.3f x the trace's capacity (want 0.93..1.02)", ratio)
	}
	// the lab as it stands names the trace file; up accepts it
	doc, err := Topology("tctr")
	if err != nil || !strings.Contains(string(doc), trace) {
		t.Fatalf("topology: %v\n%s", err, doc)
	}
	path := filepath.Join(t.TempDir(), "again.yaml")
	os.WriteFile(path, doc, 0o644)
	again, err := topo.LoadFile(path)
	if err != nil {
		t.Fatalf("the written topology: %v\n%s", err, doc)
	}
	if tr := again.Links[li].Params.Dir(false).Trace; tr == nil || tr.File != trace || len(tr.Ms) != 1000 {
		t.Errorf("the written topology's link %d replays %+v", li, tr)
	}

	// link del: the engine and its namespace go
	if _, err := RemoveLink(ctx, "tctr", li, Options{}); err != nil {
		t.Fatal(err)
	}
	if netnsExists(ls.Netns) {
		t.Errorf("the removed link's engine namespace %s is still there", ls.Netns)
	}
	if got := labObjects("tctr"); strings.Join(got, ",") != strings.Join(mid, ",") {
		t.Errorf("after link del: %v, want %v", got, mid)
	}
	// node del of a node with a traced link: the same
	st, err = AddLink(ctx, "tctr", topo.LinkRequest{A: "h3", B: "s1", Entry: "{link: {trace: " + trace + "}}"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	ls, _ = findLinkState(st.Links, len(st.Spec.Links)-1)
	if rtt := minRTT(t, "tctr", "h1", "h3"); rtt <= 0 {
		t.Errorf("h1 -> h3 over the traced link again: %v", rtt)
	}
	if _, err := RemoveNode(ctx, "tctr", "h3", Options{}); err != nil {
		t.Fatal(err)
	}
	if netnsExists(ls.Netns) {
		t.Errorf("the engine namespace %s of h3's traced link is still there", ls.Netns)
	}
	if got := labObjects("tctr"); strings.Join(got, ",") != strings.Join(before, ",") {
		t.Errorf("after node del: %v, want %v", got, before)
	}
	// down removes a traced link added at run time
	if _, err := AddNode(ctx, "tctr", topo.NodeRequest{Name: "h4"}, Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := AddLink(ctx, "tctr", topo.LinkRequest{A: "h4", B: "s1", Entry: "{link: {a->b: {trace: " + trace + "}, b->a: {trace: {file: " + trace + ", loop: false, offset: 200ms}}}}"}, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := Down("tctr", nil); err != nil {
		t.Fatal(err)
	}
	requireGone(t, "tctr")
}
