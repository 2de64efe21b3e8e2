package suite

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/emuctl/emuctl/emu"
)

// The kernel frees deleted network namespaces in the background, holding
// locks that namespace creation and netlink need; a lab brought up while
// it frees the previous one (~11,000 namespaces after a large lab) sees
// host stalls of tens of ms and a late link engine, and its run is judged
// invalid. So before every deploy the runner waits until the kernel has
// caught up: emu.WaitNetnsSettled's probe (three namespace creations in a
// row under 3 ms, or on a slow machine such as the kernel lab's emulated
// one under 4 × the fastest creation seen: emu.NetnsFastCreate), holding
// for netnsSettleHold. The hold is needed because the kernel frees in
// phases: measured here after 2000 deleted namespaces with a veth each,
// creation was blocked for 0.5-0.8 s at a time with 0.4-0.65 s of fast
// creations in between, and the freeing (slab count) ended ~1.7 s after
// the probe alone first passed.
const (
	// netnsSettleMax bounds the wait; after it the run is made anyway and
	// its fidelity checks judge it.
	netnsSettleMax = 120 * time.Second
	// netnsSettleHold is how long the probe must keep passing, looked at
	// every netnsSettleEvery; longer than the gaps between the kernel's
	// phases.
	netnsSettleHold  = time.Second
	netnsSettleEvery = 100 * time.Millisecond
	// netnsSmallLab is the size (namespaces) under which the previous
	// run's lab is freed in one short phase: after it the probe needs to
	// hold only netnsSettleHoldSmall. The full hold stays for the first
	// run (whatever the machine freed before is unknown) and after larger
	// labs. Measured here (TestSettleAfterSmallLab, 5 tries): after 64
	// namespaces with a veth each were released the probe passed within
	// 66-113 ms, and no namespace creation in the next 1.5 s took over
	// 2 ms (a freeing phase blocks one for 0.5 s).
	netnsSmallLab        = 64
	netnsSettleHoldSmall = 200 * time.Millisecond
	// netnsSettleQuiet is the probe's budget: a probe that has not passed
	// within it means the kernel is busy (and the wait gets a progress
	// line).
	netnsSettleQuiet = 200 * time.Millisecond
	// netnsSettleStep is how often a long wait looks at ctx (Ctrl-C).
	netnsSettleStep = 500 * time.Millisecond
)

// netnsWaitText is what the progress line says while the runner waits.
const netnsWaitText = "waiting for the kernel to free deleted network namespaces (previous lab)"

// settleWait is how one wait went.
type settleWait struct {
	took        time.Duration
	settled     bool
	busy        bool          // some probe did not pass within netnsSettleQuiet
	interrupted bool          // ctx was cancelled during the wait
	fast        time.Duration // the probe's bound (emu.NetnsFastCreate)
	hold        time.Duration // how long the probe had to keep passing
}

// fastText is the probe's bound as the conditions say it: "3 ms" on a
// normal host, more on a slow one (emu.NetnsFastCreate).
func fastText(d time.Duration) string {
	if d <= 0 {
		d = emu.NetnsFastCreate()
	}
	return strings.TrimSuffix(fmt.Sprintf("%.1f", float64(d)/float64(time.Millisecond)), ".0") + " ms"
}

// holdText is a hold as the conditions say it ("1 s", "0.2 s").
func holdText(d time.Duration) string {
	if d <= 0 {
		d = netnsSettleHold
	}
	return strings.TrimSuffix(fmt.Sprintf("%.1f", d.Seconds()), ".0") + " s"
}

// condition is the wait as a run condition (netns_settle). A quick one
// reads the same for every run, so the analysis report lists it once
// among the conditions all runs share and only a real wait stands out.
func (s settleWait) condition() string {
	switch {
	case s.interrupted:
		return fmt.Sprintf("interrupted after %.2f s of waiting", s.took.Seconds())
	case !s.settled:
		return fmt.Sprintf("not settled after %.0f s (3 namespace creations in a row never all took < %s)", s.took.Seconds(), fastText(s.fast))
	case !s.busy:
		return fmt.Sprintf("settled (probe passed at once and for %s: 3 namespace creations in a row < %s)", holdText(s.hold), fastText(s.fast))
	}
	return fmt.Sprintf("settled after %.2f s (probe: 3 namespace creations in a row < %s, holding for %s)",
		s.took.Seconds(), fastText(s.fast), holdText(s.hold))
}

// settleHold is how long the probe must keep passing after a run whose
// lab had prev namespaces (-1: no run before this one).
func settleHold(prev int) time.Duration {
	if prev >= 0 && prev < netnsSmallLab {
		return netnsSettleHoldSmall
	}
	return netnsSettleHold
}

// waitNetnsSettled waits, at most netnsSettleMax, for the kernel to finish
// freeing deleted namespaces, saying so on bar once it finds the kernel
// busy. hold is how long the probe must keep passing (settleHold).
func waitNetnsSettled(ctx context.Context, bar *progress, hold time.Duration) settleWait {
	t0 := time.Now()
	s := settleWait{hold: hold}
	var held time.Time // when the probe started passing; zero: it has not
	step := netnsSettleQuiet
	for !s.settled && !s.interrupted {
		left := netnsSettleMax - time.Since(t0)
		if left <= 0 {
			break
		}
		m := min(step, left)
		// Returning before its max means the probe saw three fast
		// creations.
		passed := emu.WaitNetnsSettled(m) < m
		switch {
		case passed && held.IsZero():
			held = time.Now()
		case passed && time.Since(held) >= hold:
			s.settled = true
		case !passed:
			held = time.Time{}
			if !s.busy {
				bar.waiting(netnsWaitText)
				s.busy = true
			}
			step = netnsSettleStep
		}
		if s.settled {
			break
		}
		if passed {
			select {
			case <-ctx.Done():
			case <-time.After(netnsSettleEvery):
			}
			step = netnsSettleQuiet
		}
		s.interrupted = ctx.Err() != nil
	}
	s.took = time.Since(t0)
	s.fast = emu.NetnsFastCreate()
	if s.busy {
		res := fmt.Sprintf("%.1f s", s.took.Seconds())
		switch {
		case s.interrupted:
			res = "interrupted after " + res
		case !s.settled:
			res = "not settled after " + res + "; running anyway (the fidelity checks judge the run)"
		}
		bar.waited(netnsWaitText, res)
	}
	return s
}

// settleSummary is the suite-level netns_settle condition: how long the
// runs waited for the kernel before their deploys.
func settleSummary(runs []*RunRecord) string {
	s := fmt.Sprintf("before every deploy, waited up to %.0f s for 3 namespace creations in a row < %s, holding for %.0f s (%s after a lab of fewer than %d namespaces)",
		netnsSettleMax.Seconds(), fastText(0), netnsSettleHold.Seconds(), holdText(netnsSettleHoldSmall), netnsSmallLab)
	var longest *RunRecord
	busy, unsettled := 0, 0
	for _, r := range runs {
		if r.NetnsSettle == "" {
			continue
		}
		if longest == nil || r.NetnsSettleS > longest.NetnsSettleS {
			longest = r
		}
		switch {
		case strings.HasPrefix(r.NetnsSettle, "settled after"):
			busy++
		case strings.HasPrefix(r.NetnsSettle, "not settled after"):
			busy++
			unsettled++
		}
	}
	switch {
	case longest == nil:
		return s
	case busy == 0:
		return s + fmt.Sprintf(": no run found the kernel busy (longest wait %.2f s)", longest.NetnsSettleS)
	}
	s += fmt.Sprintf(": %d of %d runs found the kernel busy and waited, longest %.2f s (before %s)", busy, len(runs),
		longest.NetnsSettleS, longest.ID)
	if unsettled > 0 {
		s += fmt.Sprintf("; %d never settled", unsettled)
	}
	return s
}
