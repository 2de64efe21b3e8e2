package wifi

import (
	"github.com/emuctl/emuctl/topo"
	"github.com/emuctl/emuctl/wifi/model"
)

// LabTxPowerDBm is what a lab's radio transmits at unless its node sets
// txpower: (mac80211_hwsim's channel power limit; the engine backend uses
// the same, so the two backends see the same SNRs).
const LabTxPowerDBm = 20

// MediumSettings is a topology's medium settings as a configuration
// without radios (the caller adds them).
func MediumSettings(sp topo.WiFiMedium) MediumConfig {
	pl := model.PathLoss{Model: sp.PathLoss, Exponent: sp.Exponent, RefLossDB: sp.RefLossDB, RefDistM: sp.RefDistM, FreqMHz: 5180}
	c := MediumConfig{PathLoss: pl, NoiseFigureDB: sp.NoiseFigureDB, AMPDU: sp.AMPDU, Seed: sp.Seed,
		RetryLimit: sp.RetryLimit, QueueLimit: sp.QueueLimit, SNR: map[[2]string]float64{}, Loss: map[[2]string]float64{}}
	for _, p := range sp.Pairs {
		k := [2]string{p.A, p.B}
		if p.SNRdB != nil {
			c.SNR[k] = *p.SNRdB
		}
		if p.LossDB != nil {
			c.Loss[k] = *p.LossDB
		}
	}
	return c
}

// SpecRadio is a Wi-Fi node's radio as the topology places it: name,
// position and transmit power (nothing about addresses or ports).
func SpecRadio(n *topo.Node) MediumRadio {
	r := MediumRadio{Node: n.Name, TxPowerDBm: LabTxPowerDBm}
	var mbm int
	switch {
	case n.AP != nil:
		r.Pos, mbm, r.GainDBi = n.AP.Position, n.AP.TxPowerMBm, n.AP.AntennaGainDBi
	case n.Station != nil:
		r.Pos, mbm, r.GainDBi = n.Station.Position, n.Station.TxPowerMBm, n.Station.AntennaGainDBi
	}
	if mbm != 0 {
		r.TxPowerDBm = float64(mbm) / 100
	}
	return r
}

// SpecConfig is a topology's medium with every Wi-Fi node's radio, in
// node order: what its links look like before anything runs.
func SpecConfig(spec *topo.Spec) MediumConfig {
	c := MediumConfig{}
	if spec.WiFiMedium != nil {
		c = MediumSettings(*spec.WiFiMedium)
	}
	for i := range spec.Nodes {
		if n := &spec.Nodes[i]; n.AP != nil || n.Station != nil {
			c.Radios = append(c.Radios, SpecRadio(n))
		}
	}
	return c
}
