package topo

import (
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestParseMahimahi: Pantheon's calibrated emulator lines (observatory's
// experiments.yml) parse to mahimahi's model and stage order.
func TestParseMahimahi(t *testing.T) {
	m, errs := parseMahimahi(`mm-delay 28 mm-loss uplink 0.0477 mm-link 0.57mbps-poisson.trace 0.57mbps-poisson.trace --uplink-queue=droptail --uplink-queue-args="packets=14"`)
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if m.delay != 28*time.Millisecond || m.upLoss != 4.77 || m.dnLoss != 0 || m.up.s != "0.57mbps-poisson.trace" || m.once {
		t.Errorf("parsed %+v", m)
	}
	if q, msg := m.queue(true); msg != "" || q == nil || q.Packets != 14 || q.DisciplineName() != QueueDropTail {
		t.Errorf("uplink queue %+v %q", q, msg)
	}
	if q, msg := m.queue(false); q != nil || msg != "" {
		t.Errorf("downlink queue %+v %q, want infinite", q, msg)
	}
	if !slices.Equal(m.upOrder, []string{StageLink, StageLoss, StageDelay}) || !slices.Equal(m.dnOrder, []string{StageDelay, StageLink, StageLoss}) {
		t.Errorf("orders up %v down %v", m.upOrder, m.dnOrder)
	}
	m, errs = parseMahimahi("mm-link up down --downlink-queue drophead --downlink-queue-args=packets=10,bytes=9000 --once mm-delay 10")
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	if q, _ := m.queue(false); q == nil || q.Discipline != QueueDropHead || q.Bytes != 9000 || !m.once {
		t.Errorf("parsed %+v", m)
	}
	// the delay shell is inside the link: the uplink crosses it first
	if !slices.Equal(m.upOrder, []string{StageDelay, StageLink, StageLoss}) || !slices.Equal(m.dnOrder, []string{StageLink, StageDelay, StageLoss}) {
		t.Errorf("orders up %v down %v", m.upOrder, m.dnOrder)
	}
	for _, c := range []struct{ line, want string }{
		{"mm-delay 2.5 mm-link a b", `0+9: mm-delay takes an integer`},
		{"mm-loss sideways 0.1 mm-link a b", `0+8: mm-loss direction "sideways"`},
		{"mm-loss uplink 2 mm-link a b", `0+15: mm-loss probability "2"`},
		{"mm-link a b --uplink-queue=codel", `0+27: mahimahi's codel queue`},
		{"mm-link a b --uplink-queue=droptail", `a droptail queue needs a limit`},
		{"mm-link a b --uplink-queue-args=packets=x", `0+32: queue argument "packets=x"`},
		{"mm-link a b --uplink-log=up.log", `0+12: --uplink-log is mahimahi's own logging`},
		{"mm-delay 10", `0+0: no mm-link`},
		{"mm-onoff uplink 1 1 mm-link a b", `0+0: mm-onoff is not emulated`},
		{"mm-delay 10 mm-delay 20 mm-link a b", `0+12: a second mm-delay`},
	} {
		m, errs := parseMahimahi(c.line)
		var got []string
		for _, e := range errs {
			got = append(got, "0+"+strconv.Itoa(e.off)+": "+e.msg)
		}
		if m != nil && len(errs) == 0 {
			if _, msg := m.queue(true); msg != "" {
				got = append(got, msg)
			}
		}
		if len(got) == 0 || !strings.Contains(strings.Join(got, "\n"), c.want) {
			t.Errorf("%q: %q, want %q", c.line, got, c.want)
		}
	}
}
