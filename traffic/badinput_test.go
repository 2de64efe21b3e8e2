package traffic

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"runtime"
	"strings"
	"testing"
	"time"
)

// TestBadInput: each mistake gets a clear error before or instead of a
// run, and leaves no socket, goroutine or process behind.
func TestBadInput(t *testing.T) {
	needRoot(t)
	lab := gen(t, "single,2", "ttrbad", "")
	// A TCP and a UDP socket holding ports in h2, as another program would.
	var tcpLn net.Listener
	var udpC net.PacketConn
	err := inNode(lab, "h2", func() (err error) {
		if tcpLn, err = net.Listen("tcp4", ":0"); err != nil {
			return err
		}
		udpC, err = net.ListenPacket("udp4", ":0")
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	defer tcpLn.Close()
	defer udpC.Close()
	tcpPort, udpPort := int(addrPort(tcpLn.Addr()).Port()), int(addrPort(udpC.LocalAddr()).Port())

	cases := []struct {
		name string
		f    Flow
		want []string
	}{
		{"unknown node", Flow{Client: "h1", Server: "h9"}, []string{`flow f1: unknown node "h9" (hosts and routers of this lab: h1, h2)`}},
		{"switch", Flow{Client: "s1", Server: "h2"}, []string{"node s1 is a switch"}},
		{"unknown cc", Flow{Client: "h1", Server: "h2", Sock: SockOpts{CC: "vegass"}}, []string{`congestion control "vegass" is not available in this kernel (available: `}},
		{"tcp port in use", Flow{Client: "h1", Server: "h2", Port: tcpPort}, []string{"node h2: TCP port", "is already in use"}},
		{"udp port in use", Flow{Client: "h1", Server: "h2", Proto: UDP, Port: udpPort}, []string{"node h2: UDP port", "is already in use"}},
		{"iperf3 port in use", Flow{Client: "h1", Server: "h2", Port: tcpPort, Engine: EngineIperf3}, []string{"node h2: TCP port", "is already in use"}},
		{"foreign address", Flow{Client: "h1", Server: "h2", Dst: netip.MustParseAddr("10.0.0.1")}, []string{"10.0.0.1 is not an address of node h2 (its addresses: 10.0.0.2)"}},
		{"several problems", Flow{Client: "h1", Server: "h1", Proto: "sctp", Interval: time.Millisecond}, []string{
			`client and server are the same node "h1"`, `unknown protocol "sctp"`, "interval 1ms out of range"}},
		{"udp with cc", Flow{Client: "h1", Server: "h2", Proto: UDP, Sock: SockOpts{CC: "reno"}}, []string{"a congestion control makes no sense for UDP"}},
		{"mptcp on iperf3", Flow{Client: "h1", Server: "h2", Proto: MPTCP, Engine: EngineIperf3}, []string{"iperf3 engine cannot run MPTCP"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fds, gs := openFDs(), runtime.NumGoroutine()
			r, err := Run(context.Background(), lab, []Flow{c.f}, Options{})
			if err == nil || r != nil {
				t.Fatalf("no error (result %v)", r)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\ndoes not say %q", err, w)
				}
			}
			settle(t, fds, gs)
		})
	}
	if _, err := Run(context.Background(), "ttrnosuchlab", []Flow{{Client: "h1", Server: "h2"}}, Options{}); err == nil || !strings.Contains(err.Error(), "no such lab") {
		t.Errorf("unknown lab: %v", err)
	}
}

// TestUnreachable: no route from the client to the server.
func TestUnreachable(t *testing.T) {
	needRoot(t)
	lab := yamlLab(t, `
name: ttrunr
routing: none
nodes: {h1: {}, r1: {kind: router}, h2: {}}
links:
  - endpoints: [h1, r1]
  - endpoints: [r1, h2]
`)
	for _, f := range []Flow{{Client: "h1", Server: "h2"}, {Client: "h1", Server: "h2", Proto: UDP, Probe: ProbeICMP}} {
		fds, gs := openFDs(), runtime.NumGoroutine()
		_, err := Run(context.Background(), lab, []Flow{f}, Options{})
		if err == nil || !strings.Contains(err.Error(), "unreachable") {
			t.Errorf("%s: error %v, want it to say unreachable", f.Proto, err)
		}
		settle(t, fds, gs)
	}
}

// TestInterrupt: cancelling (Ctrl-C) stops every flow at once, returns
// what was measured, and leaves nothing behind.
func TestInterrupt(t *testing.T) {
	needRoot(t)
	lab := gen(t, "single,2", "ttrint", "")
	flows := []Flow{
		{Name: "t", Client: "h1", Server: "h2", Duration: time.Minute, Probe: ProbeICMP},
		{Name: "u", Client: "h2", Server: "h1", Duration: time.Minute, Proto: UDP},
		{Name: "late", Client: "h1", Server: "h2", Duration: time.Minute, Start: time.Minute},
	}
	if needIperf3OK() {
		flows = append(flows, Flow{Name: "i", Client: "h2", Server: "h1", Duration: time.Minute, Engine: EngineIperf3})
	}
	fds, gs := openFDs(), runtime.NumGoroutine()
	ctx, cancel := context.WithTimeout(context.Background(), 1500*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	r, err := Run(ctx, lab, flows, Options{})
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error %v, want the context's", err)
	}
	if d := time.Since(t0); d > 5*time.Second {
		t.Errorf("Run took %v to stop", d)
	}
	if r == nil || r.Conditions["interrupted"] != "true" {
		t.Fatalf("no partial result: %+v", r)
	}
	for _, name := range []string{"t", "u"} {
		if f := r.Flow(name); f == nil || f.BytesReceived == 0 || f.EndS > 2 {
			t.Errorf("flow %s: %+v", name, f)
		}
	}
	if r.Flow("late") != nil {
		t.Errorf("a flow that never started is in the result")
	}
	settle(t, fds, gs)
}

func needIperf3OK() bool {
	_, err := lookIperf3()
	return err == nil
}
