package topo

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// MaxFileSize bounds topology files; anything bigger is not a topology.
const MaxFileSize = 8 << 20

// maxExpanded bounds the number of YAML nodes after alias expansion, which
// defeats "billion laughs" documents while leaving room for large labs.
const maxExpanded = 2_000_000

// LoadFile reads and loads a topology file. See Load.
func LoadFile(path string) (*Spec, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("topo: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, fmt.Errorf("topo: %w", err)
	}
	return Load(path, data)
}

// Load decodes, validates and resolves a topology. filename is used in
// messages, in Link.Pos and for the default lab name. On any problem it
// returns Errors holding every problem found, sorted by position.
func Load(filename string, data []byte) (*Spec, error) {
	d := &dec{diag: &diag{file: filename}}
	if len(data) > MaxFileSize {
		d.errorf(loc{}, "file is larger than %d MiB: not a topology", MaxFileSize>>20)
		return nil, d.result()
	}
	root := d.parse(data)
	if root == nil {
		return nil, d.result()
	}
	doc := d.document(root)
	doc.source = filename
	return resolve(d.diag, doc)
}

// parse turns data into the root mapping node, or reports why it cannot.
func (d *dec) parse(data []byte) (root *yaml.Node) {
	defer func() {
		// yaml/v3 reports some malformed input by panicking with
		// internal errors; a topology loader must never crash.
		if r := recover(); r != nil {
			d.errorf(loc{}, "YAML parser failed: %v", r)
			root = nil
		}
	}()
	if len(bytes.TrimSpace(data)) == 0 {
		d.errorf(loc{}, "file is empty: a topology needs at least a nodes: mapping")
		return nil
	}
	yd := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := yd.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			d.errorf(loc{}, "file has no YAML document: a topology needs at least a nodes: mapping")
		} else {
			d.syntaxError(err, data)
		}
		return nil
	}
	var next yaml.Node
	switch err := yd.Decode(&next); {
	case err == nil:
		d.errorf(loc{line: next.Line, col: next.Column}, "a second YAML document starts here: put one topology per file")
		return nil
	case !errors.Is(err, io.EOF):
		d.syntaxError(err, data)
		return nil
	}
	root = &doc
	if root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			d.errorf(loc{}, "file has no content: a topology needs at least a nodes: mapping")
			return nil
		}
		root = root.Content[0]
	}
	if !d.checkAliases(root) {
		return nil
	}
	if deref(root).Kind != yaml.MappingNode {
		d.errorf(at(root, ""), "the document must be a mapping with keys %s, got %s", nameList(docKeys), describe(root))
		return nil
	}
	return root
}

var (
	yamlLine      = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)
	yamlNoAnchor  = regexp.MustCompile(`^yaml: unknown anchor '(.*)' referenced$`)
	parserProblem = "did not find expected "
)

// syntaxError converts a yaml/v3 error ("yaml: line 3: ...") into an
// Error at that line; yaml/v3 does not report the column. Its parser
// errors ("did not find expected ...") give the 0-based line where the
// enclosing value starts, so they are shifted and worded accordingly.
func (d *dec) syntaxError(err error, data []byte) {
	msg := err.Error()
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ := strconv.Atoi(m[1])
		text := m[2]
		if strings.HasPrefix(text, parserProblem) {
			line++
			text += " in the value that starts on this line"
		}
		d.errorf(loc{line: line}, "YAML syntax error: %s", text)
		return
	}
	if m := yamlNoAnchor.FindStringSubmatch(msg); m != nil {
		l := findText(data, "*"+m[1])
		d.errorf(l, "alias *%s refers to no anchor: define &%s before using it", clip(m[1]), clip(m[1]))
		return
	}
	msg = strings.TrimPrefix(msg, "yaml: ")
	d.errorf(loc{}, "YAML syntax error: %s", msg)
}

// findText returns the position of the first occurrence of s in data.
func findText(data []byte, s string) loc {
	i := bytes.Index(data, []byte(s))
	if i < 0 {
		return loc{}
	}
	line := 1 + bytes.Count(data[:i], []byte("\n"))
	col := i - bytes.LastIndexByte(data[:i], '\n')
	return loc{line: line, col: col}
}

// checkAliases rejects alias cycles (an anchor used inside itself) and
// documents whose aliases expand beyond maxExpanded nodes.
func (d *dec) checkAliases(root *yaml.Node) bool {
	const (
		visiting = -1
	)
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
				d.errorf(at(n, ""), "alias *%s is used inside its own anchor: the value would be infinite", clip(n.Value))
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
			if total > maxExpanded {
				if ok {
					d.errorf(at(n, ""), "aliases expand this document to more than %d YAML nodes: refusing it (alias bomb?)", maxExpanded)
				}
				ok = false
				total = maxExpanded + 1
				break
			}
		}
		size[n] = total
		return total
	}
	walk(root)
	return ok
}
