package traffic

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/emuctl/emuctl/internal/suggest"
	"github.com/emuctl/emuctl/topo"
	"github.com/emuctl/emuctl/units"
	"go.yaml.in/yaml/v3"
)

// flowDec collects every problem with its position.
type flowDec struct {
	file string
	errs topo.Errors
}

func (d *flowDec) errorf(n *yaml.Node, path, format string, args ...any) {
	e := &topo.Error{File: d.file, Path: path, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line, e.Col = n.Line, n.Column
	}
	d.errs = append(d.errs, e)
}

func (d *flowDec) result() error {
	if len(d.errs) == 0 {
		return nil
	}
	sort.SliceStable(d.errs, func(i, j int) bool {
		a, b := d.errs[i], d.errs[j]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
	return d.errs
}

var yamlLineRe = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

func (d *flowDec) parse(data []byte) (root *yaml.Node) {
	defer func() {
		if r := recover(); r != nil {
			d.errorf(nil, "", "YAML parser failed: %v", r)
			root = nil
		}
	}()
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(data)).Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			d.errorf(nil, "", "file is empty: a flows file needs a flows: list")
			return nil
		}
		msg := err.Error()
		e := &topo.Error{File: d.file, Msg: strings.TrimPrefix(msg, "yaml: ")}
		if m := yamlLineRe.FindStringSubmatch(msg); m != nil {
			e.Line, _ = strconv.Atoi(m[1])
			e.Msg = m[2]
		}
		d.errs = append(d.errs, e)
		return nil
	}
	root = &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		d.errorf(root, "", "the document must be a mapping with keys %s, got %s", strings.Join(flowsDocKeys, ", "), describeNode(root))
		return nil
	}
	return root
}

type kv struct{ k, v *yaml.Node }

// mapping returns the pairs of a mapping (aliases followed), reporting
// duplicates and non-mappings.
func (d *flowDec) mapping(n *yaml.Node, path string) []kv {
	n = follow(n)
	if n == nil || (n.Kind == yaml.ScalarNode && n.Tag == "!!null") {
		return nil
	}
	if n.Kind != yaml.MappingNode {
		d.errorf(n, path, "must be a mapping, got %s", describeNode(n))
		return nil
	}
	var out []kv
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := follow(n.Content[i]), n.Content[i+1]
		if k.Tag == "!!merge" {
			out = append(out, d.mapping(v, path)...)
			continue
		}
		if line, dup := seen[k.Value]; dup {
			d.errorf(k, joinPath(path, k.Value), "duplicate key %q (first at line %d)", k.Value, line)
			continue
		}
		seen[k.Value] = k.Line
		out = append(out, kv{k, v})
	}
	return out
}

func follow(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 8; i++ {
		n = n.Alias
	}
	return n
}

func joinPath(p, k string) string {
	if p == "" {
		return k
	}
	return p + "." + k
}

func describeNode(n *yaml.Node) string {
	n = follow(n)
	switch {
	case n == nil:
		return "nothing"
	case n.Kind == yaml.MappingNode:
		return "a mapping"
	case n.Kind == yaml.SequenceNode:
		return "a list"
	case n.Tag == "!!null":
		return "nothing"
	}
	return fmt.Sprintf("%q", n.Value)
}

func (d *flowDec) unknownKey(k *yaml.Node, path string, valid []string) {
	d.errorf(k, path, "unknown key %q (valid: %s%s)", k.Value, strings.Join(valid, ", "), suggest.DidYouMean(k.Value, valid))
}

func (d *flowDec) scalar(n *yaml.Node, path, want string) (string, bool) {
	n = follow(n)
	if n == nil || n.Kind != yaml.ScalarNode || n.Tag == "!!null" || strings.TrimSpace(n.Value) == "" {
		d.errorf(n, path, "must be %s, got %s", want, describeNode(n))
		return "", false
	}
	return strings.TrimSpace(n.Value), true
}

func (d *flowDec) str(n *yaml.Node, path string) (string, bool) { return d.scalar(n, path, "a name") }

func (d *flowDec) integer(n *yaml.Node, path string) (int, bool) {
	s, ok := d.scalar(n, path, "a whole number")
	if !ok {
		return 0, false
	}
	v, err := strconv.Atoi(s)
	if err != nil {
		d.errorf(n, path, "must be a whole number, got %q", s)
		return 0, false
	}
	return v, true
}

func (d *flowDec) boolean(n *yaml.Node, path string) (bool, bool) {
	s, ok := d.scalar(n, path, "true or false")
	if !ok {
		return false, false
	}
	switch strings.ToLower(s) {
	case "true", "yes", "on":
		return true, true
	case "false", "no", "off":
		return false, true
	}
	d.errorf(n, path, "must be true or false, got %q", s)
	return false, false
}

func (d *flowDec) duration(n *yaml.Node, path string) (time.Duration, bool) {
	s, ok := d.scalar(n, path, "a duration such as 10s or 100ms")
	if !ok {
		return 0, false
	}
	v, err := units.ParseDuration(s)
	if err != nil {
		d.errorf(n, path, "%v", err)
		return 0, false
	}
	return v, true
}

func (d *flowDec) oneOf(n *yaml.Node, path string, valid []string) (string, bool) {
	s, ok := d.scalar(n, path, "one of "+strings.Join(valid, ", "))
	if !ok {
		return "", false
	}
	for _, v := range valid {
		if s == v {
			return s, true
		}
	}
	hint := suggest.DidYouMean(s, valid)
	d.errorf(n, path, "unknown value %q (valid: %s%s)", s, strings.Join(valid, ", "), hint)
	return "", false
}
