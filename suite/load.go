package suite

import (
	"fmt"
	"io"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/emuctl/emuctl/suite/expr"
	"go.yaml.in/yaml/v3"
)

// MaxFileSize bounds suite files.
const MaxFileSize = 4 << 20

// maxScenarios bounds the matrix.
const maxScenarios = 2000

var (
	docKeys     = []string{"version", "suite", "title", "study", "source", "notes", "params", "exclude", "profiles", "topology", "flows", "collect", "checks", "plots", "reference"}
	profileKeys = []string{"duration", "warmup", "interval", "reps", "retry_invalid", "params"}
	nameRe      = regexp.MustCompile(`^[a-z][a-z0-9-]{0,23}$`)
	paramRe     = regexp.MustCompile(`^[a-z][a-z0-9_]{0,31}$`)
	collectors  = []string{"cong_state"}
	// ProfileNames are the run profiles, fastest first.
	ProfileNames = []string{"quick", "default", "paper"}
)

// IsSuite reports whether a YAML document is a suite file (it has a
// top-level suite: key), so `emuctl validate` can tell suites from
// topologies without decoding either.
func IsSuite(data []byte) bool {
	var probe map[string]yaml.Node
	if yaml.Unmarshal(data, &probe) != nil {
		return false
	}
	_, ok := probe["suite"]
	return ok
}

// LoadFile reads and loads a suite file.
func LoadFile(path string) (*Suite, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("suite: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("suite: %w", err)
	}
	return Load(path, data)
}

// Load decodes and validates a suite: every scenario of every profile is
// expanded and its topology and flows loaded, every expression checked
// against the parameters, metrics, flows and nodes. Problems come back as
// topo.Errors, all at once, each at file:line:col.
func Load(filename string, data []byte) (*Suite, error) {
	d := &diag{file: filename}
	if len(data) > MaxFileSize {
		d.errorf(nil, "", "file is larger than %d MiB: not a suite", MaxFileSize>>20)
		return nil, d.result()
	}
	root := d.parse(data)
	if root == nil {
		return nil, d.result()
	}
	s := &Suite{File: filename, Profiles: map[string]*Profile{}}
	var profiles, checks, plots, exclude, reference *yaml.Node
	for _, e := range d.entries(root, "", docKeys, true) {
		switch e.Key {
		case "version":
			if v, ok := d.integer(e.V, "version", 1, 1); ok && v != 1 {
				d.errorf(e.V, "version", "unknown version %d (valid: 1)", v)
			}
		case "suite":
			if s.Name = d.str(e.V, "suite"); s.Name != "" && !nameRe.MatchString(s.Name) {
				d.errorf(e.V, "suite", "name %q: use 1-24 of a-z, 0-9 and -, starting with a letter", s.Name)
			}
		case "title":
			s.Title = d.str(e.V, "title")
		case "study":
			s.Study = d.str(e.V, "study")
		case "source":
			s.Source = d.str(e.V, "source")
		case "notes":
			s.Notes = d.stringList(e.V, "notes")
		case "params":
			s.Params = d.params(e.V)
		case "exclude":
			exclude = e.V
		case "profiles":
			profiles = e.V
		case "topology":
			s.topology = e.V
		case "flows":
			s.flows = e.V
		case "collect":
			for _, c := range d.stringList(e.V, "collect") {
				if !slices.Contains(collectors, c) {
					d.errorf(e.V, "collect", "unknown collector %q %s", c, choices("valid", c, collectors))
				}
				s.Collect = append(s.Collect, c)
			}
		case "checks":
			checks = e.V
		case "plots":
			plots = e.V
		case "reference":
			reference = e.V
		}
	}
	for _, need := range []struct {
		ok  bool
		key string
	}{{s.Name != "", "suite"}, {s.topology != nil, "topology"}, {s.flows != nil, "flows"}, {checks != nil, "checks"}} {
		if !need.ok {
			d.errorf(root, "", "no %s: key (a suite needs suite:, topology:, flows: and checks:)", need.key)
		}
	}
	s.Exclude = d.bindings(exclude, "exclude", s.Params)
	if reference != nil {
		s.Reference = d.reference(reference, s)
	}
	s.decodeProfiles(d, profiles)
	s.flowNames, s.nodeNames = map[string]bool{}, map[string]bool{}
	if !d.failedAt("params", "profiles", "suite", "") {
		for _, name := range ProfileNames {
			s.expand(d, s.Profiles[name])
		}
	}
	// Names are checked against the flows and nodes only when every
	// scenario loaded; otherwise each use would echo the earlier problem.
	s.namesKnown = !d.failed()
	s.Checks = d.checks(checks, s)
	s.Plots = d.plots(plots, s)
	d.checkDiffers(s)
	if err := d.result(); err != nil {
		return nil, err
	}
	return s, nil
}

// params decodes the matrix: each parameter is a list of values (the
// label is the value as written) or a mapping label → value.
func (d *diag) params(n *yaml.Node) []*Param {
	var out []*Param
	for _, e := range d.entries(n, "params", nil, false) {
		path := "params." + e.Key
		p := &Param{Name: e.Key, line: e.K.Line, col: e.K.Column}
		if !paramRe.MatchString(e.Key) || e.Key == "duration" {
			d.errorf(e.K, path, "parameter name %q: use a-z, 0-9 and _, starting with a letter (not \"duration\")", e.Key)
		} else if _, ok := metricDefs[e.Key]; ok {
			d.errorf(e.K, path, "parameter name %q is a metric name; pick another", e.Key)
		} else if _, ok := expr.Functions[e.Key]; ok {
			d.errorf(e.K, path, "parameter name %q is a function name; pick another", e.Key)
		}
		v := deref(e.V)
		switch {
		case v != nil && v.Kind == yaml.SequenceNode:
			for i, c := range v.Content {
				c = deref(c)
				if c.Kind != yaml.ScalarNode {
					d.errorf(c, fmt.Sprintf("%s[%d]", path, i), "a list value must be a scalar; for mappings write label: value")
					continue
				}
				p.Values = append(p.Values, &Value{Label: c.Value, Text: c.Value, node: c})
			}
		case v != nil && v.Kind == yaml.MappingNode:
			for _, ve := range d.entries(v, path, nil, false) {
				val := &Value{Label: ve.Key, node: deref(ve.V)}
				if val.node != nil && val.node.Kind == yaml.ScalarNode {
					val.Text = val.node.Value
				}
				if val.node != nil && val.node.Kind == yaml.MappingNode {
					d.valueKeys(val, path+"."+ve.Key) // capability.go
				}
				p.Values = append(p.Values, val)
			}
		default:
			d.errorf(v, path, "must be a list of values or a mapping label: value, got %s", describe(v))
		}
		seen := map[string]bool{}
		for _, val := range p.Values {
			if val.Label == "" || strings.ContainsAny(val.Label, ",={}[]") {
				d.errorf(val.node, path, "label %q: must be non-empty without , = { } [ ]", val.Label)
			}
			if seen[val.Label] {
				d.errorf(val.node, path, "label %q appears twice", val.Label)
			}
			seen[val.Label] = true
		}
		if len(p.Values) == 0 {
			d.errorf(e.V, path, "no values: give at least one")
		}
		d.checkReplaces(p, path)
		out = append(out, p)
	}
	return out
}

// bindings decodes a list of {param: label|[labels]} mappings.
func (d *diag) bindings(n *yaml.Node, path string, params []*Param) []Binding {
	n = deref(n)
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.SequenceNode {
		d.errorf(n, path, "must be a list of {param: label} mappings, got %s", describe(n))
		return nil
	}
	var out []Binding
	for i, c := range n.Content {
		out = append(out, d.binding(c, fmt.Sprintf("%s[%d]", path, i), params))
	}
	return out
}

// binding decodes one {param: label|[labels]} mapping, checking names.
func (d *diag) binding(n *yaml.Node, path string, params []*Param) Binding {
	b := Binding{}
	for _, e := range d.entries(n, path, paramNames(params), false) {
		p := findParam(params, e.Key)
		for _, l := range d.stringList(e.V, joinPath(path, e.Key)) {
			if p != nil && p.value(l) == nil {
				d.errorf(e.V, joinPath(path, e.Key), "parameter %s has no label %q %s", p.Name, l, choices("labels", l, p.labels()))
			}
			b[e.Key] = append(b[e.Key], l)
		}
	}
	return b
}

func (s *Suite) decodeProfiles(d *diag, n *yaml.Node) {
	defaults := map[string]Profile{
		"quick":   {Duration: 10 * time.Second, Reps: 1},
		"default": {Duration: 30 * time.Second, Reps: 3},
		"paper":   {Duration: 100 * time.Second, Reps: 5},
	}
	for _, name := range ProfileNames {
		p := defaults[name]
		p.Name, p.Warmup, p.Interval, p.RetryInvalid = name, 2*time.Second, 100*time.Millisecond, 1
		s.Profiles[name] = &p
	}
	for _, e := range d.entries(n, "profiles", ProfileNames, false) {
		p, path := s.Profiles[e.Key], "profiles."+e.Key
		warmupSet := false
		for _, pe := range d.entries(e.V, path, profileKeys, false) {
			pp := joinPath(path, pe.Key)
			switch pe.Key {
			case "duration":
				p.Duration, _ = d.duration(pe.V, pp, time.Second, 24*time.Hour)
			case "warmup":
				p.Warmup, _ = d.duration(pe.V, pp, 0, time.Hour)
				warmupSet = true
			case "interval":
				p.Interval, _ = d.duration(pe.V, pp, 10*time.Millisecond, time.Minute)
			case "reps":
				p.Reps, _ = d.integer(pe.V, pp, 1, 1000)
			case "retry_invalid":
				p.RetryInvalid, _ = d.integer(pe.V, pp, 0, 10)
			case "params":
				p.Params = d.binding(pe.V, pp, s.Params)
			}
		}
		if !warmupSet && p.Warmup > p.Duration/4 {
			p.Warmup = p.Duration / 4 // short runs keep most of their time
		}
		if p.Warmup >= p.Duration {
			d.errorf(e.V, path, "warmup %v must be shorter than the duration %v", p.Warmup, p.Duration)
		}
	}
}

func paramNames(ps []*Param) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Name
	}
	return out
}

func findParam(ps []*Param, name string) *Param {
	for _, p := range ps {
		if p.Name == name {
			return p
		}
	}
	return nil
}

func (p *Param) value(label string) *Value {
	for _, v := range p.Values {
		if v.Label == label {
			return v
		}
	}
	return nil
}

func (p *Param) labels() []string {
	out := make([]string, len(p.Values))
	for i, v := range p.Values {
		out[i] = v.Label
	}
	return out
}
