package suite

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Placeholders: ${param} or ${param.field} (a key of a mapping value).
var placeholder = regexp.MustCompile(`\$\{([^}]*)\}`)

// instance builds one scenario's copy of a template.
type instance struct {
	d      *diag
	params []*Param
	values map[string]*Value // param → chosen value
	labels map[string]string // param → label
	extra  map[string]string // built-in values: duration
	scen   string            // scenario name, for messages
}

// copyNode returns a deep copy of n with aliases expanded, placeholders
// replaced and list items whose when: does not match this scenario left
// out. Positions are kept: a substituted value keeps the position where
// the parameter's value is written.
func (in *instance) copyNode(n *yaml.Node, path string) *yaml.Node {
	n = deref(n)
	if n == nil {
		return nil
	}
	c := *n
	c.Alias, c.Anchor = nil, ""
	switch n.Kind {
	case yaml.ScalarNode:
		return in.scalar(n, path)
	case yaml.SequenceNode:
		c.Content = nil
		for i, item := range n.Content {
			ip := fmt.Sprintf("%s[%d]", path, i)
			keep, stripped := in.when(deref(item), ip)
			if !keep {
				continue
			}
			if cp := in.copyNode(stripped, ip); cp != nil {
				c.Content = append(c.Content, cp)
			}
		}
	case yaml.MappingNode:
		c.Content = nil
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := deref(n.Content[i])
			kc := *k
			kc.Alias, kc.Anchor = nil, ""
			v := in.copyNode(n.Content[i+1], joinPath(path, k.Value))
			if v == nil {
				v = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!null", Line: k.Line, Column: k.Column}
			}
			c.Content = append(c.Content, &kc, v)
		}
	}
	return &c
}

// scalar substitutes the placeholders of one scalar.
func (in *instance) scalar(n *yaml.Node, path string) *yaml.Node {
	c := *n
	locs := placeholder.FindAllStringSubmatchIndex(n.Value, -1)
	if len(locs) == 0 || n.Style == yaml.LiteralStyle || n.Style == yaml.FoldedStyle {
		return &c
	}
	if len(locs) == 1 && locs[0][0] == 0 && locs[0][1] == len(n.Value) {
		v := in.lookup(n, path, n.Value[locs[0][2]:locs[0][3]])
		if v == nil {
			return &c
		}
		return in.copyNode(v, path)
	}
	var b strings.Builder
	last := 0
	for _, l := range locs {
		b.WriteString(n.Value[last:l[0]])
		v := in.lookup(n, path, n.Value[l[2]:l[3]])
		switch {
		case v == nil:
		case v.Kind != yaml.ScalarNode:
			in.d.errorf(n, path, "${%s} is %s: only a whole value can take a mapping or list", n.Value[l[2]:l[3]], describe(v))
		default:
			b.WriteString(v.Value)
		}
		last = l[1]
	}
	b.WriteString(n.Value[last:])
	c.Value, c.Tag, c.Style = b.String(), "", 0
	return &c
}

// lookup resolves "param" or "param.field" to its value node.
func (in *instance) lookup(at *yaml.Node, path, name string) *yaml.Node {
	name = strings.TrimSpace(name)
	if v, ok := in.extra[name]; ok {
		return &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: v, Line: at.Line, Column: at.Column}
	}
	pname, field, hasField := strings.Cut(name, ".")
	val, ok := in.values[pname]
	if !ok {
		valid := append(paramNames(in.params), "duration")
		in.d.errorf(at, path, "${%s}: unknown parameter %q %s", name, pname, choices("parameters", pname, valid))
		return nil
	}
	if !hasField {
		return val.node
	}
	m := deref(val.node)
	if m == nil || m.Kind != yaml.MappingNode {
		in.d.errorf(at, path, "${%s}: value %q of parameter %s is not a mapping, so it has no field %q", name, val.Label, pname, field)
		return nil
	}
	var fields []string
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == field {
			return m.Content[i+1]
		}
		fields = append(fields, m.Content[i].Value)
	}
	in.d.errorf(at, path, "${%s}: value %q of parameter %s has no field %q %s", name, val.Label, pname, field, choices("fields", field, fields))
	return nil
}

// when decides whether a list item belongs to this scenario: an item
// that is a mapping with a when: {param: label|[labels]} key is kept only
// in matching scenarios, and the when: key is removed from it.
func (in *instance) when(item *yaml.Node, path string) (bool, *yaml.Node) {
	if item == nil || item.Kind != yaml.MappingNode {
		return true, item
	}
	for i := 0; i+1 < len(item.Content); i += 2 {
		if deref(item.Content[i]).Value != "when" {
			continue
		}
		b := in.d.binding(item.Content[i+1], path+".when", in.params)
		stripped := *item
		stripped.Content = append(append([]*yaml.Node(nil), item.Content[:i]...), item.Content[i+2:]...)
		return b.matches(in.labels), &stripped
	}
	return true, item
}

// matches reports whether labels satisfy every parameter of b.
func (b Binding) matches(labels map[string]string) bool {
	for p, ls := range b {
		if !slices.Contains(ls, labels[p]) {
			return false
		}
	}
	return true
}
