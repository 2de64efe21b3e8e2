package emu

import (
	"context"
	"fmt"
	"log/slog"

	"github.com/emuctl/emuctl/topo"
)

// Kinds. A node kind is one way emuctl builds a node, a link kind one way
// it builds a link (link.go); both are picked here, from one registry
// each, so the deploy phases, run-time changes and their rollbacks ask a
// node's or link's kind instead of testing it. A node kind does, per
// instance, what up's preflight checks (plan), what up and a change's
// add share (its namespace and setup),
// what a change's far end of a new link needs (reopen), what a change's
// removal does (remove), and how what it built is read back and checked
// against the spec (readBack, verify: kind_check.go). Kinds with lab-wide parts — one OVSDB
// transaction for every ovs switch, one Wi-Fi medium for every access
// point and station — contribute phases (kindPhase), which the deploy and
// the change run at their place in the phase order.
//
// Teardown needs no kind: what a kind makes carries the lab's marker or
// lives in the lab's namespaces, and teardown finds it by discovery.

// nodeKind is one kind of node (topo's kind, and a switch's type).
type nodeKind interface {
	// name is the kind as messages print it.
	name() string
	// is reports whether n is of this kind; a node is of exactly one.
	is(n *topo.Node) bool
	// netns is the name of the node's namespace ("": the machine's own).
	netns(lab string, n *topo.Node) string
	// create makes the node's namespace (or opens the machine's) in the
	// namespaces phase, records it and sets the node up: up and a
	// change's add alike.
	create(d *deployer, sn *topo.Node) error
	// setup writes what the node needs before its interfaces exist, its
	// handles held: kernel settings, a switch's bridge.
	setup(d *deployer, n *node) error
	// reopen finds what setup made in a node that exists already (a
	// change: the far end of a new link), its handles open.
	reopen(n *node) error
	// ownsIfaces says whether the node's interfaces live in its own
	// namespace (an ovs switch's are OVS ports in the machine's).
	ownsIfaces() bool
	// remove takes out a node a change removes once its links are gone:
	// its processes, hosts link and namespace.
	remove(st *State, sn *topo.Node) error
	// recordFirst says whether a change adding such a node (or a link to
	// one) writes the lab's state naming it before building anything:
	// what the kind makes outside the lab's marked namespaces (OVS ports
	// and rows, the machine's namespace, the Wi-Fi medium's radios) is
	// found through the state after a kill (change.go earlyState).
	recordFirst() bool
	// plan says why the node cannot be built here, before anything is
	// (preflight: up refuses the lab, naming every reason).
	plan(spec *topo.Spec, n *topo.Node, opt Options) []string
	// readBack reads the node as built: its interfaces, addresses and
	// kernel settings, its bridge (kind_check.go).
	readBack(st *State, sn *topo.Node) NodeBuilt
	// verify adds to b.Problems what differs from the node's spec.
	verify(st *State, sn *topo.Node, b *NodeBuilt)
}

// kindPhase is a kind's lab-wide part: a deploy phase named after it,
// journalled and open to fault injection like every phase, with what a
// change does of it.
type kindPhase struct {
	name string
	// plan says why the lab's part of the kind cannot be built here
	// (preflight, once the shaped links are planned: links is nil when
	// none is shaped).
	plan func(spec *topo.Spec, links []LinkState) []string
	// up is the phase in a deploy, run after the phase upAfter.
	upAfter string
	up      func(d *deployer, ctx context.Context) error
	// change is the phase in a run-time change ("change-" + name), run
	// after the change's phase changeAfter.
	changeAfter string
	change      func(d *deployer, ctx context.Context) error
	// prepare runs first in the links phase: what the kind decides
	// before any link exists.
	prepare func(d *deployer, ctx context.Context) error
	// undo takes out what a failed change's phase made (the caller then
	// restores the state).
	undo func(d *deployer, diff labDiff) []error
	// remove takes out the kind's part of what a change removes, before
	// the links and namespaces go.
	remove func(st *State, diff labDiff, log *slog.Logger) error
}

// phaser is a node kind with lab-wide phases.
type phaser interface{ phases() []kindPhase }

// nodeKinds is the registry of node kinds. Lab-wide steps that have no
// place in the phase order (a failed change's undo, a change's removal)
// run in this order.
var nodeKinds = []nodeKind{
	hostKind{},    // kind.go
	routerKind{},  // a host that forwards (kind.go)
	stationKind{}, // Wi-Fi (wifi_kind.go)
	apKind{},      // Wi-Fi (wifi_kind.go)
	bridgeKind{},  // a switch of type linux-bridge (kind.go)
	ovsKind{},     // a switch of type ovs (ovs_kind.go)
	rootKind{},    // the machine's own namespace (kind.go)
}

// nodeKindOf is n's kind.
func nodeKindOf(n *topo.Node) nodeKind {
	for _, k := range nodeKinds {
		if k.is(n) {
			return k
		}
	}
	return unknownKind{}
}

// kindPhases are the registered kinds' phases, each once.
func kindPhases() []kindPhase {
	var out []kindPhase
	seen := map[string]bool{}
	for _, k := range nodeKinds {
		if p, ok := k.(phaser); ok {
			for _, kp := range p.phases() {
				if !seen[kp.name] {
					seen[kp.name] = true
					out = append(out, kp)
				}
			}
		}
	}
	return out
}

// phase is one step of a deploy or a change.
type phase struct {
	name string
	fn   func(context.Context) error
}

// withKindPhases is base with each kind phase after the phase it follows
// (change: a change's order).
func (d *deployer) withKindPhases(base []phase, change bool) []phase {
	var out []phase
	var after func(name string)
	after = func(name string) {
		for _, kp := range kindPhases() {
			at, fn := kp.upAfter, kp.up
			if change {
				at, fn = kp.changeAfter, kp.change
			}
			if at == name && fn != nil {
				out = append(out, phase{kp.name, func(ctx context.Context) error { return fn(d, ctx) }})
				after(kp.name)
			}
		}
	}
	for _, p := range base {
		out = append(out, p)
		after(p.name)
	}
	return out
}

// nsNode is what the kinds with a namespace of their own share.
type nsNode struct{}

func (nsNode) netns(lab string, n *topo.Node) string {
	return topo.Namespace(lab, n.Name)
}
func (nsNode) create(d *deployer, sn *topo.Node) error { return d.createNode(nodeKindOf(sn), sn) }
func (nsNode) reopen(n *node) error                    { return nil }
func (nsNode) ownsIfaces() bool                        { return true }
func (nsNode) remove(st *State, sn *topo.Node) error   { return removeNode(st, sn.Name) }
func (nsNode) recordFirst() bool                       { return false }

// setup is a host's: the kernel settings every node needs first.
func (nsNode) setup(d *deployer, n *node) error {
	if err := writeSysctls(n.ns, nodeSysctls(n.spec)); err != nil {
		return fmt.Errorf("node %s: %w", n.spec.Name, err)
	}
	return nil
}

// hostKind is a host: a namespace with addresses and routes.
type hostKind struct{ nsNode }

func (hostKind) name() string { return "host" }
func (hostKind) is(n *topo.Node) bool {
	return n.Kind == topo.KindHost && n.Station == nil
}

// routerKind is a router: a host with IP forwarding on (nodeSysctls).
type routerKind struct{ nsNode }

func (routerKind) name() string { return "router" }
func (routerKind) is(n *topo.Node) bool {
	return n.Kind == topo.KindRouter && n.AP == nil
}

// bridgeKind is a switch of type linux-bridge: a bridge in its namespace.
type bridgeKind struct{ nsNode }

func (bridgeKind) name() string { return "switch" }
func (bridgeKind) is(n *topo.Node) bool {
	return n.Kind == topo.KindSwitch && n.AP == nil && (n.SwitchType == "" || n.SwitchType == topo.SwitchLinuxBridge)
}
func (k bridgeKind) setup(d *deployer, n *node) error {
	if err := k.nsNode.setup(d, n); err != nil {
		return err
	}
	return d.createBridge(n)
}
func (bridgeKind) reopen(n *node) error { return findBridge(n) }

// findBridge sets n.bridge from the bridge setup made.
func findBridge(n *node) error {
	br, err := n.h.LinkByName(n.spec.Name)
	if err != nil {
		return fmt.Errorf("switch %s: its bridge: %w", n.spec.Name, err)
	}
	n.bridge = br.Attrs().Index
	return nil
}

// rootKind is the machine's own namespace (topo.KindRoot): opened, never
// made, set up or removed; the lab owns its link ends there only, which
// go with their links.
type rootKind struct{}

func (rootKind) name() string                          { return "root" }
func (rootKind) is(n *topo.Node) bool                  { return n.Kind == topo.KindRoot }
func (rootKind) setup(d *deployer, n *node) error      { return nil }
func (rootKind) reopen(n *node) error                  { return nil }
func (rootKind) netns(string, *topo.Node) string       { return "" }
func (rootKind) ownsIfaces() bool                      { return true }
func (rootKind) remove(st *State, sn *topo.Node) error { return nil }
func (rootKind) recordFirst() bool                     { return true }

func (rootKind) create(d *deployer, sn *topo.Node) error {
	h, nh, err := openNamed("")
	if err != nil {
		return fmt.Errorf("node %s (kind root): %w", sn.Name, err)
	}
	n := &node{spec: sn, index: map[string]int{}}
	d.pool.register(n, h, nh)
	d.addNode(n)
	return nil
}

// unknownKind is a node no registered kind is: preflight refuses it
// (a switch type this version does not know).
type unknownKind struct{ nsNode }

func (unknownKind) name() string         { return "unknown" }
func (unknownKind) is(n *topo.Node) bool { return false }
func (unknownKind) setup(d *deployer, n *node) error {
	return fmt.Errorf("node %s: kind %s (type %q) is not supported by this version", n.spec.Name, n.spec.Kind, n.spec.SwitchType)
}

// createNode makes the namespace of a node of kind k, records it and sets
// the node up while its handles are fresh: a large lab would otherwise
// reopen every namespace.
func (d *deployer) createNode(k nodeKind, sn *topo.Node) error {
	name := k.netns(d.spec.Name, sn)
	h, nh, err := createNamedNetns(name, d.marker, d.anchor)
	if err != nil {
		return fmt.Errorf("node %s: %w", sn.Name, err)
	}
	n := &node{spec: sn, nsName: name, index: map[string]int{}}
	d.pool.register(n, h, nh)
	d.addNode(n)
	d.stMu.Lock()
	d.st.Namespaces = append(d.st.Namespaces, name)
	d.stMu.Unlock()
	d.log.Debug("netns created", "node", sn.Name, "netns", name)
	return with(func() error { return k.setup(d, n) }, n)
}

// addNode records a node the deploy has handles on.
func (d *deployer) addNode(n *node) {
	d.nodesMu.Lock()
	d.nodes[n.spec.Name] = n
	d.nodesMu.Unlock()
}

// linkKinds picks a link's kind: the first that claims it.
var linkKinds = []func(spec *topo.Spec, links []LinkState, li int) linkKind{
	hopKind,     // a station's wireless hop (link_wifi.go)
	clusterKind, // cut between machines, or another machine's (link_vxlan.go)
	engineKind,  // shaped by the userspace engine (link_engine.go)
	portKind,    // an end on a node whose kind makes it a port: OVS (link_ovs.go)
	vethKind,    // a veth pair (link_veth.go)
}

// kindOf is link li's kind, from the recorded shaping (links, in the
// order planLinks made it) and the Spec.
func kindOf(spec *topo.Spec, links []LinkState, li int) linkKind {
	for _, pick := range linkKinds {
		if k := pick(spec, links, li); k != nil {
			return k
		}
	}
	panic(fmt.Sprintf("link %d: no kind", li)) // vethKind claims every link
}

func (d *deployer) kindOf(li int) linkKind { return kindOf(d.spec, d.st.Links, li) }

func hopKind(spec *topo.Spec, _ []LinkState, li int) linkKind {
	if li >= len(spec.Links) {
		return wifiHop{}
	}
	return nil
}

func engineKind(_ *topo.Spec, links []LinkState, li int) linkKind {
	if ls, ok := findLinkState(links, li); ok && ls.Backend == BackendEngine {
		return engineLink{}
	}
	return nil
}

// porter is a node kind whose link ends are ports of its own.
type porter interface {
	// portLink is the kind of a link with an end on the node (kernel: the
	// link is shaped by kernel qdiscs).
	portLink(kernel bool) linkKind
}

func portKind(spec *topo.Spec, links []LinkState, li int) linkKind {
	l := spec.Links[li]
	for _, ep := range []topo.Endpoint{l.A, l.B} {
		if n := spec.Node(ep.Node); n != nil {
			if p, ok := nodeKindOf(n).(porter); ok {
				return p.portLink(kernelShaped(links, li))
			}
		}
	}
	return nil
}

func vethKind(_ *topo.Spec, links []LinkState, li int) linkKind {
	return vethLink{kernel: kernelShaped(links, li)}
}

// kernelShaped reports whether link li is shaped by kernel qdiscs.
func kernelShaped(links []LinkState, li int) bool {
	ls, ok := findLinkState(links, li)
	return ok && (ls.Backend == BackendNetem || ls.Backend == BackendShaper)
}
