package main

import (
	"strings"
	"testing"
	"time"
)

// TestBenchMachinesYAML: the bench's labs are one topology file with and
// without machines: — the same nodes and links; linear,2 placed by hand
// cuts exactly s1-s2; tree,2,3 placed automatically puts every node on
// one of the machines. Tier 1: nothing is brought up.
func TestBenchMachinesYAML(t *testing.T) {
	place := func(node string) string { return "m" + node[1:] }
	one, err := benchLoad("linear,2", "benchl1", 1, place)
	if err != nil {
		t.Fatal(err)
	}
	if one.Cluster != nil {
		t.Fatalf("one machine: cluster %+v", one.Cluster)
	}
	two, err := benchLoad("linear,2", "benchl2", 2, place)
	if err != nil {
		t.Fatal(err)
	}
	if two.Cluster == nil || len(two.Cluster.Machines) != 2 || len(two.Cluster.Cuts) != 1 {
		t.Fatalf("two machines: cluster %+v", two.Cluster)
	}
	l := two.Links[two.Cluster.Cuts[0].Link]
	if ends := l.A.Node + "-" + l.B.Node; ends != "s2-s1" && ends != "s1-s2" {
		t.Errorf("cut link %s, want s1-s2", ends)
	}
	if len(one.Nodes) != len(two.Nodes) || len(one.Links) != len(two.Links) {
		t.Errorf("one machine %d nodes %d links, two %d nodes %d links", len(one.Nodes), len(one.Links), len(two.Nodes), len(two.Links))
	}
	tree, err := benchLoad("tree,2,3", "benchm2", 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tree.Cluster == nil || tree.Cluster.Placement != "auto" || len(tree.Cluster.Cuts) == 0 {
		t.Fatalf("tree,2,3 over 2 machines: %+v", tree.Cluster)
	}
	per := nodesPerMachine(tree.Cluster)
	if len(per) != 2 || per[0]+per[1] != len(tree.Nodes) || per[0] == 0 || per[1] == 0 {
		t.Errorf("nodes per machine %v of %d", per, len(tree.Nodes))
	}
	for _, m := range tree.Cluster.Machines {
		if !m.Local() || !strings.HasPrefix(m.Underlay.String(), benchUnderlay) {
			t.Errorf("machine %+v", m)
		}
	}
}

// TestBenchMachinesParse: ping(8)'s replies (the first one left out)
// and iperf3's -J receiver rate.
func TestBenchMachinesParse(t *testing.T) {
	out := `PING 10.0.0.2 (10.0.0.2) 56(84) bytes of data.
64 bytes from 10.0.0.2: icmp_seq=1 ttl=64 time=0.512 ms
64 bytes from 10.0.0.2: icmp_seq=2 ttl=64 time=0.007 ms
64 bytes from 10.0.0.2: icmp_seq=3 ttl=64 time=0.005 ms
64 bytes from 10.0.0.2: icmp_seq=4 ttl=64 time=0.011 ms

--- 10.0.0.2 ping statistics ---
4 packets transmitted, 4 received, 0% packet loss, time 15ms
rtt min/avg/max/mdev = 0.005/0.133/0.512/0.218 ms
`
	rtts := pingRTTs(out)
	want := []time.Duration{7 * time.Microsecond, 5 * time.Microsecond, 11 * time.Microsecond}
	if len(rtts) != len(want) {
		t.Fatalf("rtts %v, want %v", rtts, want)
	}
	for i := range want {
		if rtts[i] != want[i] {
			t.Errorf("rtt %d: %v, want %v", i, rtts[i], want[i])
		}
	}
	if m := medianDur(rtts); m != 7*time.Microsecond {
		t.Errorf("median %v", m)
	}
	if m := medianDur([]time.Duration{4, 1, 3, 2}); m != 2 {
		t.Errorf("even median %v", m)
	}
	g, err := iperf3Goodput([]byte(`{"start": {}, "intervals": [], "end": {"sum_sent": {"bits_per_second": 1.9e10, "retransmits": 12}, "sum_received": {"bits_per_second": 1.8e10}}}`))
	if err != nil || g != 1.8e10 {
		t.Errorf("goodput %v, %v", g, err)
	}
	if _, err := iperf3Goodput([]byte(`{"start": {}, "end": {}, "error": "unable to connect to server: Connection refused"}`)); err == nil || !strings.Contains(err.Error(), "Connection refused") {
		t.Errorf("iperf3 error: %v", err)
	}
	if _, err := iperf3Goodput([]byte("iperf3: error")); err == nil {
		t.Errorf("not JSON: no error")
	}
}

// TestBenchMachinesPrint: the rows side by side with their ratio (2/1),
// the goodput ratio and the RTT the tunnel adds, in µs.
func TestBenchMachinesPrint(t *testing.T) {
	r := machinesResult{topo: "tree,3,10", machines: 2, nodes: 1111, links: 1110, perMachine: []int{556, 555}, cuts: 5, reps: 3,
		up1: 2000 * time.Millisecond, down1: 500 * time.Millisecond, upN: 3000 * time.Millisecond, downN: 250 * time.Millisecond,
		cut: &cutLinkResult{rounds: 3, flow: 5 * time.Second, underlayRTT: 6600 * time.Nanosecond, bpsVeth: 20e9, bpsVXLAN: 15e9,
			pings: 600, rttVeth: 4 * time.Microsecond, rttVXLAN: 7 * time.Microsecond}}
	var b strings.Builder
	printMachines(&b, r)
	out := b.String()
	for _, want := range []string{
		"tree,3,10 (1111 nodes, 1110 links)", "556 + 555 nodes, 5 cut links", "median of 3 runs each",
		"ratio (2/1)", "2.000s", "3.000s", "1.50x", "0.50x", "2.500s", "3.250s", "1.30x",
		"underlay RTT 6.6 µs", "20.00 Gbit/s", "15.00 Gbit/s", "0.75x", "-5.00 Gbit/s",
		"median of 600", "4 µs", "7 µs", "+3 µs",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("%q missing in\n%s", want, out)
		}
	}
	r.cut.noIperf3 = true
	b.Reset()
	printMachines(&b, r)
	if !strings.Contains(b.String(), "iperf3 not installed") {
		t.Errorf("without iperf3:\n%s", b.String())
	}
	j := machinesJSONOf(r)
	if j.UpRatio != 1.5 || j.DownRatio != 0.5 || j.CutLinks != 5 || j.Cut == nil || j.Cut.AddedRTTUs != 3 || j.Cut.Iperf3 != "not installed" {
		t.Errorf("json %+v %+v", j, j.Cut)
	}
}
