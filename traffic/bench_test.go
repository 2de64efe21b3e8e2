package traffic

import (
	"context"
	"testing"
	"time"
)

// BenchmarkTCPvsIperf3 measures single-flow TCP throughput on an
// unshaped veth pair between two namespaces, emuctl sampling TCP_INFO at
// 100 Hz against iperf3 on the same pair, and reports the ratio (target
// ≥ 0.95). Run: sudo go test -run '^$' -bench TCPvsIperf3 -benchtime 3x (each iteration: two rounds, each engine first once) ./traffic/
func BenchmarkTCPvsIperf3(b *testing.B) {
	if !needIperf3OK() {
		b.Skip("iperf3 is not installed")
	}
	lab := benchLab(b)
	var native, iperf float64
	n := 0
	for b.Loop() {
		c, err := CompareWithIperf3(context.Background(), lab, "h1", "h2", 4*time.Second, 10*time.Millisecond, 2)
		if err != nil {
			b.Fatal(err)
		}
		native += c.Native
		iperf += c.Iperf3
		n++
		b.Logf("round %d: %v", n, c)
	}
	b.ReportMetric(native/float64(n)/1e9, "emuctl-Gbit/s")
	b.ReportMetric(iperf/float64(n)/1e9, "iperf3-Gbit/s")
	b.ReportMetric(native/iperf, "ratio")
}
