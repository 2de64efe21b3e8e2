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

// Mobility lists the lab's moving nodes (mobility: in the topology):
// path, state, position and how often the supervisor placed each.
func (l *Lab) Mobility() ([]emu.MobilityStatus, error) { return emu.Mobility(l.name) }

// StartMobility starts a node's path over from its beginning, as `emuctl
// wifi mobility start` does.
func (l *Lab) StartMobility(node string) error {
	_, err := emu.StartMobility(l.name, node, "")
	return err
}

// StopMobility leaves a moving node where it is ("" every one).
func (l *Lab) StopMobility(node string) error { return emu.StopMobility(l.name, node) }
