package traffic

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/emuctl/emuctl/analysis"
	"github.com/emuctl/emuctl/capture"
	"github.com/emuctl/emuctl/capture/packet"
	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/topo"
)

// CaptureSpec asks for a packet capture on one node interface for the
// whole run, written as pcapng (for ACK-frequency analysis, say).
type CaptureSpec struct {
	Node, Iface string
	// File is where the pcapng goes; Options.CaptureDir/<node>-<iface>.pcapng
	// when empty.
	File    string
	Snaplen int    // default capture.DefaultSnaplen
	Filter  string // capture filter, e.g. "tcp and port 5201"
}

// ParseCaptureSpec reads "node:iface".
func ParseCaptureSpec(s string) (CaptureSpec, error) {
	node, iface, ok := strings.Cut(s, ":")
	if !ok || node == "" || iface == "" {
		return CaptureSpec{}, fmt.Errorf("capture %q: give node:iface, e.g. h2:h2-eth0", s)
	}
	return CaptureSpec{Node: node, Iface: iface}, nil
}

type runningCapture struct {
	spec  CaptureSpec
	f     *os.File
	done  chan error
	stats capture.Stats
}

// startCaptures starts every capture and returns once all are receiving.
func startCaptures(ctx context.Context, st *emu.State, specs []CaptureSpec, dir string) ([]*runningCapture, error) {
	lab, spec := st.Lab, st.Spec
	var out []*runningCapture
	for _, c := range specs {
		n := spec.Node(c.Node)
		if n == nil {
			stopCaptures(out)
			return nil, fmt.Errorf("capture %s:%s: no node %q in lab %s", c.Node, c.Iface, c.Node, lab)
		}
		filter, err := packet.ParseFilter(c.Filter)
		if err != nil {
			stopCaptures(out)
			return nil, fmt.Errorf("capture %s:%s: %w", c.Node, c.Iface, err)
		}
		if c.File == "" {
			if dir == "" {
				dir = "."
			}
			c.File = filepath.Join(dir, c.Node+"-"+c.Iface+".pcapng")
		}
		f, err := os.Create(c.File)
		if err != nil {
			stopCaptures(out)
			return nil, err
		}
		rc := &runningCapture{spec: c, f: f, done: make(chan error, 1)}
		ready := make(chan struct{})
		var once sync.Once
		go func() {
			o := capture.Options{Snaplen: c.Snaplen, Filter: filter, Ready: func() { once.Do(func() { close(ready) }) }}
			var cs capture.Stats
			var err error
			if spec.Cluster != nil { // by the worker on the node's machine
				cs, err = emu.CaptureNode(ctx, st, c.Node, c.Iface, o, f)
			} else {
				cs, err = capture.Capture(ctx, filepath.Join(emu.NetnsDir, topo.Namespace(lab, c.Node)), c.Iface, o, f)
			}
			rc.stats = cs
			once.Do(func() { close(ready) })
			rc.done <- err
		}()
		out = append(out, rc)
		select {
		case <-ready:
		case <-time.After(captureStart(spec)):
			stopCaptures(out)
			return nil, fmt.Errorf("capture %s:%s did not start", c.Node, c.Iface)
		}
	}
	return out, nil
}

// finishCaptures waits for the captures (whose context the caller has
// ended) and returns their references, paths relative to relTo.
func finishCaptures(caps []*runningCapture, relTo string) ([]analysis.CaptureRef, error) {
	var refs []analysis.CaptureRef
	var firstErr error
	for _, c := range caps {
		err := <-c.done
		c.f.Close()
		if err != nil && err != context.Canceled && firstErr == nil {
			firstErr = fmt.Errorf("capture %s:%s: %w", c.spec.Node, c.spec.Iface, err)
		}
		file := c.spec.File
		if relTo != "" {
			if r, err := filepath.Rel(relTo, file); err == nil {
				file = r
			}
		}
		refs = append(refs, analysis.CaptureRef{Node: c.spec.Node, Iface: c.spec.Iface, File: file, Snaplen: c.spec.Snaplen, Filter: c.spec.Filter})
	}
	return refs, firstErr
}

func stopCaptures(caps []*runningCapture) {
	for _, c := range caps {
		c.f.Close()
	}
}

// captureStart bounds how long a capture may take to start: on a lab
// over several machines it is a worker's (over SSH, a session's).
func captureStart(spec *topo.Spec) time.Duration {
	if spec.Cluster != nil {
		return 30 * time.Second
	}
	return 5 * time.Second
}
