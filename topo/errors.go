package topo

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
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
	es := append(Errors(nil), d.errs...)
	sort.SliceStable(es, func(i, j int) bool {
		a, b := es[i], es[j]
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Col < b.Col
	})
	return es
}

// choices renders "(label: a, b, c; did you mean "x"?)" for a wrong word.
func choices(label, got string, valid []string) string {
	return "(" + label + ": " + nameList(valid) + didYouMean(got, valid) + ")"
}

// nameList renders "a, b, c", shortening long lists.
func nameList(names []string) string {
	const max = 12
	if len(names) <= max {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:max], ", ") + fmt.Sprintf(", ... (%d more)", len(names)-max)
}

// didYouMean returns `; did you mean "x"?` when a candidate is close to s:
// a small edit distance (transpositions count once) or, for inputs of
// three bytes or more, a candidate that starts with s.
func didYouMean(s string, candidates []string) string {
	ls := strings.ToLower(s)
	best, bestD := "", 1<<30
	for _, c := range candidates {
		lc := strings.ToLower(c)
		d := editDistance(ls, lc)
		if d > 2 && len(ls) >= 3 && strings.HasPrefix(lc, ls) {
			d = 2
		}
		if d < bestD {
			best, bestD = c, d
		}
	}
	limit := 2
	if len(s) <= 3 {
		limit = 1
	}
	if best == "" || bestD > limit || best == s {
		return ""
	}
	return fmt.Sprintf("; did you mean %q?", best)
}

// editDistance is the optimal string alignment distance (Levenshtein plus
// adjacent transpositions), for inputs up to 64 bytes.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		if a == b {
			return 0
		}
		return 1 << 20
	}
	var d [65][65]int
	for i := 0; i <= len(a); i++ {
		d[i][0] = i
	}
	for j := 0; j <= len(b); j++ {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
