package traffic

import (
	"math"
	"os"
	"testing"
	"time"
)

func loadIperf(t *testing.T, name string) *iperfDoc {
	t.Helper()
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	d, err := parseIperf3(b)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// TestIperf3Conversion converts recorded iperf3 3.12 documents (1 s runs,
// 0.2 s intervals) and checks the result against iperf3's own totals.
func TestIperf3Conversion(t *testing.T) {
	t0 := time.Unix(1_800_000_000, 0)
	started, exited := t0.Add(time.Second), t0.Add(2100*time.Millisecond)
	const iv = 200 * time.Millisecond
	cases := []struct {
		file string
		f    Flow
		cc   string
	}{
		{"iperf3-tcp.json", Flow{Name: "a", Client: "h1", Server: "h2", Proto: TCP, Parallel: 1, Interval: iv}, "cubic"},
		{"iperf3-tcp-reverse-p2.json", Flow{Name: "b", Client: "h1", Server: "h2", Proto: TCP, Parallel: 2, Reverse: true, Interval: iv}, "reno"},
		{"iperf3-udp.json", Flow{Name: "c", Client: "h1", Server: "h2", Proto: UDP, Parallel: 1, Size: 160, Rate: 2_000_000, Interval: iv}, ""},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			d := loadIperf(t, c.file)
			flows, err := convertIperf3(d, c.f, t0, started, exited)
			if err != nil {
				t.Fatal(err)
			}
			if len(flows) != c.f.Parallel {
				t.Fatalf("%d flows for %d streams", len(flows), c.f.Parallel)
			}
			for i, f := range flows {
				if f.CC != c.cc || f.From != c.f.dataFrom() || f.To != c.f.dataTo() {
					t.Errorf("stream %d: cc %q %s -> %s", i, f.CC, f.From, f.To)
				}
				if len(f.Samples) != 5 {
					t.Fatalf("stream %d: %d samples, want 5", i, len(f.Samples))
				}
				if math.Abs(f.StartS-1.1) > 0.01 || math.Abs(f.EndS-2.1) > 0.01 {
					t.Errorf("stream %d: %.3f .. %.3f s, want 1.1 .. 2.1 (exit minus test length)", i, f.StartS, f.EndS)
				}
				var sum int64
				for _, s := range f.Samples {
					sum += s.Bytes
					if c.f.Proto == TCP && (s.TCP == nil || s.TCP.CwndBytes == 0 || s.TCP.SrttUs == 0 || s.TCP.CwndSegs == 0) {
						t.Errorf("stream %d: sample without sender TCP numbers: %+v", i, s.TCP)
					}
				}
				if sum != f.BytesReceived {
					t.Errorf("stream %d: intervals add up to %d bytes, iperf3's receiver total is %d", i, sum, f.BytesReceived)
				}
				if c.f.Proto == UDP {
					u := f.UDP
					if u == nil || u.Sent == 0 || u.Received != u.Sent || u.JitterRFC3550Us <= 0 || u.PayloadBytes != 160 {
						t.Errorf("udp: %+v", u)
					}
				}
			}
		})
	}
}

func TestIperf3BadOutput(t *testing.T) {
	if _, err := parseIperf3(nil); err == nil {
		t.Error("empty output accepted")
	}
	if _, err := parseIperf3([]byte("iperf3: error - unable to connect")); err == nil {
		t.Error("text output accepted")
	}
	d, err := parseIperf3([]byte(`{"start":{},"intervals":[],"end":{},"error":"unable to connect to server"}`))
	if err != nil || d.Error == "" {
		t.Fatalf("error document: %v %+v", err, d)
	}
	if _, err := convertIperf3(d, Flow{Parallel: 1}, time.Now(), time.Now(), time.Now()); err == nil {
		t.Error("document without intervals converted")
	}
}
