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
