package model

import "math"

// LinkBudget is the one chain from where two radios are to what the
// receiver makes of the transmitter's frames: distance → path loss →
// received power (transmit power and both antennas' gains, less the
// loss) → SNR over the receiver's thermal noise floor, and whether the
// frames reach the receiver at all. A lab's medium, the engine's rate
// choice and roaming, and `emuctl model wifi` all compute links with it.
type LinkBudget struct {
	TxPowerDBm float64
	// TxGainDBi and RxGainDBi are the antennas' gains at each end.
	TxGainDBi, RxGainDBi float64
	PathLoss             PathLoss
	// ExtraLossDB is loss on top of the path loss (a pair's override).
	ExtraLossDB   float64
	NoiseFigureDB float64
	// NoiseWidthMHz is the bandwidth the thermal noise is counted over
	// (kTB; 0 means 20). ns-3 counts it over the width of the PPDU being
	// received (InterferenceHelper::CalculateSnr), and the error model
	// (ChunkSuccess: Eb/N0 = SNR·W/R) expects the SNR over that width.
	// A caller that knows the one rate its link carries gives that
	// rate's width (`emuctl model wifi`). A lab's medium gives 20: its
	// Link is per pair of radios and serves every PPDU between them —
	// beacons, management and control frames on the 20 MHz primary as
	// well as wide data — so its SNR is per 20 MHz, the width its numbers
	// are validated against ns-3 at (validate/ns3, all 20 MHz). It applies
	// that SNR to wider PPDUs too, 10·log10(W/20) dB kinder than ns-3
	// would be (3 dB at 40 MHz, 6 at 80, 9 at 160).
	NoiseWidthMHz int
}

// NoiseDBm is the receiver's noise floor over NoiseWidthMHz.
func (b LinkBudget) NoiseDBm() float64 {
	w := b.NoiseWidthMHz
	if w <= 0 {
		w = 20
	}
	return NoiseDBm(w, b.NoiseFigureDB)
}

// At is the link over d metres: RxDBm = TxPower + TxGain + RxGain −
// PathLoss(d) − ExtraLoss, SNRdB = RxDBm − NoiseDBm, OK when RxDBm
// reaches DefaultRxSensitivity (weaker frames reach no receiver, not even
// as interference: ns-3's YansWifiChannel drops them).
func (b LinkBudget) At(d float64) (Link, error) {
	loss, err := b.PathLoss.LossDB(d)
	if err != nil {
		return Link{}, err
	}
	rx := b.TxPowerDBm + b.TxGainDBi + b.RxGainDBi - (loss + b.ExtraLossDB)
	return Link{RxDBm: rx, SNRdB: rx - b.NoiseDBm(), OK: rx >= DefaultRxSensitivity}, nil
}

// Between is the link from a radio at a to one at c (metres).
func (b LinkBudget) Between(a, c [3]float64) (Link, error) {
	return b.At(Distance(a, c))
}

// AtSNR is a link fixed at snrDB (a pair's SNR override): the received
// power that gives it over this noise floor, and always reaching.
func (b LinkBudget) AtSNR(snrDB float64) Link {
	return Link{RxDBm: b.NoiseDBm() + snrDB, SNRdB: snrDB, OK: true}
}

// RangeM is how far the budget carries at snrDB: the distance (within
// 1 cm..100 km) at which the SNR falls to it; ok false as for
// PathLoss.DistanceAt.
func (b LinkBudget) RangeM(snrDB float64) (float64, bool) {
	return b.PathLoss.DistanceAt(b.TxPowerDBm + b.TxGainDBi + b.RxGainDBi - b.ExtraLossDB - b.NoiseDBm() - snrDB)
}

// Distance is the straight-line distance between two positions.
func Distance(a, c [3]float64) float64 {
	dx, dy, dz := a[0]-c[0], a[1]-c[1], a[2]-c[2]
	return math.Sqrt(dx*dx + dy*dy + dz*dz)
}

// Detected reports whether a receiver with nothing else on the air
// detects the link's preambles: they reach it (OK), at detectDBm or more
// and detectSNRdB or more (ns-3's ThresholdPreambleDetectionModel;
// DefaultDetectDBm and DefaultDetectSNRdB are its defaults).
func (l Link) Detected(detectDBm, detectSNRdB float64) bool {
	return l.OK && l.RxDBm >= detectDBm && l.SNRdB >= detectSNRdB
}
