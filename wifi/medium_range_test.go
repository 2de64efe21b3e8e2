package wifi

import (
	"math"
	"testing"

	"github.com/emuctl/emuctl/wifi/model"
)

// An access point's range is where a station hears it at the threshold
// of the BSS's lowest rate: the medium's own Link says so at that
// distance.
func TestRangeM(t *testing.T) {
	for _, mode := range []string{"g", "n", "ax"} {
		cfg := MediumConfig{Radios: []MediumRadio{
			{Node: "ap", AP: -1, Mode: mode, FreqMHz: 2412, WidthMHz: 20, TxPowerDBm: 20},
			{Node: "sta", AP: 0, Mode: mode, FreqMHz: 2412, WidthMHz: 20, TxPowerDBm: 20}},
			PathLoss: model.DefaultPathLoss(2412), NoiseFigureDB: 7}
		d, ok := cfg.RangeM(0)
		if !ok {
			t.Fatalf("mode %s: no range", mode)
		}
		thr := berThreshold(idealRates(mode, model.Band2G4, 20)[0])
		cfg.Radios[1].Pos = [3]float64{d, 0, 0}
		l := cfg.Link(0, 1)
		t.Logf("mode %s: range %.2f m, SNR there %.2f dB, lowest rate's threshold %.2f dB", mode, d, l.SNRdB, thr)
		if !l.OK {
			t.Errorf("mode %s: the station does not detect the AP at its range (%.1f dBm)", mode, l.RxDBm)
		}
		if math.Abs(l.SNRdB-thr) > 0.01 {
			t.Errorf("mode %s: SNR %.3f dB at the range %.2f m, want the threshold %.3f", mode, l.SNRdB, d, thr)
		}
		if _, ok := cfg.RangeM(1); ok {
			t.Errorf("a station has a range")
		}
	}
}

// Antenna gains count on both ends of a link (power + both gains − path
// loss, as Mininet-WiFi's and ns-3's link budgets): 5 dBi on each adds
// 10 dB to what a receiver hears, both ways; an AP's range counts its own
// gain (a receiver with an isotropic antenna) and grows to where the
// path loss is 5 dB more.
func TestAntennaGain(t *testing.T) {
	cfg := MediumConfig{Radios: []MediumRadio{
		{Node: "ap", AP: -1, Mode: "g", FreqMHz: 2412, WidthMHz: 20, TxPowerDBm: 14},
		{Node: "sta", AP: 0, Mode: "g", FreqMHz: 2412, WidthMHz: 20, TxPowerDBm: 14, Pos: [3]float64{30, 0, 0}}},
		PathLoss: model.DefaultPathLoss(2412), NoiseFigureDB: 7}
	plain, plainBack := cfg.Link(0, 1), cfg.Link(1, 0)
	r0, _ := cfg.RangeM(0)
	cfg.Radios[0].GainDBi, cfg.Radios[1].GainDBi = 5, 5
	gained, gainedBack := cfg.Link(0, 1), cfg.Link(1, 0)
	if d := gained.RxDBm - plain.RxDBm; math.Abs(d-10) > 1e-9 || math.Abs(gainedBack.RxDBm-plainBack.RxDBm-10) > 1e-9 {
		t.Errorf("5 dBi each end: %.3f dBm -> %.3f dBm (%+.3f dB), back %+.3f dB; want +10 both ways", plain.RxDBm, gained.RxDBm, d, gainedBack.RxDBm-plainBack.RxDBm)
	}
	cfg.Radios[1].GainDBi = 0
	r1, ok := cfg.RangeM(0)
	l0, _ := cfg.PathLoss.LossDB(r0)
	l1, _ := cfg.PathLoss.LossDB(r1)
	t.Logf("range %.2f m without gain, %.2f m with the AP's 5 dBi (path loss %.2f -> %.2f dB)", r0, r1, l0, l1)
	if !ok || math.Abs(l1-l0-5) > 0.01 {
		t.Errorf("range %.2f m -> %.2f m: path loss there %.2f -> %.2f dB, want 5 dB more", r0, r1, l0, l1)
	}
}
