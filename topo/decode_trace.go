package topo

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/emuctl/emuctl/tc/mmtrace"
	"github.com/emuctl/emuctl/units"
	"go.yaml.in/yaml/v3"
)

// traceKeys are the keys of trace: {file, loop, offset}.
var traceKeys = []string{"file", "synthetic", "loop", "offset"}

// TraceDirs are where a trace file named by a bare or relative path is
// looked for after the topology's own directory: $EMUCTL_TRACES (a
// colon-separated list), then where Debian's and Ubuntu's mahimahi-traces
// package installs mahimahi's traces.
func TraceDirs() []string {
	var dirs []string
	if env := os.Getenv("EMUCTL_TRACES"); env != "" {
		dirs = append(dirs, filepath.SplitList(env)...)
	}
	return append(dirs, "/usr/share/mahimahi/traces")
}

// trace decodes trace: FILE or trace: {file, loop, offset} (loop
// defaults to true, as mm-link repeats its traces unless --once).
func (d *dec) trace(n *yaml.Node, path string) *Trace {
	v := deref(n)
	if v != nil && v.Kind == yaml.ScalarNode {
		f, ok := d.str(n, path, "a trace file (one ms timestamp per line)")
		if !ok {
			return nil
		}
		return d.loadTrace(f, at(n, path), true, 0)
	}
	var file string
	var fileLoc loc
	var synth []uint32
	loop, offset := true, time.Duration(0)
	for _, e := range d.fields(n, path, traceKeys) {
		kp := joinPath(path, e.Key)
		switch e.Key {
		case "file":
			if s, ok := d.str(e.V, kp, "a trace file (one ms timestamp per line)"); ok {
				file, fileLoc = s, at(e.V, kp)
			}
		case "synthetic":
			if v, ok := d.str(e.V, kp, `a generated trace such as "lte seed=7 mean=6mbit length=60s"`); ok {
				ms, msg := synthetic(v)
				if msg != "" {
					d.errorf(at(e.V, kp), "%s", msg)
				} else {
					synth, file, fileLoc = ms, "synthetic:"+v, at(e.V, kp)
				}
			}
		case "loop":
			if b, ok := d.boolean(e.V, kp); ok {
				loop = b
			}
		case "offset":
			if s, ok := d.scalar(e.V, kp, "a duration such as 30s"); ok {
				o, err := units.ParseDuration(s)
				if err != nil {
					d.errorf(at(e.V, kp), "%v", err)
				} else {
					offset = o
				}
			}
		}
	}
	if file == "" {
		if fileLoc.line == 0 {
			d.errorf(at(n, path), "trace needs a file (trace: {file: up.trace, loop: true, offset: 0s}): a mahimahi trace, one ms timestamp per 1504-byte delivery opportunity; or synthetic: \"lte seed=7 mean=6mbit length=60s\"")
		}
		return nil
	}
	if synth != nil {
		return &Trace{File: file, Loop: loop, Offset: offset, Ms: synth, At: posString(d.file, fileLoc)}
	}
	return d.loadTrace(file, fileLoc, loop, offset)
}

// loadTrace reads a trace file: a relative path from the topology's
// directory, then from TraceDirs. Problems inside the file are reported
// at its own line:col, after the topology position that names it.
func (d *dec) loadTrace(name string, l loc, loop bool, offset time.Duration) *Trace {
	var tried []string
	var path string
	if filepath.IsAbs(name) {
		tried = append(tried, name)
		if _, err := os.Stat(name); !errors.Is(err, os.ErrNotExist) {
			path = name // else not found, said as for a relative name
		}
	} else {
		for _, dir := range append([]string{filepath.Dir(d.file)}, TraceDirs()...) {
			p := filepath.Join(dir, name)
			tried = append(tried, p)
			if _, err := os.Stat(p); err == nil {
				path = p
				break
			}
		}
	}
	if path == "" {
		d.errorf(l, "trace file %q not found (looked in: %s); emuctl ships no traces: mahimahi's are in Debian/Ubuntu's mahimahi-traces package or github.com/ravinet/mahimahi (GPL-3), Pantheon's in its repository; set EMUCTL_TRACES to a directory of them", clip(name), strings.Join(tried, ", "))
		return nil
	}
	f, err := os.Open(path)
	if err != nil {
		d.errorf(l, "trace file %s: %v", path, err)
		return nil
	}
	defer f.Close()
	ms, err := mmtrace.Parse(f)
	var te *mmtrace.Error
	switch {
	case errors.As(err, &te):
		d.errorf(l, "trace file %s:%d:%d: %s", path, te.Line, te.Col, te.Msg)
		return nil
	case err != nil:
		d.errorf(l, "trace file %s: %v", path, err)
		return nil
	}
	abs, _ := filepath.Abs(path)
	return &Trace{File: abs, Loop: loop, Offset: offset, Ms: ms, At: posString(d.file, l)}
}

// mahimahi decodes a link's mahimahi: line into its two directions (a->b
// is the uplink: a is inside the shell).
func (d *dec) mahimahi(n *yaml.Node, path string) (ds [2]*lp, ok bool) {
	s, good := d.str(n, path, `a mahimahi command line such as "mm-delay 30 mm-link up.trace down.trace"`)
	if !good {
		return ds, false
	}
	v := deref(n)
	// the column of byte off of the line (quoted styles start one later)
	colOf := func(off int) loc {
		l := at(v, path)
		if v.Style&(yaml.DoubleQuotedStyle|yaml.SingleQuotedStyle) != 0 {
			l.col++
		}
		if !strings.Contains(s[:min(off, len(s))], "\n") {
			l.col += off
		}
		return l
	}
	m, errs := parseMahimahi(s)
	for _, e := range errs {
		d.errorf(colOf(e.off), "mahimahi: %s", e.msg)
	}
	if len(errs) > 0 {
		return ds, false
	}
	ok = true
	for j, up := range []bool{true, false} {
		tok := m.down
		if up {
			tok = m.up
		}
		tr := d.loadTrace(tok.s, colOf(tok.off), !m.once, 0)
		q, msg := m.queue(up)
		if msg != "" {
			d.errorf(colOf(0), "mahimahi: %s", msg)
			ok = false
		}
		if tr == nil {
			ok = false
			continue
		}
		delay := m.delay
		loss := m.dnLoss
		order := m.dnOrder
		if up {
			loss, order = m.upLoss, m.upOrder
		}
		p := lp{trace: tr, order: order, delay: &delay, loss: &loss, queue: q}
		if q == nil {
			p.queue = &Queue{} // infinite: no limit
		}
		ds[j] = &p
	}
	return ds, ok
}

// traceChecks are the problems of a traced direction's other keys.
func traceChecks(p lp) []string {
	if p.trace == nil {
		return nil
	}
	var msgs []string
	if p.rate != nil && *p.rate > 0 {
		msgs = append(msgs, fmt.Sprintf("rate %s and a trace (%s) together: the trace is the direction's rate; remove one", p.rate, filepath.Base(p.trace.File)))
	}
	if q := p.queue; q != nil {
		switch {
		case q.Discipline != "" && q.Discipline != QueueDropTail && q.Discipline != QueueDropHead:
			msgs = append(msgs, fmt.Sprintf("queue discipline %s on a trace: a traced direction's queue is mahimahi's (droptail or drophead with a packets or bytes limit, or none: infinite)", q.Discipline))
		case q.BDP > 0:
			msgs = append(msgs, "a queue in bdp on a trace: a trace has no fixed rate; give packets or bytes")
		}
	}
	if p.backend != nil && *p.backend == BackendKernel {
		msgs = append(msgs, "backend: kernel cannot replay a trace (netem has no trace mode; its slot option batches at random): use backend: auto or userspace, which put a traced link on the userspace link engine")
	}
	return msgs
}

// synthetic generates a trace from "lte seed=N mean=RATE length=DUR"
// (mmtrace.LTE): deterministic, so a suite or test needs no trace file.
func synthetic(spec string) ([]uint32, string) {
	f := strings.Fields(spec)
	const usage = `(valid: "lte seed=N mean=RATE length=DURATION", e.g. "lte seed=7 mean=6mbit length=60s")`
	if len(f) == 0 || f[0] != "lte" {
		return nil, "unknown synthetic trace " + strconvQuote(spec) + " " + usage
	}
	seed, mean, length := uint64(1), units.BitRate(0), time.Duration(0)
	for _, kv := range f[1:] {
		k, v, _ := strings.Cut(kv, "=")
		var err error
		switch k {
		case "seed":
			seed, err = strconv.ParseUint(v, 10, 64)
		case "mean":
			mean, err = units.ParseBitRate(v)
		case "length":
			length, err = units.ParseDuration(v)
		default:
			return nil, fmt.Sprintf("unknown synthetic trace parameter %q %s", k, usage)
		}
		if err != nil {
			return nil, fmt.Sprintf("synthetic trace %s: %v", k, err)
		}
	}
	if mean <= 0 || length < time.Second || length > 24*time.Hour {
		return nil, "a synthetic trace needs mean > 0 and length between 1s and 24h " + usage
	}
	return mmtrace.LTE(seed, float64(mean), uint32(length/time.Millisecond)), ""
}

func strconvQuote(s string) string { return strconv.Quote(s) }
