package suite

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/emuctl/emuctl/internal/suggest"
	"github.com/emuctl/emuctl/topo"
	"go.yaml.in/yaml/v3"
)

// diag collects problems as topo.Errors (file:line:col: path: message),
// every problem at once, as topology files report them.
type diag struct {
	file string
	errs topo.Errors
	seen map[string]bool
}

func (d *diag) add(e *topo.Error) { d.addKeyed(e, e.Error()) }

// addScen adds an error found in one scenario; the same problem in other
// scenarios is reported once, naming the first scenario.
func (d *diag) addScen(e *topo.Error, scen string) {
	key := e.Error()
	e.Msg += scenarioSuffix(scen)
	d.addKeyed(e, key)
}

func (d *diag) addKeyed(e *topo.Error, key string) {
	if d.seen == nil {
		d.seen = map[string]bool{}
	}
	if d.seen[key] {
		return
	}
	d.seen[key] = true
	d.errs = append(d.errs, e)
}

func (d *diag) errorf(n *yaml.Node, path, format string, args ...any) {
	e := &topo.Error{File: d.file, Path: path, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line, e.Col = n.Line, n.Column
	}
	d.add(e)
}

// exprErrorf reports a problem inside an expression written in scalar n,
// at the column of the offending part when the scalar is on one line.
func (d *diag) exprErrorf(n *yaml.Node, path string, off int, format string, args ...any) {
	e := &topo.Error{File: d.file, Path: path, Msg: fmt.Sprintf(format, args...)}
	if n != nil {
		e.Line, e.Col = n.Line, n.Column
		switch n.Style {
		case 0, yaml.TaggedStyle, yaml.FlowStyle:
			e.Col += off
		case yaml.DoubleQuotedStyle, yaml.SingleQuotedStyle:
			e.Col += off + 1
		}
	}
	d.add(e)
}

func (d *diag) failed() bool { return len(d.errs) > 0 }

// failedAt reports problems under any of the given top-level keys ("" is
// the document itself): those make expanding the matrix pointless.
func (d *diag) failedAt(keys ...string) bool {
	for _, e := range d.errs {
		top, _, _ := strings.Cut(e.Path, ".")
		top, _, _ = strings.Cut(top, "[")
		if contains(keys, top) {
			return true
		}
	}
	return false
}

func (d *diag) result() error {
	if len(d.errs) == 0 {
		return nil
	}
	es := append(topo.Errors(nil), d.errs...)
	sort.SliceStable(es, func(i, j int) bool {
		if es[i].Line != es[j].Line {
			return es[i].Line < es[j].Line
		}
		return es[i].Col < es[j].Col
	})
	return es
}

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// parse returns the root mapping of a one-document YAML file.
func (d *diag) parse(data []byte) (root *yaml.Node) {
	defer func() {
		if r := recover(); r != nil {
			d.errorf(nil, "", "YAML parser failed: %v", r)
			root = nil
		}
	}()
	if len(bytes.TrimSpace(data)) == 0 {
		d.errorf(nil, "", "file is empty: a suite needs at least suite:, topology:, flows: and checks:")
		return nil
	}
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		msg := err.Error()
		if m := yamlLine.FindStringSubmatch(msg); m != nil {
			line, _ := strconv.Atoi(m[1])
			text := m[2]
			if strings.HasPrefix(text, "did not find expected ") {
				// yaml/v3 names the 0-based line where the enclosing
				// value starts (as topo explains for topology files).
				line++
				text += " in the value that starts on this line"
			}
			d.add(&topo.Error{File: d.file, Line: line, Msg: "YAML syntax error: " + text})
		} else {
			d.errorf(nil, "", "YAML syntax error: %s", strings.TrimPrefix(msg, "yaml: "))
		}
		return nil
	}
	var next yaml.Node
	if err := dec.Decode(&next); err == nil {
		d.add(&topo.Error{File: d.file, Line: next.Line, Col: next.Column, Msg: "a second YAML document starts here: put one suite per file"})
		return nil
	} else if !errors.Is(err, io.EOF) {
		d.errorf(nil, "", "YAML syntax error: %s", strings.TrimPrefix(err.Error(), "yaml: "))
		return nil
	}
	root = &doc
	if root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
		root = root.Content[0]
	}
	if root.Kind != yaml.MappingNode {
		d.errorf(root, "", "the document must be a mapping (suite:, topology:, ...), got %s", describe(root))
		return nil
	}
	return root
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
		if n.Tag == "!!null" {
			return "nothing"
		}
		return strconv.Quote(n.Value)
	}
	return "an unknown YAML node"
}

func deref(n *yaml.Node) *yaml.Node {
	for i := 0; n != nil && n.Kind == yaml.AliasNode && i < 16; i++ {
		n = n.Alias
	}
	return n
}

func isNull(n *yaml.Node) bool {
	n = deref(n)
	return n == nil || n.Kind == yaml.ScalarNode && n.Tag == "!!null"
}

// didYouMean is the one did-you-mean rule (internal/suggest).
func didYouMean(s string, valid []string) string { return suggest.DidYouMean(s, valid) }

func choices(label, got string, valid []string) string { return suggest.Choices(label, got, valid) }
