package suite

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/emuctl/emuctl/validate"
	"go.yaml.in/yaml/v3"
)

// A reference engine runs the same scenarios in a simulator (ns-3, with
// emuctl's own programs in validate/ns3), so a report can put the
// simulator's numbers beside Linux's and the study's. A suite file says
// how in its reference: block:
//
//	reference:
//	  ns3:
//	    program: sack-reno                 # validate/ns3/sack-reno.cc
//	    where: {hop: wired}                # the scenarios it stands for
//	    args: ["--loss=${loss.p}", "--sack=${sack}"]
//	    reps: 5                            # at least this many seeds per scenario
//	    differs: {S1-8b: "why Linux and ns-3 differ, as measured"}
//
// The runner adds --time, --warmup and --interval (the profile's),
// --seed (the suite's) and --run (the repetition).

// Engines are the reference engines a suite may name.
var Engines = []string{"ns3"}

var refKeys = []string{"program", "where", "args", "reps", "differs", "note"}

// RefSpec is one engine's entry of a suite's reference: block.
type RefSpec struct {
	Engine  string  `json:"engine"`
	Program string  `json:"program"`
	Where   Binding `json:"where,omitempty"`
	// Args are the flags as written (placeholders unresolved).
	Args []string `json:"args,omitempty"`
	// Reps is the least number of repetitions (seeds) per scenario: a
	// simulation is cheap, and more seeds steady the medians; the
	// profile's repetitions when larger.
	Reps int `json:"reps,omitempty"`
	// Differs explains, per check ID, which mechanism makes Linux and the
	// engine differ (shown beside both values).
	Differs map[string]string `json:"differs,omitempty"`
	Note    string            `json:"note,omitempty"`
	args    *yaml.Node
	differs map[string]*yaml.Node // for positions of unknown check IDs
}

// EngineName is how reports name an engine.
func EngineName(engine string) string {
	if engine == "ns3" {
		return "ns-3"
	}
	return engine
}

// reference decodes the reference: block.
func (d *diag) reference(n *yaml.Node, s *Suite) map[string]*RefSpec {
	out := map[string]*RefSpec{}
	for _, e := range d.entries(n, "reference", Engines, false) {
		path := "reference." + e.Key
		r := &RefSpec{Engine: e.Key, differs: map[string]*yaml.Node{}}
		for _, f := range d.entries(e.V, path, refKeys, false) {
			p := joinPath(path, f.Key)
			switch f.Key {
			case "program":
				r.Program = d.str(f.V, p)
				if progs := validate.NS3Programs(); r.Program != "" && !slices.Contains(progs, r.Program) {
					d.errorf(f.V, p, "no ns-3 program %q in validate/ns3 %s", r.Program, choices("programs", r.Program, progs))
				}
			case "where":
				r.Where = d.binding(f.V, p, s.Params)
			case "args":
				if a := deref(f.V); a == nil || a.Kind != yaml.SequenceNode {
					d.errorf(f.V, p, "must be a list of program flags such as \"--loss=${loss.p}\", got %s", describe(a))
				} else {
					r.args = a
					for _, c := range a.Content {
						r.Args = append(r.Args, deref(c).Value)
					}
				}
			case "reps":
				r.Reps, _ = d.integer(f.V, p, 1, 1000)
			case "differs":
				r.Differs = map[string]string{}
				for _, de := range d.entries(f.V, p, nil, false) {
					r.Differs[de.Key] = d.str(de.V, joinPath(p, de.Key))
					r.differs[de.Key] = de.K
				}
			case "note":
				r.Note = d.str(f.V, p)
			}
		}
		if r.Program == "" {
			d.errorf(e.V, path, "no program: (one of %s)", strings.Join(validate.NS3Programs(), ", "))
		}
		out[e.Key] = r
	}
	return out
}

// checkDiffers reports differs: entries naming no check.
func (d *diag) checkDiffers(s *Suite) {
	ids := map[string]bool{}
	var all []string
	for _, c := range s.Checks {
		ids[c.ID] = true
		all = append(all, c.ID)
	}
	for _, r := range s.Reference {
		keys := make([]string, 0, len(r.differs))
		for k := range r.differs {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			if !ids[k] {
				d.errorf(r.differs[k], "reference."+r.Engine+".differs", "no check %q %s", k, choices("checks", k, all))
			}
		}
	}
}

// referenceArgs instantiates each engine's flags for one scenario (nil
// for an engine whose where: leaves the scenario out).
func (s *Suite) referenceArgs(d *diag, in *instance) map[string][]string {
	if len(s.Reference) == 0 {
		return nil
	}
	out := map[string][]string{}
	for eng, r := range s.Reference {
		if !r.Where.matches(in.labels) {
			continue
		}
		path := "reference." + eng + ".args"
		args := []string{}
		if r.args != nil {
			a := in.copyNode(r.args, path)
			for i, c := range a.Content {
				if c.Kind != yaml.ScalarNode {
					d.errorf(c, fmt.Sprintf("%s[%d]", path, i), "a flag must be text such as \"--loss=${loss.p}\", got %s", describe(c))
					continue
				}
				args = append(args, c.Value)
			}
		}
		out[eng] = args
	}
	return out
}

// ReferenceArgs returns the flags an engine's program gets for the
// scenario (without the runner's --time, --warmup, --interval, --seed
// and --run), and whether the engine covers it.
func (sc *Scenario) ReferenceArgs(engine string) ([]string, bool) {
	a, ok := sc.refArgs[engine]
	return a, ok
}
