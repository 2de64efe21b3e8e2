package suite

import (
	"math"

	"github.com/emuctl/emuctl/analysis"
)

// Metrics of runs whose links follow a schedule (topo schedules): the
// phases are the flow's bottleneck rate at t = 0 and each rate step the
// run's result records (analysis.Result.Steps), in order. A suite that
// uses them schedules its flows' bottleneck direction only.

type ratePhase struct {
	from float64 // s since t = 0
	bps  float64
}

func (rd *runData) phases(f *analysis.Flow) ([]ratePhase, error) {
	if f.BottleneckBps <= 0 {
		return nil, missing("flow %s has no known bottleneck rate at t = 0", f.ID)
	}
	ph := []ratePhase{{f.StartS, f.BottleneckBps}}
	for _, s := range rd.res.Steps {
		if s.RateBps > 0 && s.Error == "" {
			ph = append(ph, ratePhase{s.AtS, s.RateBps})
		}
	}
	if len(ph) == 1 {
		return nil, missing("the run applied no rate step")
	}
	return ph, nil
}

func capBps(bps float64) float64 { return bps * 1448 / 1514 }

// schedFollow is the worst phase's goodput / cap(rate), each phase from
// its start + settleS to the next one's start.
func (rd *runData) schedFollow(f *analysis.Flow, settleS float64) (float64, error) {
	ph, err := rd.phases(f)
	if err != nil {
		return 0, err
	}
	end := f.StartS
	if n := len(f.Samples); n > 0 {
		end = f.Samples[n-1].TS
	}
	worst, judged := math.Inf(1), 0
	for i, p := range ph {
		from, to := p.from+settleS, end
		if i == 0 {
			from = max(from, f.StartS+rd.warmup)
		}
		if i+1 < len(ph) {
			to = ph[i+1].from
		}
		var bytes int64
		lo, hi := math.Inf(1), 0.0
		prev := f.StartS
		for _, s := range f.Samples {
			if prev >= from && s.TS <= to {
				bytes += s.Bytes
				lo, hi = min(lo, prev), max(hi, s.TS)
			}
			prev = s.TS
		}
		if hi-lo < 0.3 {
			continue // too short to judge once settled
		}
		worst = min(worst, float64(bytes)*8/(hi-lo)/capBps(p.bps))
		judged++
	}
	if judged == 0 {
		return 0, missing("no phase of flow %s lasts 0.3 s past its settling time", f.ID)
	}
	return worst, nil
}

// schedExcess is the largest ratio, at a sample, of the payload delivered
// so far to what the schedule's rates could carry since the flow began
// (10 ms of slack for the sampling clock).
func (rd *runData) schedExcess(f *analysis.Flow) (float64, error) {
	ph, err := rd.phases(f)
	if err != nil {
		return 0, err
	}
	allowed := func(ts float64) float64 {
		bits := 0.0
		for i, p := range ph {
			to := ts
			if i+1 < len(ph) {
				to = min(ts, ph[i+1].from)
			}
			if to > p.from {
				bits += capBps(p.bps) * (to - p.from)
			}
		}
		return bits / 8
	}
	var cum int64
	worst := 0.0
	for _, s := range f.Samples {
		cum += s.Bytes
		if a := allowed(s.TS + 0.01); a > 0 {
			worst = max(worst, float64(cum)/a)
		}
	}
	return worst, nil
}
