package model

import (
	"math"
	"testing"
)

// snrForPER finds the SNR (dB) at which a psdu-byte frame at r fails with
// probability per.
func snrForPER(r Rate, psdu int, per float64) float64 {
	lo, hi := -20.0, 60.0
	for range 80 {
		m := (lo + hi) / 2
		if PER(r, psdu, DBToLinear(m)) > per {
			lo = m
		} else {
			hi = m
		}
	}
	return (lo + hi) / 2
}

// TestYansAgainstNS3: PER against what ns-3 3.37's YansErrorRateModel
// produced in its own simulation (validate/ns3: 802.11a, 1536-byte MPDUs,
// log-distance path loss; make validate-wifi): 0.183 at 19.0 dB for
// 54 Mbit/s (30 m) and 0.217 at 0.4 dB for 6 Mbit/s (125 m). Eb/N0 uses
// the coded rate (WifiMode::GetPhyRate: 72 Mbit/s for 54), as ns-3 does —
// with the data rate instead (what research/wifi-medium.md's SNR table
// assumed) 54 Mbit/s would lose 0.6 % at 19 dB, not 18 %.
func TestYansAgainstNS3(t *testing.T) {
	cases := []struct {
		kbps     int
		snr, per float64
	}{{54000, 19.0, 0.183}, {6000, 0.4, 0.217}}
	for _, c := range cases {
		got := PER(ofdm(c.kbps), 1536, DBToLinear(c.snr))
		if math.Abs(got-c.per) > 0.03 {
			t.Errorf("%d kbit/s at %.1f dB: PER %.3f, ns-3 simulated %.3f", c.kbps, c.snr, got, c.per)
		}
	}
	// The SNR for 10 % PER of a 1538-byte frame, per rate (regression;
	// 9 Mbit/s needs more than 12 in Yans, a property of its BPSK ¾ code
	// spectrum).
	want := []float64{0.76, 3.05, 3.75, 6.63, 10.15, 13.32, 17.79, 19.27}
	for i, k := range LegacyOFDMRates {
		if got := snrForPER(ofdm(k), 1538, 0.1); math.Abs(got-want[i]) > 0.02 {
			t.Errorf("%d kbit/s: 10 %% PER at %.2f dB, want %.2f", k, got, want[i])
		}
	}
}

func TestPERMonotone(t *testing.T) {
	r := ofdm(54000)
	prev := 1.0
	for db := 0.0; db <= 30; db += 0.5 {
		p := PER(r, 1538, DBToLinear(db))
		if p > prev+1e-12 || p < 0 || p > 1 {
			t.Fatalf("PER not monotone in SNR at %.1f dB: %g after %g", db, p, prev)
		}
		prev = p
	}
	if PER(r, 1538, DBToLinear(30)) > 1e-6 || PER(r, 1538, DBToLinear(5)) < 0.999 {
		t.Error("54 Mbit/s must be clean at 30 dB and dead at 5 dB")
	}
	// longer frames fail more often
	if PER(r, 1538, DBToLinear(18)) <= PER(r, 100, DBToLinear(18)) {
		t.Error("PER must grow with frame length")
	}
}

func TestNoiseAndPathLoss(t *testing.T) {
	if n := NoiseDBm(20, 7); math.Abs(n-(-93.97)) > 0.02 {
		t.Errorf("noise at 20 MHz, NF 7: %.2f dBm, want −93.97", n)
	}
	pl := DefaultPathLoss(5180)
	if l, _ := pl.LossDB(10); math.Abs(l-76.6777) > 1e-9 {
		t.Errorf("log-distance at 10 m: %.4f dB, want 76.6777", l)
	}
	// within the reference distance, co-located nodes included, the
	// reference loss (ns-3's log-distance model); once this said 0 dB at 0 m
	for _, d := range []float64{0, 0.5, 1} {
		if l, _ := pl.LossDB(d); l != 46.6777 {
			t.Errorf("log-distance at %g m: %.4f dB, want the reference 46.6777", d, l)
		}
	}
	f := PathLoss{Model: "friis", FreqMHz: 5150}
	if l, _ := f.LossDB(1); math.Abs(l-46.68) > 0.01 {
		t.Errorf("free space at 1 m, 5.15 GHz: %.3f dB, want 46.68 (ns-3's reference loss)", l)
	}
	if _, err := (PathLoss{Model: "nope"}).LossDB(3); err == nil {
		t.Error("unknown model accepted")
	}
}
