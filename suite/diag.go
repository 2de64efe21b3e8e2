package suite

import (
	"fmt"
	"slices"
	"strings"

	"github.com/emuctl/emuctl/internal/suggest"
	"github.com/emuctl/emuctl/internal/yamlpos"
	"github.com/emuctl/emuctl/topo"
	"go.yaml.in/yaml/v3"
)

// diag collects problems as topo.Errors (file:line:col: path: message),
// every problem at once, as topology files report them.
type diag struct {
	file string
	errs topo.Errors
	seen map[string]bool
	y    *yamlpos.Decoder
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
	d.yd().Errorf(n, path, format, args...)
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
		if slices.Contains(keys, top) {
			return true
		}
	}
	return false
}

func (d *diag) result() error {
	if len(d.errs) == 0 {
		return nil
	}
	return topo.SortErrors(append(topo.Errors(nil), d.errs...))
}

// parse returns the root mapping of a one-document YAML file
// (yamlpos.Decoder.Parse: syntax errors at their line, aliases checked).
func (d *diag) parse(data []byte) *yaml.Node {
	return d.yd().Parse(data, yamlpos.Doc{Kind: "suite", Needs: "at least suite:, topology:, flows: and checks:", Keys: docKeys})
}

// yd is the positioned-YAML decoder reporting into d (internal/yamlpos:
// the rules of topology and flows files).
func (d *diag) yd() *yamlpos.Decoder {
	if d.y == nil {
		d.y = yamlpos.New(func(line, col int, path, msg string) {
			d.add(&topo.Error{File: d.file, Line: line, Col: col, Path: path, Msg: msg})
		})
	}
	return d.y
}

// The node helpers are yamlpos's.
var (
	describe = yamlpos.Describe
	deref    = yamlpos.Deref
	isNull   = yamlpos.IsNull
	joinPath = yamlpos.JoinPath
)

// didYouMean is the one did-you-mean rule (internal/suggest).
func didYouMean(s string, valid []string) string { return suggest.DidYouMean(s, valid) }

func choices(label, got string, valid []string) string { return suggest.Choices(label, got, valid) }
