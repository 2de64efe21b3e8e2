package topo

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/emuctl/emuctl/internal/suggest"
)

// Error is one problem in a topology, located in its source.
type Error struct {
	// File is the file name given to Load (or the generator string).
	File string
	// Line and Col are 1-based; 0 when unknown (Col is unknown for YAML
	// syntax errors, both for problems without a position).
	Line, Col int
	// Path names the object, e.g. "links[3].endpoints[1]" or "nodes.h1.kind".
	Path string
	// Msg says what is wrong and what would be valid.
	Msg string
}

// Error renders "file:line:col: path: msg", leaving out the parts that are
// unknown.
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		b.WriteString(":" + strconv.Itoa(e.Line))
		if e.Col > 0 {
			b.WriteString(":" + strconv.Itoa(e.Col))
		}
	}
	if b.Len() > 0 {
		b.WriteString(": ")
	}
	if e.Path != "" {
		b.WriteString(e.Path + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Errors is every problem found in one Load, sorted by position.
type Errors []*Error

// Error renders one problem per line.
func (es Errors) Error() string {
	lines := make([]string, len(es))
	for i, e := range es {
		lines[i] = e.Error()
	}
	return strings.Join(lines, "\n")
}

// Named restates the problems of a run-time change as those of the call
// that made it (a Go call, a CLI command): its text replaces the file,
// and positions in the lab's generated document are left out.
func Named(err error, call string) error {
	es, ok := err.(Errors)
	if !ok {
		return err
	}
	out := make(Errors, len(es))
	for i, e := range es {
		out[i] = &Error{File: call, Path: e.Path, Msg: e.Msg}
	}
	return out
}

// Unwrap exposes each *Error to errors.As.
func (es Errors) Unwrap() []error {
	out := make([]error, len(es))
	for i, e := range es {
		out[i] = e
	}
	return out
}

// loc is where an object came from: a position (zero for generated input)
// and its path.
type loc struct {
	line, col int
	path      string
}

// sub returns a child location with the same position.
func (l loc) sub(path string) loc {
	l.path = joinPath(l.path, path)
	return l
}

func joinPath(parent, child string) string {
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

// diag collects problems; nothing stops at the first one.
type diag struct {
	file string
	errs Errors
	seen map[string]bool
	// broken is set when links, interfaces or addresses were dropped, so
	// checks against the final addresses would only echo earlier errors.
	broken bool
}

func (d *diag) errorf(l loc, format string, args ...any) {
	e := &Error{File: d.file, Line: l.line, Col: l.col, Path: l.path, Msg: fmt.Sprintf(format, args...)}
	key := e.Error()
	if d.seen == nil {
		d.seen = map[string]bool{}
	}
	if d.seen[key] { // aliases can make one node report twice
		return
	}
	d.seen[key] = true
	d.errs = append(d.errs, e)
}

func (d *diag) failed() bool { return len(d.errs) > 0 }

// result returns the problems sorted by position, or nil.
func (d *diag) result() error {
	if len(d.errs) == 0 {
		return nil
	}
	return SortErrors(append(Errors(nil), d.errs...))
}

// SortErrors sorts problems by position (line, then column), keeping the
// order of those at one position, and returns them.
func SortErrors(es Errors) Errors {
	sort.SliceStable(es, func(i, j int) bool {
		a, b := es[i], es[j]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
	return es
}

// choices is internal/suggest's, the one rule for every file.
func choices(label, got string, valid []string) string { return suggest.Choices(label, got, valid) }

// didYouMean returns `; did you mean "x"?` when a candidate is close to s.
func didYouMean(s string, candidates []string) string { return suggest.DidYouMean(s, candidates) }
