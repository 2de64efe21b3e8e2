package mobility

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sort"
	"time"
)

// Path is where a node is at time t after its movement started.
type Path interface {
	At(t time.Duration) [3]float64
}

// Leg is a straight move from P0 at T0 to P1 at T1 (seconds), at
// constant speed; P0 == P1 is a pause.
type Leg struct {
	T0, T1 float64
	P0, P1 [3]float64
}

// Speed is the leg's speed in m/s.
func (l Leg) Speed() float64 {
	if l.T1 <= l.T0 {
		return 0
	}
	return dist(l.P0, l.P1) / (l.T1 - l.T0)
}

func (l Leg) at(s float64) [3]float64 {
	if l.T1 <= l.T0 {
		return l.P1
	}
	f := min(1, max(0, (s-l.T0)/(l.T1-l.T0)))
	var p [3]float64
	for i := range p {
		p[i] = l.P0[i] + f*(l.P1[i]-l.P0[i])
	}
	return p
}

// track is a path made of legs, drawn on demand: more appends the legs
// that follow the last one (nil: the path ends, the node stays put).
type track struct {
	legs []Leg
	more func(last Leg) []Leg
}

// At implements Path.
func (tr *track) At(t time.Duration) [3]float64 {
	s := t.Seconds()
	if s <= tr.legs[0].T0 {
		return tr.legs[0].P0
	}
	tr.extend(s)
	i := sort.Search(len(tr.legs), func(i int) bool { return tr.legs[i].T1 >= s })
	if i == len(tr.legs) {
		return tr.legs[len(tr.legs)-1].P1
	}
	return tr.legs[i].at(s)
}

// extend draws legs until they reach s (seconds).
func (tr *track) extend(s float64) {
	for tr.more != nil && tr.legs[len(tr.legs)-1].T1 < s {
		tr.legs = append(tr.legs, tr.more(tr.legs[len(tr.legs)-1])...)
	}
}

// Legs returns the path's legs up to time t (drawing them as needed);
// nil for a path that is not made of legs (reference point).
func Legs(p Path, t time.Duration) []Leg {
	tr, ok := p.(*track)
	if !ok {
		return nil
	}
	tr.extend(t.Seconds())
	return tr.legs
}

// New returns s's path; ref is the reference node's path for a
// reference-point model (nil otherwise).
func New(s Spec, ref Path) (Path, error) {
	if err := s.Check(); err != nil {
		return nil, err
	}
	r := rand.New(rand.NewPCG(s.Seed, 0x6d6f62696c697479)) // "mobility"
	switch s.Model {
	case Waypoints:
		return waypoints(s.Waypoints), nil
	case RandomWalk:
		return randomWalk(s, r), nil
	case RandomWaypoint:
		return randomWaypoint(s, r), nil
	case RandomDirection:
		return randomDirection(s, r), nil
	case GaussMarkov:
		return gaussMarkov(s, r), nil
	case ReferencePoint:
		if ref == nil {
			return nil, fmt.Errorf("reference-point: no path for reference node %q", s.Reference)
		}
		return referencePoint(s, r, ref), nil
	}
	return nil, fmt.Errorf("unknown mobility model %q", s.Model)
}

func waypoints(ws []Waypoint) *track {
	tr := &track{legs: []Leg{{T0: ws[0].T.Seconds(), T1: ws[0].T.Seconds(), P0: ws[0].Pos, P1: ws[0].Pos}}}
	for i := 1; i < len(ws); i++ {
		tr.legs = append(tr.legs, Leg{T0: ws[i-1].T.Seconds(), T1: ws[i].T.Seconds(), P0: ws[i-1].Pos, P1: ws[i].Pos})
	}
	return tr
}

func dist(a, b [3]float64) float64 {
	return math.Sqrt((a[0]-b[0])*(a[0]-b[0]) + (a[1]-b[1])*(a[1]-b[1]) + (a[2]-b[2])*(a[2]-b[2]))
}

func (s *Spec) speed(r *rand.Rand) float64 {
	return s.SpeedMin + r.Float64()*(s.SpeedMax-s.SpeedMin)
}

func pause(p [3]float64, t, d float64) Leg { return Leg{T0: t, T1: t + d, P0: p, P1: p} }

// glide moves from p at time t with velocity (vx, vy) for dt seconds,
// reflecting off the bounds' walls: one leg per wall hit, the speed kept.
// It returns the legs and the velocity after the last reflection.
func (s *Spec) glide(p [3]float64, t, vx, vy, dt float64) ([]Leg, float64, float64) {
	var out []Leg
	for dt > 1e-12 {
		hit := dt // time to the first wall in the way
		wall := -1
		for i, v := range [2]float64{vx, vy} {
			var th float64
			switch {
			case v > 0:
				th = (s.Max[i] - p[i]) / v
			case v < 0:
				th = (s.Min[i] - p[i]) / v
			default:
				continue
			}
			if th < hit {
				hit, wall = max(0, th), i
			}
		}
		q := p
		q[0], q[1] = p[0]+vx*hit, p[1]+vy*hit
		q[0], q[1] = min(s.Max[0], max(s.Min[0], q[0])), min(s.Max[1], max(s.Min[1], q[1]))
		if hit > 0 {
			out = append(out, Leg{T0: t, T1: t + hit, P0: p, P1: q})
		}
		p, t, dt = q, t+hit, dt-hit
		switch wall {
		case 0:
			vx = -vx
		case 1:
			vy = -vy
		}
	}
	return out, vx, vy
}

// randomWalk: every interval a new direction (uniform) and speed
// (uniform in the range), reflecting off the walls; Pause after each leg.
func randomWalk(s Spec, r *rand.Rand) *track {
	dt, pz := s.interval().Seconds(), s.Pause.Seconds()
	return &track{legs: []Leg{pause(s.Start, 0, 0)}, more: func(last Leg) []Leg {
		a, v := 2*math.Pi*r.Float64(), s.speed(r)
		legs, _, _ := s.glide(last.P1, last.T1, v*math.Cos(a), v*math.Sin(a), dt)
		if pz > 0 {
			legs = append(legs, pause(legs[len(legs)-1].P1, legs[len(legs)-1].T1, pz))
		}
		return legs
	}}
}

// randomWaypoint: a destination uniform in the bounds, a speed uniform in
// the range, a straight move there, Pause, again.
func randomWaypoint(s Spec, r *rand.Rand) *track {
	pz := s.Pause.Seconds()
	return &track{legs: []Leg{pause(s.Start, 0, 0)}, more: func(last Leg) []Leg {
		q := last.P1
		q[0] = s.Min[0] + r.Float64()*(s.Max[0]-s.Min[0])
		q[1] = s.Min[1] + r.Float64()*(s.Max[1]-s.Min[1])
		v := s.speed(r)
		d := dist(last.P1, q)
		if d < 1e-9 {
			return []Leg{pause(q, last.T1, max(pz, 1e-3))}
		}
		legs := []Leg{{T0: last.T1, T1: last.T1 + d/v, P0: last.P1, P1: q}}
		if pz > 0 {
			legs = append(legs, pause(q, legs[0].T1, pz))
		}
		return legs
	}}
}

// randomDirection (Royer et al.): a direction uniform among those that
// lead into the area, a speed uniform in the range, straight on to the
// wall, Pause, again.
func randomDirection(s Spec, r *rand.Rand) *track {
	pz := s.Pause.Seconds()
	return &track{legs: []Leg{pause(s.Start, 0, 0)}, more: func(last Leg) []Leg {
		p := last.P1
		v := s.speed(r)
		for try := 0; ; try++ {
			a := 2 * math.Pi * r.Float64()
			if try == 100 { // cornered: head for the centre
				a = math.Atan2((s.Min[1]+s.Max[1])/2-p[1], (s.Min[0]+s.Max[0])/2-p[0])
			}
			vx, vy := v*math.Cos(a), v*math.Sin(a)
			th := math.Inf(1)
			for i, u := range [2]float64{vx, vy} {
				switch {
				case u > 0:
					th = min(th, (s.Max[i]-p[i])/u)
				case u < 0:
					th = min(th, (s.Min[i]-p[i])/u)
				}
			}
			if th*v < 1e-6 {
				continue // a wall right ahead
			}
			legs, _, _ := s.glide(p, last.T1, vx, vy, th)
			if pz > 0 {
				legs = append(legs, pause(legs[len(legs)-1].P1, legs[len(legs)-1].T1, pz))
			}
			return legs
		}
	}}
}

// gaussMarkov (Camp, Boleng and Davies 2002): every interval the speed
// and direction become α·old + (1−α)·mean + √(1−α²)·σ·N(0,1), the speed
// clamped to the range (σ: half the mean's distance to the range's nearer
// end); the mean direction turns to the area's centre
// within a tenth of its size from a wall, and walls reflect.
func gaussMarkov(s Spec, r *rand.Rand) *track {
	dt := s.interval().Seconds()
	a := s.Alpha
	mean := s.meanSpeed()
	// σ of the speed: half the distance from the mean to the nearer end
	// of the range, so clamping is rare and cuts both sides alike (the
	// mean speed stays the parameter)
	sigS := min(mean-s.SpeedMin, s.SpeedMax-mean) / 2
	const sigD = math.Pi / 4
	meanDir := 2 * math.Pi * r.Float64()
	sp, dir := mean, meanDir
	margin := [2]float64{(s.Max[0] - s.Min[0]) / 10, (s.Max[1] - s.Min[1]) / 10}
	var vx, vy float64
	first := true
	return &track{legs: []Leg{pause(s.Start, 0, 0)}, more: func(last Leg) []Leg {
		p := last.P1
		if !first {
			md := meanDir
			if p[0] < s.Min[0]+margin[0] || p[0] > s.Max[0]-margin[0] || p[1] < s.Min[1]+margin[1] || p[1] > s.Max[1]-margin[1] {
				md = math.Atan2((s.Min[1]+s.Max[1])/2-p[1], (s.Min[0]+s.Max[0])/2-p[0])
			}
			// the old direction (after reflections) as seen from md, so
			// the mix turns the short way
			dir = md + math.Remainder(math.Atan2(vy, vx)-md, 2*math.Pi)
			k := math.Sqrt(1 - a*a)
			sp = min(s.SpeedMax, max(s.SpeedMin, a*sp+(1-a)*mean+k*sigS*r.NormFloat64()))
			dir = a*dir + (1-a)*md + k*sigD*r.NormFloat64()
		}
		first = false
		legs, nvx, nvy := s.glide(p, last.T1, sp*math.Cos(dir), sp*math.Sin(dir), dt)
		vx, vy = nvx, nvy
		return legs
	}}
}

// group is a reference-point member: the reference's position plus an
// offset that moves linearly between points drawn uniformly in a disc of
// Radius, a new one every interval.
type group struct {
	ref Path
	off *track
}

func (g *group) At(t time.Duration) [3]float64 {
	p, o := g.ref.At(t), g.off.At(t)
	return [3]float64{p[0] + o[0], p[1] + o[1], p[2] + o[2]}
}

func referencePoint(s Spec, r *rand.Rand, ref Path) *group {
	dt := s.interval().Seconds()
	draw := func() [3]float64 {
		rho, a := s.Radius*math.Sqrt(r.Float64()), 2*math.Pi*r.Float64()
		return [3]float64{rho * math.Cos(a), rho * math.Sin(a), 0}
	}
	o0 := draw()
	return &group{ref: ref, off: &track{legs: []Leg{pause(o0, 0, 0)}, more: func(last Leg) []Leg {
		return []Leg{{T0: last.T1, T1: last.T1 + dt, P0: last.P1, P1: draw()}}
	}}}
}
