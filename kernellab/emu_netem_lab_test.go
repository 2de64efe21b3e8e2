package kernellab

import (
	"context"
	"net"
	"sort"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/tc"
	"github.com/emuctl/emuctl/topo"
	"golang.org/x/sys/unix"
)

// emuctl's own netem path, end to end: `up` picks netem where the kernel
// has it, the RTT floor and rate are what the file says, the queue of a
// switched path fills under one CUBIC flow (netem orphans the packet, so
// TCP Small Queues cannot hide it), `verify` agrees, and `link set`
// replaces the qdiscs in place. Tolerances are widened for QEMU's software
// emulation (delays jitter by a few ms there).
func TestLabEmuNetemPath(t *testing.T) {
	caps := tc.Probe()
	Require(t, "sch_netem", caps.Netem, caps.Reasons["netem"])
	const lab = "eklnet"
	spec, err := topo.Load("netem.yaml", []byte(`name: eklnet
nodes: {h1: {}, h2: {}, s1: {kind: switch}}
links:
  - endpoints: [h1, s1]
    link: {rate: 20mbit, delay: 10ms, queue: 50}
  - endpoints: [h2, s1]
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
	if len(st.Links) != 1 || st.Links[0].Backend != emu.BackendNetem {
		t.Fatalf("want the netem backend, got %+v", st.Links)
	}
	links, err := emu.ShowLinks(lab)
	if err != nil || len(links[0].Qdiscs) != 2 || !strings.Contains(strings.Join(links[0].Qdiscs, " "), "netem") {
		t.Fatalf("installed qdiscs: %v %v", err, links)
	}
	t.Logf("qdiscs:\n%s", strings.Join(links[0].Qdiscs, "\n"))
	dst, _ := emu.PrimaryAddr(spec.Node("h2"))
	ping := func(n int, gap time.Duration) []time.Duration {
		var out []time.Duration
		for i := 0; i < n; i++ {
			if rtt, err := emu.Ping(context.Background(), lab, "h1", dst, 2*time.Second); err == nil {
				out = append(out, rtt)
			}
			time.Sleep(gap)
		}
		if len(out) < n/2 {
			t.Fatalf("only %d of %d pings answered", len(out), n)
		}
		sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
		return out
	}
	base := ping(20, 20*time.Millisecond)
	t.Logf("idle RTT floor %v median %v (2 x 10 ms configured)", base[0], base[len(base)/2])
	if base[0] < 20*time.Millisecond || base[0] > 30*time.Millisecond {
		t.Errorf("idle RTT floor %v, want 20..30 ms under emulation", base[0])
	}

	res, err := emu.Verify(context.Background(), lab, emu.VerifyOptions{Tolerance: 0.10, LossProbes: 1000})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		t.Logf("verify %s: delay min %v rate %s loss %.2f%% %v", r.Dir, r.MinDelay, r.Rate.TC(), r.Loss, r.Problems)
		if r.MinDelay < 10*time.Millisecond || r.MinDelay > 15*time.Millisecond {
			t.Errorf("%s one-way delay %v, want 10..15 ms", r.Dir, r.MinDelay)
		}
		if e := float64(r.Rate)/20e6 - 1; e < -0.10 || e > 0.10 {
			t.Errorf("%s rate %s, want 20 Mbit/s ± 10 %%", r.Dir, r.Rate.TC())
		}
	}

	// one CUBIC flow h1 -> h2 for 8 s, pings from the third second
	var ln net.Listener
	if err := emu.InNode(lab, "h2", func() (err error) { ln, err = net.Listen("tcp", net.JoinHostPort(dst.String(), "0")); return }); err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var conn net.Conn
	err = emu.InNode(lab, "h1", func() (err error) {
		d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
			var serr error
			c.Control(func(fd uintptr) {
				serr = unix.SetsockoptString(int(fd), unix.IPPROTO_TCP, unix.TCP_CONGESTION, "cubic")
			})
			return serr
		}}
		conn, err = d.Dial("tcp", ln.Addr().String())
		return
	})
	if err != nil {
		t.Fatal(err)
	}
	srv, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	var got atomic.Int64
	done := make(chan struct{})
	go func() {
		buf := make([]byte, 1<<16)
		for {
			n, err := srv.Read(buf)
			got.Add(int64(n))
			if err != nil {
				return
			}
		}
	}()
	go func() {
		buf := make([]byte, 1<<16)
		for {
			select {
			case <-done:
				return
			default:
			}
			if _, err := conn.Write(buf); err != nil {
				return
			}
		}
	}()
	time.Sleep(3 * time.Second)
	before := got.Load()
	t0 := time.Now()
	loaded := ping(25, 150*time.Millisecond)
	goodput := float64(got.Load()-before) * 8 / time.Since(t0).Seconds()
	close(done)
	conn.Close()
	srv.Close()
	med := loaded[len(loaded)/2]
	queue := time.Duration(50 * 1514 * 8 / 20e6 * float64(time.Second)) // 30.3 ms full
	t.Logf("under load: goodput %.2f Mbit/s (capacity %.2f), RTT median %v max %v (base %v, full queue adds %v)",
		goodput/1e6, 20*1448/1514.0, med, loaded[len(loaded)-1], base[0], queue)
	if med < base[0]+queue/2 {
		t.Errorf("RTT under load %v: the 50-packet queue (%v) did not fill", med, queue)
	}
	if goodput < 0.85*20e6*1448/1514 {
		t.Errorf("goodput %.2f Mbit/s, want ≥ 0.85 x capacity under emulation", goodput/1e6)
	}

	i, err := emu.FindLink(spec, "h1-s1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := emu.SetLink(lab, i, "", func(d *tc.Dir) { d.Delay = 25 * time.Millisecond }); err != nil {
		t.Fatal(err)
	}
	after := ping(10, 20*time.Millisecond)
	t.Logf("after link set delay 25ms: RTT floor %v", after[0])
	if after[0] < 50*time.Millisecond || after[0] > 60*time.Millisecond {
		t.Errorf("after link set: RTT floor %v, want 50..60 ms", after[0])
	}
}
