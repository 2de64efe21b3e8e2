package analysis

import (
	"math"
	"math/rand"
	"strconv"
	"testing"
)

// sig3 rounds to 3 significant digits, the precision the paper states.
func sig3(v float64) string { return strconv.FormatFloat(v, 'g', 3, 64) }

// TestTACKPaperNumbers reproduces experiments.md §6.3 / check S4-1 exactly
// (β = 4, L = 2, MSS = 1500 B; ratios against per-packet ACK, L = 1).
func TestTACKPaperNumbers(t *testing.T) {
	p := DefaultTACK
	for _, c := range []struct {
		bwMbit, rttMs float64
		fTack, fRef   string // Hz
		ratioPct      string // f_tack / f_tcp(L=1)
	}{
		{48, 10, "400", "4e+03", "10"},
		{200, 10, "400", "1.67e+04", "2.4"},
		{200, 80, "50", "1.67e+04", "0.3"},
		{200, 200, "20", "1.67e+04", "0.12"},
		{10, 200, "20", "833", "2.4"}, // journal p. 2008: 200 ms, 10 Mbit/s → 20 Hz
		{7.056, 10, "294", "588", "50"},
		{7.056, 80, "50", "588", "8.5"},
		{7.056, 200, "20", "588", "3.4"},
		{590, 10, "400", "4.92e+04", "0.814"},
		{590, 80, "50", "4.92e+04", "0.102"},
		{590, 200, "20", "4.92e+04", "0.0407"},
	} {
		pt := TACKModel(c.bwMbit*1e6, c.rttMs/1000, p)
		if sig3(pt.FTackHz) != c.fTack || sig3(pt.FTCP1Hz) != c.fRef || sig3(pt.RatioL1*100) != c.ratioPct {
			t.Errorf("bw %g Mbit/s, RTT %g ms: f_tack %s (want %s), f_tcp(L=1) %s (want %s), ratio %s %% (want %s %%)",
				c.bwMbit, c.rttMs, sig3(pt.FTackHz), c.fTack, sig3(pt.FTCP1Hz), c.fRef, sig3(pt.RatioL1*100), c.ratioPct)
		}
	}
	// 802.11b at 10 ms: f_tack equals TCP's L = 2 frequency (byte-counting regime).
	pt := TACKModel(7.056e6, 0.010, p)
	if pt.FTackHz != pt.FTCP2Hz || pt.Regime != RegimeByteCounting {
		t.Errorf("7.056 Mbit/s @10 ms: f_tack %g, f_tcp(L=2) %g, regime %s", pt.FTackHz, pt.FTCP2Hz, pt.Regime)
	}
	if pt := TACKModel(200e6, 0.010, p); pt.Regime != RegimePeriodic {
		t.Errorf("200 Mbit/s @10 ms: regime %s", pt.Regime)
	}
}

// TestTACKPivot checks S4-3: bw·RTT_min = β·L·MSS → 96 / 9.6 / 1.2 / 0.48
// Mbit/s at 1 / 10 / 80 / 200 ms, and the regime switches there.
func TestTACKPivot(t *testing.T) {
	for rttMs, want := range map[float64]float64{1: 96, 10: 9.6, 80: 1.2, 200: 0.48} {
		got := PivotBps(rttMs/1000, DefaultTACK) / 1e6
		if math.Abs(got-want) > 1e-9*want {
			t.Errorf("pivot at %g ms: %g Mbit/s, want %g", rttMs, got, want)
		}
		bw := want * 1e6
		if Regime(bw*1.001, rttMs/1000, DefaultTACK) != RegimePeriodic || Regime(bw*0.999, rttMs/1000, DefaultTACK) != RegimeByteCounting {
			t.Errorf("regime does not switch at the pivot for %g ms", rttMs)
		}
		// At the pivot both branches of the min agree.
		pt := TACKModel(bw, rttMs/1000, DefaultTACK)
		if math.Abs(pt.FTackHz-DefaultTACK.Beta/(rttMs/1000)) > 1e-9*pt.FTackHz ||
			math.Abs(pt.FTackHz-FByteCounting(bw, 2, 1500)) > 1e-9*pt.FTackHz {
			t.Errorf("branches differ at the pivot for %g ms: %+v", rttMs, pt)
		}
	}
}

// TestTACKNeverAboveTCP is the property f_tack ≤ f_tcp(L) (check S4-2),
// over random bandwidths, RTTs and parameters.
func TestTACKNeverAboveTCP(t *testing.T) {
	rng := rand.New(rand.NewSource(42))
	for i := 0; i < 100000; i++ {
		bw := math.Pow(10, 3+rng.Float64()*8)   // 1 kbit/s .. 100 Gbit/s
		rtt := math.Pow(10, -6+rng.Float64()*6) // 1 µs .. 1 s
		p := TACKParams{Beta: 2 + rng.Float64()*14, L: 1 + float64(rng.Intn(16)), MSSBytes: 500 + float64(rng.Intn(8500))}
		f := FTack(bw, rtt, p)
		if f > FByteCounting(bw, p.L, p.MSSBytes) || f > p.Beta/rtt || f <= 0 {
			t.Fatalf("bw %g rtt %g %+v: f_tack %g above f_tcp(L) %g or β/RTT %g", bw, rtt, p, f, FByteCounting(bw, p.L, p.MSSBytes), p.Beta/rtt)
		}
		// With L ≥ 1, f_tack is also never above per-packet ACK.
		if f > FByteCounting(bw, 1, p.MSSBytes) {
			t.Fatalf("f_tack above per-packet ACK")
		}
	}
}

func TestDelayedAndWMin(t *testing.T) {
	// γ = 40 ms: below 2·1500·8/0.04 = 600 kbit/s every packet is ACKed.
	if f := FDelayed(300e3, 1500, 0.040); f != 25 {
		t.Errorf("FDelayed(300 kbit/s) = %g, want 25 Hz (per packet)", f)
	}
	if f := FDelayed(48e6, 1500, 0.040); f != 2000 {
		t.Errorf("FDelayed(48 Mbit/s) = %g, want 2000 Hz (every 2nd packet)", f)
	}
	if f := FPeriodic(0.05); f != 20 {
		t.Errorf("FPeriodic(50 ms) = %g", f)
	}
	// β = 4 needs 4/3 of the BDP: a third of a BDP of buffer.
	if w := WMinBytes(8e6, 0.1, 4); math.Abs(w-4.0/3*1e5) > 1e-6 {
		t.Errorf("WMin = %g", w)
	}
	if err := (TACKParams{Beta: 1, L: 2, MSSBytes: 1500}).Validate(); err == nil {
		t.Error("β = 1 accepted")
	}
}

func TestLogSpace(t *testing.T) {
	v := LogSpace(1, 1000, 4)
	for i, w := range []float64{1, 10, 100, 1000} {
		if math.Abs(v[i]-w) > 1e-9*w {
			t.Fatalf("LogSpace = %v", v)
		}
	}
}
