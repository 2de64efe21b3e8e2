package topo

import (
	"testing"
	"time"

	"github.com/emuctl/emuctl/wifi/mobility"
)

// TestMobilityResolve: waypoints and models come through with their
// defaults (start at the node's position, the first waypoint's or the
// bounds' centre; a seed from the node's name; Gauss–Markov's alpha).
func TestMobilityResolve(t *testing.T) {
	s, err := Load("m.yaml", []byte(`
nodes:
  ap1: {kind: ap, position: [0, 0, 2], wifi: {mode: n, channel: 1}}
  sta1:
    kind: station
    wifi: {ap: ap1}
    mobility: {waypoints: [{t: 0s, pos: [5, 0]}, {t: 30s, pos: [60, 0]}], t0: traffic}
  sta2: {kind: station, wifi: {ap: ap1}, position: [10, 10], mobility: {model: random-waypoint, bounds: [[0, 0], [100, 50]], speed: [0.5, 2], pause: 2s, seed: 7}}
  sta3: {kind: station, wifi: {ap: ap1}, mobility: {model: gauss-markov, bounds: [[0, 0], [40, 20]], speed: 1.5m/s}}
  sta4: {kind: station, wifi: {ap: ap1}, mobility: {model: reference-point, reference: sta2, radius: 3}}
  ap2: {kind: ap, wifi: {ssid: two, channel: 11}, mobility: {model: random-walk, bounds: [[-10, -10], [10, 10]], speed: 1, interval: 500ms}}
`))
	if err != nil {
		t.Fatal(err)
	}
	m1 := s.Node("sta1").Mobility
	if m1 == nil || m1.Model != mobility.Waypoints || len(m1.Waypoints) != 2 || m1.Waypoints[1].T != 30*time.Second || m1.T0 != T0Traffic ||
		s.Node("sta1").Station.Position != [3]float64{5, 0, 0} {
		t.Errorf("sta1: %+v at %v", m1, s.Node("sta1").Station.Position)
	}
	m2 := s.Node("sta2").Mobility
	if m2.Model != mobility.RandomWaypoint || m2.Start != [3]float64{10, 10, 0} || m2.SpeedMin != 0.5 || m2.SpeedMax != 2 || m2.Pause != 2*time.Second || m2.Seed != 7 || m2.T0 != T0Up {
		t.Errorf("sta2: %+v", m2)
	}
	m3 := s.Node("sta3").Mobility
	if m3.Start != [3]float64{20, 10, 0} || s.Node("sta3").Station.Position != m3.Start || m3.SpeedMin != 1.5 || m3.SpeedMax != 1.5 || m3.Alpha != mobility.DefaultAlpha || m3.Seed == 0 {
		t.Errorf("sta3: %+v", m3)
	}
	if m4 := s.Node("sta4").Mobility; m4.Reference != "sta2" || m4.Radius != 3 || m4.Seed == m3.Seed {
		t.Errorf("sta4: %+v", m4)
	}
	if m := s.Node("ap2").Mobility; m == nil || m.Interval != 500*time.Millisecond {
		t.Errorf("ap2: %+v", m)
	}
	// every resolved spec makes a path
	for _, n := range s.Nodes {
		if n.Mobility == nil || n.Mobility.Model == mobility.ReferencePoint {
			continue
		}
		if _, err := mobility.New(*n.Mobility, nil); err != nil {
			t.Errorf("%s: %v", n.Name, err)
		}
	}
	// the default seed is the node name's: loading again gives the same
	s2, _ := Load("m.yaml", []byte("nodes:\n  ap1: {kind: ap}\n  sta3: {kind: station, mobility: {model: gauss-markov, bounds: [[0, 0], [40, 20]], speed: 1.5}}\n"))
	if s2.Node("sta3").Mobility.Seed != m3.Seed {
		t.Errorf("default seed %d, then %d", m3.Seed, s2.Node("sta3").Mobility.Seed)
	}
	if MobilityString(m2) != "random-waypoint 0.5–2 m/s in [0,0]–[100,50] seed 7" {
		t.Errorf("MobilityString: %q", MobilityString(m2))
	}
}

// TestMobilitySchedule: a schedule's steps start and stop a node's path.
func TestMobilitySchedule(t *testing.T) {
	s, err := Load("s.yaml", []byte(`
nodes:
  ap1: {kind: ap}
  sta1: {kind: station, mobility: {waypoints: [{t: 0s, pos: [0, 0]}, {t: 10s, pos: [50, 0]}], t0: manual}}
schedules:
  - name: walk
    steps:
      - {at: 2s, mobility: start, node: sta1}
      - {at: 5s, mobility: stop, node: sta1}
`))
	if err != nil {
		t.Fatal(err)
	}
	st := s.Schedules[0].Steps
	if len(st) != 2 || st[0].Mobility != "start" || st[0].Ref != "sta1" || st[0].Link != -1 || st[1].At != 5*time.Second || st[1].Mobility != "stop" {
		t.Fatalf("steps %+v", st)
	}
	if got := st[1].String(); got != "at 5s sta1 mobility stop" {
		t.Errorf("step says %q", got)
	}
}
