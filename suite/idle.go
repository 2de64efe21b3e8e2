package suite

import (
	"context"
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/topo"
	"github.com/emuctl/emuctl/traffic"
)

// idlePings is how many echo requests measure each flow's idle path.
const idlePings = 5

// idleRTTs pings, before any traffic, from each flow's client to the
// address it will connect to, and returns the smallest RTT per flow in
// ms: the path's floor (experiments.md C3), free of queueing.
func idleRTTs(ctx context.Context, lab string, spec *topo.Spec, flows []traffic.Flow) map[string]float64 {
	out := map[string]float64{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, f := range flows {
		dst := f.Dst
		if !dst.IsValid() {
			if n := spec.Node(f.Server); n != nil {
				dst, _ = emu.PrimaryAddr(n)
			}
		}
		if !dst.IsValid() {
			continue
		}
		name := f.Name
		if name == "" {
			name = flowName(i)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			best := math.Inf(1)
			for k := 0; k < idlePings && ctx.Err() == nil; k++ {
				if rtt, err := emu.Ping(ctx, lab, f.Client, dst, time.Second); err == nil {
					best = math.Min(best, float64(rtt)/float64(time.Millisecond))
				}
				time.Sleep(20 * time.Millisecond)
			}
			if !math.IsInf(best, 1) {
				mu.Lock()
				out[name] = best
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return out
}

func flowName(i int) string { return "f" + strconv.Itoa(i+1) }
