package lab

import (
	"fmt"
	"time"

	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/labstate"
	"github.com/emuctl/emuctl/wifi"
)

// WiFiNodeStatus is one Wi-Fi node's live state, as `emuctl inspect`
// shows it (an alias of package labstate's type, which the runtime fills).
type WiFiNodeStatus = labstate.WiFiNodeStatus

// WiFiStatus is every Wi-Fi node's state: association, BSSID, signal,
// rate (hwsim), or the medium's view (the engine backend).
func (l *Lab) WiFiStatus() ([]WiFiNodeStatus, error) {
	st, err := ReadState(l.name)
	if err != nil {
		return nil, err
	}
	return WiFiStatus(st), nil
}

// WiFiStatus reads the live state of every AP and station of the lab
// whose state st is (nil for a lab without Wi-Fi).
func WiFiStatus(st *State) []WiFiNodeStatus { return emu.WiFiStatus(st) }

// MediumStats is the lab's Wi-Fi medium's counters and per-node view
// (positions, SNR, rates, airtime).
func (l *Lab) MediumStats() (*wifi.MediumStats, error) { return MediumStats(l.name) }

// MediumStats asks the supervisor of the lab called name for its Wi-Fi
// medium's counters (Lab.MediumStats).
func MediumStats(name string) (*wifi.MediumStats, error) { return emu.LabMediumStats(name) }

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
	return SetMediumPosition(l.name, node, pos)
}

// SetMediumPosition moves a Wi-Fi node of the lab called name to pos
// (metres), unchecked (Lab.MoveStation checks the node first).
func SetMediumPosition(name, node string, pos [3]float64) error {
	return emu.SetMediumPosition(name, node, pos)
}

// SetPair overrides the medium between two Wi-Fi nodes: a fixed SNR
// (dB), a loss (0..1), or with both nil the override removed.
func (l *Lab) SetPair(a, b string, snr, loss *float64) error {
	return SetMediumPair(l.name, a, b, snr, loss)
}

// SetMediumPair is Lab.SetPair on the lab called name.
func SetMediumPair(name, a, b string, snr, loss *float64) error {
	return emu.SetMediumPair(name, a, b, snr, loss)
}

// WiFiLinkDown removes link id of a Wi-Fi 7 AP MLD (and its stations'
// affiliated links), as `emuctl wifi link-down` does, and returns how
// long that took. It needs hostapd built with CONFIG_TESTING_OPTIONS.
func WiFiLinkDown(st *State, ap string, id int) (time.Duration, error) {
	return emu.WiFiLinkDown(st, ap, id)
}

// MobilityStatus is one moving node of a running lab.
type MobilityStatus struct {
	Node    string    `json:"node"`
	Model   string    `json:"model"` // topo.MobilityString
	T0      string    `json:"t0"`
	Running bool      `json:"running"`
	Started time.Time `json:"started,omitzero"`
	// Finished: a waypoint path past its last waypoint (the node stays
	// there; nothing more to apply).
	Finished bool `json:"finished,omitempty"`
	// Pos is the position last applied; Moves how many times it was
	// applied since the start, RateHz their rate (moves over the time from
	// the first to the last), MaxGap the longest time between two.
	Pos    [3]float64    `json:"pos"`
	Moves  uint64        `json:"moves"`
	RateHz float64       `json:"rate_hz"`
	MaxGap time.Duration `json:"max_gap_ns"`
	Error  string        `json:"error,omitempty"`
}

// Mobility lists the lab's moving nodes (mobility: in the topology):
// path, state, position and how often the supervisor placed each.
func (l *Lab) Mobility() ([]MobilityStatus, error) { return Mobility(l.name) }

// Mobility is Lab.Mobility on the lab called name.
func Mobility(name string) ([]MobilityStatus, error) {
	m, err := emu.Mobility(name)
	return convert(m, func(m emu.MobilityStatus) MobilityStatus { return MobilityStatus(m) }), err
}

// StartMobility starts a node's path over from its beginning, as `emuctl
// wifi mobility start` does.
func (l *Lab) StartMobility(node string) error { return StartMobility(l.name, node) }

// StartMobility is Lab.StartMobility on the lab called name.
func StartMobility(name, node string) error {
	_, err := emu.StartMobility(name, node, "")
	return err
}

// StopMobility leaves a moving node where it is ("" every one).
func (l *Lab) StopMobility(node string) error { return StopMobility(l.name, node) }

// StopMobility is Lab.StopMobility on the lab called name.
func StopMobility(name, node string) error { return emu.StopMobility(name, node) }
