package traffic

import (
	"context"
	"fmt"
	"time"

	"github.com/emuctl/emuctl/analysis"
)

// Comparison is emuctl's single-flow TCP goodput beside iperf3's on the
// same pair of nodes (bit/s, median over the rounds).
type Comparison struct {
	Native, Iperf3 float64
	Rounds         int
	Duration       time.Duration
	Interval       time.Duration
}

// Ratio is Native / Iperf3.
func (c Comparison) Ratio() float64 {
	if c.Iperf3 == 0 {
		return 0
	}
	return c.Native / c.Iperf3
}

func (c Comparison) String() string {
	return fmt.Sprintf("single TCP flow, %v x %d rounds, TCP_INFO every %v: emuctl %.2f Gbit/s, iperf3 %.2f Gbit/s, ratio %.3f",
		c.Duration, c.Rounds, c.Interval, c.Native/1e9, c.Iperf3/1e9, c.Ratio())
}

// CompareWithIperf3 runs one TCP flow client → server with the native
// engine sampling TCP_INFO every interval, then the same with iperf3,
// for rounds rounds (alternating which goes first), and returns the median
// goodputs over each flow's whole run. For `emuctl bench` and the
// benchmark in this package.
func CompareWithIperf3(ctx context.Context, lab, client, server string, dur, interval time.Duration, rounds int) (Comparison, error) {
	c := Comparison{Rounds: rounds, Duration: dur, Interval: interval}
	var native, iperf []float64
	for i := 0; i < rounds; i++ {
		// Alternate which engine goes first: on a shared machine the
		// order alone shifted results by several percent.
		order := []string{EngineNative, EngineIperf3}
		if i%2 == 1 {
			order = []string{EngineIperf3, EngineNative}
		}
		for _, engine := range order {
			iv := interval
			if engine == EngineIperf3 {
				iv = max(interval, 100*time.Millisecond)
			}
			r, err := Run(ctx, lab, []Flow{{Client: client, Server: server, Duration: dur, Interval: iv, Engine: engine}}, Options{})
			if err != nil {
				return c, err
			}
			f := &r.Flows[0]
			g := analysis.Goodput(f, analysis.WholeRun(f))
			if engine == EngineNative {
				native = append(native, g)
			} else {
				iperf = append(iperf, g)
			}
		}
	}
	c.Native, c.Iperf3 = analysis.Median(native), analysis.Median(iperf)
	return c, nil
}
