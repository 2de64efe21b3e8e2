package topo

import (
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/emuctl/emuctl/wifi/mobility"
	"go.yaml.in/yaml/v3"
)

// A Wi-Fi node's movement as written: mobility: {waypoints: [...]} or
// mobility: {model: ..., bounds: ..., speed: ..., ...} (wifi/mobility
// draws the paths; the lab's supervisor applies them to the medium).

var (
	mobilityKeys = []string{"waypoints", "model", "bounds", "speed", "pause", "interval", "alpha", "mean_speed", "reference", "radius", "seed", "t0"}
	waypointKeys = []string{"t", "pos"}
	// mobilityModelKeys are the keys each model takes besides model, seed
	// and t0.
	mobilityModelKeys = map[string][]string{
		mobility.Waypoints:       {"waypoints"},
		mobility.RandomWalk:      {"bounds", "speed", "pause", "interval"},
		mobility.RandomWaypoint:  {"bounds", "speed", "pause"},
		mobility.RandomDirection: {"bounds", "speed", "pause"},
		mobility.GaussMarkov:     {"bounds", "speed", "interval", "alpha", "mean_speed"},
		mobility.ReferencePoint:  {"reference", "radius", "interval"},
	}
	mobilityModels = append([]string{mobility.Waypoints}, mobility.Models...)
	// maxSpeed bounds speeds (m/s): faster than anything that carries a
	// Wi-Fi station.
	maxSpeed = 1000.0
)

type rawMobility struct {
	loc     loc // the mobility: key
	spec    mobility.Spec
	keys    map[string]loc // keys given, at their key
	seedSet bool
	refLoc  loc
	meanLoc loc
	ok      bool // decoded without errors
}

func (d *dec) mobility(n *yaml.Node, path string, keyLoc loc) *rawMobility {
	m := &rawMobility{loc: keyLoc, keys: map[string]loc{}, spec: mobility.Spec{T0: T0Up}}
	n0 := len(d.errs)
	for _, e := range d.fields(n, path, mobilityKeys) {
		kp := joinPath(path, e.Key)
		m.keys[e.Key] = at(e.K, kp)
		switch e.Key {
		case "waypoints":
			m.waypoints(d, e.V, kp)
		case "model":
			m.spec.Model, _ = d.oneOf(e.V, kp, "mobility model", mobilityModels)
		case "bounds":
			m.spec.Min, m.spec.Max, _ = d.bounds(e.V, kp)
		case "speed":
			m.spec.SpeedMin, m.spec.SpeedMax, _ = d.speedRange(e.V, kp)
		case "pause":
			if v, ok := d.duration(e.V, kp, "a duration such as 2s"); ok {
				m.spec.Pause = v
			}
		case "interval":
			if v, ok := d.duration(e.V, kp, "a duration such as 1s"); ok {
				if v < 10*time.Millisecond || v > time.Hour {
					d.errorf(at(e.V, kp), "interval %v: want 10ms to 1h (how long a leg lasts before the model draws again)", v)
				}
				m.spec.Interval = v
			}
		case "alpha":
			if x, ok := d.number(e.V, kp, "Gauss–Markov's memory, a number from 0 (memoryless) to 1 (straight on)", 0, 1); ok {
				m.spec.Alpha = x
			}
		case "mean_speed":
			m.spec.MeanSpeed, _ = d.speed(e.V, kp)
			m.meanLoc = at(e.V, kp)
		case "reference":
			if s, ok := d.str(e.V, kp, "the node whose path this one follows"); ok {
				m.spec.Reference, m.refLoc = s, at(e.V, kp)
			}
		case "radius":
			if x, ok := d.number(e.V, kp, "a radius in metres, 0 < r ≤ 10000", math.SmallestNonzeroFloat64, 10000); ok {
				m.spec.Radius = x
			}
		case "seed":
			if x, ok := d.integer(e.V, kp, 0, math.MaxInt64); ok {
				m.spec.Seed, m.seedSet = uint64(x), true
			}
		case "t0":
			m.spec.T0, _ = d.oneOf(e.V, kp, "start reference", t0Kinds)
		}
	}
	_, hasWP := m.keys["waypoints"]
	switch {
	case m.spec.Model == "" && hasWP:
		m.spec.Model = mobility.Waypoints
	case m.spec.Model == "" && len(d.errs) == n0:
		d.errorf(at(n, path), "mobility needs waypoints: [{t: 0s, pos: [0, 0]}, {t: 30s, pos: [60, 0]}] or model: %s", strings.Join(mobility.Models, " | "))
	}
	if takes, ok := mobilityModelKeys[m.spec.Model]; ok {
		for _, k := range mobilityKeys {
			l, given := m.keys[k]
			if given && !slices.Contains(takes, k) && k != "model" && k != "seed" && k != "t0" {
				d.errorf(l, "%s is not a parameter of model %s (it takes: %s)", k, m.spec.Model, strings.Join(append(slices.Clone(takes), "seed", "t0"), ", "))
			}
		}
		for _, k := range takes {
			if _, given := m.keys[k]; !given && mobilityExample(k) != "" {
				d.errorf(m.loc, "model %s needs %s: %s", m.spec.Model, k, mobilityExample(k))
			}
		}
	}
	if m.spec.Model == mobility.GaussMarkov {
		if _, given := m.keys["alpha"]; !given {
			m.spec.Alpha = mobility.DefaultAlpha
		}
		if ms := m.spec.MeanSpeed; ms > 0 && m.spec.SpeedMax > 0 && (ms < m.spec.SpeedMin || ms > m.spec.SpeedMax) {
			d.errorf(m.meanLoc, "mean_speed %g m/s is outside the speed range [%g, %g] m/s", ms, m.spec.SpeedMin, m.spec.SpeedMax)
		}
	}
	m.ok = len(d.errs) == n0
	return m
}

// mobilityExample shows a key a model cannot do without ("" for those
// with defaults: no pause, a 1 s interval, alpha 0.75, the range's
// middle).
func mobilityExample(key string) string {
	return map[string]string{
		"waypoints": "[{t: 0s, pos: [0, 0]}, {t: 30s, pos: [60, 0]}]",
		"bounds":    "[[xmin, ymin], [xmax, ymax]] in metres, e.g. [[0, 0], [100, 50]]",
		"speed":     "a speed or a range in m/s, e.g. 1.5 or [0.5, 2]",
		"reference": "the node whose path it follows, e.g. sta1",
		"radius":    "how far from its reference it may be, in metres, e.g. 5",
	}[key]
}

func (m *rawMobility) waypoints(d *dec, n *yaml.Node, path string) {
	for i, item := range d.list(n, path, false) {
		ip := idx(path, i)
		var w mobility.Waypoint
		var tLoc loc
		hasT, hasPos := false, false
		for _, f := range d.fields(item, ip, waypointKeys) {
			fp := joinPath(ip, f.Key)
			switch f.Key {
			case "t":
				if v, ok := d.duration(f.V, fp, "a time after the movement starts, such as 30s"); ok {
					w.T, tLoc, hasT = v, at(f.V, fp), true
				}
			case "pos":
				w.Pos, hasPos = d.position(f.V, fp)
			}
		}
		if !hasT || !hasPos {
			if !d.failedAt(at(item, ip)) {
				d.errorf(at(item, ip), "a waypoint needs t: and pos:, e.g. {t: 30s, pos: [60, 0]}")
			}
			continue
		}
		if k := len(m.spec.Waypoints); k > 0 && w.T <= m.spec.Waypoints[k-1].T {
			d.errorf(tLoc, "t %v is not after the previous waypoint's (%v): waypoints are in increasing time", w.T, m.spec.Waypoints[k-1].T)
			continue
		}
		m.spec.Waypoints = append(m.spec.Waypoints, w)
	}
}

// bounds reads [[xmin, ymin], [xmax, ymax]].
func (d *dec) bounds(n *yaml.Node, path string) (lo, hi [2]float64, ok bool) {
	items := d.list(n, path, false)
	want := "bounds: want two corners [[xmin, ymin], [xmax, ymax]] in metres, e.g. [[0, 0], [100, 50]]"
	if len(items) != 2 {
		d.errorf(at(n, path), "%s", want)
		return lo, hi, false
	}
	var c [2][3]float64
	for i, it := range items {
		v := deref(it)
		if v == nil || v.Kind != yaml.SequenceNode || len(v.Content) != 2 {
			d.errorf(at(it, idx(path, i)), "%s", want)
			return lo, hi, false
		}
		if c[i], ok = d.position(it, idx(path, i)); !ok {
			return lo, hi, false
		}
	}
	lo, hi = [2]float64{c[0][0], c[0][1]}, [2]float64{c[1][0], c[1][1]}
	if !(lo[0] < hi[0] && lo[1] < hi[1]) {
		d.errorf(at(n, path), "bounds [%g, %g] to [%g, %g] enclose no area: the first corner is (xmin, ymin), the second (xmax, ymax), with xmin < xmax and ymin < ymax", lo[0], lo[1], hi[0], hi[1])
		return lo, hi, false
	}
	return lo, hi, true
}

// speed reads one speed in m/s ("1.5", "1.5m/s"), 0 < v ≤ maxSpeed.
func (d *dec) speed(n *yaml.Node, path string) (float64, bool) {
	s, ok := d.scalar(n, path, "a speed in m/s such as 1.5")
	if !ok {
		return 0, false
	}
	x, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "m/s")), 64)
	if err != nil || !(x > 0) || x > maxSpeed {
		d.errorf(at(n, path), "%q: want a speed in m/s, 0 < v ≤ %g (e.g. 1.5 or 1.5m/s)", clip(s), maxSpeed)
		return 0, false
	}
	return x, true
}

// speedRange reads a speed or [min, max].
func (d *dec) speedRange(n *yaml.Node, path string) (lo, hi float64, ok bool) {
	v := deref(n)
	if v == nil || v.Kind != yaml.SequenceNode {
		lo, ok = d.speed(n, path)
		return lo, lo, ok
	}
	if len(v.Content) != 2 {
		d.errorf(at(n, path), "speed: want one speed or a range [min, max] in m/s, e.g. [0.5, 2]")
		return 0, 0, false
	}
	lo, ok1 := d.speed(v.Content[0], idx(path, 0))
	hi, ok2 := d.speed(v.Content[1], idx(path, 1))
	if ok1 && ok2 && hi < lo {
		d.errorf(at(n, path), "speed range [%g, %g]: the minimum comes first", lo, hi)
		return 0, 0, false
	}
	return lo, hi, ok1 && ok2
}

// resolveMobility finishes each Wi-Fi node's mobility: its start (the
// node's position, or the first waypoint's, or the bounds' centre), its
// seed (the node name's hash unless given), and the reference of a
// group member (a Wi-Fi node, no cycles).
func (r *resolver) resolveMobility() {
	for ni, rn := range r.doc.nodes {
		m := rn.mobility
		if m == nil || !m.ok {
			continue
		}
		n := &r.spec.Nodes[ni]
		if med := r.spec.WiFiMedium; med != nil && !med.Enabled {
			r.d.errorf(m.loc, "mobility moves a radio on emuctl's Wi-Fi medium, and this lab has wifi: {medium: false} (mac80211_hwsim's instant medium has no positions): drop medium: false")
			continue
		}
		var pos *[3]float64
		switch {
		case n.AP != nil:
			pos = &n.AP.Position
		case n.Station != nil:
			pos = &n.Station.Position
		default:
			continue
		}
		s := m.spec
		if !m.seedSet {
			h := fnv.New64a()
			h.Write([]byte(n.Name))
			s.Seed = h.Sum64() >> 1
		}
		switch {
		case s.Model == mobility.Waypoints:
			if !rn.posSet {
				*pos = s.Waypoints[0].Pos
			}
		case s.Model == mobility.ReferencePoint:
			s.Start = *pos
		default:
			if !rn.posSet {
				*pos = [3]float64{(s.Min[0] + s.Max[0]) / 2, (s.Min[1] + s.Max[1]) / 2, 0}
			}
			s.Start = *pos
			if p := *pos; p[0] < s.Min[0] || p[0] > s.Max[0] || p[1] < s.Min[1] || p[1] > s.Max[1] {
				r.d.errorf(rn.posLoc, "position [%g, %g] is outside the mobility bounds [[%g, %g], [%g, %g]]: the model starts at the node's position", p[0], p[1], s.Min[0], s.Min[1], s.Max[0], s.Max[1])
				continue
			}
		}
		n.Mobility = &s
	}
	for ni, rn := range r.doc.nodes {
		n := &r.spec.Nodes[ni]
		if n.Mobility == nil || n.Mobility.Model != mobility.ReferencePoint {
			continue
		}
		ref := n.Mobility.Reference
		i, ok := r.byName[ref]
		switch {
		case !ok:
			r.d.errorf(rn.mobility.refLoc, "unknown node %q %s", clip(ref), choicesOrNone("Wi-Fi nodes", ref, r.wifiNames()))
		case ref == n.Name:
			r.d.errorf(rn.mobility.refLoc, "a node cannot be its own reference: name the node it moves with")
		case r.spec.Nodes[i].AP == nil && r.spec.Nodes[i].Station == nil:
			r.d.errorf(rn.mobility.refLoc, "reference %s is not a Wi-Fi node %s", ref, choicesOrNone("Wi-Fi nodes", ref, r.wifiNames()))
		default:
			// follow the chain: a cycle would have no path to start from
			seen := map[string]bool{n.Name: true}
			for cur := ref; ; {
				if seen[cur] {
					r.d.errorf(rn.mobility.refLoc, "reference %s leads back to %s: references form a cycle, and a group needs one node that moves on its own", ref, n.Name)
					break
				}
				seen[cur] = true
				c := r.spec.Node(cur)
				if c == nil || c.Mobility == nil || c.Mobility.Model != mobility.ReferencePoint {
					break
				}
				cur = c.Mobility.Reference
			}
		}
	}
}

func (r *resolver) wifiNames() []string {
	var out []string
	for _, n := range r.spec.Nodes {
		if n.AP != nil || n.Station != nil {
			out = append(out, n.Name)
		}
	}
	return out
}

// MobilityString describes a node's movement for tables: "waypoints (3)",
// "random-waypoint 0.5–2 m/s in [0,0]–[100,50] seed 7".
func MobilityString(m *mobility.Spec) string {
	if m == nil {
		return ""
	}
	switch m.Model {
	case mobility.Waypoints:
		return fmt.Sprintf("waypoints (%d, until %v)", len(m.Waypoints), m.Waypoints[len(m.Waypoints)-1].T)
	case mobility.ReferencePoint:
		return fmt.Sprintf("reference-point: within %g m of %s, seed %d", m.Radius, m.Reference, m.Seed)
	}
	sp := strconv.FormatFloat(m.SpeedMin, 'g', -1, 64)
	if m.SpeedMax != m.SpeedMin {
		sp += "–" + strconv.FormatFloat(m.SpeedMax, 'g', -1, 64)
	}
	return fmt.Sprintf("%s %s m/s in [%g,%g]–[%g,%g] seed %d", m.Model, sp, m.Min[0], m.Min[1], m.Max[0], m.Max[1], m.Seed)
}

// mobilityStep checks a schedule step's mobility: start|stop and node:
// (a step of its own: no link, no parameters).
func (d *dec) mobilityStep(st *rawStep, kinds int) {
	switch {
	case st.mobility != "" && kinds > 0:
		d.errorf(st.mobLoc, "a mobility step starts or stops a node's path: give link changes in steps of their own")
	case st.mobility != "" && (st.link != "" || st.dir != ""):
		l := st.linkLoc
		if st.link == "" {
			l = st.dirLoc
		}
		d.errorf(l, "a mobility step names a node (node: sta1), not a link")
	case st.mobility != "" && st.node == "":
		d.errorf(st.mobLoc, "mobility: %s needs the node whose path it %ss: {at: 10s, mobility: %s, node: sta1}", st.mobility, st.mobility, st.mobility)
	case !st.hasMob && st.node != "":
		d.errorf(st.nodeLoc, "node: names the node of a mobility step; add mobility: start or mobility: stop (a link step names its link with link:)")
	}
}

// mobilityStepNode checks the node of a schedule's mobility step: it
// exists and has mobility:.
func (r *resolver) mobilityStepNode(node string, l loc) bool {
	i, ok := r.byName[node]
	var moving []string
	for _, n := range r.doc.nodes {
		if n.mobility != nil {
			moving = append(moving, n.name)
		}
	}
	switch {
	case !ok:
		r.d.errorf(l, "unknown node %q %s", clip(node), choicesOrNone("nodes with mobility", node, moving))
	case r.doc.nodes[i].mobility == nil:
		r.d.errorf(l, "node %s has no mobility: key, so no path to start or stop %s", node, choicesOrNone("nodes with mobility", node, moving))
	default:
		return true
	}
	return false
}
