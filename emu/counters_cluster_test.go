package emu

import (
	"errors"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/emuctl/emuctl/internal/testutil"
)

// wire is a link's bytes a->b as on the wire: its engine's frames, or
// its A end's interface's.
func wire(c LinkCounters) uint64 {
	if c.Engine != nil {
		return c.Engine.AToB.OutBytes
	}
	return c.AtoB.Bytes
}

// A lab over two local machines (topologies/cluster-linear.yaml): the
// counters of every link are read through the machines' workers — one
// long-lived worker per machine — so links whose A end is on m2 have real
// states and counters; under a TCP flow h3 -> h1 the cut link s3 - s2 (A
// end on m2, 10 Mbit/s) carries its rate: the bytes its A end's machine
// counted over the time between two of its reads are 10 Mbit/s within
// 10 %. The one-shot Counters reads them too. A worker killed is told
// once and started again; Close leaves no worker, and
// a worker whose input closes (its controller gone, an SSH session
// closed) ends by itself.
func TestClusterCountersThroughWorkers(t *testing.T) {
	needRoot(t)
	// topologies/cluster-linear.yaml, placed by hand: s3 and h3 on m2
	spec := clusterLab(t, "clctr", `name: clctr
machines:
  m1: {ssh: local, underlay: 192.168.77.1}
  m2: {ssh: local, underlay: 192.168.77.2}
nodes:
  h1: {machine: m1}
  h2: {machine: m1}
  h3: {machine: m2}
  s1: {kind: switch, machine: m1}
  s2: {kind: switch, machine: m1}
  s3: {kind: switch, machine: m2}
links:
  - endpoints: [h1, s1]
  - endpoints: [h2, s2]
  - endpoints: [s2, s1]
  - endpoints: [h3, s3]
  - endpoints: [s3, s2]
    link: {rate: 10mbit, delay: 5ms}
`)
	clusterUp(t, spec)
	const cut = 4 // s3 - s2, A end on m2
	if m := spec.Cluster.Nodes["s3"]; m != "m2" || spec.Cluster.CutOf(cut) == nil {
		t.Fatalf("link %d: s3 on %s, cut %v: the topology changed", cut, m, spec.Cluster.CutOf(cut))
	}

	r := NewCounterReader()
	defer r.Close()
	r.Interval = 100 * time.Millisecond
	read := func() []LinkCounters {
		t.Helper()
		_, cs, err := r.Read("clctr")
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	// the workers start at the first read; every link is read within a
	// few seconds
	var cs []LinkCounters
	deadline := time.Now().Add(10 * time.Second)
	for {
		cs = read()
		remote := 0
		for _, c := range cs {
			if c.StateA == "remote" {
				remote++
			}
		}
		if remote == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d links still remote after 10 s: %+v (warnings %v)", remote, cs, r.Warnings())
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, c := range cs {
		if c.StateA != "up" {
			t.Errorf("link %d %s - %s (A end on %s): state %q, want up", c.Index, c.A, c.B, spec.Cluster.Nodes[strings.Split(c.A, ":")[0]], c.StateA)
		}
	}
	if w := r.Warnings(); len(w) > 0 {
		t.Errorf("warnings: %v", w)
	}
	pids := map[string]int{}
	for name, ms := range r.machines {
		pids[name] = ms.stream.cmd.Process.Pid
	}
	if len(pids) != 2 {
		t.Fatalf("workers %v, want one per machine", pids)
	}

	h3, h1 := nodeNetns(t, "clctr", "h3"), nodeNetns(t, "clctr", "h1")
	dst, _ := PrimaryAddr(spec.Node("h1"))
	type run struct {
		goodput, wire float64 // bit/s
		bytes         uint64  // link 3's A end (h3) sent
		reads         int
	}
	res := testutil.RetryStarved(t, "counters through the workers under a flow h3 -> h1", true, func() run {
		type sample struct {
			at    time.Time
			bytes uint64
			h3    uint64
		}
		samples := make(chan []sample, 1)
		go func() {
			var got []sample
			time.Sleep(2 * time.Second) // past slow start, as the goodput's
			for end := time.Now().Add(4 * time.Second); time.Now().Before(end); time.Sleep(250 * time.Millisecond) {
				if _, cs, err := r.Read("clctr"); err == nil {
					got = append(got, sample{cs[cut].At, wire(cs[cut]), cs[3].AtoB.Bytes})
				}
			}
			samples <- got
		}()
		g := tcpGoodput(t, h3, h1, dst, 7*time.Second, 2*time.Second)
		got := <-samples
		if len(got) < 2 {
			t.Fatalf("%d reads during the flow", len(got))
		}
		// the longest span between two distinct reads of the link
		a, z := got[0], got[len(got)-1]
		if !z.at.After(a.at) {
			return run{goodput: g, reads: len(got)}
		}
		return run{goodput: g, wire: float64(z.bytes-a.bytes) * 8 / z.at.Sub(a.at).Seconds(), bytes: z.h3 - a.h3, reads: len(got)}
	})
	want := 10e6 // the cut link's rate, on the wire
	t.Logf("link %d (s3 -> s2, read on m2 through its worker): %.3f Mbit/s on the wire over %d reads; link 3 (h3's end) sent %d bytes meanwhile; the flow's goodput %.3f Mbit/s (capacity %.3f)",
		cut, res.wire/1e6, res.reads, res.bytes, res.goodput/1e6, capacity(10e6)/1e6)
	if res.wire < 0.9*want || res.wire > 1.1*want {
		t.Errorf("link %d a->b: %.3f Mbit/s read through m2's worker, want 10 Mbit/s within 10 %%", cut, res.wire/1e6)
	}
	if g := res.goodput; g < 0.9*capacity(10e6) || g > 1.1*capacity(10e6) {
		t.Errorf("the flow's goodput %.3f Mbit/s, want %.3f within 10 %%", g/1e6, capacity(10e6)/1e6)
	}
	if res.bytes < 1e6 {
		t.Errorf("link 3 (A end h3 on m2) sent %d bytes during a 10 Mbit/s flow", res.bytes)
	}

	// one-shot: each machine asked once
	_, once, err := Counters("clctr")
	if err != nil {
		t.Fatal(err)
	}
	if c := once[cut]; c.StateA != "up" || wire(c) < 4e6 {
		t.Errorf("Counters: link %d %+v, want up with the flow's bytes", cut, c)
	}

	// a worker that dies is told once, its links are "remote" saying why
	// meanwhile, and it is started again
	syscall.Kill(pids["m2"], syscall.SIGKILL) // a worker this test's reader started
	var warnings []string
	why := ""
	for deadline := time.Now().Add(8 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		cs := read()
		warnings = append(warnings, r.Warnings()...)
		if cs[cut].StateA == "remote" && why == "" {
			why = cs[cut].Remote
		}
		if why != "" && cs[cut].StateA == "up" || time.Now().After(deadline) {
			t.Logf("after m2's worker was killed: link %d remote (%q), then %s; warnings %q", cut, why, cs[cut].StateA, warnings)
			if cs[cut].StateA != "up" {
				t.Errorf("link %d not read again 8 s after its machine's worker was killed: %+v", cut, cs[cut])
			}
			break
		}
	}
	if len(warnings) != 1 || !strings.Contains(warnings[0], "machine m2") || !strings.Contains(why, "machine m2") {
		t.Errorf("after m2's worker was killed: warnings %q, link %d's reason %q; want one warning and the reason, naming m2", warnings, cut, why)
	}
	if pid := r.machines["m2"].stream.cmd.Process.Pid; pid == pids["m2"] {
		t.Errorf("m2's worker was not started again (pid %d)", pid)
	} else {
		pids["m2"] = pid
	}

	// Close ends the workers
	r.Close()
	for name, pid := range pids {
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			t.Errorf("machine %s's counters worker (pid %d) runs after Close: %v", name, pid, err)
		}
	}

	// a worker whose input closes ends by itself: no signal of its
	// parent's death helps (over SSH none reaches it)
	cmd, err := workerCommand(t.Context(), "clctr", *spec.Cluster.Machine("m2"), "counters", "clctr", "100ms")
	if err != nil {
		t.Fatal(err)
	}
	cmd.SysProcAttr.Pdeathsig = 0
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 1)
	if _, err := out.Read(buf); err != nil {
		t.Fatalf("no line from the worker: %v", err)
	}
	in.Close()
	waited := make(chan error, 1)
	go func() {
		for {
			if _, err := out.Read(make([]byte, 64*1024)); err != nil {
				break
			}
		}
		waited <- cmd.Wait()
	}()
	select {
	case err := <-waited:
		if err != nil {
			t.Errorf("the worker ended with %v after its input closed", err)
		}
	case <-time.After(3 * time.Second):
		cmd.Process.Kill() // the worker this test started
		<-waited
		t.Error("the worker still ran 3 s after its input closed")
	}
}
