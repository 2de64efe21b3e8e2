package mobility

import (
	"math"
	"strings"
	"testing"
	"time"
)

// TestWaypointsExact: the node is exactly where linear interpolation
// puts it, before the first waypoint, between them and after the last.
func TestWaypointsExact(t *testing.T) {
	p, err := New(Spec{Model: Waypoints, Waypoints: []Waypoint{
		{T: 2 * time.Second, Pos: [3]float64{0, 0, 1}},
		{T: 32 * time.Second, Pos: [3]float64{60, 0, 1}},
		{T: 42 * time.Second, Pos: [3]float64{60, 20, 3}},
	}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		t    time.Duration
		want [3]float64
	}{
		{0, [3]float64{0, 0, 1}},
		{2 * time.Second, [3]float64{0, 0, 1}},
		{17 * time.Second, [3]float64{30, 0, 1}},
		{2*time.Second + 250*time.Millisecond, [3]float64{0.5, 0, 1}},
		{32 * time.Second, [3]float64{60, 0, 1}},
		{37 * time.Second, [3]float64{60, 10, 2}},
		{time.Hour, [3]float64{60, 20, 3}},
	} {
		if got := p.At(c.t); dist(got, c.want) > 1e-9 {
			t.Errorf("At(%v) = %v, want %v", c.t, got, c.want)
		}
	}
}

func models() map[string]Spec {
	base := Spec{Start: [3]float64{20, 10, 1.5}, Min: [2]float64{0, 0}, Max: [2]float64{100, 50}, SpeedMin: 0.5, SpeedMax: 3, Seed: 7}
	out := map[string]Spec{}
	for _, m := range []string{RandomWalk, RandomWaypoint, RandomDirection, GaussMarkov} {
		s := base
		s.Model = m
		if m != GaussMarkov {
			s.Pause = 2 * time.Second
		}
		out[m] = s
	}
	return out
}

// TestModelsBoundsSpeedSeed: every model's path stays in its bounds (z
// unchanged), every leg's speed is in the range (or a pause), the same
// seed gives the same path whatever times it is asked at, and another
// seed another path.
func TestModelsBoundsSpeedSeed(t *testing.T) {
	const horizon = 2 * time.Hour
	for name, s := range models() {
		t.Run(name, func(t *testing.T) {
			p, err := New(s, nil)
			if err != nil {
				t.Fatal(err)
			}
			legs := Legs(p, horizon)
			moving, pauses := 0, 0
			for i, l := range legs[1:] {
				if l.T1 < l.T0 || i > 0 && l.T0 != legs[i].T1 || l.P0 != legs[i].P1 {
					t.Fatalf("leg %d %+v does not follow leg %d %+v", i+1, l, i, legs[i])
				}
				for _, q := range [][3]float64{l.P0, l.P1} {
					if !s.inside(q) || q[2] != s.Start[2] {
						t.Fatalf("leg %d leaves the bounds: %+v", i+1, l)
					}
				}
				if l.P0 == l.P1 {
					pauses++
					continue
				}
				moving++
				if v := l.Speed(); v < s.SpeedMin-1e-9 || v > s.SpeedMax+1e-9 {
					t.Fatalf("leg %d at %.4f m/s, outside [%g, %g]", i+1, v, s.SpeedMin, s.SpeedMax)
				}
			}
			if moving < 100 || s.Pause > 0 && pauses == 0 {
				t.Errorf("%d moving legs and %d pauses in %v", moving, pauses, horizon)
			}
			// the same seed, asked at other times (coarse, then backwards)
			q, _ := New(s, nil)
			q.At(horizon)
			for k := time.Duration(0); k < horizon; k += 997 * time.Millisecond {
				if a, b := p.At(horizon-k), q.At(horizon-k); a != b {
					t.Fatalf("seed %d: At(%v) %v then %v", s.Seed, horizon-k, a, b)
				}
			}
			s2 := s
			s2.Seed++
			o, _ := New(s2, nil)
			if same := dist(p.At(time.Minute), o.At(time.Minute)) < 1e-9; same {
				t.Errorf("seeds %d and %d give the same position after a minute", s.Seed, s2.Seed)
			}
			t.Logf("%d moving legs, %d pauses in %v; at 1 min %v (seed %d), %v (seed %d)", moving, pauses, horizon, p.At(time.Minute), s.Seed, o.At(time.Minute), s2.Seed)
		})
	}
}

// TestGaussMarkovMeanSpeed: over a long run the time-averaged speed is
// the model's mean speed, also one off the middle of the range.
func TestGaussMarkovMeanSpeed(t *testing.T) {
	for _, c := range []struct{ lo, hi, mean, alpha float64 }{{0.5, 3.5, 2, 0.75}, {1, 5, 2.5, 0.9}, {0.5, 3.5, 2, 0}} {
		s := Spec{Model: GaussMarkov, Start: [3]float64{250, 250, 0}, Max: [2]float64{500, 500}, SpeedMin: c.lo, SpeedMax: c.hi, MeanSpeed: c.mean, Alpha: c.alpha, Seed: 11}
		p, err := New(s, nil)
		if err != nil {
			t.Fatal(err)
		}
		const horizon = 20000 * time.Second
		var d, tt float64
		for _, l := range Legs(p, horizon) {
			d += dist(l.P0, l.P1)
			tt += l.T1 - l.T0
		}
		got := d / tt
		t.Logf("alpha %.2f, speed [%g, %g], mean %g m/s: %.4f m/s over %.0f s", c.alpha, c.lo, c.hi, c.mean, got, tt)
		if math.Abs(got/c.mean-1) > 0.03 {
			t.Errorf("alpha %.2f: mean speed %.4f m/s, want %g ± 3 %%", c.alpha, got, c.mean)
		}
	}
}

// TestReferencePoint: a member stays within its radius of the reference
// node, and its path is the seed's.
func TestReferencePoint(t *testing.T) {
	lead := models()[RandomWaypoint]
	ref, _ := New(lead, nil)
	s := Spec{Model: ReferencePoint, Reference: "sta1", Radius: 5, Seed: 3}
	m, err := New(s, ref)
	if err != nil {
		t.Fatal(err)
	}
	ref2, _ := New(lead, nil)
	m2, _ := New(s, ref2)
	maxd := 0.0
	for k := time.Duration(0); k < time.Hour; k += 100 * time.Millisecond {
		a, b := m.At(k), ref.At(k)
		d := math.Hypot(a[0]-b[0], a[1]-b[1])
		maxd = max(maxd, d)
		if d > s.Radius+1e-9 {
			t.Fatalf("At(%v): %.3f m from the reference, radius %g", k, d, s.Radius)
		}
		if m2.At(k) != a {
			t.Fatalf("At(%v): the same seed gives %v and %v", k, a, m2.At(k))
		}
	}
	t.Logf("largest distance from the reference over an hour: %.3f m (radius %g)", maxd, s.Radius)
	if _, err := New(s, nil); err == nil {
		t.Error("a reference-point path without its reference's path was accepted")
	}
}

func TestCheck(t *testing.T) {
	for _, c := range []struct {
		s    Spec
		want string
	}{
		{Spec{Model: "brownian"}, "unknown mobility model"},
		{Spec{Model: Waypoints, Waypoints: []Waypoint{{T: time.Second}, {T: time.Second}}}, "not after"},
		{Spec{Model: RandomWalk, Max: [2]float64{10, 10}, SpeedMin: 2, SpeedMax: 1}, "speed range"},
		{Spec{Model: RandomWalk, Max: [2]float64{10, 0}, SpeedMin: 1, SpeedMax: 1}, "no area"},
		{Spec{Model: RandomWaypoint, Start: [3]float64{20, 0, 0}, Max: [2]float64{10, 10}, SpeedMin: 1, SpeedMax: 1}, "outside the bounds"},
		{Spec{Model: GaussMarkov, Max: [2]float64{10, 10}, SpeedMin: 1, SpeedMax: 2, MeanSpeed: 3}, "mean speed"},
		{Spec{Model: ReferencePoint, Reference: "a"}, "radius"},
	} {
		err := c.s.Check()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want an error saying %q", c.s, err, c.want)
		}
	}
}
