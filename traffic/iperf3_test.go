package traffic

import (
	"os/exec"
	"runtime"
	"testing"
	"time"
)

func needIperf3(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("iperf3"); err != nil {
		t.Skip("iperf3 is not installed (scripts/install-deps.sh installs it)")
	}
}

func TestIperf3Engine(t *testing.T) {
	needRoot(t)
	needIperf3(t)
	lab := gen(t, "single,2", "ttrip3", "")
	fds, gs := openFDs(), runtime.NumGoroutine()
	cases := []Flow{
		{Client: "h1", Server: "h2", Duration: 2 * time.Second, Interval: 200 * time.Millisecond, Sock: SockOpts{CC: "cubic"}},
		{Client: "h1", Server: "h2", Duration: time.Second, Reverse: true, Parallel: 2, Sock: SockOpts{CC: "reno"}},
		{Client: "h1", Server: "h2", Duration: time.Second, Proto: UDP, Rate: 5_000_000, Size: 1000},
	}
	for _, c := range cases {
		c.Engine = EngineIperf3
		r := run(t, lab, c)
		if r.Engine != "iperf3" || len(r.Flows) != c.withDefaults(0).Parallel {
			t.Fatalf("engine %q, %d flows", r.Engine, len(r.Flows))
		}
		for _, f := range r.Flows {
			if f.From != c.dataFrom() || f.To != c.dataTo() || f.BytesReceived == 0 || len(f.Samples) == 0 {
				t.Errorf("%s: %s -> %s, %d bytes, %d samples", f.ID, f.From, f.To, f.BytesReceived, len(f.Samples))
			}
			if c.Sock.CC != "" && f.CC != c.Sock.CC {
				t.Errorf("%s: cc %q, want %q", f.ID, f.CC, c.Sock.CC)
			}
			if c.Proto == UDP && (f.UDP == nil || f.UDP.Sent == 0 || f.UDP.Received != f.UDP.Sent) {
				t.Errorf("%s: udp %+v", f.ID, f.UDP)
			}
			if f.StartS < 0 || f.EndS-f.StartS < c.Duration.Seconds()*0.9 || f.EndS-f.StartS > c.Duration.Seconds()+0.5 {
				t.Errorf("%s: active %.3f .. %.3f s for a %v flow", f.ID, f.StartS, f.EndS, c.Duration)
			}
		}
	}
	settle(t, fds, gs)
}

// TestIperf3VsNative runs both engines on the same unshaped pair; they
// must agree on the order of magnitude (the shaped, tight comparison is in
// the fidelity tests).
func TestIperf3VsNative(t *testing.T) {
	needRoot(t)
	needIperf3(t)
	lab := gen(t, "single,2", "ttrvs", "")
	n := goodputOf(run(t, lab, Flow{Client: "h1", Server: "h2", Duration: 2 * time.Second}), "f1")
	i := goodputOf(run(t, lab, Flow{Client: "h1", Server: "h2", Duration: 2 * time.Second, Engine: EngineIperf3}), "f1")
	t.Logf("unshaped veth: emuctl %.2f Gbit/s, iperf3 %.2f Gbit/s, ratio %.3f", n/1e9, i/1e9, n/i)
	if n < i/3 || n > i*3 {
		t.Errorf("emuctl %.0f bit/s vs iperf3 %.0f bit/s", n, i)
	}
}
