package traffic

import (
	"fmt"
	"math"
	"net/netip"
	"os"
	"strconv"
	"strings"

	"github.com/emuctl/emuctl/units"
	"go.yaml.in/yaml/v3"
)

// FlowsFile is a decoded flows file:
//
//	version: 1                 # optional; only 1
//	lab: demo                  # optional: the lab the flows run in
//	defaults: {duration: 20s}  # optional: any flow key, for every flow
//	flows:
//	  - {name: bulk, from: h1, to: h2, proto: tcp, cc: cubic, parallel: 2}
//	  - {from: h3, to: h4, proto: udp, rate: 2mbit, size: 160, start: 5s, probe: icmp}
//
// Flow keys: name, from, to, dst, proto (tcp|mptcp|udp), engine
// (native|iperf3), cc, start, duration, interval, reverse, parallel, port,
// nodelay, quickack, sndbuf, rcvbuf, rate (UDP's pacing; on TCP/MPTCP an
// application writing no faster), size (UDP), probe (icmp|udp),
// probe_rate, udp_packets. A top-level `capture: [h2:h2-eth0]` captures
// those interfaces for the whole run (pcapng beside the result). Top-level keys starting with "x-" are ignored
// (for anchors).
type FlowsFile struct {
	Lab   string
	Flows []Flow
	// Captures come from the top-level `capture:` list of "node:iface".
	Captures []CaptureSpec
}

var (
	flowsDocKeys = []string{"version", "lab", "defaults", "flows", "capture"}
	flowKeys     = []string{"name", "from", "to", "dst", "proto", "engine", "cc", "start", "duration", "interval",
		"reverse", "parallel", "port", "nodelay", "quickack", "sndbuf", "rcvbuf", "rate", "size", "probe",
		"probe_rate", "udp_packets"}
)

// LoadFlowsFile reads a flows file.
func LoadFlowsFile(path string) (*FlowsFile, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParseFlows(path, b)
}

// ParseFlows decodes a flows file strictly: unknown or duplicate keys,
// wrong types and bad values are errors, all reported at once as
// topo.Errors ("file:line:col: path: what is wrong (what is valid)").
func ParseFlows(name string, data []byte) (*FlowsFile, error) {
	d := newFlowDec(name)
	root := d.parse(data)
	if root == nil {
		return nil, d.result()
	}
	out := &FlowsFile{}
	var defaults, list *yaml.Node
	for _, e := range d.mapping(root, "") {
		switch {
		case strings.HasPrefix(e.Key, "x-"):
		case e.Key == "version":
			if v, ok := d.integer(e.V, "version", 0, math.MaxInt32); ok && v != 1 {
				d.errorf(e.V, "version", "unknown version %d (valid: 1)", v)
			}
		case e.Key == "lab":
			out.Lab, _ = d.str(e.V, "lab")
		case e.Key == "defaults":
			defaults = e.V
		case e.Key == "flows":
			list = e.V
		case e.Key == "capture":
			if e.V.Kind != yaml.SequenceNode {
				d.errorf(e.V, "capture", "must be a list of node:iface, got %s", describeNode(e.V))
				break
			}
			for i, c := range e.V.Content {
				p := fmt.Sprintf("capture[%d]", i)
				if s, ok := d.str(c, p); ok {
					cs, err := ParseCaptureSpec(s)
					if err != nil {
						d.errorf(c, p, "%v", err)
						continue
					}
					out.Captures = append(out.Captures, cs)
				}
			}
		default:
			d.unknownKey(e.K, "", flowsDocKeys)
		}
	}
	var def Flow
	if defaults != nil {
		def = d.flow(defaults, "defaults", Flow{})
	}
	switch {
	case list == nil:
		d.errorf(root, "", "no flows: list (a flows file needs at least one flow)")
	case list.Kind != yaml.SequenceNode:
		d.errorf(list, "flows", "must be a list of flows, got %s", describeNode(list))
	default:
		for i, n := range list.Content {
			f := d.flow(n, fmt.Sprintf("flows[%d]", i), def)
			f.Pos = fmt.Sprintf("%s:%d:%d", name, n.Line, n.Column)
			out.Flows = append(out.Flows, f)
		}
		if len(list.Content) == 0 {
			d.errorf(list, "flows", "the list is empty: give at least one flow")
		}
	}
	if err := d.result(); err != nil {
		return nil, err
	}
	return out, nil
}

// flow decodes one flow mapping on top of def.
func (d *flowDec) flow(n *yaml.Node, path string, def Flow) Flow {
	f := def
	for _, e := range d.mapping(n, path) {
		p := joinPath(path, e.Key)
		var ok bool
		switch e.Key {
		case "name":
			f.Name, _ = d.str(e.V, p)
		case "from":
			f.Client, _ = d.str(e.V, p)
		case "to":
			f.Server, _ = d.str(e.V, p)
		case "dst":
			if s, ok := d.scalar(e.V, p, "an IP address"); ok {
				a, err := netip.ParseAddr(s)
				if err != nil {
					d.errorf(e.V, p, "%q is not an IP address", s)
				}
				f.Dst = a
			}
		case "proto":
			f.Proto, _ = d.oneOf(e.V, p, []string{TCP, MPTCP, UDP})
		case "engine":
			f.Engine, _ = d.oneOf(e.V, p, []string{EngineNative, EngineIperf3})
		case "cc":
			if f.Sock.CC, ok = d.str(e.V, p); ok {
				if err := CheckCCName(f.Sock.CC); err != nil {
					d.errorf(e.V, p, "%v", err)
				}
			}
		case "start":
			f.Start, _ = d.duration(e.V, p)
		case "duration":
			f.Duration, _ = d.duration(e.V, p)
		case "interval":
			f.Interval, _ = d.duration(e.V, p)
		case "reverse":
			f.Reverse, _ = d.boolean(e.V, p)
		case "parallel":
			f.Parallel, _ = d.integer(e.V, p, 1, MaxParallel)
		case "port":
			f.Port, _ = d.integer(e.V, p, 0, 65535)
		case "nodelay":
			f.Sock.NoDelay, _ = d.boolean(e.V, p)
		case "quickack":
			f.Sock.QuickAck, _ = d.boolean(e.V, p)
		case "sndbuf", "rcvbuf":
			if s, ok := d.scalar(e.V, p, "a size in bytes such as 4MiB"); ok {
				v, err := units.ParseBytes(s)
				if err != nil {
					d.errorf(e.V, p, "%v", err)
				}
				if e.Key == "sndbuf" {
					f.Sock.SndBuf = v
				} else {
					f.Sock.RcvBuf = v
				}
			}
		case "rate":
			if s, ok := d.scalar(e.V, p, "a rate such as 2mbit"); ok {
				v, err := units.ParseBitRate(s)
				if err != nil {
					d.errorf(e.V, p, "%v", err)
				}
				f.Rate = v
			}
		case "size":
			f.Size, _ = d.integer(e.V, p, MinUDPSize, MaxUDPSize)
		case "probe":
			f.Probe, _ = d.oneOf(e.V, p, []string{ProbeICMP, ProbeUDP})
		case "probe_rate":
			if s, ok := d.scalar(e.V, p, "a rate in Hz such as 10"); ok {
				v, err := strconv.ParseFloat(strings.TrimSuffix(strings.ToLower(s), "hz"), 64)
				if err != nil || v <= 0 {
					d.errorf(e.V, p, "must be a positive number of probes per second, got %q", s)
				}
				f.ProbeRate = v
			}
		case "udp_packets":
			if v, ok := d.boolean(e.V, p); ok {
				f.KeepPackets = &v
			}
		default:
			d.unknownKey(e.K, path, flowKeys)
		}
	}
	if path == "defaults" {
		return f
	}
	if f.Client == "" {
		d.errorf(n, path, "no from: node (the client)")
	}
	if f.Server == "" {
		d.errorf(n, path, "no to: node (the server)")
	}
	return f
}
