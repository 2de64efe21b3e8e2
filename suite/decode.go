package suite

import (
	"strconv"
	"strings"
	"time"

	"github.com/emuctl/emuctl/units"
	"go.yaml.in/yaml/v3"
)

// entry is one key/value pair of a mapping.
type entry struct {
	key  string
	k, v *yaml.Node
}

// entries returns a mapping's pairs in file order, with "<<" merges
// applied (explicit keys win); it reports non-mappings, duplicate keys
// and keys not in valid (keys starting with "x-" are always allowed and
// skipped when topLevel).
func (d *diag) entries(n *yaml.Node, path string, valid []string, topLevel bool) []entry {
	n = deref(n)
	if isNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		d.errorf(n, path, "must be a mapping, got %s", describe(n))
		return nil
	}
	var out, merged []entry
	seen := map[string]bool{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := deref(n.Content[i]), n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.errorf(k, path, "a key must be a plain word, got %s", describe(k))
			continue
		}
		if k.Tag == "!!merge" {
			for _, m := range mergeSources(v) {
				merged = append(merged, d.entries(m, path, valid, false)...)
			}
			continue
		}
		if seen[k.Value] {
			d.errorf(k, joinPath(path, k.Value), "duplicate key %q", k.Value)
			continue
		}
		seen[k.Value] = true
		if topLevel && strings.HasPrefix(k.Value, "x-") {
			continue
		}
		if valid != nil && !contains(valid, k.Value) {
			d.errorf(k, path, "unknown key %q %s", k.Value, choices("valid", k.Value, valid))
			continue
		}
		out = append(out, entry{key: k.Value, k: k, v: v})
	}
	for _, m := range merged {
		if !seen[m.key] {
			seen[m.key] = true
			out = append(out, m)
		}
	}
	return out
}

func mergeSources(v *yaml.Node) []*yaml.Node {
	v = deref(v)
	if v != nil && v.Kind == yaml.SequenceNode {
		return v.Content
	}
	return []*yaml.Node{v}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func joinPath(parent, child string) string {
	switch {
	case parent == "":
		return child
	case strings.HasPrefix(child, "["):
		return parent + child
	}
	return parent + "." + child
}

// scalar returns a scalar's text; what names the expected kind.
func (d *diag) scalar(n *yaml.Node, path, what string) (string, bool) {
	n = deref(n)
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		d.errorf(n, path, "must be %s, got %s", what, describe(n))
		return "", false
	}
	return n.Value, true
}

func (d *diag) str(n *yaml.Node, path string) string {
	s, _ := d.scalar(n, path, "text")
	return s
}

func (d *diag) integer(n *yaml.Node, path string, lo, hi int) (int, bool) {
	s, ok := d.scalar(n, path, "a whole number")
	if !ok {
		return 0, false
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < lo || v > hi {
		d.errorf(n, path, "must be a whole number from %d to %d, got %q", lo, hi, s)
		return 0, false
	}
	return v, true
}

func (d *diag) duration(n *yaml.Node, path string, lo, hi time.Duration) (time.Duration, bool) {
	s, ok := d.scalar(n, path, "a duration such as 10s")
	if !ok {
		return 0, false
	}
	v, err := units.ParseDuration(s)
	if err != nil || v < lo || v > hi {
		d.errorf(n, path, "must be a duration from %v to %v, got %q", lo, hi, s)
		return 0, false
	}
	return v, true
}

func (d *diag) percent(n *yaml.Node, path string) (float64, bool) {
	s, ok := d.scalar(n, path, "a percentage such as 10%")
	if !ok {
		return 0, false
	}
	v, err := units.ParsePercent(s)
	if err != nil {
		d.errorf(n, path, "%v", err)
		return 0, false
	}
	return v.Prob(), true
}

// stringList accepts one word or a list of words.
func (d *diag) stringList(n *yaml.Node, path string) []string {
	n = deref(n)
	if n != nil && n.Kind == yaml.SequenceNode {
		var out []string
		for i, c := range n.Content {
			if s, ok := d.scalar(c, path+"["+strconv.Itoa(i)+"]", "a word"); ok {
				out = append(out, s)
			}
		}
		return out
	}
	if s, ok := d.scalar(n, path, "a word or a list of words"); ok {
		return []string{s}
	}
	return nil
}

// expr parses an expression written in scalar n.
func (d *diag) expr(n *yaml.Node, path string) *Expr {
	s, ok := d.scalar(n, path, "an expression such as \"goodput <= 1.02 * cap(rate)\"")
	if !ok {
		return nil
	}
	e, err := parseExpr(s)
	if err != nil {
		d.exprErrorf(deref(n), path, err.off, "%s (in %q)", err.msg, s)
		return nil
	}
	return e
}
