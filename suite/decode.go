package suite

import (
	"slices"
	"strings"
	"time"

	"github.com/emuctl/emuctl/internal/yamlpos"
	"github.com/emuctl/emuctl/suite/expr"
	"go.yaml.in/yaml/v3"
)

// entry is one key/value pair of a mapping.
type entry = yamlpos.Entry

// entries returns a mapping's pairs in file order, with "<<" merges
// applied (explicit keys win); it reports non-mappings, duplicate keys
// and keys not in valid (keys starting with "x-" are always allowed and
// skipped when topLevel).
func (d *diag) entries(n *yaml.Node, path string, valid []string, topLevel bool) []entry {
	var out []entry
	for _, e := range d.yd().Entries(n, path) {
		switch {
		case topLevel && strings.HasPrefix(e.Key, "x-"):
		case valid != nil && !slices.Contains(valid, e.Key):
			d.yd().UnknownKey(e.K, path, valid)
		default:
			out = append(out, e)
		}
	}
	return out
}

// scalar returns a scalar's text; what names the expected kind.
func (d *diag) scalar(n *yaml.Node, path, what string) (string, bool) {
	return d.yd().Scalar(n, path, what)
}

func (d *diag) str(n *yaml.Node, path string) string {
	s, _ := d.scalar(n, path, "text")
	return s
}

func (d *diag) integer(n *yaml.Node, path string, lo, hi int) (int, bool) {
	v, ok := d.yd().Int(n, path, int64(lo), int64(hi))
	return int(v), ok
}

func (d *diag) duration(n *yaml.Node, path string, lo, hi time.Duration) (time.Duration, bool) {
	return d.yd().Duration(n, path, lo, hi)
}

func (d *diag) percent(n *yaml.Node, path string) (float64, bool) { return d.yd().Percent(n, path) }

// stringList accepts one word or a list of words.
func (d *diag) stringList(n *yaml.Node, path string) []string { return d.yd().Words(n, path) }

// expr parses an expression written in scalar n.
func (d *diag) expr(n *yaml.Node, path string) *expr.Expr {
	s, ok := d.scalar(n, path, "an expression such as \"goodput <= 1.02 * cap(rate)\"")
	if !ok {
		return nil
	}
	e, err := expr.Parse(s)
	if err != nil {
		d.exprErrorf(deref(n), path, err.Off, "%s (in %q)", err.Msg, s)
		return nil
	}
	return e
}
