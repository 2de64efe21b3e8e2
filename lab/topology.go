package lab

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"github.com/emuctl/emuctl/topo"
)

// Topology builds a topology in Go, beside YAML files: each method adds
// what one line of a file would say, and Spec loads the result with
// package topo — the same decoding, validation, defaults, addressing and
// routing as `emuctl validate` and `emuctl up` apply to a file, so the
// builder can neither accept more nor resolve differently. Problems are
// reported by Spec, all at once, each naming the builder call to blame:
//
//	Link("h1", "s9"): links[0].endpoints[1]: unknown node "s9" (known: h1, s1; did you mean "s1"?)
//
// Methods return the Topology, so calls chain. A Topology is not safe for
// concurrent use.
type Topology struct {
	name  string
	doc   *mapping
	nodes *mapping
	links *entry
}

// NewTopology starts a topology for a lab called name ([a-z0-9][a-z0-9_-],
// at most 32 bytes; namespaces are "<name>.<node>").
func NewTopology(name string) *Topology {
	t := &Topology{name: name, doc: &mapping{}}
	t.doc.set([]string{"name"}, name, t.origin())
	return t
}

// origin is the call that started t: what problems without a position
// name.
func (t *Topology) origin() string { return "NewTopology(" + strconv.Quote(t.name) + ")" }

// Host adds a host: a node with its own network namespace.
func (t *Topology) Host(name string, opts ...NodeOption) *Topology {
	return t.node("Host", name, "host", opts)
}

// Router adds a router: a host that forwards IP. With at least one router
// and automatic routing (the default), every host and router gets routes
// to the subnets it is not attached to.
func (t *Topology) Router(name string, opts ...NodeOption) *Topology {
	return t.node("Router", name, "router", opts)
}

// Switch adds a layer-2 switch: a Linux bridge, or Open vSwitch with
// OVS(). STP() turns spanning tree on (needed on a loop of switches).
func (t *Topology) Switch(name string, opts ...NodeOption) *Topology {
	return t.node("Switch", name, "switch", opts)
}

// AccessPoint adds a Wi-Fi access point (kind ap): a switch bridging its
// wired links and its wireless clients. Options: SSID, WiFi, Position.
func (t *Topology) AccessPoint(name string, opts ...NodeOption) *Topology {
	return t.node("AccessPoint", name, "ap", opts)
}

// Station adds a Wi-Fi station (kind station): a host with a wireless
// interface that associates with an access point (AP(name), or the lab's
// only one). Options: AP, WiFi, Position, WirelessLink.
func (t *Topology) Station(name string, opts ...NodeOption) *Topology {
	return t.node("Station", name, "station", opts)
}

func (t *Topology) node(method, name, kind string, opts []NodeOption) *Topology {
	args := []string{strconv.Quote(name)}
	for _, o := range opts {
		args = append(args, o.call)
	}
	call := method + "(" + strings.Join(args, ", ") + ")"
	if t.nodes == nil {
		t.nodes = t.doc.child("nodes", call)
	}
	n := &mapping{}
	n.set([]string{"kind"}, kind, call)
	for _, o := range opts {
		if o.apply != nil {
			o.apply(n, call)
		}
	}
	t.nodes.entries = append(t.nodes.entries, &entry{key: name, val: n, call: call})
	return t
}

// Link joins two nodes. An end is "node", or "node:iface" for an explicit
// interface name (default: Mininet's <node>-eth<N>). Options shape the
// link (Rate, Delay, Jitter, Loss, Queue, ...; AtoB and BtoA for one
// direction, a being the first end), and set its MTU and addresses (IP).
func (t *Topology) Link(a, b string, opts ...LinkOption) *Topology {
	args := []string{strconv.Quote(a), strconv.Quote(b)}
	for _, o := range opts {
		args = append(args, o.call)
	}
	call := "Link(" + strings.Join(args, ", ") + ")"
	if t.links == nil {
		t.links = &entry{key: "links", val: list{}, call: call}
		t.doc.entries = append(t.doc.entries, t.links)
	}
	l := &mapping{}
	l.set([]string{"endpoints"}, list{a, b}, call)
	for _, o := range opts {
		o.applyEntry(l, call)
	}
	t.links.val = append(t.links.val.(list), &entry{val: l, call: call})
	return t
}

// Addressing sets how addresses are allocated (the file's addressing:).
// Zero fields keep their defaults.
type Addressing struct {
	// Pool is the IPv4 pool for automatic subnets (default 10.0.0.0/8).
	Pool string
	// Prefix is the subnet size per L2 segment (default 24).
	Prefix int
	// P2PPrefix is the subnet size of segments with exactly two
	// interfaces (default 30; 31 allowed).
	P2PPrefix int
	// Pool6, when set, gives every segment an IPv6 /64 from it.
	Pool6 string
	// Manual leaves interfaces without explicit addresses (IP) unaddressed.
	Manual bool
}

// Addressing sets the lab's address allocation.
func (t *Topology) Addressing(a Addressing) *Topology {
	call := fmt.Sprintf("Addressing(%+v)", a)
	m := t.doc.child("addressing", call)
	if a.Pool != "" {
		m.set([]string{"pool"}, a.Pool, call)
	}
	if a.Prefix != 0 {
		m.set([]string{"prefix"}, value(a.Prefix), call)
	}
	if a.P2PPrefix != 0 {
		m.set([]string{"p2p_prefix"}, value(a.P2PPrefix), call)
	}
	if a.Pool6 != "" {
		m.set([]string{"pool6"}, a.Pool6, call)
	}
	if a.Manual {
		m.set([]string{"auto"}, value(false), call)
	}
	return t
}

// Routing sets the routing mode: "auto" (the default: static routes
// across routers) or "none".
func (t *Topology) Routing(mode string) *Topology {
	t.doc.set([]string{"routing"}, mode, "Routing("+strconv.Quote(mode)+")")
	return t
}

// DefaultLink sets parameters every link gets unless it sets them itself
// (the file's defaults.link).
func (t *Topology) DefaultLink(opts ...LinkOption) *Topology {
	call := "DefaultLink(" + optCalls(opts) + ")"
	t.doc.child("defaults", call).set([]string{"link"}, linkParams(opts, call), call)
	return t
}

// DefaultSwitch sets the type of every switch that does not choose one:
// "linux-bridge" (the default) or "ovs".
func (t *Topology) DefaultSwitch(typ string) *Topology {
	call := "DefaultSwitch(" + strconv.Quote(typ) + ")"
	t.doc.child("defaults", call).set([]string{"switch"}, typ, call)
	return t
}

// Field sets any key of the topology file by its dotted path, for what
// the builder has no method for: Field("defaults.tcp.congestion_control",
// "bbr"), Field("wifi.backend", "engine"). The value is written in the
// file's syntax (unit types as 10mbit, 5ms, 1%; slices as lists; maps as
// mappings) and checked like the file.
func (t *Topology) Field(path string, v any) *Topology {
	call := fmt.Sprintf("Field(%q, %s)", path, flow(value(v)))
	t.doc.set(strings.Split(path, "."), value(v), call)
	return t
}

// YAML returns the topology as a file emuctl reads: `emuctl validate`,
// `emuctl up` and topo.Load give the same Spec as the builder.
func (t *Topology) YAML() []byte {
	b, _ := render(t.doc)
	return b
}

// Spec validates and resolves the topology with package topo and returns
// the Spec: every interface named, every address and route decided. On
// problems it returns topo.Errors, one per problem, whose File names the
// builder call to blame (Line and Col are 0).
func (t *Topology) Spec() (*topo.Spec, error) {
	data, calls := render(t.doc)
	file := "lab." + t.origin()
	spec, err := topo.Load(file, data)
	blame := func(line int) string {
		if line >= 1 && line <= len(calls) && calls[line-1] != "" {
			return calls[line-1]
		}
		return t.origin()
	}
	var es topo.Errors
	if errors.As(err, &es) {
		out := make(topo.Errors, len(es))
		for i, e := range es {
			// "(first at line 3)": the other line's call instead
			msg := atLine.ReplaceAllStringFunc(e.Msg, func(m string) string {
				n, _ := strconv.Atoi(atLine.FindStringSubmatch(m)[1])
				return "at " + blame(n)
			})
			out[i] = &topo.Error{File: blame(e.Line), Path: e.Path, Msg: msg}
		}
		return nil, out
	}
	if err != nil {
		return nil, err
	}
	// positions recorded in the Spec for deploy-time messages
	// ("file:line:col: path") name the call too
	rewritePositions(reflect.ValueOf(spec), file+":", blame)
	return spec, nil
}

var atLine = regexp.MustCompile(`\bat line (\d+)`)

// rewritePositions replaces "<file>:line:col" at the start of every string
// below v with the call blamed for that line.
func rewritePositions(v reflect.Value, prefix string, blame func(int) string) {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			rewritePositions(v.Elem(), prefix, blame)
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				rewritePositions(v.Field(i), prefix, blame)
			}
		}
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			rewritePositions(v.Index(i), prefix, blame)
		}
	case reflect.String:
		s := v.String()
		rest, ok := strings.CutPrefix(s, prefix)
		if !ok || !v.CanSet() {
			return
		}
		pos, tail, _ := strings.Cut(rest, ": ")
		lineStr, _, _ := strings.Cut(pos, ":")
		line, err := strconv.Atoi(lineStr)
		if err != nil {
			return
		}
		out := blame(line)
		if tail != "" {
			out += ": " + tail
		}
		v.SetString(out)
	}
}
