package wifi

import (
	"math"
	"slices"
	"strconv"
	"time"

	"github.com/emuctl/emuctl/wifi/model"
)

// Rate choice on the engine backend, which has no mac80211 and so no
// minstrel: ns-3's IdealWifiManager. Every rate of the BSS gets an SNR
// threshold, the SNR at which its bit error rate (the Yans model of
// wifi/model) falls to 1e-6; a frame goes at the fastest rate whose
// threshold the link's SNR meets (the slowest when none does).

// idealBER is ns-3's IdealWifiManager BerThreshold default.
const idealBER = 1e-6

type idealTable struct {
	rates []model.Rate // ascending by data rate
	thr   []float64    // SNR thresholds, dB
}

// idealRates lists a BSS's rates for the ideal manager: DSSS/CCK for
// mode b, OFDM for a, both for g; one spatial stream's HT/VHT/HE MCSs at
// the channel width and an 800 ns guard interval for n, ac and ax (and
// be, timed as ax).
func idealRates(mode string, band model.Band, width int) []model.Rate {
	var out []model.Rate
	switch mode {
	case "b":
		for _, k := range model.DSSSRates {
			out = append(out, model.Rate{Class: model.DSSS, Kbps: k})
		}
	case "a":
		for _, k := range model.LegacyOFDMRates {
			out = append(out, model.Rate{Class: model.OFDM, Kbps: k})
		}
	case "g":
		if band == model.Band2G4 {
			for _, k := range model.DSSSRates {
				out = append(out, model.Rate{Class: model.DSSS, Kbps: k})
			}
		}
		for _, k := range model.LegacyOFDMRates {
			out = append(out, model.Rate{Class: model.OFDM, Kbps: k})
		}
	default:
		m := model.ModeN
		top := 7
		switch mode {
		case "ac":
			m, top = model.ModeAC, 9
		case "ax", "be":
			m, top = model.ModeAX, 11
		}
		if width == 0 {
			width = 20
		}
		for i := 0; i <= top; i++ {
			r, err := model.ParseRate(m, "mcs"+strconv.Itoa(i), width, 1, 800*time.Nanosecond)
			if err == nil {
				out = append(out, r)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b model.Rate) int {
		switch {
		case a.Mbps() < b.Mbps():
			return -1
		case a.Mbps() > b.Mbps():
			return 1
		}
		return 0
	})
	return out
}

func newIdealTable(mode string, band model.Band, width int) *idealTable {
	t := &idealTable{rates: idealRates(mode, band, width)}
	for _, r := range t.rates {
		t.thr = append(t.thr, berThreshold(r))
	}
	return t
}

// shortPreamble gives the DSSS/CCK rates above 1 Mbit/s the short PLCP
// preamble (an 802.11b BSS with preamble: short; 1 Mbit/s always has the
// long one).
func (t *idealTable) shortPreamble() {
	for i, r := range t.rates {
		if r.Class == model.DSSS && r.Kbps != 1000 {
			t.rates[i].ShortPreamble = true
		}
	}
}

// berThreshold is the SNR (dB) at which one bit at r is in error with
// probability idealBER (bisection: success falls monotonically with SNR).
func berThreshold(r model.Rate) float64 {
	lo, hi := -20.0, 80.0
	for i := 0; i < 60; i++ {
		mid := (lo + hi) / 2
		if 1-model.ChunkSuccess(r, model.DBToLinear(mid), 1) > idealBER {
			lo = mid
		} else {
			hi = mid
		}
	}
	return math.Round(hi*1000) / 1000
}

// pick returns the fastest rate whose threshold snrDB meets.
func (t *idealTable) pick(snrDB float64) model.Rate {
	best := t.rates[0]
	for i, r := range t.rates {
		if snrDB >= t.thr[i] {
			best = r
		}
	}
	return best
}

// IdealRate is the rate the engine backend gives a BSS's unicast data at
// a link SNR (dB): ns-3's IdealWifiManager over the BSS's rates (see
// idealRates).
func IdealRate(mode string, band model.Band, width int, snrDB float64) model.Rate {
	return newIdealTable(mode, band, width).pick(snrDB)
}
