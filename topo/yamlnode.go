package topo

import (
	"fmt"
	"strings"

	"go.yaml.in/yaml/v3"
)

// dec walks a yaml.Node tree, reporting every problem with its position.
// Each schema object has a small function that asks dec for typed values.
type dec struct {
	*diag
}

// at is the location of n with the given path.
func at(n *yaml.Node, path string) loc {
	if n == nil {
		return loc{path: path}
	}
	return loc{line: n.Line, col: n.Column, path: path}
}

// deref follows an alias to its anchored node. Aliases never point at
// aliases, and checkAliases has ruled out cycles and bombs.
func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 8; i++ {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	n = deref(n)
	return n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

// describe names what n is, for "must be X, got Y" messages.
func describe(n *yaml.Node) string {
	n = deref(n)
	if n == nil {
		return "nothing"
	}
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		switch n.Tag {
		case "!!null":
			return "nothing"
		case "!!int", "!!float":
			return "the number " + n.Value
		case "!!bool":
			return n.Value
		}
		return fmt.Sprintf("%q", clip(n.Value))
	}
	return "an unknown YAML node"
}

// clip shortens long values quoted in messages.
func clip(s string) string {
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}

// entry is one key/value pair of a mapping.
type entry struct {
	key  string
	k, v *yaml.Node
}

// entries returns the pairs of a mapping in file order with "<<" merge
// keys applied (explicit keys win, then earlier merges). It reports a
// value that is not a mapping, keys that are not scalars and duplicate
// keys. A null value is an empty mapping.
func (d *dec) entries(n *yaml.Node, path string) []entry {
	n = deref(n)
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		d.errorf(at(n, path), "must be a mapping, got %s", describe(n))
		return nil
	}
	var out, merged []entry
	first := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.Tag == "!!null" {
			d.errorf(at(k, path), "a key must be a plain word, got %s", describe(k))
			continue
		}
		if k.Tag == "!!merge" {
			merged = append(merged, d.mergeEntries(v, path, 0)...)
			continue
		}
		if prev := first[k.Value]; prev != nil {
			d.errorf(at(k, joinPath(path, keyPath(k.Value))), "duplicate key %q (first at line %d): each key may appear once", clip(k.Value), prev.Line)
			continue
		}
		first[k.Value] = k
		out = append(out, entry{key: k.Value, k: k, v: v})
	}
	for _, e := range merged {
		if first[e.key] == nil {
			first[e.key] = e.k
			out = append(out, e)
		}
	}
	return out
}

// mergeEntries expands the value of a "<<" key: a mapping or a list of
// mappings (usually aliases).
func (d *dec) mergeEntries(v *yaml.Node, path string, depth int) []entry {
	v = deref(v)
	if depth > 8 {
		d.errorf(at(v, path), "merge keys (<<) nested too deeply")
		return nil
	}
	switch v.Kind {
	case yaml.MappingNode:
		return d.entries(v, path)
	case yaml.SequenceNode:
		var out []entry
		seen := map[string]bool{}
		for _, item := range v.Content {
			if deref(item).Kind != yaml.MappingNode {
				d.errorf(at(item, path), "a merge key (<<) list must hold mappings, got %s", describe(item))
				continue
			}
			for _, e := range d.entries(item, path) {
				if !seen[e.key] {
					seen[e.key] = true
					out = append(out, e)
				}
			}
		}
		return out
	}
	d.errorf(at(v, path), "a merge key (<<) needs a mapping or a list of mappings, got %s", describe(v))
	return nil
}

// fields is entries plus a check that every key is one of valid.
func (d *dec) fields(n *yaml.Node, path string, valid []string) []entry {
	var out []entry
	for _, e := range d.entries(n, path) {
		if !contains(valid, e.key) {
			d.errorf(at(e.k, path), "unknown key %q %s", clip(e.key), choices("valid", e.key, valid))
			continue
		}
		out = append(out, e)
	}
	return out
}

// keyPath renders a mapping key inside a path: plain words as is, others
// quoted.
func keyPath(k string) string {
	if k == "" {
		return `""`
	}
	for _, c := range k {
		if !(c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return fmt.Sprintf("%q", k)
		}
	}
	return k
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// scalar returns the text of a scalar value, reporting anything else.
func (d *dec) scalar(n *yaml.Node, path, want string) (string, bool) {
	n = deref(n)
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		d.errorf(at(n, path), "must be %s, got %s", want, describe(n))
		return "", false
	}
	return n.Value, true
}

// str returns a non-empty string value (numbers are accepted as text).
func (d *dec) str(n *yaml.Node, path, want string) (string, bool) {
	s, ok := d.scalar(n, path, want)
	if ok && strings.TrimSpace(s) == "" {
		d.errorf(at(n, path), "must be %s, got an empty string", want)
		return "", false
	}
	return s, ok
}

// boolean accepts only YAML true/false (not yes/no/on/off).
func (d *dec) boolean(n *yaml.Node, path string) (bool, bool) {
	n = deref(n)
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag != "!!bool" {
		d.errorf(at(n, path), "must be true or false, got %s", describe(n))
		return false, false
	}
	var b bool
	if err := n.Decode(&b); err != nil {
		d.errorf(at(n, path), "must be true or false, got %s", describe(n))
		return false, false
	}
	return b, true
}

// integer accepts a YAML integer in [lo, hi].
func (d *dec) integer(n *yaml.Node, path string, lo, hi int64) (int64, bool) {
	n = deref(n)
	var v int64
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag != "!!int" || n.Decode(&v) != nil {
		d.errorf(at(n, path), "must be a whole number in %d .. %d, got %s", lo, hi, describe(n))
		return 0, false
	}
	if v < lo || v > hi {
		d.errorf(at(n, path), "%d is out of range (valid: %d .. %d)", v, lo, hi)
		return 0, false
	}
	return v, true
}

// list returns the items of a sequence; with one, a single scalar counts
// as a one-item list. Null is an empty list.
func (d *dec) list(n *yaml.Node, path string, one bool) []*yaml.Node {
	n = deref(n)
	switch {
	case isNull(n):
		return nil
	case n.Kind == yaml.SequenceNode:
		return n.Content
	case one && n.Kind == yaml.ScalarNode:
		return []*yaml.Node{n}
	}
	if one {
		d.errorf(at(n, path), "must be a string or a list of strings, got %s", describe(n))
	} else {
		d.errorf(at(n, path), "must be a list, got %s", describe(n))
	}
	return nil
}

// oneOf checks a word against a fixed set of choices.
func (d *dec) oneOf(n *yaml.Node, path, what string, valid []string) (string, bool) {
	s, ok := d.str(n, path, "one of "+strings.Join(valid, ", "))
	if !ok {
		return "", false
	}
	if !contains(valid, s) {
		d.errorf(at(n, path), "unknown %s %q %s", what, clip(s), choices("valid", s, valid))
		return "", false
	}
	return s, true
}

func idx(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }
