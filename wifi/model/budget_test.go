package model

import (
	"math"
	"testing"
)

// The link budget against the formula by hand. ns-3's defaults: log-distance
// path loss L(d) = 46.6777 + 30·log10(d / 1 m) dB (L0 within 1 m); thermal
// noise kT with k = 1.3803e-23 J/K, T = 290 K is −173.976 dBm/Hz, so
// N(B) = −173.976 + 10·log10(B) + NF:
//
//	N(20 MHz), NF 7 dB = −173.976 + 73.010 + 7 = −93.966 dBm
//	N(80 MHz), NF 7 dB = −173.976 + 79.031 + 7 = −87.945 dBm
//
// 20 dBm with 2 dBi and 3 dBi antennas over 10 m (L = 76.6777 dB):
// Rx = 20 + 2 + 3 − 76.6777 = −51.678 dBm, SNR 42.288 dB over 20 MHz,
// 36.268 dB over 80 MHz; 10 dB of extra loss takes both 10 dB off.
func TestLinkBudget(t *testing.T) {
	b := LinkBudget{TxPowerDBm: 20, TxGainDBi: 2, RxGainDBi: 3, PathLoss: DefaultPathLoss(5180), NoiseFigureDB: 7}
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-3 {
			t.Errorf("%s = %.4f, want %.4f", what, got, want)
		}
	}
	near("noise, width 0 (20 MHz)", b.NoiseDBm(), -93.966)
	l, err := b.At(10)
	if err != nil {
		t.Fatal(err)
	}
	near("Rx at 10 m", l.RxDBm, -51.678)
	near("SNR at 10 m, 20 MHz", l.SNRdB, 42.288)
	if !l.OK || !l.Detected(DefaultDetectDBm, DefaultDetectSNRdB) {
		t.Errorf("at 10 m: %+v not reaching or not detected", l)
	}
	// the same link between positions 10 m apart (a 6-8-10 triangle)
	if p, _ := b.Between([3]float64{1, 1, 2}, [3]float64{7, 9, 2}); p != l {
		t.Errorf("Between 10 m apart = %+v, At(10) = %+v", p, l)
	}

	w := b
	w.NoiseWidthMHz = 80
	near("noise, 80 MHz", w.NoiseDBm(), -87.945)
	l80, _ := w.At(10)
	near("Rx at 10 m, 80 MHz", l80.RxDBm, -51.678)
	near("SNR at 10 m, 80 MHz", l80.SNRdB, 36.268)

	x := b
	x.ExtraLossDB = 10
	lx, _ := x.At(10)
	near("Rx with 10 dB extra", lx.RxDBm, -61.678)
	near("SNR with 10 dB extra", lx.SNRdB, 32.288)

	// within the reference distance the loss stays L0 = 46.6777 dB
	l0, _ := b.At(0.5)
	near("Rx at 0.5 m", l0.RxDBm, 25-46.6777)

	// detection: 25 − 46.6777 − 30·log10(100) = −81.678 dBm at 100 m
	// (detected: ≥ −82 dBm, SNR 12.29 dB); at 110 m −82.919 dBm reaches
	// the receiver (≥ −101) but its preamble is not detected; at 1 km
	// −111.678 dBm reaches nothing.
	l100, _ := b.At(100)
	l110, _ := b.At(110)
	l1k, _ := b.At(1000)
	near("Rx at 100 m", l100.RxDBm, -81.678)
	near("Rx at 110 m", l110.RxDBm, -82.919)
	near("Rx at 1 km", l1k.RxDBm, -111.678)
	if !l100.Detected(DefaultDetectDBm, DefaultDetectSNRdB) {
		t.Errorf("100 m (%.3f dBm) not detected", l100.RxDBm)
	}
	if !l110.OK || l110.Detected(DefaultDetectDBm, DefaultDetectSNRdB) {
		t.Errorf("110 m (%.3f dBm): OK %v, detected %v; want reaching, not detected", l110.RxDBm, l110.OK, l110.Detected(DefaultDetectDBm, DefaultDetectSNRdB))
	}
	if l1k.OK || l1k.Detected(-200, -200) {
		t.Errorf("1 km (%.3f dBm) reaches the receiver", l1k.RxDBm)
	}
	// the SNR threshold alone: 10 dB of SNR is detected at 4 dB, not at 15
	if s := b.AtSNR(10); !s.Detected(-200, 4) || s.Detected(-200, 15) {
		t.Errorf("AtSNR(10) = %+v: detection at 4 / 15 dB wrong", s)
	}

	// a fixed SNR: the power that gives it over the noise floor
	s := b.AtSNR(12)
	near("Rx of a fixed 12 dB SNR", s.RxDBm, -81.966)
	if s.SNRdB != 12 || !s.OK {
		t.Errorf("AtSNR(12) = %+v", s)
	}

	// range at 10 dB SNR: the loss 25 + 93.966 − 10 = 108.966 dB is
	// reached at 10^((108.966 − 46.6777)/30) = 119.200 m
	d, ok := b.RangeM(10)
	if !ok || math.Abs(d-119.200) > 1e-3 {
		t.Errorf("RangeM(10) = %.4f, %v; want 119.200 m", d, ok)
	}
	if ld, _ := b.At(d); math.Abs(ld.SNRdB-10) > 1e-6 {
		t.Errorf("SNR at the range: %.6f dB, want 10", ld.SNRdB)
	}

	if _, err := (LinkBudget{PathLoss: PathLoss{Model: "nope"}}).At(1); err == nil {
		t.Error("unknown path-loss model: no error")
	}
}
