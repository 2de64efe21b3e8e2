package suite

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/tc"
	"github.com/emuctl/emuctl/topo"
	"github.com/emuctl/emuctl/traffic"
)

// Plan is what one invocation runs: a profile's scenarios and the order
// of their repetitions.
type Plan struct {
	Suite     *Suite      `json:"-"`
	Profile   Profile     `json:"profile"`
	Scenarios []*Scenario `json:"scenarios"`

	// ChooseMedia's choice (capability.go)
	chosen     bool
	media      []Medium
	mediaNotes []string

	// LeaveOutUnavailable's notes, once it has run
	leftOut    bool
	leaveNotes []string
}

// PlanOptions override a profile.
type PlanOptions struct {
	// Reps overrides the profile's repetitions when > 0.
	Reps int
	// Only narrows parameters to some labels (emuctl test --only;
	// plan_only.go).
	Only Binding
}

// Plan expands one profile (quick, default or paper).
func (s *Suite) Plan(profile string, o PlanOptions) (*Plan, error) {
	prof, ok := s.Profiles[profile]
	if !ok {
		return nil, fmt.Errorf("unknown profile %q (valid: quick, default, paper)", profile)
	}
	p := &Plan{Suite: s, Profile: *prof}
	if o.Reps > 0 {
		p.Profile.Reps = o.Reps
	}
	if err := s.restrict(&p.Profile, o.Only); err != nil {
		return nil, err
	}
	d := &diag{file: s.File}
	p.Scenarios = s.expand(d, &p.Profile)
	if err := d.result(); err != nil {
		return nil, err
	}
	return p, nil
}

// LeaveOutUnavailable leaves out, once, the scenarios this machine cannot
// run (dropUnavailable) and returns its notes, one per scenario left out
// saying why. Run does it when emuctl test has not; emuctl test does it
// first, so the counts it prints are of what will run.
func (p *Plan) LeaveOutUnavailable() []string {
	if !p.leftOut {
		p.leaveNotes = p.dropUnavailable(fmt.Sprintf("%s-%d", p.Suite.Name, os.Getpid()))
		p.leftOut = true
	}
	return p.leaveNotes
}

// dropUnavailable leaves out the scenarios this machine cannot run: a
// queue discipline that neither backend a link may use has here (cake
// without sch_cake, say), or a congestion control its kernel lacks
// (dctcp where tcp_dctcp is not built). It returns a note per scenario
// left out; checks over those scenarios then have none to judge (skip).
func (p *Plan) dropUnavailable(lab string) []string {
	var caps *tc.Caps
	var notes []string
	kept := p.Scenarios[:0]
scenarios:
	for _, sc := range p.Scenarios {
		for _, f := range sc.Flows {
			if err := traffic.CheckCC(f.Sock.CC); err != nil {
				notes = append(notes, fmt.Sprintf("scenario %s not run: not available on this machine (flow %s: %v)", sc.Name, f.Name, err))
				continue scenarios
			}
		}
		spec, err := sc.spec(lab)
		if err == nil {
			if caps == nil {
				c := tc.Probe()
				caps = &c
			}
			if why := emu.UnavailableQueues(spec, *caps); len(why) > 0 {
				notes = append(notes, fmt.Sprintf("scenario %s not run: not available on this machine (%s)", sc.Name, strings.Join(why, "; ")))
				continue
			}
		}
		kept = append(kept, sc)
	}
	p.Scenarios = kept
	return notes
}

// Runs is the number of runs the plan makes (without retries; a
// scenario that runs instead of its stand-in counted once, as the
// stand-in).
func (p *Plan) Runs() int {
	n := 0
	for _, sc := range p.Scenarios {
		if p.chosen || sc.estimated() {
			n++
		}
	}
	return n * p.Profile.Reps
}

// Estimate is the expected wall time: each run's longest flow plus a
// per-run overhead (lab up and down, settling, analysis).
func (p *Plan) Estimate() time.Duration {
	var total time.Duration
	for _, sc := range p.Scenarios {
		if !p.chosen && !sc.estimated() {
			continue // it runs instead of its stand-in, counted already
		}
		total += time.Duration(p.Profile.Reps) * (sc.span() + runOverhead)
	}
	return total
}

// runOverhead is the measured cost of a run beyond its traffic (1.5 s)
// plus the ~1 s that settle.go's probe must hold before every deploy.
const runOverhead = 2500 * time.Millisecond

// span is how long a scenario's traffic lasts.
func (sc *Scenario) span() time.Duration {
	var end time.Duration
	for _, f := range sc.Flows {
		end = max(end, f.Start+f.Duration)
	}
	return end
}

// spec loads a fresh copy of the scenario's topology, named lab.
func (sc *Scenario) spec(lab string) (*topo.Spec, error) {
	s, err := topo.Load(lab+".yaml", sc.topoText)
	if err != nil {
		return nil, err
	}
	return s, topo.Rename(s, lab)
}

// Label returns the scenario's label of a parameter.
func (sc *Scenario) Label(param string) string { return sc.Labels[param] }

func sortedSet(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
