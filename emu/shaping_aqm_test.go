package emu

import (
	"strings"
	"testing"

	"github.com/emuctl/emuctl/tc"
	"github.com/emuctl/emuctl/topo"
)

// TestPlanLinksDisciplines: backend: auto takes the kernel only where it
// has netem and the discipline's qdisc, else the engine; a pinned backend
// that cannot run the queue is refused at the queue's position; the
// engine never takes cake.
func TestPlanLinksDisciplines(t *testing.T) {
	load := func(link string) *topo.Spec {
		t.Helper()
		s, err := topo.Load("q.yaml", []byte("version: 1\nnodes: {h1: {}, r1: {kind: router}}\nlinks:\n  - endpoints: [h1, r1]\n    link: "+link+"\n"))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	full := tc.Caps{Netem: true, TBF: true, AQM: map[string]bool{}, Reasons: map[string]string{}}
	for _, d := range tc.Disciplines {
		full.AQM[d] = true
	}
	bare := tc.Caps{TBF: true, AQM: map[string]bool{"droptail": true, "drophead": true},
		Reasons: map[string]string{"netem": "no netem here", "codel": "no codel here", "cake": "no cake here"}}
	netemOnly := tc.Caps{Netem: true, TBF: true, AQM: map[string]bool{"droptail": true}, Reasons: map[string]string{"codel": "no codel here"}}
	for _, c := range []struct {
		name, link string
		caps       tc.Caps
		backend    string
		err        string
	}{
		{"auto, kernel has it", "{rate: 10mbit, queue: {discipline: codel}}", full, BackendNetem, ""},
		{"auto, kernel lacks codel", "{rate: 10mbit, queue: {discipline: codel}}", netemOnly, BackendEngine, ""},
		{"auto, no netem", "{rate: 10mbit, queue: {discipline: fq_codel}}", bare, BackendEngine, ""},
		{"auto, red gentle goes to the engine", "{rate: 10mbit, queue: {discipline: red, gentle: true}}", full, BackendEngine, ""},
		{"auto, cake on a kernel with cake", "{rate: 10mbit, queue: {discipline: cake}}", full, BackendNetem, ""},
		{"auto, cake without", "{rate: 10mbit, queue: {discipline: cake}}", bare, "", "q.yaml:5:26: no backend can run this queue"},
		{"kernel pinned, kernel lacks codel", "{rate: 10mbit, backend: kernel, queue: {discipline: codel}}", netemOnly, "", "q.yaml:5:43: backend: kernel: a->b queue codel: this kernel has no codel qdisc (no codel here)"},
		{"userspace pinned", "{rate: 10mbit, backend: userspace, queue: {discipline: pie}}", full, BackendEngine, ""},
		{"drop-tail on a bare kernel", "{rate: 10mbit, queue: 100}", bare, BackendEngine, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			ls, errs := planLinks(load(c.link), c.caps)
			switch {
			case c.err != "":
				if len(errs) != 1 || !strings.Contains(errs[0], c.err) {
					t.Errorf("errors %q, want one containing %q", errs, c.err)
				}
			case len(errs) > 0:
				t.Errorf("errors %q", errs)
			case len(ls) != 1 || ls[0].Backend != c.backend:
				t.Errorf("links %+v, want backend %s", ls, c.backend)
			}
		})
	}
	// the discipline and its defaults reach the Dir
	ls, _ := planLinks(load("{rate: 10mbit, a->b: {queue: {discipline: red, min: 20, max: 60, ecn: true}}, b->a: {queue: fq_codel}}"), full)
	a, b := ls[0].AtoB.AQM, ls[0].BtoA.AQM
	if a == nil || a.Discipline != tc.RED || a.Min != 20*1514 || a.Max != 60*1514 || !a.ECN || b == nil || b.Discipline != tc.FQCoDel || !b.ECN {
		t.Errorf("a->b %+v, b->a %+v", a, b)
	}
}
