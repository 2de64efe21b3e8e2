package kernellab

import (
	"context"
	"encoding/binary"
	"net"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/internal/nsutil"
	"github.com/emuctl/emuctl/tc"
	"github.com/emuctl/emuctl/topo"
)

// TestLabScheduleNetem: a schedule's rate step on a netem link is tc
// change in place, with netem's semantics — the packets netem already
// holds keep the departure times it gave them; only later packets see the
// new rate (the link engine, by contrast, re-times its queue). A burst of
// 40 full-size datagrams queues at 10 Mbit/s (48 ms to drain); the
// schedule drops the rate to 1 Mbit/s right after it: the burst still
// drains at 10 Mbit/s, well before the 485 ms a re-timed queue would take,
// and a second burst after the step is spaced 12 ms a datagram. The qdisc
// tree is changed, not replaced, and the step is logged with its lateness.
func TestLabScheduleNetem(t *testing.T) {
	caps := tc.Probe()
	Require(t, "sch_netem", caps.Netem, caps.Reasons["netem"])
	const lab = "eklsch"
	spec, err := topo.Load("schedule.yaml", []byte(`name: eklsch
nodes: {h1: {}, r1: {kind: router}, h2: {}}
links:
  - {name: slow, endpoints: [h1, r1], link: {rate: 10mbit, delay: 5ms, queue: 100}}
  - {endpoints: [r1, h2]}
schedules:
  - name: drop
    t0: manual
    link: slow
    steps:
      - {at: 0s, a->b: {rate: 1mbit}}
`))
	if err != nil {
		t.Fatal(err)
	}
	st, err := emu.Deploy(context.Background(), spec, emu.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := emu.Down(lab, nil); err != nil {
			t.Error(err)
		}
	})
	if st.Links[0].Backend != emu.BackendNetem {
		t.Fatalf("want the netem backend, got %+v", st.Links[0])
	}
	dst, _ := emu.PrimaryAddr(spec.Node("h2"))
	var rx, tx *net.UDPConn
	if err := nsutil.DoPath(filepath.Join(emu.NetnsDir, topo.Namespace(lab, "h2")), func() (err error) {
		rx, err = net.ListenUDP("udp4", &net.UDPAddr{Port: 7001})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer rx.Close()
	if err := nsutil.DoPath(filepath.Join(emu.NetnsDir, topo.Namespace(lab, "h1")), func() (err error) {
		tx, err = net.DialUDP("udp4", nil, &net.UDPAddr{IP: dst.AsSlice(), Port: 7001})
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer tx.Close()
	arrivals := make(chan [2]int64, 200) // seq, arrival ns
	go func() {
		buf := make([]byte, 2048)
		for {
			n, err := rx.Read(buf)
			if err != nil {
				return
			}
			if n >= 8 {
				arrivals <- [2]int64{int64(binary.BigEndian.Uint64(buf)), time.Now().UnixNano()}
			}
		}
	}()
	buf := make([]byte, 1472)
	send := func(from, n int) time.Time {
		t0 := time.Now()
		for i := from; i < from+n; i++ {
			binary.BigEndian.PutUint64(buf, uint64(i))
			if _, err := tx.Write(buf); err != nil {
				t.Fatal(err)
			}
		}
		return t0
	}
	// warm ARP and routes
	send(1000, 1)
	time.Sleep(300 * time.Millisecond)
	for len(arrivals) > 0 {
		<-arrivals
	}
	t1 := send(0, 40)
	if _, err := emu.StartSchedule(lab, "drop", ""); err != nil {
		t.Fatal(err)
	}
	time.Sleep(700 * time.Millisecond)
	t2 := send(100, 10)
	time.Sleep(400 * time.Millisecond)
	got := map[int64]int64{}
	for len(arrivals) > 0 {
		a := <-arrivals
		got[a[0]] = a[1]
	}
	log, _ := emu.ScheduleLog(lab)
	if len(log) != 1 || log[0].Error != "" {
		t.Fatalf("step log %+v", log)
	}
	last1, ok := got[39]
	if !ok || len(got) < 45 {
		t.Fatalf("%d datagrams arrived (want 50)", len(got))
	}
	drain := time.Duration(last1 - t1.UnixNano())
	var gaps []time.Duration
	for i := int64(101); i < 110; i++ {
		if a, ok := got[i]; ok {
			if b, ok := got[i-1]; ok {
				gaps = append(gaps, time.Duration(a-b))
			}
		}
	}
	if len(gaps) < 5 {
		t.Fatalf("only %d gaps measured in the second burst", len(gaps))
	}
	// the median: under QEMU's software emulation one late wake-up can
	// hold a single datagram by tens of ms
	sorted := append([]time.Duration(nil), gaps...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i] < sorted[j] })
	mean := sorted[len(sorted)/2]
	links, _ := emu.ShowLinks(lab)
	t.Logf("gaps after the step: %v", gaps)
	t.Logf("step %.1f ms late; burst queued before the step drained in %v (10 Mbit/s: 48 ms + 5 ms; re-timed to 1 Mbit/s it would take 485 ms); after the step datagrams %v apart (median; 1 Mbit/s: 12.1 ms), second burst sent %v after the step; qdiscs: %s",
		float64(log[0].Late)/1e6, drain, mean, t2.Sub(log[0].Applied), strings.Join(links[0].Qdiscs, " | "))
	if drain > 200*time.Millisecond {
		t.Errorf("the burst queued before the step took %v: netem re-timed it? (tc change keeps time_to_send)", drain)
	}
	if mean < 11*time.Millisecond || mean > 14*time.Millisecond {
		t.Errorf("datagrams after the step %v apart, want ≈ 12.1 ms (1 Mbit/s)", mean)
	}
	if !strings.Contains(strings.Join(links[0].Qdiscs, " "), "1Mbit") {
		t.Errorf("qdiscs after the step: %v", links[0].Qdiscs)
	}
}
