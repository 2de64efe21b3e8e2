package mobility

import (
	"errors"
	"fmt"
	"math"
	"time"
)

// Model names (Spec.Model).
const (
	Waypoints       = "waypoints"
	RandomWalk      = "random-walk"
	RandomWaypoint  = "random-waypoint"
	RandomDirection = "random-direction"
	GaussMarkov     = "gauss-markov"
	ReferencePoint  = "reference-point"
)

// Models are the mobility models a Spec may name besides waypoints.
var Models = []string{RandomWalk, RandomWaypoint, RandomDirection, GaussMarkov, ReferencePoint}

// Defaults of the models' parameters.
const (
	DefaultInterval = time.Second // random-walk leg, gauss-markov update, reference-point offset
	DefaultAlpha    = 0.75        // gauss-markov memory
)

// Waypoint is where a node is at time T after its mobility starts.
type Waypoint struct {
	T   time.Duration `json:"t"`
	Pos [3]float64    `json:"pos"`
}

// Spec describes one node's movement. Positions are metres, speeds
// metres per second, times after the movement starts.
type Spec struct {
	Model string `json:"model"`
	// Waypoints (model waypoints): increasing times; the node is at the
	// first one's position until its time, moves in a straight line at
	// constant speed between consecutive ones and stays at the last.
	Waypoints []Waypoint `json:"waypoints,omitempty"`
	// Start is where a model's path begins (the node's position).
	Start [3]float64 `json:"start"`
	// Min and Max are the corners (x, y) of the rectangle a model keeps
	// the node in; z stays Start's.
	Min [2]float64 `json:"min"`
	Max [2]float64 `json:"max"`
	// SpeedMin and SpeedMax bound every leg's speed (equal: one speed).
	SpeedMin float64 `json:"speed_min,omitempty"`
	SpeedMax float64 `json:"speed_max,omitempty"`
	// Pause is spent standing at each destination (random waypoint), at
	// each wall (random direction) or after each leg (random walk).
	Pause time.Duration `json:"pause,omitempty"`
	// Interval: a random walk's leg, Gauss–Markov's update period, the
	// reference-point offset's redraw period (0: DefaultInterval).
	Interval time.Duration `json:"interval,omitempty"`
	// Alpha is Gauss–Markov's memory in [0, 1] (0: memoryless, 1: a
	// straight line); MeanSpeed its mean speed (0: the middle of the
	// speed range).
	Alpha     float64 `json:"alpha,omitempty"`
	MeanSpeed float64 `json:"mean_speed,omitempty"`
	// Reference (reference-point) is the node whose path this one
	// follows, within Radius metres of it (x, y).
	Reference string  `json:"reference,omitempty"`
	Radius    float64 `json:"radius,omitempty"`
	// Seed draws the random models' paths.
	Seed uint64 `json:"seed"`
	// T0 is when the path's time 0 is: "up" (the lab is up), "traffic"
	// (emuctl traffic starts) or "manual" (a command or a schedule step).
	T0 string `json:"t0,omitempty"`
}

func (s *Spec) interval() time.Duration {
	if s.Interval > 0 {
		return s.Interval
	}
	return DefaultInterval
}

func (s *Spec) meanSpeed() float64 {
	if s.MeanSpeed > 0 {
		return s.MeanSpeed
	}
	return (s.SpeedMin + s.SpeedMax) / 2
}

// Check says what is wrong with s, nil when nothing is (topo reports the
// same problems at their place in the file; this guards other callers).
func (s *Spec) Check() error {
	var errs []error
	bad := func(f string, a ...any) { errs = append(errs, fmt.Errorf(f, a...)) }
	switch s.Model {
	case Waypoints:
		if len(s.Waypoints) == 0 {
			bad("waypoints: none given")
		}
		for i := 1; i < len(s.Waypoints); i++ {
			if s.Waypoints[i].T <= s.Waypoints[i-1].T {
				bad("waypoints[%d]: time %v is not after the previous one's (%v)", i, s.Waypoints[i].T, s.Waypoints[i-1].T)
			}
		}
		return errors.Join(errs...)
	case ReferencePoint:
		if s.Reference == "" {
			bad("reference-point needs a reference node")
		}
		if !(s.Radius > 0) {
			bad("reference-point needs a radius > 0")
		}
		return errors.Join(errs...)
	case RandomWalk, RandomWaypoint, RandomDirection, GaussMarkov:
	default:
		return fmt.Errorf("unknown mobility model %q (models: waypoints, %v)", s.Model, Models)
	}
	if !(s.Max[0] > s.Min[0] && s.Max[1] > s.Min[1]) {
		bad("bounds [%v, %v] enclose no area", s.Min, s.Max)
	}
	if !(s.SpeedMin > 0 && s.SpeedMax >= s.SpeedMin && !math.IsInf(s.SpeedMax, 0)) {
		bad("speed range [%g, %g] m/s: want 0 < min ≤ max", s.SpeedMin, s.SpeedMax)
	}
	if !s.inside(s.Start) {
		bad("start %v is outside the bounds [%v, %v]", s.Start, s.Min, s.Max)
	}
	if s.Model == GaussMarkov {
		if s.Alpha < 0 || s.Alpha > 1 {
			bad("alpha %g: want 0 ≤ alpha ≤ 1", s.Alpha)
		}
		if m := s.meanSpeed(); m < s.SpeedMin || m > s.SpeedMax {
			bad("mean speed %g m/s is outside the speed range [%g, %g]", m, s.SpeedMin, s.SpeedMax)
		}
	}
	return errors.Join(errs...)
}

func (s *Spec) inside(p [3]float64) bool {
	const eps = 1e-9
	return p[0] >= s.Min[0]-eps && p[0] <= s.Max[0]+eps && p[1] >= s.Min[1]-eps && p[1] <= s.Max[1]+eps
}
