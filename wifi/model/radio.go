package model

import (
	"fmt"
	"math"
)

// PathLoss is a propagation model: the loss in dB over a distance.
type PathLoss struct {
	// Model is "friis" (free space), "logdistance" or "itu-indoor"
	// (ITU-R P.1238, office: N = 30, one floor).
	Model string
	// Exponent and RefLossDB, RefDistM parameterise log-distance:
	// L = RefLoss + 10·n·log10(d/d0). ns-3's defaults: n = 3, d0 = 1 m,
	// L0 = 46.6777 dB (free space at 1 m, 5.15 GHz).
	Exponent  float64
	RefLossDB float64
	RefDistM  float64
	// FreqMHz is the carrier (Friis, ITU).
	FreqMHz float64
}

// DefaultPathLoss is ns-3's LogDistancePropagationLossModel default.
func DefaultPathLoss(freqMHz float64) PathLoss {
	return PathLoss{Model: "logdistance", Exponent: 3, RefLossDB: 46.6777, RefDistM: 1, FreqMHz: freqMHz}
}

// LossDB is the path loss at d metres: log-distance keeps its reference
// loss within the reference distance, co-located nodes included (ns-3's
// LogDistancePropagationLossModel); Friis has none at no distance.
func (p PathLoss) LossDB(d float64) (float64, error) {
	switch p.Model {
	case "friis", "freespace", "free-space":
		if d <= 0 {
			return 0, nil // ns-3's Friis: no loss at no distance
		}
		lambda := 299792458.0 / (p.FreqMHz * 1e6)
		return 20 * math.Log10(4*math.Pi*d/lambda), nil
	case "logdistance", "log-distance", "":
		d0 := p.RefDistM
		if d0 <= 0 {
			d0 = 1
		}
		if d <= d0 {
			return p.RefLossDB, nil
		}
		return p.RefLossDB + 10*p.Exponent*math.Log10(d/d0), nil
	case "itu-indoor", "itu":
		return 20*math.Log10(p.FreqMHz) + 30*math.Log10(math.Max(d, 1)) - 28, nil
	}
	return 0, fmt.Errorf("path-loss model %q: want friis, logdistance or itu-indoor", p.Model)
}

// DistanceAt is the distance (metres, within 1 cm..100 km) at which the
// path loss reaches lossDB — how far a link budget carries, the loss
// growing with distance; ok is false when the model cannot say or the
// budget is spent within 1 cm or not within 100 km.
func (p PathLoss) DistanceAt(lossDB float64) (float64, bool) {
	at := func(d float64) float64 {
		l, err := p.LossDB(d)
		if err != nil {
			return lossDB + 1
		}
		return l
	}
	lo, hi := 0.01, 100e3
	if at(lo) > lossDB || at(hi) < lossDB {
		return 0, false
	}
	for range 60 {
		mid := (lo + hi) / 2
		if at(mid) < lossDB {
			lo = mid
		} else {
			hi = mid
		}
	}
	return lo, true
}

// NoiseDBm is the receiver's noise power: thermal kTB (−174 dBm/Hz at
// 290 K) over the channel width plus the noise figure (ns-3's default
// 7 dB gives −94 dBm at 20 MHz).
func NoiseDBm(widthMHz int, noiseFigureDB float64) float64 {
	const kT = 1.3803e-23 * 290 // W/Hz, as ns-3 computes it
	w := float64(widthMHz) * 1e6
	return 10*math.Log10(kT*w*1000) + noiseFigureDB
}

// DBToLinear converts a power ratio in dB.
func DBToLinear(db float64) float64 { return math.Pow(10, db/10) }

// LinearToDB converts a power ratio to dB.
func LinearToDB(x float64) float64 { return 10 * math.Log10(x) }

// Defaults ns-3's YansWifiPhy uses (3.37).
const (
	DefaultTxPowerDBm     = 16.0206
	DefaultNoiseFigureDB  = 7
	DefaultRxSensitivity  = -101.0 // dBm: weaker frames are not even detected
	DefaultCCAEdThreshold = -62.0  // dBm
	// ns-3's ThresholdPreambleDetectionModel: a preamble is detected only
	// from −82 dBm (802.11's minimum sensitivity at 6 Mbit/s) and 4 dB SNR;
	// a receiver detects nothing weaker, and does not defer to it.
	DefaultDetectDBm   = -82.0
	DefaultDetectSNRdB = 4.0
	// DefaultCCASensitivityDBm is ns-3's CcaSensitivity: once a radio has
	// seen the start of a PPDU it cannot lock on (busy, preamble not
	// detected, PHY header failed) it defers while the energy of all the
	// signals it hears together reaches this level (ns-3 3.37
	// PhyEntity::GetCcaThreshold with a PPDU); DefaultCCAEdThreshold
	// applies only where no PPDU triggered the check (ns-3: the end of its
	// own transmission, WifiPhy::Reset).
	DefaultCCASensitivityDBm = -82.0
)

// ChannelMHz is the centre frequency of a channel number.
func ChannelMHz(b Band, ch int) float64 {
	switch b {
	case Band2G4:
		if ch == 14 {
			return 2484
		}
		return 2407 + 5*float64(ch)
	case Band6G:
		return 5950 + 5*float64(ch)
	}
	return 5000 + 5*float64(ch)
}
