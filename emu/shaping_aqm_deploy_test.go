package emu

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/emuctl/emuctl/tc"
)

// TestDeployRefusesMissingKernelDiscipline: on this machine's kernel, a
// queue discipline whose qdisc the kernel lacks, on a link pinned to
// backend: kernel, fails up at the queue's file:line:col and creates
// nothing (no namespace, no state directory); link set on a
// kernel-shaped link refuses the same discipline and leaves the link as
// it was.
func TestDeployRefusesMissingKernelDiscipline(t *testing.T) {
	needRoot(t)
	caps := tc.Probe()
	missing := ""
	for _, d := range []string{tc.CoDel, tc.FQCoDel, tc.PIE, tc.RED} {
		if !caps.AQM[d] {
			missing = d
			break
		}
	}
	if missing == "" {
		t.Skip("this kernel has codel, fq_codel, pie and red: no discipline to refuse")
	}
	const lab = "tqpin"
	text := "name: " + lab + "\nnodes: {h1: {}, r1: {kind: router}, h2: {}}\nlinks:\n  - endpoints: [h1, r1]\n  - endpoints: [r1, h2]\n    link: {rate: 10mbit, backend: kernel, queue: {discipline: " + missing + "}}\n"
	spec := loadYAML(t, lab, text)
	st, err := Deploy(context.Background(), spec, Options{})
	if err == nil {
		Down(lab, nil)
		t.Fatalf("backend: kernel with %s on a kernel without it deployed: %+v", missing, st.Links)
	}
	// line 6, the queue: key's value at column 43
	want := lab + ".yaml:6:43: backend: kernel: a->b queue " + missing + ": this kernel has no " + missing + " qdisc"
	if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "nothing was changed") {
		t.Errorf("error:\n%v\nwant it to contain %q and say nothing was changed", err, want)
	}
	requireGone(t, lab)
	if _, err := os.Stat(stateDir(lab)); !os.IsNotExist(err) {
		t.Errorf("state directory %s left behind (%v)", stateDir(lab), err)
	}

	// the same queue at run time, on a link the kernel shapes (tbf, or
	// netem where the kernel has it): refused, the link unchanged
	text = "name: " + lab + "\nnodes: {h1: {}, r1: {kind: router}, h2: {}}\nlinks:\n  - endpoints: [h1, r1]\n  - endpoints: [r1, h2]\n    link: {rate: 10mbit, backend: kernel, queue: 100}\n"
	up(t, loadYAML(t, lab, text), Options{})
	_, err = SetLink(lab, 1, "both", func(d *tc.Dir) {
		d.QueuePackets = 0
		d.AQM = &tc.AQM{Discipline: missing}
	})
	if err == nil || !strings.Contains(err.Error(), "this kernel has no "+missing+" qdisc") {
		t.Errorf("link set --queue %s on a kernel-shaped link: %v, want a refusal naming the missing qdisc", missing, err)
	}
	after, err := ReadState(lab)
	if err != nil {
		t.Fatal(err)
	}
	if a, ok := findLinkState(after.Links, 1); !ok || a.AtoB.AQM != nil || a.BtoA.AQM != nil || a.AtoB.QueuePackets != 100 {
		t.Errorf("after the refused change the link records %+v / %+v", a.AtoB, a.BtoA)
	}
}
