package topo

import (
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/emuctl/emuctl/units"
)

// checkLinkNames checks the optional link names: unique, and not a node's
// name (a step or link command naming it would be ambiguous).
func (r *resolver) checkLinkNames() {
	seen := map[string]loc{}
	for _, l := range r.doc.links {
		if l.name == "" {
			continue
		}
		if prev, dup := seen[l.name]; dup {
			r.d.errorf(l.nameLoc, "link name %q is already used at line %d: link names are unique", clip(l.name), prev.line)
			continue
		}
		seen[l.name] = l.nameLoc
		if _, isNode := r.byName[l.name]; isNode {
			r.d.errorf(l.nameLoc, "link name %q is also a node's name: pick another (a reference to it would be ambiguous)", clip(l.name))
		}
	}
}

// findLink resolves a step's link reference: a link's name, its two
// nodes ("h1-s1", either order, or "h1,s1") or one of its ends
// ("h1:h1-eth0").
func (r *resolver) findLink(ref string, l loc) (int, bool) {
	var hits []int
	for i, lk := range r.spec.Links {
		ok := lk.Name != "" && ref == lk.Name || ref == lk.A.String() || ref == lk.B.String()
		for _, sep := range []string{"-", ","} {
			ok = ok || ref == lk.A.Node+sep+lk.B.Node || ref == lk.B.Node+sep+lk.A.Node
		}
		if ok {
			hits = append(hits, i)
		}
	}
	switch len(hits) {
	case 1:
		return hits[0], true
	case 0:
		var known []string
		for _, lk := range r.spec.Links {
			if lk.Name != "" {
				known = append(known, lk.Name)
			} else {
				known = append(known, lk.A.Node+"-"+lk.B.Node)
			}
		}
		r.d.errorf(l, "unknown link %q %s (a link's name, its two nodes such as h1-s1, or an end such as h1:h1-eth0)", clip(ref), choicesOrNone("known", ref, known))
	default:
		var ds []string
		for _, i := range hits {
			ds = append(ds, r.spec.Links[i].A.String()+" <-> "+r.spec.Links[i].B.String())
		}
		r.d.errorf(l, "link %q is ambiguous (%s): give the link a name: and use it", clip(ref), strings.Join(ds, ", "))
	}
	return -1, false
}

// current holds, per link direction, the parameter values in force as a
// schedule's steps go (for ramps' starting points).
type current struct {
	rate      units.BitRate
	delay     time.Duration
	jitter    time.Duration
	loss      units.Percent
	duplicate units.Percent
	corrupt   units.Percent
	traced    bool
}

func (c *current) apply(p lp) {
	if p.rate != nil {
		c.rate = *p.rate
	}
	if p.delay != nil {
		c.delay = *p.delay
	}
	if p.jitter != nil {
		c.jitter = *p.jitter
	}
	if p.loss != nil {
		c.loss = *p.loss
	}
	if p.duplicate != nil {
		c.duplicate = *p.duplicate
	}
	if p.corrupt != nil {
		c.corrupt = *p.corrupt
	}
}

// makeSchedules resolves the schedules: links found, steps in order,
// ramps expanded, repeats checked.
func (r *resolver) makeSchedules() {
	names := map[string]loc{}
	owner := map[ownKey]owned{} // which schedule changes what
	for i, rs := range r.doc.schedules {
		s := Schedule{Name: rs.name, T0: rs.t0, Repeat: rs.repeat, At: posString(r.d.file, rs.loc)}
		if rs.name == "" {
			r.d.errorf(rs.loc, "schedules[%d] needs a name: (emuctl schedule start|stop NAME and the step log use it)", i)
		} else if prev, dup := names[rs.name]; dup {
			r.d.errorf(rs.nameLoc, "schedule name %q is already used at line %d", clip(rs.name), prev.line)
		} else {
			names[rs.name] = rs.nameLoc
		}
		state := map[[2]int]*current{} // (link, dir 0|1) → values in force
		cur := func(li, j int) *current {
			k := [2]int{li, j}
			if c := state[k]; c != nil {
				return c
			}
			p := r.spec.Links[li].Params.Dir(j == 0)
			c := &current{rate: p.Rate, delay: p.Delay, jitter: p.Jitter, loss: p.Loss, duplicate: p.Duplicate, corrupt: p.Corrupt, traced: p.Trace != nil}
			state[k] = c
			return c
		}
		var last time.Duration
		var lastLoc loc
		end := time.Duration(0)
		for _, st := range rs.steps {
			if !st.hasAt {
				continue
			}
			if st.at < last {
				r.d.errorf(st.atLoc, "steps out of order: at %s comes after a step at %s (line %d): a schedule's steps are in time order", units.FormatDuration(st.at), units.FormatDuration(last), lastLoc.line)
			}
			last, lastLoc = max(last, st.at), st.atLoc
			if st.mobKey {
				if st.mobility != "" && st.node != "" && r.mobilityStepNode(st.node, st.nodeLoc) {
					s.Steps = append(s.Steps, Step{At: st.at, Link: -1, Ref: st.node, Mobility: st.mobility, Pos: posString(r.d.file, st.loc)})
					end = max(end, st.at)
				}
				continue
			}
			ref, refLoc := st.link, st.linkLoc
			if ref == "" {
				ref, refLoc = rs.link, rs.linkLoc
			}
			if ref == "" {
				r.d.errorf(st.loc, "the step names no link: give link: in the step or in the schedule (a link's name, its two nodes such as h1-s1, or an end)")
				continue
			}
			li, ok := r.findLink(ref, refLoc)
			if !ok {
				continue
			}
			pos := posString(r.d.file, st.loc)
			base := Step{At: st.at, Link: li, Ref: ref, Pos: pos}
			if st.state != "" {
				if st.dir != "" {
					r.d.errorf(st.dirLoc, "state takes both directions down or up (a link's two ends): remove dir")
				}
				b := base
				b.State = st.state
				s.Steps = append(s.Steps, b)
				end = max(end, st.at)
			}
			for _, set := range st.sets {
				dir := set.dir
				if dir == "" {
					dir = st.dir
				}
				if !r.stepOK(set.p, li, dir, set.loc, cur) {
					continue
				}
				b := base
				b.Dir, b.Set = dir, set.p.paramSet()
				s.Steps = append(s.Steps, b)
				for _, j := range dirIndexes(dir) {
					cur(li, j).apply(set.p)
				}
				end = max(end, st.at)
			}
			if rp := st.ramp; rp != nil {
				if !r.stepOK(rp.to, li, st.dir, rp.toLoc, cur) {
					continue
				}
				s.Steps = append(s.Steps, r.expandRamp(base, st.dir, rp, cur)...)
				end = max(end, st.at+rp.over)
			}
		}
		r.checkOwners(owner, rs, s.Steps)
		// ramps expanded per direction interleave: apply in time order
		sort.SliceStable(s.Steps, func(a, b int) bool { return s.Steps[a].At < s.Steps[b].At })
		if s.Repeat != nil && len(s.Steps) > 0 && s.Repeat.Every <= end {
			r.d.errorf(rs.repeatLoc, "repeat every %s must be longer than one run of the schedule (its last step is at %s)", units.FormatDuration(s.Repeat.Every), units.FormatDuration(end))
		}
		r.spec.Schedules = append(r.spec.Schedules, s)
	}
}

func dirIndexes(dir string) []int {
	switch dir {
	case keyAtoB:
		return []int{0}
	case keyBtoA:
		return []int{1}
	}
	return []int{0, 1}
}

// stepOK checks a step's parameters against the link direction(s) it
// changes: a traced direction has no rate to change.
func (r *resolver) stepOK(p lp, li int, dir string, l loc, cur func(int, int) *current) bool {
	ok := true
	for _, j := range dirIndexes(dir) {
		if c := cur(li, j); c.traced && p.rate != nil {
			tr := r.spec.Links[li].Params.Dir(j == 0).Trace
			r.d.errorf(l, "link %s %s replays a trace (%s): the trace is its rate; a step cannot set one", r.linkLabel(li), []string{keyAtoB, keyBtoA}[j], filepath.Base(tr.File))
			ok = false
		}
	}
	return ok
}

func (r *resolver) linkLabel(li int) string {
	if n := r.spec.Links[li].Name; n != "" {
		return n
	}
	return r.spec.Links[li].A.Node + "-" + r.spec.Links[li].B.Node
}

// expandRamp turns a ramp into its steps: k = 1..n at at + k·over/n,
// each value at k/n of the way from the value in force (per direction)
// to the target.
func (r *resolver) expandRamp(base Step, dir string, rp *rawRamp, cur func(int, int) *current) []Step {
	dirs := []string{dir}
	js := dirIndexes(dir)
	if dir == "" && !sameStart(*cur(base.Link, 0), *cur(base.Link, 1), rp.to) {
		dirs, js = []string{keyAtoB, keyBtoA}, []int{0, 1} // they start apart: ramp each
	} else {
		js = js[:1]
	}
	var out []Step
	for di, d := range dirs {
		from := *cur(base.Link, js[di])
		if rp.to.rate != nil && from.rate == 0 {
			r.d.errorf(rp.toLoc, "a ramp of rate needs a rate in force before it: link %s has none (it is unlimited); set one first (the link's rate or a step before the ramp)", r.linkLabel(base.Link))
			return nil
		}
		for k := 1; k <= rp.steps; k++ {
			f := float64(k) / float64(rp.steps)
			var p ParamSet
			if t := rp.to.rate; t != nil {
				v := units.BitRate(math.Round(float64(from.rate) + f*(float64(*t)-float64(from.rate))))
				p.Rate = &v
			}
			lerpD := func(a time.Duration, b *time.Duration) *time.Duration {
				if b == nil {
					return nil
				}
				v := a + time.Duration(math.Round(f*float64(*b-a)))
				return &v
			}
			lerpP := func(a units.Percent, b *units.Percent) *units.Percent {
				if b == nil {
					return nil
				}
				v := a + units.Percent(f*float64(*b-a))
				return &v
			}
			p.Delay, p.Jitter = lerpD(from.delay, rp.to.delay), lerpD(from.jitter, rp.to.jitter)
			p.Loss, p.Duplicate, p.Corrupt = lerpP(from.loss, rp.to.loss), lerpP(from.duplicate, rp.to.duplicate), lerpP(from.corrupt, rp.to.corrupt)
			st := base
			st.At = base.At + time.Duration(math.Round(f*float64(rp.over)))
			st.Dir, st.Set, st.Ramp = d, &p, fmt.Sprintf("%d/%d", k, rp.steps)
			out = append(out, st)
		}
	}
	for _, j := range dirIndexes(dir) {
		cur(base.Link, j).apply(rp.to)
	}
	return out
}

// paramSet is the schedulable part of p.
func (p lp) paramSet() *ParamSet {
	s := &ParamSet{Rate: p.rate, Delay: p.delay, Jitter: p.jitter, Loss: p.loss, Duplicate: p.duplicate, Corrupt: p.corrupt}
	if p.queue != nil {
		q := *p.queue
		s.Queue = &q
	}
	return s
}

// sameStart reports whether two directions start a ramp to "to" from the
// same values (only the ramped keys count).
func sameStart(a, b current, to lp) bool {
	return (to.rate == nil || a.rate == b.rate) && (to.delay == nil || a.delay == b.delay) &&
		(to.jitter == nil || a.jitter == b.jitter) && (to.loss == nil || a.loss == b.loss) &&
		(to.duplicate == nil || a.duplicate == b.duplicate) && (to.corrupt == nil || a.corrupt == b.corrupt)
}

// ownKey is one parameter of one link direction (dir 0 a->b, 1 b->a).
type ownKey struct {
	link, dir int
	param     string
}

type owned struct {
	schedule string
	line     int
}

// checkOwners reports a parameter that two schedules change: their steps
// would overwrite each other in an order that depends on when each was
// started.
func (r *resolver) checkOwners(owner map[ownKey]owned, rs *rawSchedule, steps []Step) {
	reported := map[ownKey]bool{}
	for _, st := range steps {
		var params []string
		if st.State != "" {
			params = []string{"state"}
		}
		if p := st.Set; p != nil {
			for _, x := range []struct {
				name string
				set  bool
			}{{"rate", p.Rate != nil}, {"delay", p.Delay != nil}, {"jitter", p.Jitter != nil}, {"loss", p.Loss != nil},
				{"duplicate", p.Duplicate != nil}, {"corrupt", p.Corrupt != nil}, {"queue", p.Queue != nil}} {
				if x.set {
					params = append(params, x.name)
				}
			}
		}
		for _, name := range params {
			for _, j := range dirIndexes(st.Dir) {
				k := ownKey{st.Link, j, name}
				prev, taken := owner[k]
				switch {
				case !taken:
					owner[k] = owned{rs.name, rs.loc.line}
				case prev.schedule != rs.name && !reported[k]:
					reported[k] = true
					r.d.errorf(rs.loc, "schedule %q changes %s of link %s %s, which schedule %q (line %d) changes too: one schedule per link parameter and direction", rs.name, name, r.linkLabel(st.Link), []string{keyAtoB, keyBtoA}[j], prev.schedule, prev.line)
				}
			}
		}
	}
}
