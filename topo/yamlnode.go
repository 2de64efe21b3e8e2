package topo

import (
	"github.com/emuctl/emuctl/internal/yamlpos"
	"go.yaml.in/yaml/v3"
)

// dec walks a yaml.Node tree, reporting every problem with its position.
// Each schema object has a small function that asks dec for typed values;
// the rules (merge keys, duplicates, what a boolean or a number is, the
// wording) are internal/yamlpos's, shared with flows and suite files.
type dec struct {
	*diag
	y *yamlpos.Decoder
}

// newDec returns a decoder reporting into d.
func newDec(d *diag) *dec {
	return &dec{diag: d, y: yamlpos.New(func(line, col int, path, msg string) {
		d.errorf(loc{line: line, col: col, path: path}, "%s", msg)
	})}
}

// at is the location of n with the given path.
func at(n *yaml.Node, path string) loc {
	if n == nil {
		return loc{path: path}
	}
	return loc{line: n.Line, col: n.Column, path: path}
}

// The node helpers are yamlpos's.
var (
	deref    = yamlpos.Deref
	isNull   = yamlpos.IsNull
	describe = yamlpos.Describe
	clip     = yamlpos.Clip
	keyPath  = yamlpos.KeyPath
	idx      = yamlpos.Index
)

// entry is one key/value pair of a mapping.
type entry = yamlpos.Entry

// entries returns the pairs of a mapping in file order with "<<" merge
// keys applied (yamlpos.Decoder.Entries).
func (d *dec) entries(n *yaml.Node, path string) []entry { return d.y.Entries(n, path) }

// fields is entries plus a check that every key is one of valid.
func (d *dec) fields(n *yaml.Node, path string, valid []string) []entry {
	return d.y.Fields(n, path, valid)
}

// scalar returns the text of a scalar value, reporting anything else.
func (d *dec) scalar(n *yaml.Node, path, want string) (string, bool) {
	return d.y.Scalar(n, path, want)
}

// str returns a non-empty string value (numbers are accepted as text).
func (d *dec) str(n *yaml.Node, path, want string) (string, bool) { return d.y.Str(n, path, want) }

// boolean accepts only YAML true/false (not yes/no/on/off).
func (d *dec) boolean(n *yaml.Node, path string) (bool, bool) { return d.y.Bool(n, path) }

// integer accepts a YAML integer in [lo, hi].
func (d *dec) integer(n *yaml.Node, path string, lo, hi int64) (int64, bool) {
	return d.y.Int(n, path, lo, hi)
}

// list returns the items of a sequence; with one, a single scalar counts
// as a one-item list. Null is an empty list.
func (d *dec) list(n *yaml.Node, path string, one bool) []*yaml.Node { return d.y.List(n, path, one) }

// oneOf checks a word against a fixed set of choices.
func (d *dec) oneOf(n *yaml.Node, path, what string, valid []string) (string, bool) {
	return d.y.OneOf(n, path, what, valid)
}
