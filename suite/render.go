package suite

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/emuctl/emuctl/topo"
	"go.yaml.in/yaml/v3"
)

// rendered is a scenario's instantiated template written out as YAML for
// the topo and traffic loaders, with a map from positions in that text
// back to positions in the suite file, so their errors still point at
// the suite file's line and column.
type rendered struct {
	text []byte
	pos  map[[2]int][2]int
	line map[int]int
}

// render writes doc (a mapping built by copyNode) and maps positions.
func render(doc *yaml.Node) (*rendered, error) {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	enc.Close()
	var back yaml.Node
	if err := yaml.Unmarshal(buf.Bytes(), &back); err != nil {
		return nil, err
	}
	r := &rendered{text: buf.Bytes(), pos: map[[2]int][2]int{}, line: map[int]int{}}
	root := &back
	if root.Kind == yaml.DocumentNode && len(root.Content) > 0 {
		root = root.Content[0]
	}
	r.pair(doc, root)
	return r, nil
}

// pair walks the original and the re-read trees in step.
func (r *rendered) pair(orig, back *yaml.Node) {
	if orig == nil || back == nil {
		return
	}
	k := [2]int{back.Line, back.Column}
	if _, ok := r.pos[k]; !ok && orig.Line > 0 {
		r.pos[k] = [2]int{orig.Line, orig.Column}
	}
	if _, ok := r.line[back.Line]; !ok && orig.Line > 0 {
		r.line[back.Line] = orig.Line
	}
	if len(orig.Content) != len(back.Content) {
		return
	}
	for i := range orig.Content {
		r.pair(orig.Content[i], back.Content[i])
	}
}

// remap turns errors about the rendered text into errors about the
// suite file, prefixing paths with prefix and naming the scenario.
func (r *rendered) remap(d *diag, err error, prefix, scen string) {
	var es topo.Errors
	if !errors.As(err, &es) {
		d.addScen(&topo.Error{File: d.file, Path: prefix, Msg: err.Error()}, scen)
		return
	}
	for _, e := range es {
		ne := &topo.Error{File: d.file, Path: joinPath(prefix, e.Path), Msg: e.Msg}
		ne.Line, ne.Col = r.at(e.Line, e.Col)
		d.addScen(ne, scen)
	}
}

// at maps a position in the rendered text to the suite file.
func (r *rendered) at(line, col int) (int, int) {
	if p, ok := r.pos[[2]int{line, col}]; ok {
		return p[0], p[1]
	}
	if l, ok := r.line[line]; ok {
		return l, 0
	}
	return 0, 0
}

// mapPos rewrites "file:line:col" (traffic.Flow.Pos) into the suite file.
func (r *rendered) mapPos(file, pos string) string {
	parts := strings.Split(pos, ":")
	if len(parts) < 3 {
		return pos
	}
	line, err1 := strconv.Atoi(parts[len(parts)-2])
	col, err2 := strconv.Atoi(parts[len(parts)-1])
	if err1 != nil || err2 != nil {
		return pos
	}
	l, c := r.at(line, col)
	return fmt.Sprintf("%s:%d:%d", file, l, c)
}

func scenarioSuffix(scen string) string {
	if scen == "" {
		return ""
	}
	return " [scenario " + scen + "]"
}

// mapping builds a mapping node from key/value pairs.
func mapping(line, col int, kv ...any) *yaml.Node {
	m := &yaml.Node{Kind: yaml.MappingNode, Tag: "!!map", Line: line, Column: col}
	for i := 0; i+1 < len(kv); i += 2 {
		k := &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: kv[i].(string), Line: line, Column: col}
		var v *yaml.Node
		switch x := kv[i+1].(type) {
		case *yaml.Node:
			v = x
		case string:
			v = &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: x, Line: line, Column: col}
		}
		m.Content = append(m.Content, k, v)
	}
	return m
}
