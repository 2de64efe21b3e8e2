package kernellab

import (
	"context"
	"os"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/ovs"
	"github.com/emuctl/emuctl/topo"
)

// Run-time changes on the kernel's paths: a host and a link shaped by
// netem added to a running lab (8 Mbit/s, 10 ms each way: the RTT floor is
// 20 ms and TCP carries the capacity), an ovs switch on the kernel datapath
// added with a host behind it and reached across the lab, everything read
// back as the topology says, then removed, the lab as it was.
func TestLabChangeKernelPaths(t *testing.T) {
	RequireLab(t, "adds netem links and kernel-datapath ovs switches at run time")
	_, err := os.Stat("/sys/module/openvswitch")
	Require(t, "openvswitch kernel module", err == nil, errString(err))
	requireTools(t, "openvswitch-switch", "ovsdb-tool", "ovsdb-server", "ovs-vswitchd")
	const lab = "eklchg"
	spec, err := topo.Load("chg.yaml", []byte(`name: eklchg
addressing: {p2p_prefix: 24}
nodes:
  h1: {}
  h2: {}
  s1: {kind: switch, type: ovs, datapath: kernel}
  b1: {kind: switch}
links:
  - endpoints: [h1, s1]
  - endpoints: [s1, b1]
  - endpoints: [h2, b1]
`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := emu.Deploy(context.Background(), spec, emu.Options{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := emu.Down(lab, nil); err != nil {
			t.Error(err)
		}
	})
	ctx := context.Background()
	builtOK := func(when string) {
		t.Helper()
		res, err := emu.VerifyBuilt(lab)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range res {
			if !b.OK() {
				t.Errorf("%s: %s (%s) reads back otherwise than the topology says: %s", when, b.Node, b.Kind, strings.Join(b.Problems, "; "))
			}
		}
	}
	builtOK("after up")

	// a host on a netem-shaped link to the kernel-datapath switch
	if _, err := emu.AddNode(ctx, lab, topo.NodeRequest{Name: "h3"}, emu.Options{}); err != nil {
		t.Fatal(err)
	}
	st, err := emu.AddLink(ctx, lab, topo.LinkRequest{A: "h3", B: "s1", Params: "rate=8mbit,delay=10ms"}, emu.Options{})
	if err != nil {
		t.Fatal(err)
	}
	li := len(st.Spec.Links) - 1
	backend := ""
	for _, ls := range st.Links {
		if ls.Index == li {
			backend = ls.Backend
		}
	}
	if backend != emu.BackendNetem {
		t.Errorf("the added link's backend is %q, want %q (the kernel lab has sch_netem)", backend, emu.BackendNetem)
	}
	builtOK("after the netem link")
	h1, _ := emu.PrimaryAddr(st.Spec.Node("h1"))
	var rtts []time.Duration
	for range 10 {
		if rtt, err := emu.Ping(ctx, lab, "h3", h1, 3*time.Second); err == nil {
			rtts = append(rtts, rtt)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if len(rtts) < 8 {
		t.Fatalf("h3 -> h1: %d of 10 pings answered", len(rtts))
	}
	sort.Slice(rtts, func(i, j int) bool { return rtts[i] < rtts[j] })
	t.Logf("h3 -> h1 RTT min %v median %v (floor 20 ms)", rtts[0], rtts[len(rtts)/2])
	if rtts[0] < 20*time.Millisecond || rtts[len(rtts)/2] > 30*time.Millisecond {
		t.Errorf("RTT min %v median %v: want >= 20 ms (2 x 10 ms) and a median within 10 ms of it under emulation", rtts[0], rtts[len(rtts)/2])
	}
	g := tcpFlow(t, lab, "h3", "h1", h1, "cubic", 10*time.Second, 3*time.Second, nil)
	capacity := 8e6 * 1448 / 1514
	t.Logf("TCP h3 -> h1 over the added link: %.2f Mbit/s = %.3f x capacity", g/1e6, g/capacity)
	if r := g / capacity; r < 0.90 || r > 1.02 {
		t.Errorf("goodput %.3f x capacity, want [0.90, 1.02] under emulation", r)
	}

	// an ovs switch on the kernel datapath, a host behind it, reached
	// from h2 across s1 and b1
	if _, err := emu.AddNode(ctx, lab, topo.NodeRequest{Name: "s2", Kind: topo.KindSwitch, SwitchType: topo.SwitchOVS, Entry: "{datapath: kernel}"}, emu.Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := emu.AddNode(ctx, lab, topo.NodeRequest{Name: "h4"}, emu.Options{}); err != nil {
		t.Fatal(err)
	}
	for _, l := range [][2]string{{"s2", "s1"}, {"h4", "s2"}} { // the switch joins s1's segment first, so h4 takes its subnet
		if st, err = emu.AddLink(ctx, lab, topo.LinkRequest{A: l[0], B: l[1]}, emu.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	var s2 *emu.OVSBridgeState
	for i := range st.OVS.Bridges {
		if st.OVS.Bridges[i].Node == "s2" {
			s2 = &st.OVS.Bridges[i]
		}
	}
	if s2 == nil || s2.Datapath != ovs.DatapathKernel || len(s2.Ports) != 2 {
		t.Fatalf("s2 in the lab's OVS: %+v", s2)
	}
	h4, _ := emu.PrimaryAddr(st.Spec.Node("h4"))
	if _, err := emu.Ping(ctx, lab, "h2", h4, 3*time.Second); err != nil {
		t.Errorf("h2 -> h4 across b1, s1 and the added s2: %v", err)
	}
	builtOK("after the ovs switch")

	// removed again: the lab as it was, every node as its topology says
	for _, n := range []string{"h4", "s2", "h3"} {
		if _, err := emu.RemoveNode(ctx, lab, n, emu.Options{}); err != nil {
			t.Fatal(err)
		}
	}
	st, _ = emu.ReadState(lab)
	if len(st.Spec.Nodes) != 4 || len(st.Spec.Links) != 3 || len(st.OVS.Bridges) != 1 {
		t.Errorf("after the removals: %d nodes, %d links, %d ovs bridges", len(st.Spec.Nodes), len(st.Spec.Links), len(st.OVS.Bridges))
	}
	builtOK("after the removals")
	h2, _ := emu.PrimaryAddr(st.Spec.Node("h2"))
	if _, err := emu.Ping(ctx, lab, "h1", h2, 3*time.Second); err != nil {
		t.Errorf("h1 -> h2 after the removals: %v", err)
	}
}
