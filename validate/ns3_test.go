package validate

import (
	"context"
	"encoding/json"
	"errors"
	"math"
	"slices"
	"testing"
	"time"
)

func TestNS3Programs(t *testing.T) {
	progs := NS3Programs()
	for _, want := range []string{"sack-reno", "dumbbell"} {
		if !slices.Contains(progs, want) {
			t.Errorf("programs %v lack %s", progs, want)
		}
	}
	if slices.Contains(progs, "wifi-ref") {
		t.Errorf("wifi-ref (built by validate/wifi with its own libraries) listed: %v", progs)
	}
	if _, _, err := BuildNS3(context.Background(), "no-such", t.TempDir()); err == nil {
		t.Error("built a program that does not exist")
	}
}

// sackRun is what the physics checks read from sack-reno's line.
type sackRun struct {
	Flows struct {
		Bulk struct {
			Goodput      float64 `json:"goodput_mbps"`
			GoodputWhole float64 `json:"goodput_whole_mbps"`
			MinRTT       float64 `json:"min_rtt_ms"`
			Retrans      float64 `json:"retrans"`
			RTOs         float64 `json:"rtos"`
			Recoveries   float64 `json:"recoveries"`
		} `json:"bulk"`
	} `json:"flows"`
	Links map[string]struct {
		In         float64 `json:"in"`
		LossDrops  float64 `json:"loss_drops"`
		QueueDrops float64 `json:"queue_drops"`
		QueuePeak  float64 `json:"queue_peak"`
	} `json:"links"`
}

// TestSackRenoPhysics builds sack-reno and runs the suite's wired stand-in
// at 0 % loss (SACK on) and at 5 % (SACK on and off), 10 s each, and
// checks what any correct simulation of that network must show.
func TestSackRenoPhysics(t *testing.T) {
	if err := ProbeNS3(); err != nil {
		if errors.Is(err, ErrNS3Missing) {
			t.Skipf("%v (CI installs both: scripts/install-deps.sh)", err)
		}
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	bin, built, err := BuildNS3(ctx, "sack-reno", NS3BinDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%s (built now: %v)", bin, built)
	run := func(args ...string) sackRun {
		t.Helper()
		line, err := RunNS3(ctx, bin, append(args, "--time=10", "--warmup=2", "--seed=1", "--run=1"))
		if err != nil {
			t.Fatal(err)
		}
		var r sackRun
		if err := json.Unmarshal(line, &r); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		return r
	}
	capacity := 54 * 1448.0 / 1514 // Mbit/s: 1448-byte segments in 1514-byte frames
	clean := run("--loss=0%", "--sack=true")
	on := run("--loss=5%", "--sack=true")
	off := run("--loss=5%", "--sack=false")
	for name, r := range map[string]sackRun{"0 %": clean, "5 % SACK on": on, "5 % SACK off": off} {
		b := r.Flows.Bulk
		if b.Goodput > capacity*1.001 || b.GoodputWhole > capacity*1.001 {
			t.Errorf("%s: goodput %.3f (whole %.3f) above the capacity %.3f Mbit/s", name, b.Goodput, b.GoodputWhole, capacity)
		}
		if b.MinRTT < 4 {
			t.Errorf("%s: min RTT %.3f ms under the 2 × 2 ms floor", name, b.MinRTT)
		}
		if q := r.Links["ap->srv"].QueuePeak; q > 100 {
			t.Errorf("%s: bottleneck queue held %v packets (limit 100)", name, q)
		}
	}
	if clean.Flows.Bulk.Goodput < 0.9*capacity {
		t.Errorf("0 %%: goodput %.3f, want ≥ 0.9 × %.3f", clean.Flows.Bulk.Goodput, capacity)
	}
	if l := clean.Links["sta->ap"]; l.LossDrops != 0 {
		t.Errorf("0 %%: %v packets lost", l.LossDrops)
	}
	// The bulk flow fills the 100-packet queue: drops there, nowhere else.
	if l := clean.Links["ap->srv"]; l.QueueDrops == 0 || l.QueuePeak != 100 {
		t.Errorf("0 %%: the queue never overflowed (peak %v, drops %v)", l.QueuePeak, l.QueueDrops)
	}
	for name, r := range map[string]sackRun{"SACK on": on, "SACK off": off} {
		l := r.Links["sta->ap"]
		p, sigma := l.LossDrops/l.In, math.Sqrt(0.05*0.95/l.In)
		if math.Abs(p-0.05) > 3*sigma {
			t.Errorf("5 %% %s: measured loss %.4f of %v packets, outside 5 %% ± 3σ (%.4f)", name, p, l.In, 3*sigma)
		}
	}
	// SACK's scoreboard retransmits what was lost; ns-3's NewReno without
	// it re-sends after every partial ACK, much of it already delivered.
	bOn, bOff := on.Flows.Bulk, off.Flows.Bulk
	lossOn, lossOff := on.Links["sta->ap"].LossDrops, off.Links["sta->ap"].LossDrops
	if bOn.Retrans > 1.1*lossOn+2 {
		t.Errorf("5 %% SACK on: %v retransmissions for %v losses", bOn.Retrans, lossOn)
	}
	if bOff.Retrans/lossOff <= bOn.Retrans/lossOn {
		t.Errorf("5 %%: retransmissions per loss %.2f without SACK, %.2f with", bOff.Retrans/lossOff, bOn.Retrans/lossOn)
	}
	// Not checked: SACK on ≥ SACK off. In ns-3 3.37 it does not hold here
	// (README.md in validate/ns3): without RACK and TLP both variants wait
	// for the same RTOs, and NewReno keeps the larger window.
	t.Logf("5 %%: goodput SACK on %.2f, off %.2f Mbit/s; RTOs %v / %v; retransmissions %v / %v for %v / %v losses",
		bOn.Goodput, bOff.Goodput, bOn.RTOs, bOff.RTOs, bOn.Retrans, bOff.Retrans, lossOn, lossOff)
}
