package emu

import "github.com/emuctl/emuctl/topo"

// Access points and stations (kind.go) share the lab's one Wi-Fi medium:
// their radios, daemons and association are made in the lab-wide wifi
// phase (wifi.go; a change's, wifi_change.go), after the ovs phase in a
// deploy and right after the links in a change.

// apKind is an access point: a bridge in its namespace, or a router
// (wifi: {routed: true}).
type apKind struct{ nsNode }

func (apKind) recordFirst() bool { return true }

func (apKind) name() string         { return "ap" }
func (apKind) is(n *topo.Node) bool { return n.AP != nil }
func (apKind) phases() []kindPhase  { return wifiPhases() }
func (k apKind) setup(d *deployer, n *node) error {
	if err := k.nsNode.setup(d, n); err != nil {
		return err
	}
	if n.spec.Kind == topo.KindSwitch {
		return d.createBridge(n)
	}
	return nil
}
func (apKind) reopen(n *node) error {
	if n.spec.Kind == topo.KindSwitch {
		return findBridge(n)
	}
	return nil
}

// stationKind is a station: a host with a radio.
type stationKind struct{ nsNode }

func (stationKind) recordFirst() bool { return true }

func (stationKind) name() string         { return "station" }
func (stationKind) is(n *topo.Node) bool { return n.Station != nil }
func (stationKind) phases() []kindPhase  { return wifiPhases() }

func wifiPhases() []kindPhase {
	return []kindPhase{{
		name:    "wifi",
		plan:    func(spec *topo.Spec, _ []LinkState) []string { return wifiPreflight(spec) }, // wifi.go
		upAfter: "ovs", up: (*deployer).wifiSetup,
		changeAfter: "links", change: (*deployer).wifiChange,
		undo: func(d *deployer, diff labDiff) []error { return undoStations(d.st, d.spec, diff.addNodes) },
		// a change's removal takes stations off the medium before
		// anything else (removeStations, from changeLocked)
	}}
}
