package topo

import (
	"slices"
	"time"

	"github.com/emuctl/emuctl/units"
	"go.yaml.in/yaml/v3"
)

// Keys of schedules: entries, their steps, ramps and repeats.
var (
	scheduleKeys = []string{"name", "t0", "link", "repeat", "steps"}
	stepKeys     = []string{"at", "link", "dir", "set", keyAtoB, keyBtoA, "state", "ramp", "mobility", "node"}
	rampKeys     = []string{"to", "over", "steps"}
	repeatKeys   = []string{"every", "count"}
	t0Kinds      = []string{T0Up, T0Traffic, T0Manual}
	stepDirs     = []string{"both", keyAtoB, keyBtoA}
	linkStates   = []string{"down", "up"}
	mobActions   = []string{"start", "stop"}
	// schedulable are the parameters a step may change; rampable those a
	// ramp may move gradually.
	schedulable = []string{"rate", "delay", "jitter", "loss", "duplicate", "corrupt", "queue"}
	rampable    = []string{"rate", "delay", "jitter", "loss", "duplicate", "corrupt"}
)

type rawSchedule struct {
	loc       loc
	name      string
	nameLoc   loc
	t0        string
	link      string
	linkLoc   loc
	repeat    *Repeat
	repeatLoc loc
	steps     []*rawStep
}

type rawStep struct {
	loc      loc
	at       time.Duration
	atLoc    loc
	hasAt    bool
	link     string
	linkLoc  loc
	dir      string // "", a->b, b->a
	dirLoc   loc
	sets     []rawSet
	state    string
	stateLoc loc
	ramp     *rawRamp
	// mobility: start|stop of node's path (decode_mobility.go)
	mobility string
	mobLoc   loc
	node     string
	nodeLoc  loc
	mobKey   bool // mobility: or node: given (maybe invalid, reported)
	hasMob   bool // mobility: given
}

// rawSet is a step's parameters for one direction ("" both).
type rawSet struct {
	dir string
	p   lp
	loc loc
}

type rawRamp struct {
	loc   loc
	to    lp
	toLoc loc
	over  time.Duration
	steps int
}

func (d *dec) schedules(n *yaml.Node, doc *rawDoc) {
	for i, item := range d.list(n, "schedules", false) {
		path := idx("schedules", i)
		s := &rawSchedule{loc: at(item, path), t0: T0Up}
		for _, e := range d.fields(item, path, scheduleKeys) {
			kp := joinPath(path, e.Key)
			switch e.Key {
			case "name":
				if v, ok := d.str(e.V, kp, "a schedule name such as handover"); ok {
					s.name, s.nameLoc = v, at(e.V, kp)
				}
			case "t0":
				if v, ok := d.oneOf(e.V, kp, "start reference", t0Kinds); ok {
					s.t0 = v
				}
			case "link":
				if v, ok := d.str(e.V, kp, "a link: its name, its two nodes (h1-s1) or an end (h1:eth0)"); ok {
					s.link, s.linkLoc = v, at(e.V, kp)
				}
			case "repeat":
				s.repeat, s.repeatLoc = d.repeat(e.V, kp), at(e.K, kp)
			case "steps":
				for j, st := range d.list(e.V, kp, false) {
					s.steps = append(s.steps, d.step(st, idx(kp, j)))
				}
			}
		}
		doc.schedules = append(doc.schedules, s)
	}
}

func (d *dec) duration(n *yaml.Node, path, want string) (time.Duration, bool) {
	s, ok := d.scalar(n, path, want)
	if !ok {
		return 0, false
	}
	v, err := units.ParseDuration(s)
	if err != nil {
		d.errorf(at(n, path), "%v", err)
		return 0, false
	}
	return v, true
}

func (d *dec) repeat(n *yaml.Node, path string) *Repeat {
	r := &Repeat{}
	for _, e := range d.fields(n, path, repeatKeys) {
		kp := joinPath(path, e.Key)
		switch e.Key {
		case "every":
			if v, ok := d.duration(e.V, kp, "a duration such as 20s"); ok {
				r.Every = v
			}
		case "count":
			if v, ok := d.integer(e.V, kp, 1, 1_000_000); ok {
				r.Count = int(v)
			}
		}
	}
	if r.Every <= 0 {
		d.errorf(at(n, path), "repeat needs every: a positive duration (repeat: {every: 20s, count: 5}; without count it repeats until stopped)")
		return nil
	}
	return r
}

func (d *dec) step(n *yaml.Node, path string) *rawStep {
	st := &rawStep{loc: at(n, path)}
	tried := false // a change was given, maybe invalid (already reported)
	for _, e := range d.fields(n, path, stepKeys) {
		switch e.Key {
		case "set", keyAtoB, keyBtoA, "state", "ramp":
			tried = true
		case "mobility", "node":
			tried, st.mobKey = true, true
		}
		kp := joinPath(path, keyPath(e.Key))
		switch e.Key {
		case "at":
			if v, ok := d.duration(e.V, kp, "a time after t0 such as 10s"); ok {
				st.at, st.atLoc, st.hasAt = v, at(e.V, kp), true
			}
		case "link":
			if v, ok := d.str(e.V, kp, "a link: its name, its two nodes (h1-s1) or an end (h1:eth0)"); ok {
				st.link, st.linkLoc = v, at(e.V, kp)
			}
		case "dir":
			if v, ok := d.oneOf(e.V, kp, "direction", stepDirs); ok {
				st.dir, st.dirLoc = v, at(e.V, kp)
				if v == "both" {
					st.dir = ""
				}
			}
		case "set", keyAtoB, keyBtoA:
			dir := ""
			if e.Key != "set" {
				dir = e.Key
			}
			if p, ok := d.stepParams(e.V, kp, schedulable, "set"); ok {
				st.sets = append(st.sets, rawSet{dir: dir, p: p, loc: at(e.K, kp)})
			}
		case "state":
			if v, ok := d.oneOf(e.V, kp, "link state", linkStates); ok {
				st.state, st.stateLoc = v, at(e.V, kp)
			}
		case "ramp":
			st.ramp = d.ramp(e.V, kp)
		case "mobility":
			st.hasMob = true
			if v, ok := d.oneOf(e.V, kp, "mobility action", mobActions); ok {
				st.mobility, st.mobLoc = v, at(e.V, kp)
			}
		case "node":
			if v, ok := d.str(e.V, kp, "the node whose mobility the step starts or stops"); ok {
				st.node, st.nodeLoc = v, at(e.V, kp)
			}
		}
	}
	if !st.hasAt {
		d.errorf(st.loc, "a step needs at: its time after the schedule's t0 (e.g. {at: 10s, set: {rate: 2mbit}})")
	}
	kinds := len(st.sets)
	if st.state != "" {
		kinds++
	}
	if st.ramp != nil {
		kinds++
	}
	if kinds == 0 && st.mobility == "" && !tried {
		d.errorf(st.loc, "a step changes something: set: {rate: 2mbit} (or a->b:/b->a:), state: down|up, ramp: {to: {rate: 1mbit}, over: 10s, steps: 10}, or mobility: start|stop with node:")
	}
	d.mobilityStep(st, kinds)
	if st.state != "" && kinds > 1 {
		d.errorf(st.stateLoc, "state takes the whole link down or up: give its parameter changes in a step of their own")
	}
	return st
}

// stepParams decodes a step's (or a ramp's) parameters, allowing only
// the keys in valid.
func (d *dec) stepParams(n *yaml.Node, path string, valid []string, what string) (lp, bool) {
	v := deref(n)
	if v != nil && v.Kind == yaml.MappingNode {
		ok := true
		for _, e := range d.entries(n, path) {
			kp := joinPath(path, keyPath(e.Key))
			switch {
			case slices.Contains(valid, e.Key):
			case e.Key == "state":
				d.errorf(at(e.K, kp), "state (down/up) cannot ramp: it changes at once; use a step of its own {at: ..., state: down}")
				ok = false
			case what == "ramp" && e.Key == "queue":
				d.errorf(at(e.K, kp), "a queue cannot ramp (it changes at once): set it in a step (rampable: rate, delay, jitter, loss, duplicate, corrupt)")
				ok = false
			case slices.Contains(linkParamKeys, e.Key) || e.Key == "trace":
				d.errorf(at(e.K, kp), "%s cannot change in a schedule (schedulable: rate, delay, jitter, loss, duplicate, corrupt, queue; state: down|up)", e.Key)
				ok = false
			default:
				d.errorf(at(e.K, kp), "unknown key %q %s", clip(e.Key), choices("valid in a "+what, e.Key, valid))
				ok = false
			}
		}
		if !ok {
			return lp{}, false
		}
	}
	n0 := len(d.errs)
	p, _, _ := d.linkParams(n, path, levelDir)
	return p, len(d.errs) == n0
}

func (d *dec) ramp(n *yaml.Node, path string) *rawRamp {
	r := &rawRamp{loc: at(n, path)}
	hasTo := false
	for _, e := range d.fields(n, path, rampKeys) {
		kp := joinPath(path, e.Key)
		switch e.Key {
		case "to":
			hasTo = true
			p, ok := d.stepParams(e.V, kp, rampable, "ramp")
			if !ok {
				return nil
			}
			r.to, r.toLoc = p, at(e.K, kp)
		case "over":
			if v, ok := d.duration(e.V, kp, "a duration such as 10s"); ok {
				r.over = v
			}
		case "steps":
			if v, ok := d.integer(e.V, kp, 1, 10000); ok {
				r.steps = int(v)
			}
		}
	}
	if !hasTo || r.over <= 0 {
		d.errorf(r.loc, "a ramp needs to: (the values to reach) and over: (how long), e.g. ramp: {to: {rate: 1mbit}, over: 10s, steps: 10}")
		return nil
	}
	if r.steps == 0 {
		r.steps = 10
	}
	return r
}
