package emu

import (
	"container/list"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/emuctl/emuctl/internal/proc"
	"github.com/emuctl/emuctl/topo"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Options tune Deploy.
type Options struct {
	// Workers bounds parallel netlink work (default: 2 x CPUs, at least 4).
	Workers int
	// AllowExternal permits taking real host interfaces into the lab.
	AllowExternal bool
	// Log receives one debug line per host mutation (default: discard).
	Log *slog.Logger
	// ExtendAllowedCC lets node defaults use congestion controls outside
	// the root namespace's tcp_allowed_congestion_control by appending them
	// to it (host-wide) for the lab's lifetime (--extend-allowed-cc).
	ExtendAllowedCC bool
	// FaultAt makes Deploy fail on purpose when it reaches the named phase
	// ("namespaces", "nodes", "links", "externals", "shaping", "ovs", "routes",
	// "sysctls", "netcfg", "hosts", "wait", "start", "schedules", "ready"). It exists for rollback tests.
	FaultAt string
}

// crashAt is set by tests only (crash_test.go, rollback_test.go,
// ovs_test.go): the process exits with status 9 at that phase or
// crashPoint, without rollback, to stand in for kill -9. These test-only
// crash hooks and the role dispatcher (roles.go) are emu's only os.Exit
// calls; with crashAt empty (always, outside tests) they never fire.
var crashAt string

// ErrExists is returned when a lab of that name already exists.
var ErrExists = errors.New("lab exists")

// node is the runtime handle of one node: its namespace and netlink handle.
type node struct {
	spec   *topo.Node
	nsName string
	ns     netns.NsHandle
	h      *netlink.Handle
	bridge int // bridge ifindex, switches only

	mu    sync.Mutex
	index map[string]int // iface name -> ifindex

	// handles.go: ns and h are valid between acquire and release.
	pool    *handlePool
	refs    int
	opening bool
	elem    *list.Element
}

func (n *node) setIndex(name string, idx int) {
	n.mu.Lock()
	n.index[name] = idx
	n.mu.Unlock()
}

type deployer struct {
	linkNodes map[int]*node // namespaces of userspace links, by link index
	spec      *topo.Spec
	opt       Options
	log       *slog.Logger
	marker    string
	st        *State
	stMu      sync.Mutex
	nodes     map[string]*node
	nodesMu   sync.Mutex     // nodes, while the namespaces phase fills it
	ovs       *ovsDeploy     // OVS: names and ports of ovs switches (ovs.go)
	ovsChg    *ovsChangePlan // OVS: what a run-time change adds (ovs_change.go)
	pool      *handlePool
	j         *journal     // journal.go
	anchor    *netnsAnchor // nsutil.go: every namespace file links to it
	// scope, for a run-time change (change.go), is what the phases
	// build: its nodes and links; nil builds the whole Spec.
	scope *changeScope
	// specJSON, for a run-time change, is spec as JSON for the state
	// written after the namespaces phase (the phase does not change spec)
	specJSON json.RawMessage
}

// builds reports whether the deploy builds node name (a change builds
// only its new nodes; the others exist).
func (d *deployer) builds(name string) bool { return d.scope == nil || d.scope.nodes[name] }

// buildsLink reports whether the deploy builds link li.
func (d *deployer) buildsLink(li int) bool { return d.scope == nil || d.scope.links[li] }

// Deploy builds the lab described by spec and returns its state once every
// link is up. On any failure, or when ctx is cancelled, everything made so
// far is removed before Deploy returns: a failed Deploy leaves nothing.
func Deploy(ctx context.Context, spec *topo.Spec, opt Options) (*State, error) {
	if opt.Workers <= 0 {
		opt.Workers = max(4, 2*runtime.NumCPU())
	}
	if c := spec.Cluster; c != nil && c.Slice == "" {
		return deployCluster(ctx, spec, opt) // a lab over several machines (cluster.go)
	}
	log := opt.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("lab", spec.Name)
	unlockLab, err := lockLab(spec.Name)
	if err != nil {
		return nil, err
	}
	unlock := sync.OnceFunc(unlockLab)
	defer unlock()
	links, err := preflightAll(spec, opt)
	if err != nil {
		if _, serr := os.Stat(stateDir(spec.Name)); serr != nil {
			removeLockFile(spec.Name)
		}
		return nil, err
	}
	d, err := newDeployer(spec, opt, log, links)
	if err != nil {
		return nil, err
	}
	d.st.DocSum = docSum(spec.Document) // recorded with the state the phases save
	if err = saveDocument(spec); err != nil {
		err = fmt.Errorf("state dir: %w", err)
	} else if d.j, err = openJournal(spec.Name); err == nil {
		err = d.run(ctx)
	}
	d.pool.closeAll(d.allNodes())
	d.anchor.remove()
	d.j.close()
	if err != nil {
		log.Debug("deploy failed, rolling back", "err", err)
		d.stMu.Lock()
		st := d.st
		d.stMu.Unlock()
		if rerr := teardown(st, log); rerr != nil {
			return nil, fmt.Errorf("%w (rollback also failed: %v; run `emuctl clean`)", err, rerr)
		}
		removeLockFile(spec.Name)
		return nil, err
	}
	unlock() // the schedules' steps take the lab's lock
	if hasT0(spec, topo.T0Up) {
		names, err := StartSchedule(spec.Name, "", topo.T0Up)
		if err != nil {
			return d.st, fmt.Errorf("lab %s is up, but its schedules did not start: %w (emuctl schedule start NAME)", spec.Name, err)
		}
		log.Debug("schedules started", "names", names)
	}
	if hasMobilityT0(spec, topo.T0Up) {
		names, err := StartMobility(spec.Name, "", topo.T0Up)
		if err != nil {
			return d.st, fmt.Errorf("lab %s is up, but its nodes' mobility did not start: %w (emuctl wifi mobility start NODE)", spec.Name, err)
		}
		log.Debug("mobility started", "nodes", names)
	}
	return d.st, nil
}

// hasT0 reports whether spec has a schedule starting at t0.
func hasT0(spec *topo.Spec, t0 string) bool {
	for _, s := range spec.Schedules {
		if s.T0 == t0 {
			return true
		}
	}
	return false
}

// schedules makes sure a lab with schedules has its supervisor, which
// runs them (the shaping phase starts it for engine links already).
func (d *deployer) schedules(ctx context.Context) error {
	if len(d.spec.Schedules) == 0 {
		return nil
	}
	_, err := d.ensureSupervisor(ctx)
	return err
}

// upPhases are a deploy's phases in order: the kinds' (kind.go: "ovs",
// "wifi") at their place.
func (d *deployer) upPhases() []phase {
	return d.withKindPhases([]phase{
		{"namespaces", d.namespaces},
		{"nodes", d.nodeSetup},
		{"links", d.links},
		{"externals", d.externals},
		{"shaping", d.shaping},
		{"routes", d.routes},
		{"sysctls", d.sysctls},
		{"netcfg", d.netcfg},
		{"hosts", d.hostsFiles},
		{"wait", d.waitUp},
		{"start", d.startCommands},
		{"schedules", d.schedules},
	}, false)
}

func (d *deployer) run(ctx context.Context) error {
	phases := d.upPhases()
	for _, p := range phases {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("interrupted before %s: %w", p.name, err)
		}
		if d.opt.FaultAt == p.name {
			return fmt.Errorf("injected fault at phase %q", p.name)
		}
		if err := d.j.add("phase", p.name); err != nil {
			return err
		}
		if crashAt == p.name {
			os.Exit(9) // tests: die like kill -9, with no rollback
		}
		t0 := time.Now()
		if err := p.fn(ctx); err != nil {
			return err
		}
		d.log.Debug("phase done", "phase", p.name, "took", time.Since(t0))
		if err := d.save(); err != nil {
			return err
		}
	}
	if crashAt == "ready" {
		os.Exit(9)
	}
	if d.opt.FaultAt == "ready" {
		return errors.New(`injected fault at phase "ready"`)
	}
	d.st.Status = StatusUp
	d.st.Ready = time.Now().UTC()
	return d.save()
}

func (d *deployer) save() error {
	d.stMu.Lock()
	defer d.stMu.Unlock()
	if d.specJSON != nil && d.st.Spec == d.spec {
		return writeStateSpec(d.st, d.specJSON)
	}
	return writeState(d.st)
}

// parallel runs fn for every item with the deployer's worker bound and
// returns the errors joined, sorted for stable messages.
func parallel[T any](ctx context.Context, workers int, items []T, fn func(T) error) error {
	var (
		mu   sync.Mutex
		errs []error
		wg   sync.WaitGroup
	)
	sem := make(chan struct{}, workers)
	for _, it := range items {
		if ctx.Err() != nil {
			break
		}
		sem <- struct{}{}
		wg.Add(1)
		go func(it T) {
			defer wg.Done()
			defer func() { <-sem }()
			if err := fn(it); err != nil {
				mu.Lock()
				errs = append(errs, err)
				mu.Unlock()
			}
		}(it)
	}
	wg.Wait()
	if len(errs) == 0 {
		return ctx.Err()
	}
	sort.Slice(errs, func(i, j int) bool { return errs[i].Error() < errs[j].Error() })
	if len(errs) > 5 {
		errs = append(errs[:5], fmt.Errorf("... and %d more errors", len(errs)-5))
	}
	return errors.Join(errs...)
}

func (d *deployer) namespaces(ctx context.Context) error {
	if err := ensureNetnsDir(); err != nil {
		return err
	}
	a, err := newNetnsAnchor(d.spec.Name, fmt.Sprintf("%s%08x", deployTag(d.st.Created), rand.Uint32()), d.j)
	if err != nil {
		return err
	}
	d.anchor = a
	var mu sync.Mutex
	nodes := make([]*topo.Node, 0, len(d.spec.Nodes))
	for i := range d.spec.Nodes {
		if d.spec.Here(d.spec.Nodes[i].Name) && d.builds(d.spec.Nodes[i].Name) { // a worker builds its machine's nodes only
			nodes = append(nodes, &d.spec.Nodes[i])
		}
	}
	var engineLinks []LinkState
	for _, ls := range d.st.Links {
		if ls.Backend == BackendEngine && d.buildsLink(ls.Index) {
			engineLinks = append(engineLinks, ls)
		}
	}
	err = parallel(ctx, d.opt.Workers, engineLinks, func(ls LinkState) error {
		h, nh, err := createNamedNetns(ls.Netns, d.marker, d.anchor)
		if err != nil {
			return fmt.Errorf("link %d: %w", ls.Index, err)
		}
		n := &node{spec: &topo.Node{Name: ls.Netns}, nsName: ls.Netns, index: map[string]int{}}
		d.pool.register(n, h, nh)
		mu.Lock()
		d.linkNodes[ls.Index] = n
		mu.Unlock()
		d.stMu.Lock()
		d.st.Namespaces = append(d.st.Namespaces, ls.Netns)
		d.stMu.Unlock()
		return with(func() error {
			return writeSysctls(n.ns, []topo.KV{{Key: "net.ipv6.conf.all.disable_ipv6", Value: "1"},
				{Key: "net.ipv6.conf.default.disable_ipv6", Value: "1"}, {Key: "net.ipv4.ip_forward", Value: "0"}})
		}, n)
	})
	if err != nil {
		return err
	}
	return parallel(ctx, d.opt.Workers, nodes, func(sn *topo.Node) error {
		return nodeKindOf(sn).create(d, sn) // kind.go
	})
}

// hasV6 reports whether any interface of the node has an IPv6 address.
func hasV6(n *topo.Node) bool {
	for _, ifc := range n.Interfaces {
		for _, a := range ifc.Addrs {
			if a.Addr().Is6() {
				return true
			}
		}
	}
	return false
}

// nodeSetup is a phase of its own for fault injection only: each node's
// setup (its kind's, kind.go) runs as soon as its namespace exists.
func (d *deployer) nodeSetup(ctx context.Context) error { return nil }

// nodeSysctls are the settings a node needs before its interfaces exist.
func nodeSysctls(n *topo.Node) []topo.KV {
	sys := []topo.KV{}
	v6 := hasV6(n)
	if !v6 {
		// No IPv6 in this node: keep the wire quiet (no DAD, MLD or
		// router solicitations in captures).
		sys = append(sys, topo.KV{Key: "net.ipv6.conf.all.disable_ipv6", Value: "1"},
			topo.KV{Key: "net.ipv6.conf.default.disable_ipv6", Value: "1"})
	} else {
		sys = append(sys, topo.KV{Key: "net.ipv6.conf.all.accept_dad", Value: "0"},
			topo.KV{Key: "net.ipv6.conf.default.accept_dad", Value: "0"},
			topo.KV{Key: "net.ipv6.conf.default.accept_ra", Value: "0"},
			topo.KV{Key: "net.ipv6.conf.default.router_solicitations", Value: "0"})
	}
	if n.Kind == topo.KindRouter {
		sys = append(sys, topo.KV{Key: "net.ipv4.ip_forward", Value: "1"})
		if v6 {
			sys = append(sys, topo.KV{Key: "net.ipv6.conf.all.forwarding", Value: "1"})
		}
	}
	return sys
}

func (d *deployer) nodeList() []*node {
	out := make([]*node, 0, len(d.spec.Nodes))
	for i := range d.spec.Nodes {
		if n := d.nodes[d.spec.Nodes[i].Name]; n != nil && d.builds(n.spec.Name) && !n.root() {
			out = append(out, n)
		}
	}
	return out
}

// root reports whether n is a node of kind root: the machine's own
// namespace, where the lab owns its link ends only (no phase that
// configures a node touches it).
func (n *node) root() bool { return n.spec.Kind == topo.KindRoot }

// allNodes lists every node the deploy holds handles for — the nodes it
// built, a change's existing far ends of its new links (openExisting),
// nodes of kind root — and its link namespaces: what closeAll must close.
func (d *deployer) allNodes() []*node {
	d.nodesMu.Lock()
	out := make([]*node, 0, len(d.nodes)+len(d.linkNodes))
	for _, n := range d.nodes {
		out = append(out, n)
	}
	d.nodesMu.Unlock()
	for _, n := range d.linkNodes {
		out = append(out, n)
	}
	return out
}

// eachNode runs fn for the nodes that keep (all when keep is nil) in
// parallel, each held (handles.go) while fn runs.
func (d *deployer) eachNode(ctx context.Context, keep func(*node) bool, fn func(*node) error) error {
	var ns []*node
	for _, n := range d.nodeList() {
		if keep == nil || keep(n) {
			ns = append(ns, n)
		}
	}
	return parallel(ctx, d.opt.Workers, ns, func(n *node) error {
		return with(func() error { return fn(n) }, n)
	})
}

func (d *deployer) createBridge(n *node) error {
	la := netlink.NewLinkAttrs()
	la.Name = n.spec.Name
	la.Alias = d.marker
	la.Flags = net.FlagUp
	off := false
	br := &netlink.Bridge{LinkAttrs: la, MulticastSnooping: &off}
	if err := n.h.LinkAdd(br); err != nil {
		return fmt.Errorf("switch %s: create bridge: %w", n.spec.Name, err)
	}
	l, err := n.h.LinkByName(la.Name)
	if err != nil {
		return fmt.Errorf("switch %s: %w", n.spec.Name, err)
	}
	n.bridge = l.Attrs().Index
	d.log.Debug("bridge created", "node", n.spec.Name, "stp", n.spec.STP)
	if n.spec.STP {
		if err := setBridgeSTP(n.ns, n.bridge); err != nil {
			return fmt.Errorf("switch %s: enable STP: %w", n.spec.Name, err)
		}
	}
	return nil
}

func parseMAC(s string) net.HardwareAddr {
	if s == "" {
		return nil
	}
	m, err := net.ParseMAC(s)
	if err != nil {
		return nil
	}
	return m
}

func findIface(n *topo.Node, name string) *topo.Interface { return n.Iface(name) }

func (d *deployer) links(ctx context.Context) error {
	for _, kp := range kindPhases() { // OVS: pick the daemons, name bridges and ports (ovs.go)
		if kp.prepare != nil {
			if err := kp.prepare(d, ctx); err != nil {
				return err
			}
		}
	}
	var idx []int
	for i := range d.spec.Links {
		if d.buildsLink(i) {
			idx = append(idx, i)
		}
	}
	return parallel(ctx, d.opt.Workers, idx, func(i int) error {
		l := d.spec.Links[i]
		err := with(func() error { return d.kindOf(i).create(d, i) }, d.nodes[l.A.Node], d.nodes[l.B.Node], d.linkNodes[i])
		if err != nil {
			return fmt.Errorf("link %s <-> %s: %w", d.spec.Links[i].A, d.spec.Links[i].B, err)
		}
		return nil
	})
}

const vethIndexBase = 100000

// ifindex is the index of link li's end k in its node (k 0: a veth's
// main end; 1, 2: an engine link's A and B ends). At up they come from
// fixed ranges; a run-time change, whose link indexes may repeat those of
// links renumbered by a removal, takes them from a range of its own.
func (d *deployer) ifindex(li, k int) int {
	if d.scope != nil {
		return d.scope.indexBase + 4*li + k
	}
	if k == 0 {
		return vethIndexBase + li
	}
	return 2*vethIndexBase + 2*li + k - 1
}

// createLink makes one veth pair with its ends directly in the two nodes'
// namespaces (one RTM_NEWLINK), marks, enslaves, addresses and raises both.
func (d *deployer) createLink(l topo.Link, li int) error {
	if n := d.nodes[l.A.Node]; n != nil && n.root() {
		// an end in the machine's namespace is made as the peer: the pair
		// is created in the other node's namespace (never both in the
		// root: deleting that namespace deletes the pair, after a crash
		// too) and the main end's fixed ifindex stays out of the root
		l.A, l.B = l.B, l.A
	}
	a, b := d.nodes[l.A.Node], d.nodes[l.B.Node]
	ia, ib := findIface(a.spec, l.A.Iface), findIface(b.spec, l.B.Iface)
	if a == nil || b == nil || ia == nil || ib == nil {
		return errors.New("spec inconsistency: endpoint not found")
	}
	la := netlink.NewLinkAttrs()
	la.Name = ia.Name
	la.Alias = d.marker
	la.HardwareAddr = parseMAC(ia.MAC)
	// The kernel treats a veth's link events as urgent only when its
	// ifindex differs from its peer's; in fresh namespaces both ends would
	// get index 2, and linkwatch would then batch carrier-on (and the qdisc
	// activation that comes with it) up to a second later. Main ends take
	// indexes from a range the per-namespace allocator never reaches.
	la.Index = d.ifindex(li, 0)
	if ia.MTU > 0 {
		la.MTU = ia.MTU
	}
	if a.bridge != 0 {
		la.MasterIndex = a.bridge
	}
	// The main end gets MAC, MTU, bridge, index and up in the creating
	// request (the kernel takes no alias there: the marker follows, then
	// the addresses) — two netlink requests fewer per link. It lives in a
	// marked namespace, so it is never unowned.
	la.Flags = net.FlagUp
	v := netlink.NewVeth(la)
	v.PeerName = ib.Name
	v.PeerNamespace = netlink.NsFd(int(b.ns))
	v.PeerHardwareAddr = parseMAC(ib.MAC)
	if ib.MTU > 0 {
		v.PeerMTU = uint32(ib.MTU)
	}
	if err := a.h.LinkAdd(v); err != nil {
		return fmt.Errorf("create veth: %w", err)
	}
	d.log.Debug("veth created", "a", l.A.String(), "b", l.B.String())
	a.setIndex(ia.Name, la.Index)
	main := &netlink.Device{LinkAttrs: netlink.LinkAttrs{Index: la.Index, Name: ia.Name}}
	if err := a.h.LinkSetAlias(main, d.marker); err != nil {
		return fmt.Errorf("%s:%s: set marker: %w", a.spec.Name, ia.Name, err)
	}
	if err := addAddrs(a.h, main, ia.Addrs); err != nil {
		return fmt.Errorf("%s:%s: %w", a.spec.Name, ia.Name, err)
	}
	return d.finishEnd(b, ib, false)
}

// finishEnd looks an interface up in its node, marks it (peers do not get
// the alias at creation), enslaves it to the switch bridge, adds addresses
// and sets it up.
func (d *deployer) finishEnd(n *node, ifc *topo.Interface, marked bool) error {
	l, err := n.h.LinkByName(ifc.Name)
	if err != nil {
		return fmt.Errorf("%s:%s: %w", n.spec.Name, ifc.Name, err)
	}
	n.setIndex(ifc.Name, l.Attrs().Index)
	if !marked || l.Attrs().Alias != d.marker {
		if err := n.h.LinkSetAlias(l, d.marker); err != nil {
			return fmt.Errorf("%s:%s: set marker: %w", n.spec.Name, ifc.Name, err)
		}
	}
	if n.bridge != 0 && l.Attrs().MasterIndex != n.bridge {
		if err := n.h.LinkSetMasterByIndex(l, n.bridge); err != nil {
			return fmt.Errorf("%s:%s: attach to bridge: %w", n.spec.Name, ifc.Name, err)
		}
	}
	if err := addAddrs(n.h, l, ifc.Addrs); err != nil {
		return fmt.Errorf("%s:%s: %w", n.spec.Name, ifc.Name, err)
	}
	if err := n.h.LinkSetUp(l); err != nil {
		return fmt.Errorf("%s:%s: set up: %w", n.spec.Name, ifc.Name, err)
	}
	return nil
}

func addAddrs(h *netlink.Handle, l netlink.Link, addrs []netip.Prefix) error {
	for _, p := range addrs {
		a := &netlink.Addr{IPNet: &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}}
		if p.Addr().Is6() {
			a.Flags = unix.IFA_F_NODAD
		}
		if err := h.AddrAdd(l, a); err != nil {
			return fmt.Errorf("add address %s: %w", p, err)
		}
	}
	return nil
}

func (d *deployer) routes(ctx context.Context) error {
	return d.eachNode(ctx, func(n *node) bool { return len(n.spec.Routes) > 0 }, nodeRoutes)
}

// nodeRoutes installs a node's routes (its handle held).
func nodeRoutes(n *node) error {
	for _, r := range n.spec.Routes {
		if err := replaceRoute(n.h, n.spec.Name, r, n.index); err != nil {
			return err
		}
	}
	return nil
}

// replaceRoute installs one route of a node (index caches its interfaces'
// ifindexes, nil for none).
func replaceRoute(h *netlink.Handle, node string, r topo.Route, index map[string]int) error {
	rt := &netlink.Route{Dst: prefixToIPNet(r.Dst)}
	if r.Via.IsValid() {
		rt.Gw = r.Via.AsSlice()
	}
	if r.Dev != "" {
		idx, ok := index[r.Dev]
		if !ok {
			l, err := h.LinkByName(r.Dev)
			if err != nil {
				return fmt.Errorf("node %s: route %s: device %s: %w", node, r.Dst, r.Dev, err)
			}
			idx = l.Attrs().Index
		}
		rt.LinkIndex = idx
	}
	if err := h.RouteReplace(rt); err != nil {
		return fmt.Errorf("node %s: route %s via %s: %w", node, r.Dst, r.Via, err)
	}
	return nil
}

func prefixToIPNet(p netip.Prefix) *net.IPNet {
	p = p.Masked()
	return &net.IPNet{IP: p.Addr().AsSlice(), Mask: net.CIDRMask(p.Bits(), p.Addr().BitLen())}
}

func (d *deployer) sysctls(ctx context.Context) error {
	return d.eachNode(ctx, func(n *node) bool { return len(n.spec.Sysctls) > 0 }, func(n *node) error {
		if err := writeSysctls(n.ns, n.spec.Sysctls); err != nil {
			return fmt.Errorf("node %s: %w", n.spec.Name, err)
		}
		return nil
	})
}

// waitUp returns when every interface of the lab reports carrier, or fails
// after 10 s naming the interfaces that did not come up. It checks the
// nodes in passes, each pass only those still waiting, so a large lab
// reopens (handles.go) only the namespaces that are slow.
func (d *deployer) waitUp(ctx context.Context) error {
	deadline := time.Now().Add(10 * time.Second)
	pending := map[*node][]string{}
	for _, n := range d.nodeList() {
		if !nodeKindOf(n.spec).ownsIfaces() {
			continue // OVS: the ports live in the root namespace; the ovs phase checked them
		}
		for _, ifc := range n.spec.Interfaces {
			if ifc.External == nil { // a real adapter may have no carrier; that is the user's cable
				pending[n] = append(pending[n], ifc.Name)
			}
		}
	}
	// a change's new links also end on nodes that were there before (a
	// host added by an earlier change, the switch it joins): those ends
	// too, since the kernel turns a veth's carrier on asynchronously, and
	// until it has a bridge port forwards nothing and the device's queue
	// drops what is sent (a ping right after link add went unanswered)
	if d.scope != nil {
		for li := range d.scope.links {
			l := d.spec.Links[li]
			for _, ep := range []topo.Endpoint{l.A, l.B} {
				n := d.nodes[ep.Node]
				if n == nil || d.builds(ep.Node) || n.root() || !nodeKindOf(n.spec).ownsIfaces() {
					continue
				}
				if ifc := findIface(n.spec, ep.Iface); ifc != nil && ifc.External == nil && !slices.Contains(pending[n], ep.Iface) {
					pending[n] = append(pending[n], ep.Iface)
				}
			}
		}
	}
	var mu sync.Mutex
	poll := 100 * time.Microsecond
	for {
		down := map[*node][]string{}
		nodes := make([]*node, 0, len(pending))
		for n := range pending {
			nodes = append(nodes, n)
		}
		err := parallel(ctx, d.opt.Workers, nodes, func(n *node) error {
			return with(func() error {
				links, err := n.h.LinkList()
				if err != nil && !errors.Is(err, netlink.ErrDumpInterrupted) {
					return fmt.Errorf("node %s: list links: %w", n.spec.Name, err)
				}
				state := map[string]netlink.LinkOperState{}
				for _, l := range links {
					state[l.Attrs().Name] = l.Attrs().OperState
				}
				var left []string
				for _, name := range pending[n] {
					if state[name] != netlink.OperUp && !(state[name] == netlink.OperUnknown && d.isTunnel(n, name)) {
						left = append(left, name)
					}
				}
				if len(left) > 0 {
					mu.Lock()
					down[n] = left
					mu.Unlock()
				}
				return nil
			}, n)
		})
		if err != nil {
			return err
		}
		if len(down) == 0 {
			return d.waitSTP(ctx)
		}
		pending = down
		if time.Now().After(deadline) {
			var names []string
			for n, ifs := range down {
				for _, i := range ifs {
					names = append(names, n.spec.Name+":"+i)
				}
			}
			sort.Strings(names)
			return fmt.Errorf("interfaces not up after 10s: %s", strings.Join(names, ", "))
		}
		// the kernel's carrier work runs soon after a veth is up: looked
		// at again after 0.1 ms, then twice as long each time up to 20 ms
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(poll):
		}
		poll = min(2*poll, 20*time.Millisecond)
	}
}

// newDeployer is the deploy's start, shared by one machine's lab and a
// controller's: the deployer, and the lab's state (status deploying, this
// process as its owner) written before anything is created.
func newDeployer(spec *topo.Spec, opt Options, log *slog.Logger, links []LinkState) (*deployer, error) {
	start, _ := proc.Start(os.Getpid())
	d := &deployer{
		spec: spec, opt: opt, log: log, marker: Marker(spec.Name), nodes: map[string]*node{}, linkNodes: map[int]*node{},
		pool: newHandlePool(maxOpenNodes),
		st:   &State{Lab: spec.Name, Status: StatusDeploying, PID: os.Getpid(), PIDStart: start, Created: time.Now().UTC(), Spec: spec, Links: links},
	}
	if err := writeState(d.st); err != nil {
		os.RemoveAll(stateDir(spec.Name))
		return nil, fmt.Errorf("state dir: %w", err)
	}
	return d, nil
}
