// Package yamlpos decodes YAML files by hand, node by node, so that every
// problem is reported with its position (line, column) and path, all of
// them at once: the topology, flows and suite decoders share it.
//
// A Decoder holds a report function; the package owning the file type
// turns each report into its own error (topo.Error for all three). The
// rules are the same for every file: merge keys (<<) with explicit keys
// winning, duplicate keys refused, YAML's true/false only (not yes/no),
// integers written as integers, and the same "must be X, got Y" wording.
package yamlpos

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/emuctl/emuctl/internal/suggest"
	"github.com/emuctl/emuctl/units"
	"go.yaml.in/yaml/v3"
)

// Report receives one problem: its position (0 when unknown), the path of
// the object (e.g. "links[3].endpoints[1]") and the message.
type Report func(line, col int, path, msg string)

// Decoder decodes values out of a yaml.Node tree, reporting problems.
type Decoder struct {
	report Report
}

// New returns a Decoder that reports through r.
func New(r Report) *Decoder { return &Decoder{report: r} }

// Errorf reports a problem at node n (nil: no position) and path.
func (d *Decoder) Errorf(n *yaml.Node, path, format string, args ...any) {
	line, col := 0, 0
	if n != nil {
		line, col = n.Line, n.Column
	}
	d.report(line, col, path, fmt.Sprintf(format, args...))
}

// Deref follows an alias to its anchored node. Aliases never point at
// aliases; Parse has ruled out cycles and bombs.
func Deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 16; i++ {
		n = n.Alias
	}
	return n
}

// IsNull reports whether n is missing or YAML null.
func IsNull(n *yaml.Node) bool {
	n = Deref(n)
	return n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null")
}

// Describe names what n is, for "must be X, got Y" messages.
func Describe(n *yaml.Node) string {
	n = Deref(n)
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
		return fmt.Sprintf("%q", Clip(n.Value))
	}
	return "an unknown YAML node"
}

// Clip shortens long values quoted in messages.
func Clip(s string) string {
	if len(s) > 40 {
		return s[:37] + "..."
	}
	return s
}

// KeyPath renders a mapping key inside a path: plain words as they are,
// others quoted.
func KeyPath(k string) string {
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

// JoinPath appends a child ("name" or "[3]") to a path.
func JoinPath(parent, child string) string {
	switch {
	case parent == "":
		return child
	case child == "":
		return parent
	case strings.HasPrefix(child, "["):
		return parent + child
	}
	return parent + "." + child
}

// Index is the path of item i of the list at path.
func Index(path string, i int) string { return fmt.Sprintf("%s[%d]", path, i) }

// Doc says what a file is, for Parse's messages.
type Doc struct {
	// Kind is "topology", "flows file", "suite".
	Kind string
	// Needs completes "file is empty: a <Kind> needs ..." (e.g. "at least
	// a nodes: mapping").
	Needs string
	// Keys are the document's top-level keys, named when the document is
	// not a mapping.
	Keys []string
	// MaxExpanded bounds the nodes aliases may expand the document to
	// (alias bombs); 0: 100000.
	MaxExpanded int
}

var (
	yamlLine      = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)
	yamlNoAnchor  = regexp.MustCompile(`^yaml: unknown anchor '(.*)' referenced$`)
	parserProblem = "did not find expected "
)

// Parse returns the root mapping of a one-document YAML file, or nil after
// reporting why there is none: an empty file, a syntax error (at its
// line), an alias to no anchor (at the alias), a second document, an alias
// used inside its own anchor or expanding the document beyond
// doc.MaxExpanded nodes, a root that is not a mapping. yaml/v3's own
// panics on malformed input are reported, never passed on.
func (d *Decoder) Parse(data []byte, doc Doc) (root *yaml.Node) {
	defer func() {
		if r := recover(); r != nil {
			d.Errorf(nil, "", "YAML parser failed: %v", r)
			root = nil
		}
	}()
	if len(bytes.TrimSpace(data)) == 0 {
		d.Errorf(nil, "", "file is empty: a %s needs %s", doc.Kind, doc.Needs)
		return nil
	}
	yd := yaml.NewDecoder(bytes.NewReader(data))
	var top yaml.Node
	if err := yd.Decode(&top); err != nil {
		if errors.Is(err, io.EOF) {
			d.Errorf(nil, "", "file has no YAML document: a %s needs %s", doc.Kind, doc.Needs)
		} else {
			d.syntaxError(err, data)
		}
		return nil
	}
	var next yaml.Node
	switch err := yd.Decode(&next); {
	case err == nil:
		d.report(next.Line, next.Column, "", fmt.Sprintf("a second YAML document starts here: put one %s per file", doc.Kind))
		return nil
	case !errors.Is(err, io.EOF):
		d.syntaxError(err, data)
		return nil
	}
	root = &top
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			d.Errorf(nil, "", "file has no content: a %s needs %s", doc.Kind, doc.Needs)
			return nil
		}
		root = root.Content[0]
	}
	return d.Tree(root, doc)
}

// Tree checks a parsed document's root as Parse does after parsing it
// (aliases, a mapping at the top) and returns it, or nil after reporting
// why not: for a document a program built or edited as a tree, which
// need not be parsed from its text again.
func (d *Decoder) Tree(root *yaml.Node, doc Doc) *yaml.Node {
	limit := doc.MaxExpanded
	if limit == 0 {
		limit = 100000
	}
	if !d.checkAliases(root, limit) {
		return nil
	}
	if Deref(root).Kind != yaml.MappingNode {
		d.Errorf(root, "", "the document must be a mapping with keys %s, got %s", suggest.List(doc.Keys), Describe(root))
		return nil
	}
	return root
}

// syntaxError converts a yaml/v3 error ("yaml: line 3: ...") into a
// problem at that line; yaml/v3 does not report the column. Its parser
// errors ("did not find expected ...") give the 0-based line where the
// enclosing value starts, so they are shifted and worded accordingly.
func (d *Decoder) syntaxError(err error, data []byte) {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		text := m[2]
		if strings.HasPrefix(text, parserProblem) {
			line++
			text += " in the value that starts on this line"
		}
		d.report(line, 0, "", "YAML syntax error: "+text)
		return
	}
	if m := yamlNoAnchor.FindStringSubmatch(msg); m != nil {
		line, col := findText(data, "*"+m[1])
		d.report(line, col, "", fmt.Sprintf("alias *%s refers to no anchor: define &%s before using it", Clip(m[1]), Clip(m[1])))
		return
	}
	d.report(0, 0, "", "YAML syntax error: "+strings.TrimPrefix(msg, "yaml: "))
}

// findText returns the position of the first occurrence of s in data.
func findText(data []byte, s string) (line, col int) {
	i := bytes.Index(data, []byte(s))
	if i < 0 {
		return 0, 0
	}
	return 1 + bytes.Count(data[:i], []byte("\n")), i - bytes.LastIndexByte(data[:i], '\n')
}

// checkAliases rejects alias cycles (an anchor used inside itself) and
// documents whose aliases expand beyond limit nodes.
func (d *Decoder) checkAliases(root *yaml.Node, limit int) bool {
	const visiting = -1
	size := map[*yaml.Node]int{}
	ok := true
	var walk func(n *yaml.Node) int
	walk = func(n *yaml.Node) int {
		if n == nil || !ok {
			return 0
		}
		if n.Kind == yaml.AliasNode {
			t := n.Alias
			if t == nil {
				return 1
			}
			switch s := size[t]; {
			case s == visiting:
				d.Errorf(n, "", "alias *%s is used inside its own anchor: the value would be infinite", Clip(n.Value))
				ok = false
				return 0
			case s > 0:
				return s
			}
			return walk(t)
		}
		if s, done := size[n]; done && s > 0 {
			return s
		}
		size[n] = visiting
		total := 1
		for _, c := range n.Content {
			total += walk(c)
			if total > limit {
				if ok {
					d.Errorf(n, "", "aliases expand this document to more than %d YAML nodes: refusing it (alias bomb?)", limit)
				}
				ok = false
				total = limit + 1
				break
			}
		}
		size[n] = total
		return total
	}
	walk(root)
	return ok
}

// Entry is one key/value pair of a mapping.
type Entry struct {
	Key  string
	K, V *yaml.Node
}

// Entries returns the pairs of a mapping in file order with "<<" merge
// keys applied (explicit keys win, then earlier merges). It reports a
// value that is not a mapping, keys that are not scalars and duplicate
// keys. A null value is an empty mapping.
func (d *Decoder) Entries(n *yaml.Node, path string) []Entry {
	n = Deref(n)
	if IsNull(n) {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		d.Errorf(n, path, "must be a mapping, got %s", Describe(n))
		return nil
	}
	var out, merged []Entry
	first := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := Deref(n.Content[i]), n.Content[i+1]
		if k.Kind != yaml.ScalarNode || k.Tag == "!!null" {
			d.Errorf(k, path, "a key must be a plain word, got %s", Describe(k))
			continue
		}
		if k.Tag == "!!merge" {
			merged = append(merged, d.mergeEntries(v, path, 0)...)
			continue
		}
		if prev := first[k.Value]; prev != nil {
			d.Errorf(k, JoinPath(path, KeyPath(k.Value)), "duplicate key %q (first at line %d): each key may appear once", Clip(k.Value), prev.Line)
			continue
		}
		first[k.Value] = k
		out = append(out, Entry{Key: k.Value, K: k, V: v})
	}
	for _, e := range merged {
		if first[e.Key] == nil {
			first[e.Key] = e.K
			out = append(out, e)
		}
	}
	return out
}

// mergeEntries expands the value of a "<<" key: a mapping or a list of
// mappings (usually aliases).
func (d *Decoder) mergeEntries(v *yaml.Node, path string, depth int) []Entry {
	v = Deref(v)
	if depth > 8 {
		d.Errorf(v, path, "merge keys (<<) nested too deeply")
		return nil
	}
	switch v.Kind {
	case yaml.MappingNode:
		return d.Entries(v, path)
	case yaml.SequenceNode:
		var out []Entry
		seen := map[string]bool{}
		for _, item := range v.Content {
			if Deref(item).Kind != yaml.MappingNode {
				d.Errorf(item, path, "a merge key (<<) list must hold mappings, got %s", Describe(item))
				continue
			}
			for _, e := range d.Entries(item, path) {
				if !seen[e.Key] {
					seen[e.Key] = true
					out = append(out, e)
				}
			}
		}
		return out
	}
	d.Errorf(v, path, "a merge key (<<) needs a mapping or a list of mappings, got %s", Describe(v))
	return nil
}

// Fields is Entries plus a check that every key is one of valid (with the
// closest valid key suggested).
func (d *Decoder) Fields(n *yaml.Node, path string, valid []string) []Entry {
	var out []Entry
	for _, e := range d.Entries(n, path) {
		if !slices.Contains(valid, e.Key) {
			d.UnknownKey(e.K, path, valid)
			continue
		}
		out = append(out, e)
	}
	return out
}

// UnknownKey reports key k, which is not one of valid.
func (d *Decoder) UnknownKey(k *yaml.Node, path string, valid []string) {
	d.Errorf(k, path, "unknown key %q %s", Clip(k.Value), suggest.Choices("valid", k.Value, valid))
}

// Scalar returns the text of a scalar value, reporting anything else;
// want names what is expected ("a duration such as 10s").
func (d *Decoder) Scalar(n *yaml.Node, path, want string) (string, bool) {
	n = Deref(n)
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag == "!!null" {
		d.Errorf(n, path, "must be %s, got %s", want, Describe(n))
		return "", false
	}
	return n.Value, true
}

// Str returns a non-empty string value (numbers are accepted as text).
func (d *Decoder) Str(n *yaml.Node, path, want string) (string, bool) {
	s, ok := d.Scalar(n, path, want)
	if ok && strings.TrimSpace(s) == "" {
		d.Errorf(Deref(n), path, "must be %s, got an empty string", want)
		return "", false
	}
	return s, ok
}

// Bool accepts only YAML true/false (not yes/no/on/off, which YAML 1.2
// reads as strings).
func (d *Decoder) Bool(n *yaml.Node, path string) (bool, bool) {
	n = Deref(n)
	var b bool
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag != "!!bool" || n.Decode(&b) != nil {
		d.Errorf(n, path, "must be true or false, got %s", Describe(n))
		return false, false
	}
	return b, true
}

// Int accepts a YAML integer in [lo, hi].
func (d *Decoder) Int(n *yaml.Node, path string, lo, hi int64) (int64, bool) {
	n = Deref(n)
	var v int64
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag != "!!int" || n.Decode(&v) != nil {
		d.Errorf(n, path, "must be a whole number in %d .. %d, got %s", lo, hi, Describe(n))
		return 0, false
	}
	if v < lo || v > hi {
		d.Errorf(n, path, "%d is out of range (valid: %d .. %d)", v, lo, hi)
		return 0, false
	}
	return v, true
}

// Duration accepts a duration ("10s", "250ms"; units.ParseDuration) in
// [lo, hi].
func (d *Decoder) Duration(n *yaml.Node, path string, lo, hi time.Duration) (time.Duration, bool) {
	s, ok := d.Str(n, path, "a duration such as 10s or 100ms")
	if !ok {
		return 0, false
	}
	v, err := units.ParseDuration(s)
	if err != nil {
		d.Errorf(Deref(n), path, "%v", err)
		return 0, false
	}
	if v < lo || v > hi {
		d.Errorf(Deref(n), path, "%s is out of range (valid: %v .. %v)", s, lo, hi)
		return 0, false
	}
	return v, true
}

// Percent accepts a percentage ("10%", units.ParsePercent) and returns it
// as a probability.
func (d *Decoder) Percent(n *yaml.Node, path string) (float64, bool) {
	s, ok := d.Str(n, path, "a percentage such as 10%")
	if !ok {
		return 0, false
	}
	v, err := units.ParsePercent(s)
	if err != nil {
		d.Errorf(Deref(n), path, "%v", err)
		return 0, false
	}
	return v.Prob(), true
}

// List returns the items of a sequence; with one, a single scalar counts
// as a one-item list. Null is an empty list.
func (d *Decoder) List(n *yaml.Node, path string, one bool) []*yaml.Node {
	n = Deref(n)
	switch {
	case IsNull(n):
		return nil
	case n.Kind == yaml.SequenceNode:
		return n.Content
	case one && n.Kind == yaml.ScalarNode:
		return []*yaml.Node{n}
	}
	if one {
		d.Errorf(n, path, "must be a string or a list of strings, got %s", Describe(n))
	} else {
		d.Errorf(n, path, "must be a list, got %s", Describe(n))
	}
	return nil
}

// Words returns one word or a list of words as a list.
func (d *Decoder) Words(n *yaml.Node, path string) []string {
	var out []string
	items := d.List(n, path, true)
	for i, c := range items {
		p := path
		if Deref(n).Kind == yaml.SequenceNode {
			p = Index(path, i)
		}
		if s, ok := d.Str(c, p, "a word"); ok {
			out = append(out, s)
		}
	}
	return out
}

// OneOf checks a word against a fixed set of choices; what names it in
// the message ("unknown kind ...").
func (d *Decoder) OneOf(n *yaml.Node, path, what string, valid []string) (string, bool) {
	s, ok := d.Str(n, path, "one of "+strings.Join(valid, ", "))
	if !ok {
		return "", false
	}
	if !slices.Contains(valid, s) {
		d.Errorf(Deref(n), path, "unknown %s %q %s", what, Clip(s), suggest.Choices("valid", s, valid))
		return "", false
	}
	return s, true
}
