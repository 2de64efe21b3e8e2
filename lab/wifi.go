package lab

import (
	"fmt"

	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/wifi"
)

// WiFiStatus is every Wi-Fi node's state: association, BSSID, signal,
// rate (hwsim), or the medium's view (the engine backend).
func (l *Lab) WiFiStatus() ([]emu.WiFiNodeStatus, error) {
	st, err := emu.ReadState(l.name)
	if err != nil {
		return nil, err
	}
	return emu.WiFiStatus(st), nil
}

// MediumStats is the lab's Wi-Fi medium's counters and per-node view
// (positions, SNR, rates, airtime).
func (l *Lab) MediumStats() (*wifi.MediumStats, error) { return emu.LabMediumStats(l.name) }

// MoveStation moves a Wi-Fi node in the medium (meters), as `emuctl wifi
// move` does.
func (l *Lab) MoveStation(node string, pos [3]float64) error {
	n, err := l.node(node)
	if err != nil {
		return err
	}
	if n.AP == nil && n.Station == nil {
		return fmt.Errorf("lab %s: %s is not a Wi-Fi node", l.name, node)
	}
	return emu.SetMediumPosition(l.name, node, pos)
}

// SetPair overrides the medium between two Wi-Fi nodes: a fixed SNR
// (dB), a loss (0..1), or with both nil the override removed.
func (l *Lab) SetPair(a, b string, snr, loss *float64) error {
	return emu.SetMediumPair(l.name, a, b, snr, loss)
}
