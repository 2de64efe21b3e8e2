package traffic

import (
	"math"
	"sort"
	"testing"
	"time"

	"github.com/emuctl/emuctl/analysis"
)

// checkTCPSamples checks a TCP flow's samples: spacing close to the
// interval, bytes adding up to what the receiver read, every field the
// experiments need present.
func checkTCPSamples(t *testing.T, f *analysis.Flow, interval, dur time.Duration) {
	t.Helper()
	want := int(dur / interval)
	if n := len(f.Samples); n < want*8/10 || n > want+2 {
		t.Fatalf("%d samples for %v at %v, want about %d", n, dur, interval, want)
	}
	var sum int64
	var gaps []float64
	prev := f.StartS
	for i, s := range f.Samples {
		sum += s.Bytes
		gaps = append(gaps, s.TS-prev)
		prev = s.TS
		if s.TCP == nil {
			t.Fatalf("sample %d has no TCP info", i)
		}
		ti := s.TCP
		if ti.CwndSegs == 0 || ti.CwndBytes != uint64(ti.CwndSegs)*uint64(ti.MSS) || ti.MSS == 0 {
			t.Errorf("sample %d: cwnd %d segs / %d bytes, mss %d", i, ti.CwndSegs, ti.CwndBytes, ti.MSS)
		}
		if ti.SrttUs == 0 || ti.MinRttUs == 0 || ti.MinRttUs > ti.SrttUs+ti.RttvarUs*4+1000 {
			t.Errorf("sample %d: srtt %d µs, rttvar %d, min_rtt %d", i, ti.SrttUs, ti.RttvarUs, ti.MinRttUs)
		}
		if ti.BytesAcked == 0 || ti.DeliveryRateBps <= 0 || ti.SegsOut == 0 {
			t.Errorf("sample %d: bytes_acked %d delivery_rate %g segs_out %d", i, ti.BytesAcked, ti.DeliveryRateBps, ti.SegsOut)
		}
		if i > 0 && ti.BytesAcked < f.Samples[i-1].TCP.BytesAcked {
			t.Errorf("sample %d: bytes_acked went backwards", i)
		}
		if i > 0 && (ti.BusyUs < f.Samples[i-1].TCP.BusyUs || s.WriteWaitUs < f.Samples[i-1].WriteWaitUs) {
			t.Errorf("sample %d: busy time or the writer's waiting went backwards", i)
		}
		if b := s.SendBuffer; b == nil || b.SizeBytes <= 0 {
			t.Errorf("sample %d: send buffer %+v", i, b)
		}
	}
	if last := f.Samples[len(f.Samples)-1]; last.TCP.BusyUs == 0 || last.WriteWaitUs == 0 {
		t.Errorf("last sample: busy %d µs, writer waited %d µs", last.TCP.BusyUs, last.WriteWaitUs)
	}
	if sum != f.BytesReceived {
		t.Errorf("samples add up to %d bytes, the receiver read %d", sum, f.BytesReceived)
	}
	if f.BytesSent != f.BytesReceived {
		t.Errorf("sent %d bytes, received %d", f.BytesSent, f.BytesReceived)
	}
	sort.Float64s(gaps)
	if med := gaps[len(gaps)/2]; math.Abs(med-interval.Seconds()) > interval.Seconds()*0.2 {
		t.Errorf("median sample spacing %.4fs, want %v", med, interval)
	}
	if w := f.SendEndS - f.StartS; math.Abs(w-dur.Seconds()) > 0.1 || f.SendEndS > f.EndS+0.05 {
		t.Errorf("the writer stopped at %.3f s (flow %.3f .. %.3f s), want after %v", f.SendEndS, f.StartS, f.EndS, dur)
	}
	if got := f.EndS - f.StartS; math.Abs(got-dur.Seconds()) > 0.25 {
		t.Errorf("flow lasted %.3fs, want %v", got, dur)
	}
}

func TestTCPSamples(t *testing.T) {
	needRoot(t)
	lab := gen(t, "single,2", "ttrtcp", "")
	for _, iv := range []time.Duration{100 * time.Millisecond, 10 * time.Millisecond} {
		t.Run(iv.String(), func(t *testing.T) {
			r := run(t, lab, Flow{Client: "h1", Server: "h2", Duration: 2 * time.Second, Interval: iv})
			if len(r.Flows) != 1 {
				t.Fatalf("%d flows", len(r.Flows))
			}
			f := &r.Flows[0]
			if f.From != "h1" || f.To != "h2" || f.Proto != "tcp" || f.CC == "" {
				t.Errorf("flow %+v", f)
			}
			checkTCPSamples(t, f, iv, 2*time.Second)
			if g := goodputOf(r, "f1"); g < 100e6 {
				t.Errorf("goodput %.0f bit/s on an unshaped veth pair: implausibly low", g)
			}
			if len(r.Summary) != 1 || r.Conditions["kernel_release"] == "" || r.Conditions["sysctl.h1.net.ipv4.tcp_sack"] == "" ||
				r.Conditions["iface.h1.h1-eth0"] == "" {
				t.Errorf("summary or conditions missing: %d summaries, conditions %v", len(r.Summary), r.Conditions)
			}
			if r.Counters["h1"]["TcpOutSegs"] <= 0 {
				t.Errorf("no counter deltas for h1: %v", r.Counters["h1"])
			}
		})
	}
}

func TestCCReadBack(t *testing.T) {
	needRoot(t)
	lab := gen(t, "single,2", "ttrcc", "")
	for _, cc := range []string{"reno", "cubic", "bbr"} {
		if CheckCC(cc) != nil {
			t.Logf("%s not in this kernel", cc)
			continue
		}
		for _, rev := range []bool{false, true} {
			r := run(t, lab, Flow{Client: "h1", Server: "h2", Duration: 300 * time.Millisecond, Sock: SockOpts{CC: cc}, Reverse: rev})
			f := r.Flows[0]
			if f.CC != cc {
				t.Errorf("cc %s reverse=%v: socket reports %q", cc, rev, f.CC)
			}
			if rev && (f.From != "h2" || f.To != "h1") {
				t.Errorf("reverse flow recorded as %s -> %s", f.From, f.To)
			}
		}
	}
}

func TestTCPParallelAndOptions(t *testing.T) {
	needRoot(t)
	lab := gen(t, "single,2", "ttrpar", "")
	r := run(t, lab, Flow{Client: "h1", Server: "h2", Duration: time.Second, Parallel: 3,
		Sock: SockOpts{NoDelay: true, QuickAck: true, SndBuf: 1 << 20, RcvBuf: 1 << 20}})
	if len(r.Flows) != 3 {
		t.Fatalf("%d flows for 3 streams", len(r.Flows))
	}
	seen := map[string]bool{}
	for _, f := range r.Flows {
		if f.Group != "f1" || seen[f.ID] || f.BytesReceived == 0 {
			t.Errorf("stream %s group %s bytes %d", f.ID, f.Group, f.BytesReceived)
		}
		seen[f.ID] = true
	}
}
