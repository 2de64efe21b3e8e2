package suite

import (
	"fmt"
	"maps"
	"slices"
	"strings"
)

// ParseOnly reads `emuctl test --only PARAM=LABEL[,LABEL...]` settings
// into a binding (later settings of the same parameter replace earlier
// ones).
func ParseOnly(args []string) (Binding, error) {
	b := Binding{}
	for _, a := range args {
		k, v, ok := strings.Cut(a, "=")
		if !ok || k == "" || v == "" {
			return nil, fmt.Errorf("--only %q: want PARAM=LABEL[,LABEL...]", a)
		}
		b[k] = strings.Split(v, ",")
	}
	return b, nil
}

// restrict narrows a profile's parameters to the labels only names, as
// the profile's own params: does (the profile's restriction and only's
// must overlap).
func (s *Suite) restrict(prof *Profile, only Binding) error {
	if len(only) == 0 {
		return nil
	}
	params := maps.Clone(prof.Params)
	if params == nil {
		params = Binding{}
	}
	for _, name := range slices.Sorted(maps.Keys(only)) {
		p := findParam(s.Params, name)
		if p == nil {
			return fmt.Errorf("--only %s: %s has no parameter %s %s", name, s.Name, name, choices("parameters", name, paramNames(s.Params)))
		}
		var keep []string
		for _, l := range only[name] {
			if p.value(l) == nil {
				return fmt.Errorf("--only %s=%s: parameter %s has no label %q %s", name, strings.Join(only[name], ","), name, l, choices("labels", l, p.labels()))
			}
			if allowed, ok := prof.Params[name]; !ok || slices.Contains(allowed, l) {
				keep = append(keep, l)
			}
		}
		if len(keep) == 0 {
			return fmt.Errorf("--only %s=%s: the %s profile runs %s only with %s", name, strings.Join(only[name], ","), prof.Name, name, strings.Join(prof.Params[name], ", "))
		}
		params[name] = keep
	}
	prof.Params = params
	return nil
}
