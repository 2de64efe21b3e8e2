package topo

import (
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"
)

// pinTraces writes the trace files of link l's entry as the paths they
// were resolved to (absolute): a relative name was looked for beside the
// topology and in TraceDirs when the lab was loaded, and the lab as it
// stands — edited again later from anywhere, or written out by `inspect
// --topology` and brought up elsewhere — must replay the same files.
// Generated traces (synthetic:) stay as they are.
func pinTraces(item *yaml.Node, l Link) {
	block := mapValue(item, "link")
	if block == nil || l.Params == nil {
		return // a --link string has no trace
	}
	files := []string{traceFile(l.Params.Dir(true).Trace), traceFile(l.Params.Dir(false).Trace)}
	pinTrace(mapValue(block, "trace"), files)
	pinTrace(mapValue(mapValue(block, keyAtoB), "trace"), files[:1])
	pinTrace(mapValue(mapValue(block, keyBtoA), "trace"), files[1:])
	if mm := mapValue(block, "mahimahi"); mm != nil && mm.Kind == yaml.ScalarNode {
		mm.Value = pinMahimahi(mm.Value, files[0], files[1])
	}
}

// traceFile is a trace's resolved file, "" for none or a generated one.
func traceFile(t *Trace) string {
	if t == nil || !filepath.IsAbs(t.File) {
		return ""
	}
	return t.File
}

// pinTrace sets a trace: FILE or trace: {file: FILE} node to the one of
// files that FILE was resolved to.
func pinTrace(n *yaml.Node, files []string) {
	if n == nil {
		return
	}
	if n.Kind == yaml.MappingNode {
		n = mapValue(n, "file")
	}
	if n == nil || n.Kind != yaml.ScalarNode || filepath.IsAbs(n.Value) {
		return
	}
	if f := resolvedAs(n.Value, files); f != "" {
		n.Value, n.Tag, n.Style = f, "!!str", 0
	}
}

// resolvedAs is the file of files that name was resolved to.
func resolvedAs(name string, files []string) string {
	rel := filepath.Clean(name)
	for _, f := range files {
		if f != "" && (f == rel || strings.HasSuffix(f, string(filepath.Separator)+rel)) {
			return f
		}
	}
	return ""
}

// pinMahimahi writes a mahimahi: line's two trace files (uplink, then
// downlink) as resolved; a path with a space in it, which the line's
// words cannot hold, leaves the line as it is.
func pinMahimahi(line, up, down string) string {
	m, errs := parseMahimahi(line)
	if len(errs) > 0 || strings.ContainsAny(up+down, " \t\n") {
		return line
	}
	toks := []struct {
		tok  mmTok
		file string
	}{{m.down, down}, {m.up, up}} // the later word first: offsets stay valid
	if m.up.off > m.down.off {
		toks[0], toks[1] = toks[1], toks[0]
	}
	for _, t := range toks {
		if t.file == "" || t.tok.s == "" || filepath.IsAbs(t.tok.s) || !strings.HasPrefix(line[t.tok.off:], t.tok.s) || // a quoted word stays
			resolvedAs(t.tok.s, []string{t.file}) == "" {
			continue
		}
		line = line[:t.tok.off] + t.file + line[t.tok.off+len(t.tok.s):]
	}
	return line
}
