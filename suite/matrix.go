package suite

import (
	"fmt"
	"slices"
	"strings"

	"github.com/emuctl/emuctl/topo"
	"github.com/emuctl/emuctl/traffic"
	"go.yaml.in/yaml/v3"
)

// combos returns every label combination of the parameters allowed by
// the profile, in parameter order (the first parameter varies slowest).
func (s *Suite) combos(prof *Profile) []map[string]string {
	out := []map[string]string{{}}
	for _, p := range s.Params {
		var next []map[string]string
		for _, c := range out {
			for _, v := range p.Values {
				if allowed, ok := prof.Params[p.Name]; ok && !slices.Contains(allowed, v.Label) {
					continue
				}
				m := make(map[string]string, len(c)+1)
				for k, x := range c {
					m[k] = x
				}
				m[p.Name] = v.Label
				next = append(next, m)
			}
		}
		out = next
	}
	var kept []map[string]string
	for _, c := range out {
		excluded := false
		for _, b := range s.Exclude {
			if len(b) > 0 && b.matches(c) {
				excluded = true
			}
		}
		if !excluded {
			kept = append(kept, c)
		}
	}
	return kept
}

// scenarioName renders labels as "param=label,..." in parameter order.
func (s *Suite) scenarioName(labels map[string]string) string {
	var parts []string
	for _, p := range s.Params {
		parts = append(parts, p.Name+"="+labels[p.Name])
	}
	if len(parts) == 0 {
		return "base"
	}
	return strings.Join(parts, ",")
}

// expand builds the scenarios of one profile, loading each one's
// topology and flows; problems go to d with suite-file positions.
func (s *Suite) expand(d *diag, prof *Profile) []*Scenario {
	combos := s.combos(prof)
	if len(combos) == 0 {
		d.errorf(nil, "profiles."+prof.Name, "no scenario left: the profile's params and exclude: rule out every combination")
		return nil
	}
	if len(combos) > maxScenarios {
		d.errorf(nil, "params", "%d scenarios: at most %d (narrow the matrix or use exclude:)", len(combos), maxScenarios)
		return nil
	}
	var out []*Scenario
	for _, labels := range combos {
		sc := &Scenario{Name: s.scenarioName(labels), Labels: labels, values: map[string]*Value{}}
		for _, p := range s.Params {
			sc.values[p.Name] = p.value(labels[p.Name])
		}
		in := &instance{d: d, params: s.Params, values: sc.values, labels: labels, scen: sc.Name,
			extra: map[string]string{"duration": prof.Duration.String()}}
		sc.topoText, sc.Spec = s.loadTopology(d, in)
		if sc.Spec != nil {
			sc.Flows = s.loadFlows(d, in, prof, sc.Spec)
		}
		sc.refArgs = s.referenceArgs(d, in)
		out = append(out, sc)
	}
	return out
}

// loadTopology instantiates and loads the topology template.
func (s *Suite) loadTopology(d *diag, in *instance) ([]byte, *topo.Spec) {
	t := in.copyNode(s.topology, "topology")
	if t == nil || t.Kind != yaml.MappingNode {
		d.errorf(s.topology, "topology", "must be a topology mapping (nodes:, links:, ...), got %s", describe(t))
		return nil, nil
	}
	r, err := render(t)
	if err != nil {
		d.errorf(s.topology, "topology", "cannot render the topology: %v", err)
		return nil, nil
	}
	spec, err := topo.Load(s.Name+".yaml", r.text)
	if err != nil {
		r.remap(d, err, "topology", in.scen)
		return nil, nil
	}
	for _, n := range spec.Nodes {
		s.nodeNames[n.Name] = true
	}
	return r.text, spec
}

// loadFlows instantiates the flows with the profile's duration and
// interval as defaults, and checks them against the topology.
func (s *Suite) loadFlows(d *diag, in *instance, prof *Profile, spec *topo.Spec) []traffic.Flow {
	fl := in.copyNode(s.flows, "flows")
	if fl == nil || fl.Kind != yaml.SequenceNode {
		d.errorf(s.flows, "flows", "must be a list of flows, got %s", describe(fl))
		return nil
	}
	line, col := s.flows.Line, s.flows.Column
	for _, item := range fl.Content {
		if item.Kind == yaml.MappingNode && !hasKey(item, "duration") {
			item.Content = append(item.Content,
				&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: "duration", Line: item.Line, Column: item.Column},
				&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: prof.Duration.String(), Line: item.Line, Column: item.Column})
		}
	}
	doc := mapping(line, col, "defaults", mapping(line, col, "interval", prof.Interval.String()), "flows", fl)
	r, err := render(doc)
	if err != nil {
		d.errorf(s.flows, "flows", "cannot render the flows: %v", err)
		return nil
	}
	ff, err := traffic.ParseFlows(s.Name+"-flows.yaml", r.text)
	if err != nil {
		r.remap(d, err, "", in.scen)
		return nil
	}
	for i := range ff.Flows {
		f := &ff.Flows[i]
		f.Pos = r.mapPos(d.file, f.Pos)
		s.flowNames[f.Name] = true
		for _, n := range []string{f.Client, f.Server} {
			if nd := spec.Node(n); nd == nil || nd.Kind == topo.KindSwitch {
				d.addScen(posError(d.file, f.Pos, fmt.Sprintf("flows[%d]", i), fmt.Sprintf("%q is not a host or router of the topology", n)), in.scen)
			}
		}
		if f.Name == "" {
			f.Name = fmt.Sprintf("f%d", i+1)
			s.flowNames[f.Name] = true
		}
	}
	return ff.Flows
}

func hasKey(m *yaml.Node, key string) bool {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return true
		}
	}
	return false
}

// posError builds an error from a "file:line:col" position.
func posError(file, pos, path, msg string) *topo.Error {
	e := &topo.Error{File: file, Path: path, Msg: msg}
	var l, c int
	if i := strings.LastIndex(pos, ":"); i > 0 {
		fmt.Sscanf(pos[i+1:], "%d", &c)
		if j := strings.LastIndex(pos[:i], ":"); j > 0 {
			fmt.Sscanf(pos[j+1:i], "%d", &l)
		}
	}
	e.Line, e.Col = l, c
	return e
}
