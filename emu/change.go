package emu

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"log/slog"
	"maps"
	"math/rand/v2"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/emuctl/emuctl/internal/proc"
	"github.com/emuctl/emuctl/tc"
	"github.com/emuctl/emuctl/topo"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// A running lab changes through the same code that built it. A change is
// an edit of the lab's topology (topo/edit.go: the lab as it stands is a
// document, the edit is loaded again with every rule of up, and nothing
// already built may change); what the edit adds is built by a deployer
// scoped to it — the namespaces, links, shaping, sysctls, TCP profiles and
// hosts phases of up, for those nodes and links alone — and what it drops
// is removed; routes follow on every node whose routes the edit changed.
//
// Nothing lost, nothing left: the change is journalled before the host is
// touched, and the state records the new Spec before anything is built,
// so `down` and `clean` — which find a lab's namespaces by marker —
// remove whatever a change killed at any instant made. A failed add is
// rolled back: what it made is removed and the lab's state is as before.
// Changes serialise on the lab's lock.

// changeScope is what a change's deployer builds.
type changeScope struct {
	nodes     map[string]bool
	links     map[int]bool
	indexBase int // ifindex range of its links (deploy.go ifindex)
}

// topologyFile is the lab's topology as it stands, in its state dir
// (what `emuctl inspect --topology` prints and changes edit).
func topologyFile(lab string) string { return filepath.Join(stateDir(lab), "topology.yaml") }

// saveDocument records the document a lab's Spec came from (nothing for
// a generated Spec: changes write it out from the Spec).
func saveDocument(spec *topo.Spec) error {
	if err := spec.WaitDocument(); err != nil { // encoded while the change was built
		return err
	}
	if spec.Document == nil {
		return nil
	}
	return writeAtomic(topologyFile(spec.Name), spec.Document)
}

// withDocument gives st.Spec the lab's recorded document: the one its
// state's commit wrote (a state of before the checksum takes any).
func withDocument(st *State) {
	b, err := os.ReadFile(topologyFile(st.Lab))
	if err != nil || st.DocSum != "" && docSum(b) != st.DocSum {
		return // no document, or another commit's: the Spec is written out (topo.Export)
	}
	st.Spec.Document = b
}

// docSum is a document's checksum for State.DocSum ("" for none).
func docSum(doc []byte) string {
	if doc == nil {
		return ""
	}
	h := fnv.New64a()
	h.Write(doc)
	return strconv.FormatUint(h.Sum64(), 16)
}

// Topology is the lab as it stands now as a topology document `up`
// accepts: nodes and links added or removed at run time included, every
// link's interfaces and addresses written out.
func Topology(lab string) ([]byte, error) {
	st, err := ReadState(lab)
	if err != nil {
		return nil, err
	}
	withDocument(st)
	return topo.Topology(st.Spec)
}

// AddNode adds a node to a running lab: its namespace, its bridge (a
// switch), its sysctls and TCP profile (a host or router). It has no
// links until AddLink gives it some.
func AddNode(ctx context.Context, lab string, req topo.NodeRequest, opt Options) (*State, error) {
	return change(ctx, lab, opt, func(s *topo.Spec) (*topo.Spec, error) { return topo.AddNode(s, req, topo.DocumentLater) })
}

// AddLink adds a link to a running lab, shaped as its parameters say on
// the backend up would pick; routes follow. The new link is the last:
// index len(st.Spec.Links)-1.
func AddLink(ctx context.Context, lab string, req topo.LinkRequest, opt Options) (*State, error) {
	return change(ctx, lab, opt, func(s *topo.Spec) (*topo.Spec, error) { return topo.AddLink(s, req, topo.DocumentLater) })
}

// RemoveLink removes link i (topology order) from a running lab; later
// links move down one index.
func RemoveLink(ctx context.Context, lab string, i int, opt Options) (*State, error) {
	return change(ctx, lab, opt, func(s *topo.Spec) (*topo.Spec, error) { return topo.RemoveLink(s, i, topo.DocumentLater) })
}

// RemoveNode removes a node and every link that ends on it from a
// running lab: its processes stop, its namespace goes.
func RemoveNode(ctx context.Context, lab, name string, opt Options) (*State, error) {
	return change(ctx, lab, opt, func(s *topo.Spec) (*topo.Spec, error) {
		if n := s.Node(name); n != nil && n.AP != nil {
			if err := apRemovalRefused(s, name); err != nil { // wifi_change.go
				return nil, err
			}
		}
		return topo.RemoveNode(s, name, topo.DocumentLater)
	})
}

// labDiff is what an edit changes: by name, and by link index in the old
// (removed) and new (added) Spec.
type labDiff struct {
	addNodes, delNodes []string
	addLinks, delLinks []int
	newIndex           map[int]int // kept links: old index -> new
}

func diffSpecs(old, new *topo.Spec) labDiff {
	var d labDiff
	for _, n := range new.Nodes {
		if old.Node(n.Name) == nil {
			d.addNodes = append(d.addNodes, n.Name)
		}
	}
	for _, n := range old.Nodes {
		if new.Node(n.Name) == nil {
			d.delNodes = append(d.delNodes, n.Name)
		}
	}
	key := func(l topo.Link) string { return l.A.String() + "|" + l.B.String() }
	newAt := map[string]int{}
	for i, l := range new.Links {
		newAt[key(l)] = i
	}
	oldAt := map[string]bool{}
	d.newIndex = map[int]int{}
	for i, l := range old.Links {
		oldAt[key(l)] = true
		if j, ok := newAt[key(l)]; ok {
			d.newIndex[i] = j
		} else {
			d.delLinks = append(d.delLinks, i)
		}
	}
	for i, l := range new.Links {
		if !oldAt[key(l)] {
			d.addLinks = append(d.addLinks, i)
		}
	}
	return d
}

// change runs one edit against a running lab under its lock.
func change(ctx context.Context, lab string, opt Options, edit func(*topo.Spec) (*topo.Spec, error)) (*State, error) {
	if os.Geteuid() != 0 {
		return nil, errors.New("emuctl needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN) to change a lab: run it with sudo")
	}
	unlock, err := lockLabWait(ctx, lab)
	if err != nil {
		return nil, err
	}
	defer unlock()
	st, err := changeLocked(ctx, lab, opt, edit)
	if err == nil {
		keepCommitted(st) // state_cache.go
	}
	return st, err
}

// changeLocked is change with the lab's lock held.
func changeLocked(ctx context.Context, lab string, opt Options, edit func(*topo.Spec) (*topo.Spec, error)) (*State, error) {
	log := opt.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	log = log.With("lab", lab)
	st, err := readStateForChange(lab)
	if err != nil {
		return nil, err
	}
	if st.Status != StatusUp {
		return nil, fmt.Errorf("lab %s is %s, not up: changes need a running lab", lab, st.Status)
	}
	if err := changeable(st); err != nil {
		return nil, err
	}
	old := st.Spec
	t0 := time.Now()
	spec, err := edit(old)
	if err != nil {
		return nil, err
	}
	log.Debug("topology edited", "took", time.Since(t0))
	diff := diffSpecs(old, spec)
	if len(old.Schedules) > 0 && len(diff.delLinks) > 0 {
		return nil, fmt.Errorf("lab %s has schedules, whose steps name links: removing a link would renumber the links they name; stop and remove the schedules in the file, or bring the lab up again", lab)
	}
	if err := ovsChangeRefused(st, diff); err != nil {
		return nil, err
	}
	if err := wifiChangeRefused(st, old, spec, diff); err != nil { // wifi_change.go
		return nil, err
	}
	if err := rootChangeRefused(spec, diff, opt); err != nil {
		return nil, err
	}
	t0 = time.Now()
	links, err := changeLinks(st, spec, diff)
	if err != nil {
		return nil, err
	}
	log.Debug("links planned", "took", time.Since(t0))
	ovsPlan, err := planOVSChange(ctx, st, spec, links, diff)
	if err != nil {
		return nil, err
	}
	j, err := openJournal(lab)
	if err != nil {
		return nil, err
	}
	defer j.close()
	if err := j.add("change", strings.Join(diff.summary(), " ")); err != nil {
		return nil, err
	}
	if len(diff.delLinks)+len(diff.delNodes) > 0 {
		if err := j.add("phase", "change-remove"); err != nil {
			return nil, err
		}
	}
	if err := removeStations(st, old, diff); err != nil { // off the medium first
		return nil, err
	}
	if err := removeParts(st, spec, diff, links, log); err != nil {
		return nil, err
	}
	if len(diff.addNodes) == 0 && len(diff.addLinks) == 0 {
		if err := followRoutes(ctx, old, spec, opt, log); err != nil {
			return nil, err
		}
		j.add("phase", "change-commit")
		return st, commitChange(st, spec, links, nil)
	}
	return st, addParts(ctx, st, spec, diff, links, ovsPlan, j, opt, log)
}

// rootChangeRefused checks what a change puts in the machine's own
// namespace (kind root), as up's preflight does: a node of kind root
// added needs --allow-external (an API's AllowExternal), and the new ends
// of links to one need names the machine has no device under.
func rootChangeRefused(spec *topo.Spec, diff labDiff, opt Options) error {
	for _, name := range diff.addNodes {
		if n := spec.Node(name); n != nil && n.Kind == topo.KindRoot && !opt.AllowExternal {
			return fmt.Errorf("node add %s: kind root is the machine's own network namespace: putting the lab's link ends there needs the explicit opt-in --allow-external; nothing was changed", name)
		}
	}
	for _, li := range diff.addLinks {
		for _, ep := range []topo.Endpoint{spec.Links[li].A, spec.Links[li].B} {
			n := spec.Node(ep.Node)
			if n == nil || n.Kind != topo.KindRoot {
				continue
			}
			if msg := rootNameTaken(n.Name, ep.Iface); msg != "" {
				return fmt.Errorf("link add %s %s: %s; nothing was changed", spec.Links[li].A, spec.Links[li].B, msg)
			}
		}
	}
	return nil
}

func (d labDiff) summary() []string {
	var out []string
	for _, n := range d.addNodes {
		out = append(out, "+node:"+n)
	}
	for _, n := range d.delNodes {
		out = append(out, "-node:"+n)
	}
	for _, i := range d.addLinks {
		out = append(out, fmt.Sprintf("+link:%d", i))
	}
	for _, i := range d.delLinks {
		out = append(out, fmt.Sprintf("-link:%d", i))
	}
	return out
}

// changeable refuses labs whose kinds cannot change at run time yet.
func changeable(st *State) error {
	switch {
	case isController(st) || st.Spec.Cluster != nil:
		return fmt.Errorf("lab %s runs over several machines: run-time changes are not supported there yet", st.Lab)
	}
	return nil
}

// changeLinks is the lab's shaped links after the change: kept ones as
// they are in force (link set included) under their new index, new ones
// planned as up plans them, with an engine namespace of their own.
func changeLinks(st *State, spec *topo.Spec, diff labDiff) ([]LinkState, error) {
	var out []LinkState
	used := map[string]bool{}
	for _, ls := range st.Links {
		if j, ok := diff.newIndex[ls.Index]; ok {
			ls.Index = j
			out = append(out, ls)
			if ls.Netns != "" {
				used[ls.Netns] = true
			}
		}
	}
	shaped := false
	for _, i := range diff.addLinks {
		shaped = shaped || spec.Links[i].Params != nil
	}
	if !shaped {
		return out, nil
	}
	planned, errs := planLinks(spec, labCaps(st.Lab))
	add := map[int]bool{}
	for _, i := range diff.addLinks {
		add[i] = true
	}
	var bad []string
	for _, e := range errs {
		for _, i := range diff.addLinks {
			if l := spec.Links[i]; strings.Contains(e, l.A.String()+" <-> "+l.B.String()) || l.Pos != "" && strings.HasPrefix(e, l.Pos) {
				bad = append(bad, e)
			}
		}
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("the new link cannot be built; nothing was changed:\n  %s", strings.Join(bad, "\n  "))
	}
	for _, ls := range planned {
		if !add[ls.Index] {
			continue
		}
		if ls.Backend == BackendEngine {
			ls.Netns = linkNetns(spec.Name, ls.Index)
			for k := 2; used[ls.Netns] || netnsExists(ls.Netns); k++ {
				ls.Netns = fmt.Sprintf("%s_%d", linkNetns(spec.Name, ls.Index), k)
			}
			used[ls.Netns] = true
		}
		out = append(out, ls)
	}
	slices.SortFunc(out, func(a, b LinkState) int { return a.Index - b.Index })
	return out, nil
}

// labCaps is what the kernel's tc can do, probed once per lab (a probe
// makes and removes a namespace: ~17 ms) and kept in its state dir.
func labCaps(lab string) tc.Caps {
	path := filepath.Join(stateDir(lab), "caps.json")
	var c tc.Caps
	if b, err := os.ReadFile(path); err == nil && json.Unmarshal(b, &c) == nil && c.Reasons != nil {
		return c
	}
	c = tc.Probe()
	if b, err := json.Marshal(c); err == nil {
		os.WriteFile(path, b, 0o644)
	}
	return c
}

func netnsExists(name string) bool {
	_, err := os.Lstat(filepath.Join(NetnsDir, name))
	return err == nil
}

// removeParts takes out what the change drops: links first (an engine's
// namespace, else the veth pair by one end), then nodes (their
// processes, hosts link and namespace). The state is written once the
// host objects are gone.
func removeParts(st *State, spec *topo.Spec, diff labDiff, links []LinkState, log *slog.Logger) error {
	if len(diff.delLinks) == 0 && len(diff.delNodes) == 0 {
		return nil
	}
	old := st.Spec
	gone := map[string]bool{}
	for _, n := range diff.delNodes {
		gone[n] = true
	}
	var engineNS []string
	var engineEnds []topo.Endpoint // their kept nodes' ends
	var detached []detachedEnd     // kept ends of links to removed nodes
	var errs []error
	// the kinds' lab-wide parts first (kind.go). OVS: rows, then their
	// devices, so ovs-vswitchd never holds a port whose device is gone
	// (ovs_change.go)
	for _, kp := range kindPhases() {
		if kp.remove != nil {
			if err := kp.remove(st, diff, log); err != nil {
				errs = append(errs, err)
			}
		}
	}
	for _, li := range diff.delLinks {
		l := old.Links[li]
		if ls, ok := findLinkState(st.Links, li); ok && ls.Backend == BackendEngine {
			engineNS = append(engineNS, ls.Netns)
			for _, ep := range []topo.Endpoint{l.A, l.B} {
				if !gone[ep.Node] {
					engineEnds = append(engineEnds, ep)
				}
			}
			continue
		}
		ep := l.A
		if gone[ep.Node] {
			if gone[l.B.Node] {
				continue // both ends' namespaces go
			}
			ep = l.B
		}
		if gone[l.A.Node] || gone[l.B.Node] {
			// the pair goes with the removed node's namespace; the kept
			// end only has to give its name back now (see detachEnd)
			if d, ok, err := detachEnd(st, ep); err != nil {
				errs = append(errs, err)
			} else if ok {
				d.peerNode = l.A.Node
				if !gone[l.A.Node] {
					d.peerNode = l.B.Node
				}
				detached = append(detached, d)
				log.Debug("link detached", "a", l.A.String(), "b", l.B.String(), "kept-end", d.name)
				continue
			}
		}
		if err := deleteEnd(st, ep); err != nil {
			errs = append(errs, err)
		}
		log.Debug("link removed", "a", l.A.String(), "b", l.B.String())
	}
	if len(engineNS) > 0 {
		// the supervisor lets go of the engines before their namespaces go
		keep := st.Links
		st.Links = links
		err := writeState(st)
		if err == nil {
			_, err = supervisorCall(st.Lab, ctlRequest{Op: "engines-sync"})
		}
		st.Links = keep
		if err != nil {
			errs = append(errs, fmt.Errorf("the supervisor: %w", err))
		}
		// the kept nodes' ends go now, once their engines have stopped:
		// a link namespace is freed asynchronously, and until the kernel
		// has done it the ends' names stay taken (a link added again at
		// once would find its <node>-ethN still there)
		for _, ep := range engineEnds {
			if err := deleteEnd(st, ep); err != nil {
				errs = append(errs, err)
			}
		}
		for _, ns := range engineNS {
			if err := deleteNamedNetns(ns); err != nil {
				errs = append(errs, err)
			}
		}
	}
	failed := map[string]bool{}
	for _, name := range diff.delNodes {
		if err := nodeKindOf(old.Node(name)).remove(st, old.Node(name)); err != nil { // kind.go
			errs = append(errs, err)
			failed[name] = true
		}
		log.Debug("node removed", "node", name)
	}
	for _, d := range detached {
		if failed[d.peerNode] { // its namespace stays: the pair would too
			if err := d.delete(); err != nil {
				errs = append(errs, err)
			}
		}
	}
	forgetAddrs(st, spec, freedAddrs(old, diff))
	var nsKeep []string
	for _, ns := range st.Namespaces {
		if !slices.Contains(engineNS, ns) && !slices.ContainsFunc(diff.delNodes, func(n string) bool { return topo.Namespace(st.Lab, n) == ns }) {
			nsKeep = append(nsKeep, ns)
		}
	}
	st.Namespaces = nsKeep
	for _, n := range diff.delNodes {
		delete(st.NetCfg, n)
		delete(st.NodeEnv, n)
	}
	var procs []Proc
	for _, p := range st.Procs {
		if !gone[p.Node] {
			procs = append(procs, p)
		}
	}
	st.Procs = procs
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("lab %s: removal incomplete: %w (emuctl down removes the rest)", st.Lab, err)
	}
	return nil
}

// freedAddrs are the addresses of the interfaces a change removes.
func freedAddrs(old *topo.Spec, diff labDiff) []netip.Prefix {
	var out []netip.Prefix
	for _, li := range diff.delLinks {
		l := old.Links[li]
		for _, ep := range []topo.Endpoint{l.A, l.B} {
			if ifc := findIface(old.Node(ep.Node), ep.Iface); ifc != nil {
				out = append(out, ifc.Addrs...)
			}
		}
	}
	for _, name := range diff.delNodes {
		for _, ifc := range old.Node(name).Interfaces {
			out = append(out, ifc.Addrs...)
		}
	}
	return out
}

// forgetAddrs deletes the neighbour entries other nodes hold for freed
// addresses: an address a later change gives to another interface (its
// own MAC) would otherwise be unreachable from them until the stale entry
// expires — and an ARP announcement would not replace it within the
// kernel's locktime (1 s). Best effort: a node that cannot be read keeps
// its entry, which expires as usual.
func forgetAddrs(st *State, spec *topo.Spec, freed []netip.Prefix) {
	if len(freed) == 0 {
		return
	}
	gone := map[netip.Addr]bool{}
	var fams []int // only the families freed: a neighbour dump each
	for _, p := range freed {
		gone[p.Addr()] = true
		fam := netlink.FAMILY_V4
		if p.Addr().Is6() && !p.Addr().Is4In6() {
			fam = netlink.FAMILY_V6
		}
		if !slices.Contains(fams, fam) {
			fams = append(fams, fam)
		}
	}
	var nodes []*topo.Node
	for i := range spec.Nodes {
		n := &spec.Nodes[i]
		if n.Kind == topo.KindSwitch || !spec.Here(n.Name) {
			continue
		}
		near := false
		for _, ifc := range n.Interfaces {
			for _, a := range ifc.Addrs {
				for _, f := range freed {
					near = near || a.Masked().Contains(f.Addr())
				}
			}
		}
		if near {
			nodes = append(nodes, n)
		}
	}
	parallel(context.Background(), 8, nodes, func(n *topo.Node) error {
		ns, h, err := openNamed(topo.Namespace(st.Lab, n.Name))
		if err != nil {
			return nil
		}
		defer ns.Close()
		defer h.Close()
		for _, fam := range fams {
			neighs, _ := h.NeighList(0, fam)
			for _, nb := range neighs {
				if a, ok := netip.AddrFromSlice(nb.IP); ok && gone[a.Unmap()] {
					h.NeighDel(&nb)
				}
			}
		}
		return nil
	})
}

// endLink opens the namespace of link end ep and finds its device; a nil
// device (and nothing open) when it is gone already.
func endLink(st *State, ep topo.Endpoint) (netns.NsHandle, *netlink.Handle, netlink.Link, error) {
	ns, h, name, err := openEnd(st, ep)
	if err != nil {
		return -1, nil, nil, fmt.Errorf("%s: %w", ep, err)
	}
	l, err := h.LinkByName(name)
	if err != nil {
		ns.Close()
		h.Close()
		var nf netlink.LinkNotFoundError
		if errors.As(err, &nf) {
			return -1, nil, nil, nil
		}
		return -1, nil, nil, fmt.Errorf("%s: %w", ep, err)
	}
	return ns, h, l, nil
}

// deleteEnd deletes a veth by one of its ends (the peer goes with it).
func deleteEnd(st *State, ep topo.Endpoint) error {
	ns, h, l, err := endLink(st, ep)
	if err != nil || l == nil {
		return err
	}
	defer ns.Close()
	defer h.Close()
	if n := st.Spec.Node(ep.Node); n != nil && n.Kind == topo.KindRoot && l.Attrs().Alias != Marker(st.Lab) {
		return fmt.Errorf("%s: the device %s in the machine's namespace does not carry lab %s's marker: left alone", ep, l.Attrs().Name, st.Lab)
	}
	if err := h.LinkDel(l); err != nil {
		return fmt.Errorf("%s: delete: %w", ep, err)
	}
	return nil
}

// detachedEnd is the kept end of a veth whose other end is in a node
// being removed, renamed out of the way.
type detachedEnd struct {
	nsPath, name string
	peerNode     string // the removed node
}

// detachEnd frees the name of ep, the kept end of a veth whose peer is in
// a node the change removes, instead of deleting the pair: deleting a
// device waits for an RCU grace period in the caller (rtnl's
// netdev_run_todo, ~20 ms here), while the removed node's namespace takes
// the pair with it in the kernel's own cleanup work. The end is set down
// (no traffic, no bridge forwarding into it) and renamed to a unique name
// so a link added at once can take <node>-ethN again; it keeps the lab's
// marker and lives in a lab namespace, so `down` and `clean` remove it
// should anything keep the removed namespace alive. Ends in the machine's
// own namespace (an OVS port, a root node) are not detached: ok false,
// and the caller deletes them as before.
func detachEnd(st *State, ep topo.Endpoint) (detachedEnd, bool, error) {
	path, _ := EndpointNetns(st, ep.Node, ep.Iface)
	if filepath.Dir(path) != NetnsDir {
		return detachedEnd{}, false, nil
	}
	ns, h, l, err := endLink(st, ep)
	if err != nil || l == nil { // gone: deleteEnd has nothing to do either
		return detachedEnd{}, false, err
	}
	defer ns.Close()
	defer h.Close()
	if _, ok := l.(*netlink.Veth); !ok {
		return detachedEnd{}, false, nil
	}
	tmp := fmt.Sprintf("rm%x", rand.Uint64()&(1<<52-1)) // 15 bytes at most
	if err := h.LinkSetDown(l); err != nil {
		return detachedEnd{}, false, fmt.Errorf("%s: set down: %w", ep, err)
	}
	if err := h.LinkSetName(l, tmp); err != nil {
		return detachedEnd{}, false, fmt.Errorf("%s: rename to %s: %w", ep, tmp, err)
	}
	return detachedEnd{nsPath: path, name: tmp}, true, nil
}

// delete deletes a detached end now (its peer's namespace stays).
func (d detachedEnd) delete() error {
	ns, err := netns.GetFromPath(d.nsPath)
	if err != nil {
		return nil // the namespace is gone, and the end with it
	}
	defer ns.Close()
	h, err := netlink.NewHandleAt(ns, unix.NETLINK_ROUTE)
	if err != nil {
		return err
	}
	defer h.Close()
	l, err := h.LinkByName(d.name)
	if err != nil {
		return nil
	}
	return h.LinkDel(l)
}

// removeNode stops every process in a node and removes its namespace and
// hosts link (the remove of the kinds with a namespace of their own).
func removeNode(st *State, name string) error {
	ns := topo.Namespace(st.Lab, name)
	m, err := netnsMarker(ns)
	if err != nil {
		return nil // gone already
	}
	if ml, ok := labFromMarker(m); !ok || ml != st.Lab {
		return fmt.Errorf("namespace %s does not carry lab %s's marker: left alone", ns, st.Lab)
	}
	if ino, err := nsInode(filepath.Join(NetnsDir, ns)); err == nil {
		procs := map[int]uint64{}
		for _, pids := range pidsInNetns(map[uint64]bool{ino: true}) {
			for _, pid := range pids {
				if s, err := proc.Start(pid); err == nil {
					procs[pid] = s
				}
			}
		}
		if len(procs) > 0 {
			stopPIDs(procs, 2*time.Second)
		}
	}
	removeHosts(st.Lab, ns, false)
	return deleteNamedNetns(ns)
}

// addParts builds what the change adds with a deployer scoped to it,
// then routes; on failure it removes what it made and restores the
// lab's state.
func addParts(ctx context.Context, st *State, spec *topo.Spec, diff labDiff, links []LinkState, ovsPlan *ovsChangePlan, j *journal, opt Options, log *slog.Logger) error {
	if opt.Workers <= 0 {
		opt.Workers = 4
	}
	old := *st
	oldLinks, oldNS := st.Links, append([]string(nil), st.Namespaces...)
	oldOVS, oldEnv := cloneOVS(st.OVS), maps.Clone(st.NodeEnv)
	sc := &changeScope{nodes: map[string]bool{}, links: map[int]bool{}, indexBase: 1<<24 + 4*rand.IntN(1<<20)}
	for _, n := range diff.addNodes {
		sc.nodes[n] = true
	}
	for _, i := range diff.addLinks {
		sc.links[i] = true
	}
	d := &deployer{spec: spec, opt: opt, log: log, marker: Marker(spec.Name), nodes: map[string]*node{}, linkNodes: map[int]*node{},
		pool: newHandlePool(maxOpenNodes), st: st, j: j, scope: sc, ovsChg: ovsPlan}
	st.Spec, st.Links = spec, links
	// the new Spec's JSON is encoded while the change builds (the Spec is
	// never edited in place), unless the state must name it first
	specJSON := sync.OnceValues(func() ([]byte, error) { return json.Marshal(spec) })
	var err error
	if earlyState(spec, diff) {
		// recorded before anything is built: a kill from here on leaves a
		// lab whose state names every node, and whose new namespaces carry
		// its marker
		if d.specJSON, err = specJSON(); err == nil {
			err = writeStateSpec(st, d.specJSON)
		}
	} else {
		go specJSON()
	}
	if err == nil {
		err = d.runChange(ctx, old.Spec)
	}
	d.pool.closeAll(d.allNodes())
	d.anchor.remove()
	if err == nil {
		j.add("phase", "change-commit")
		js, jerr := specJSON()
		if jerr != nil {
			return jerr
		}
		return commitChange(st, spec, st.Links, js)
	}
	log.Debug("change failed, rolling back", "err", err)
	var rerrs []error
	// the kinds' lab-wide parts (kind.go): stations off the medium
	// (wifi_change.go); OVS rows first, then devices (ovs_change.go)
	for _, kp := range kindPhases() {
		if kp.undo != nil {
			rerrs = append(rerrs, kp.undo(d, diff)...)
		}
	}
	for _, li := range diff.addLinks {
		l := spec.Links[li]
		for _, ep := range []topo.Endpoint{l.A, l.B} {
			if !sc.nodes[ep.Node] { // an existing node's new end; new nodes go whole
				if err := deleteEnd(st, ep); err != nil {
					rerrs = append(rerrs, err)
				}
				if n := spec.Node(ep.Node); n != nil && isOVS(n) {
					// an ovs port not yet moved to the root namespace
					// (kernel-shaped and engine links) is in the switch's
					if err := deleteEnd(&State{Lab: st.Lab, OVS: oldOVS}, ep); err != nil {
						rerrs = append(rerrs, err)
					}
				}
			}
		}
	}
	for _, ns := range st.Namespaces { // new nodes' and new engine links'
		if !slices.Contains(oldNS, ns) {
			removeHosts(st.Lab, ns, false)
			if err := deleteNamedNetns(ns); err != nil {
				rerrs = append(rerrs, err)
			}
		}
	}
	st.Spec, st.Links, st.Namespaces = old.Spec, oldLinks, oldNS
	st.OVS, st.NodeEnv = oldOVS, oldEnv
	for _, n := range diff.addNodes {
		delete(st.NetCfg, n)
	}
	if werr := writeState(st); werr != nil {
		rerrs = append(rerrs, werr)
	}
	if ovsPlan != nil && ovsPlan.acquired && oldOVS == nil {
		// the change picked the lab's Open vSwitch: emuctl's embedded
		// pair stops when no other lab uses it
		if _, rerr := releaseEmbeddedOVS(st.Lab); rerr != nil {
			rerrs = append(rerrs, rerr)
		}
	}
	if hasEngine(oldLinks) || hasEngine(links) {
		if _, serr := supervisorCall(st.Lab, ctlRequest{Op: "engines-sync"}); serr != nil && hasEngine(oldLinks) {
			rerrs = append(rerrs, serr)
		}
	}
	if rerr := followRoutes(ctx, spec, old.Spec, opt, log); rerr != nil {
		rerrs = append(rerrs, rerr)
	}
	if err := writeHosts(st.Spec); err != nil {
		rerrs = append(rerrs, err)
	}
	if len(rerrs) > 0 {
		return fmt.Errorf("%w (rollback also failed: %v; emuctl down removes the lab)", err, errors.Join(rerrs...))
	}
	return err
}

// earlyState says whether a change must write the lab's state naming
// what it adds before it builds anything: when a node it adds, or an end
// of a link it adds, is of a kind that records first (kind.go). A change
// that only makes namespaces (hosts, routers, Linux bridges) and veth
// links between them need not: its namespaces are made under the
// journal's anchor and carry the lab's marker, its /etc/netns entries are
// the namespaces' names, so teardown finds all of it after a kill at any
// instant (the soak's kill-change cycles), and the phases that hand state
// to another process (engine links to the supervisor) save it themselves
// first. (An OVS change records first by its kind.)
func earlyState(spec *topo.Spec, diff labDiff) bool {
	return touches(spec, diff.addNodes, diff.addLinks, func(n *topo.Node) bool { return nodeKindOf(n).recordFirst() })
}

func hasEngine(links []LinkState) bool {
	return slices.ContainsFunc(links, func(ls LinkState) bool { return ls.Backend == BackendEngine })
}

// runChange runs up's phases for the change's scope, then routes on
// every node whose routes the change altered.
func (d *deployer) runChange(ctx context.Context, old *topo.Spec) error {
	// the existing ends of new links: their nodes' handles
	for i := range d.spec.Links {
		if !d.buildsLink(i) {
			continue
		}
		for _, ep := range []topo.Endpoint{d.spec.Links[i].A, d.spec.Links[i].B} {
			if d.builds(ep.Node) || d.nodes[ep.Node] != nil {
				continue
			}
			if err := d.openExisting(ep.Node); err != nil {
				return err
			}
			// a node that had no IPv6 has it turned off; a new link
			// bringing it some turns it on, as up would have
			if sn := d.spec.Node(ep.Node); hasV6(sn) && !hasV6(old.Node(ep.Node)) {
				n := d.nodes[ep.Node]
				if err := with(func() error { return writeSysctls(n.ns, append(nodeSysctls(sn), enableV6...)) }, n); err != nil {
					return fmt.Errorf("node %s: %w", ep.Node, err)
				}
			}
		}
	}
	// the new nodes' /etc/netns links are made while their TCP profiles
	// are applied (their namespaces exist by then, so teardown finds both
	// after a kill): two independent waits on the kernel, ~0.4 ms each
	hosts := &overlapped{fn: d.hostsFiles}
	defer hosts.join()
	phases := d.withKindPhases([]phase{ // the kinds' (kind.go: "wifi", "ovs") at their place
		{"namespaces", d.namespaces},
		{"links", d.links},
		{"shaping", d.shaping},
		{"sysctls", d.sysctls},
		{"netcfg", hosts.start(d.netcfg)},
		{"hosts", hosts.wait},
		{"wait", d.waitUp},
		{"routes", func(ctx context.Context) error { return followRoutes(ctx, old, d.spec, d.opt, d.log) }},
	}, true)
	for _, p := range phases {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("interrupted before %s: %w", p.name, err)
		}
		if d.opt.FaultAt == "change-"+p.name {
			return fmt.Errorf("injected fault at phase %q", "change-"+p.name)
		}
		if err := d.j.add("phase", "change-"+p.name); err != nil {
			return err
		}
		if crashAt == "change-"+p.name {
			os.Exit(9) // tests: die like kill -9, with no rollback
		}
		t0 := time.Now()
		if err := p.fn(ctx); err != nil {
			return err
		}
		d.log.Debug("phase done", "phase", "change-"+p.name, "took", time.Since(t0))
		// the rest is recorded at the commit. The state written before the
		// build names the new nodes; their namespaces, made under the
		// journal's anchor and carrying the lab's marker, are found by
		// teardown whether or not the state lists them yet (a change that
		// died here leaves nothing `down` or `clean` misses: the soak's
		// kill-change cycles), so no state is written between phases
	}
	return nil
}

// overlapped is a phase run beside the one before it: start wraps that
// phase to start it too, wait is its own phase (its error), and join
// waits for it when a phase between failed (a rollback must not race it).
type overlapped struct {
	fn   func(context.Context) error
	done chan error
}

func (o *overlapped) start(before func(context.Context) error) func(context.Context) error {
	return func(ctx context.Context) error {
		o.done = make(chan error, 1)
		go func() { o.done <- o.fn(ctx) }()
		return before(ctx)
	}
}

func (o *overlapped) wait(context.Context) error {
	err := <-o.done
	o.done = nil
	return err
}

func (o *overlapped) join() {
	if o.done != nil {
		<-o.done
	}
}

// enableV6 turns IPv6 back on in a node that had none.
var enableV6 = []topo.KV{{Key: "net.ipv6.conf.all.disable_ipv6", Value: "0"}, {Key: "net.ipv6.conf.default.disable_ipv6", Value: "0"}}

// openExisting registers a node that exists already (the far end of a
// new link) with the deploy's handle pool.
func (d *deployer) openExisting(name string) error {
	sn := d.spec.Node(name)
	k := nodeKindOf(sn)
	nsName := k.netns(d.spec.Name, sn) // "": the machine's own (openNamed)
	ns, h, err := openNamed(nsName)
	if err != nil {
		return fmt.Errorf("node %s: %w", name, err)
	}
	n := &node{spec: sn, nsName: nsName, ns: ns, h: h, index: map[string]int{}}
	if err := k.reopen(n); err != nil { // a switch's bridge (kind.go)
		ns.Close()
		h.Close()
		return err
	}
	d.pool.register(n, ns, h)
	d.nodes[name] = n
	return nil
}

// followRoutes makes every node's routes those of spec where they differ
// from old's: routes spec no longer has are deleted, the others replaced.
func followRoutes(ctx context.Context, old, spec *topo.Spec, opt Options, log *slog.Logger) error {
	var todo []*topo.Node
	for i := range spec.Nodes {
		n := &spec.Nodes[i]
		if o := old.Node(n.Name); o != nil && n.Kind != topo.KindSwitch && !slices.Equal(o.Routes, n.Routes) {
			todo = append(todo, n)
		}
	}
	workers := max(opt.Workers, 4)
	return parallel(ctx, workers, todo, func(n *topo.Node) error {
		ns, h, err := openNamed(topo.Namespace(spec.Name, n.Name))
		if err != nil {
			return fmt.Errorf("node %s: %w", n.Name, err)
		}
		defer ns.Close()
		defer h.Close()
		for _, r := range old.Node(n.Name).Routes {
			if !slices.Contains(n.Routes, r) {
				rt := &netlink.Route{Dst: prefixToIPNet(r.Dst)}
				if err := h.RouteDel(rt); err != nil && !errors.Is(err, unix.ESRCH) {
					return fmt.Errorf("node %s: delete route %s: %w", n.Name, r.Dst, err)
				}
			}
		}
		for _, r := range n.Routes {
			if err := replaceRoute(h, n.Name, r, nil); err != nil {
				return err
			}
		}
		log.Debug("routes followed", "node", n.Name)
		return nil
	})
}

// commitChange records the lab as it stands: its Spec, links and
// document, and every node's hosts file naming the nodes it has now.
// specJSON is spec's JSON where the change encoded it already (nil: encoded here).
func commitChange(st *State, spec *topo.Spec, links []LinkState, specJSON json.RawMessage) error {
	st.Spec, st.Links = spec, links
	if err := spec.WaitDocument(); err != nil {
		return err
	}
	// the hosts file, the document and the state side by side: the state
	// names its document by checksum, so a kill between the writes leaves
	// a document that readers do not take for this state's
	st.DocSum = docSum(spec.Document)
	var hostsErr, docErr error
	var wg sync.WaitGroup
	wg.Go(func() { hostsErr = writeHosts(spec) })
	wg.Go(func() { docErr = saveDocument(spec) })
	stErr := writeStateSpec(st, specJSON)
	wg.Wait()
	return errors.Join(hostsErr, docErr, stErr)
}

// writeHosts rewrites the lab's one hosts file (every node's
// /etc/netns/<ns>/hosts points at it).
func writeHosts(spec *topo.Spec) error {
	path := filepath.Join(stateDir(spec.Name), "etc", "hosts")
	if _, err := os.Stat(filepath.Dir(path)); err != nil {
		return nil // a lab without hosts files (none yet)
	}
	data := hostsFile(spec)
	if cur, err := os.ReadFile(path); err == nil && bytes.Equal(cur, data) {
		return nil // a node without addresses, or one whose names no one sees
	}
	return writeAtomic(path, data)
}
