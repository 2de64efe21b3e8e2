package emu

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/emuctl/emuctl/ovs"
	"github.com/emuctl/emuctl/tc"
	"github.com/emuctl/emuctl/topo"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Open vSwitch switches (type: ovs) — where they live and how they are made.
//
// ovs-vswitchd's datapaths (kernel and userspace alike) attach network
// devices of its own network namespace. Every lab's OVS bridges and their
// port devices therefore live in the root namespace, whichever daemons
// serve them (a system Open vSwitch, or emuctl's embedded pair, which also
// runs in the root namespace): the switch-side end of each link is moved
// there from the switch's namespace and renamed to a short unique name
// (ovs.DeviceName: "s1-eth1.k3f9a", alias "emuctl:<lab> ovs=s1:s1-eth1"),
// or, with names: topology, keeps its interface name (ovs_names.go);
// the switch node keeps its namespace, empty but for lo, so exec and shell
// work in it. Controllers at tcp:127.0.0.1:PORT reach a controller on the
// host, as with Mininet.
//
// The ovs phase runs after link shaping: links are created and shaped as
// for any switch, then this phase moves the switch ends, re-installs the
// kernel shaping of moved ends (a namespace move drops qdiscs), creates
// all bridges, ports, QoS, queues and controllers in one OVSDB
// transaction, waits for ovs-vswitchd to attach every port, and puts
// emuctl's FIFOs under the HTB classes.

// isOVS reports whether n is an Open vSwitch switch.
func isOVS(n *topo.Node) bool { return n.Kind == topo.KindSwitch && n.SwitchType == topo.SwitchOVS }

// specHasOVS reports whether a Spec has Open vSwitch switches (on a
// worker of a lab over several machines: on its machine).
func specHasOVS(s *topo.Spec) bool {
	if s == nil {
		return false
	}
	for i := range s.Nodes {
		if isOVS(&s.Nodes[i]) && s.Here(s.Nodes[i].Name) {
			return true
		}
	}
	return false
}

// kernelDatapath reports whether the openvswitch kernel datapath can be used.
func kernelDatapath() bool { return moduleLoaded("openvswitch") || genlFamily("ovs_datapath") }

// resolveDatapath turns a switch's datapath setting into OVS's name.
func resolveDatapath(cfg *topo.OVSConfig, kernel bool) (string, error) {
	dp := ""
	if cfg != nil {
		dp = cfg.Datapath
	}
	switch dp {
	case "":
		if kernel {
			return ovs.DatapathKernel, nil
		}
		return ovs.DatapathNetdev, nil
	case "kernel":
		if !kernel {
			return "", errors.New("datapath: kernel needs the openvswitch kernel module, which this kernel has not loaded (`modprobe openvswitch` where it exists), or use datapath: netdev (the userspace datapath)")
		}
		return ovs.DatapathKernel, nil
	case "netdev":
		return ovs.DatapathNetdev, nil
	}
	return "", fmt.Errorf("unknown datapath %q", dp)
}

var ethNum = regexp.MustCompile(`-eth([0-9]+)$`)

// ovsPlanned is what ovsPlan decides: the lab's rows, its state, and the
// unique names under which port devices with a topology name are created
// ("node:iface" -> name), to be renamed once marked (ovs_names.go).
type ovsPlanned struct {
	lab     *ovs.Lab
	bridges []OVSBridgeState
	born    map[string]string
	// added are the bridges ("node") and ports ("node:iface") planned
	// anew, not kept (ovsPlanKeeping); at up, all of them.
	added map[string]bool
}

// ovsPlan decides names, OpenFlow port numbers and QoS of every ovs
// switch without changing anything. taken holds device and row names in
// use in the OVS namespace and database, with who holds them: a name a
// switch with names: topology needs that is taken fails the plan.
func (d *deployer) ovsPlan(taken nameHolders, kernel bool) (*ovsPlanned, error) {
	return d.ovsPlanKeeping(taken, kernel, nil)
}

// ovsPlanKeeping is ovsPlan for a running lab (a run-time change): the
// bridges and ports keep recorded as they are — names, OpenFlow ports,
// QoS — and only the others are planned (new marks them), their
// OpenFlow ports beside the kept ones'.
func (d *deployer) ovsPlanKeeping(taken nameHolders, kernel bool, keep []OVSBridgeState) (*ovsPlanned, error) {
	lab := &ovs.Lab{Marker: d.marker}
	var states []OVSBridgeState
	self := nameHolder{desc: "another device of this lab", lab: d.spec.Name}
	kept := map[string]*OVSBridgeState{}
	free := maps.Clone(taken) // what a kept object holds is not a conflict
	for i := range keep {
		kept[keep[i].Node] = &keep[i]
		delete(free, keep[i].Name)
		for _, p := range keep[i].Ports {
			delete(free, p.Name)
		}
	}
	if errs := topologyNameConflicts(d.spec, free); len(errs) > 0 {
		return nil, fmt.Errorf("%s", strings.Join(errs, "\n  "))
	}
	// Topology names first, so no unique name picked below takes one.
	for _, sn := range topologyNamed(d.spec) {
		for _, n := range topologyDeviceNames(sn) {
			taken[n] = self
		}
	}
	pick := func(node, iface string) string {
		for salt := 0; ; salt++ {
			n := ovs.DeviceName(d.spec.Name, node, iface, salt)
			if _, ok := taken[n]; !ok {
				taken[n] = self
				return n
			}
		}
	}
	born := map[string]string{}
	added := map[string]bool{}
	dpids := map[string]bool{}
	for i := range d.spec.Nodes {
		sn := &d.spec.Nodes[i]
		if !isOVS(sn) || !d.spec.Here(sn.Name) { // another machine's switch
			continue
		}
		cfg := sn.OVS
		if cfg == nil {
			cfg = &topo.OVSConfig{FailMode: "standalone"}
		}
		dp, err := resolveDatapath(cfg, kernel)
		if err != nil {
			return nil, fmt.Errorf("switch %s: %w", sn.Name, err)
		}
		dpid := ovs.DatapathID(sn.Name, d.spec.Name, 0)
		for salt := 1; dpids[dpid]; salt++ {
			dpid = ovs.DatapathID(sn.Name, d.spec.Name, salt)
		}
		dpids[dpid] = true
		topoNames := cfg.TopologyNames()
		kb := kept[sn.Name]
		b := ovs.Bridge{Name: sn.Name, Node: sn.Name, Datapath: dp, FailMode: cfg.FailMode, Protocols: cfg.Protocols,
			Controllers: cfg.Controllers, STP: sn.STP, RSTP: cfg.RSTP, DatapathID: dpid}
		switch {
		case kb != nil:
			b.Name, b.Datapath, dp = kb.Name, kb.Datapath, kb.Datapath
		case !topoNames:
			b.Name = pick(sn.Name, "")
		}
		if kb == nil {
			added[sn.Name] = true
		}
		bs := OVSBridgeState{Node: sn.Name, Name: b.Name, Datapath: dp, Names: cfg.Names}
		if kb != nil {
			bs.Names = kb.Names
		}
		keptPort := map[string]*OVSPortState{}
		used := map[int]bool{}
		if kb != nil {
			for pi := range kb.Ports {
				keptPort[kb.Ports[pi].Iface] = &kb.Ports[pi]
				used[kb.Ports[pi].OFPort] = true
			}
		}
		want := make([]int, len(sn.Interfaces))
		for k, ifc := range sn.Interfaces {
			if kp := keptPort[ifc.Name]; kp != nil {
				want[k] = kp.OFPort
				continue
			}
			if m := ethNum.FindStringSubmatch(ifc.Name); m != nil {
				if n, err := strconv.Atoi(m[1]); err == nil && n >= 1 && n <= 65279 && !used[n] {
					want[k], used[n] = n, true
				}
			}
		}
		next := 1
		for k, ifc := range sn.Interfaces {
			if want[k] == 0 {
				for used[next] {
					next++
				}
				want[k], used[next] = next, true
			}
			p := ovs.Port{Iface: ifc.Name, OFPort: want[k], Edge: !d.peerIsSwitch(ifc.Peer)}
			if kp := keptPort[ifc.Name]; kp != nil {
				p.Name = kp.Name
				b.Ports = append(b.Ports, p)
				bs.Ports = append(bs.Ports, *kp)
				continue
			}
			added[sn.Name+":"+ifc.Name] = true
			ps := OVSPortState{Iface: ifc.Name, OFPort: want[k], Peer: ifc.Peer}
			switch {
			case ifc.External != nil:
				p.Name, ps.External = ifc.External.HostName, true
			case topoNames:
				p.Name, born[sn.Name+":"+ifc.Name] = ifc.Name, pick(sn.Name, ifc.Name)
			default:
				p.Name = pick(sn.Name, ifc.Name)
			}
			ps.Name = p.Name
			if ls, ok := d.linkStateFor(ifc.Link); ok && ifc.Link >= 0 && (ls.Backend == BackendNetem || ls.Backend == BackendShaper) {
				p.Noop, ps.QoS = true, ovs.QoSNoop
			}
			if pc := cfg.Port(ifc.Name); pc != nil {
				if pc.QoS != nil {
					if p.Noop {
						return nil, fmt.Errorf("%s: %s:%s has a qos: and its link's %s shaping also owns the port's qdiscs: use backend: userspace on that link (it shapes in the link's own namespace) or move the qos to another port", pc.Pos, sn.Name, ifc.Name, d.backendOf(ifc.Link))
					}
					q := &ovs.QoS{MaxRate: pc.QoS.MaxRate}
					for _, tq := range pc.QoS.Queues {
						q.Queues = append(q.Queues, ovs.Queue{MinRate: tq.MinRate, MaxRate: tq.MaxRate, Priority: tq.Priority, Burst: uint64(tq.Burst) * 8})
					}
					p.QoS, ps.QoS = q, ovs.QoSHTB
					n := max(1, len(pc.QoS.Queues))
					ps.QueueLimits = make([]int, n)
					for k := range n {
						ps.QueueLimits[k] = pc.QoS.Limit(k)
						if leaf := ovsLeafDir(pc.QoS, k); leaf != nil {
							ps.QueueLeaves = append(ps.QueueLeaves, make([]*tc.Dir, k+1-len(ps.QueueLeaves))...)
							ps.QueueLeaves[k] = leaf
						}
					}
				}
				if pc.IngressPolicingRate > 0 {
					p.IngressPolicingRate = int(max(1, (pc.IngressPolicingRate+500)/1000))
					p.IngressPolicingBurst = int((pc.IngressPolicingBurst*8 + 999) / 1000)
				}
			}
			b.Ports = append(b.Ports, p)
			bs.Ports = append(bs.Ports, ps)
		}
		lab.Bridges = append(lab.Bridges, b)
		states = append(states, bs)
	}
	if err := lab.Check(); err != nil {
		return nil, err
	}
	return &ovsPlanned{lab: lab, bridges: states, born: born, added: added}, nil
}

// peerIsSwitch reports whether "node:iface" is on a switch.
func (d *deployer) peerIsSwitch(peer string) bool {
	node, _, _ := strings.Cut(peer, ":")
	n := d.spec.Node(node)
	return n == nil || n.Kind == topo.KindSwitch
}

func (d *deployer) backendOf(li int) string {
	if ls, ok := d.linkStateFor(li); ok {
		return ls.Backend
	}
	return "no"
}

// ovsDeploy is what a deploy knows about its OVS part between the links
// phase (which creates switch-side ends directly in the root namespace
// under their OVS names) and the ovs phase.
type ovsDeploy struct {
	lab    *ovs.Lab
	born   map[string]string // "node:iface" -> name a port device is created under (ovsPlanned)
	group  uint32            // device group of the lab's root-namespace devices
	gso    bool              // some port has a QoS: senders into OVS make frames
	netdev map[string]bool
	ports  map[string]*OVSPortState // "node:iface"
	mu     sync.Mutex
	inRoot map[string]bool // ports already in the root namespace
}

// ovsGroup is the device group (IFLA_GROUP) of a lab's devices in the
// root namespace: teardown deletes them in one request (one RCU grace
// period instead of one per device), after checking that every device of
// the group carries the lab's marker.
func ovsGroup(lab string) uint32 {
	h := fnv.New32a()
	h.Write([]byte(lab))
	return 0x80000000 | h.Sum32()&0x7fffffff
}

// bridgeGroup is the device group of a lab's bridge devices.
func bridgeGroup(portGroup uint32) uint32 { return portGroup ^ 1 }

// ovsPrepare picks the Open vSwitch that serves the lab and decides every
// bridge's and port's name, before links are created. The links phase
// calls it first (ovs switches only). A run-time change (d.scope) keeps
// the lab's recorded bridges and ports as they are and names only the
// new ones, as planned before the change began (ovs_change.go): planning
// them all again would rename them in the state (unique names: the ones
// in use are taken) or find the lab's own topology names taken.
func (d *deployer) ovsPrepare(ctx context.Context) error {
	if d.scope != nil {
		return d.ovsPrepareChange(ctx)
	}
	if d.ovs != nil || !specHasOVS(d.spec) {
		return nil
	}
	o, err := acquireOVS(ctx, ownOVS(d.spec), func(o *OVSState) error {
		d.stMu.Lock()
		d.st.OVS = o
		d.stMu.Unlock()
		return d.save()
	})
	if err != nil {
		return err
	}
	d.log.Debug("open vswitch", "db", o.DB, "embedded", o.Embedded)
	taken := rootHolders()
	if err := taken.addDBAt(ctx, o.DB); err != nil {
		return err
	}
	plan, err := d.ovsPlan(taken, kernelDatapath())
	if err != nil {
		return err
	}
	od := &ovsDeploy{lab: plan.lab, born: plan.born, group: ovsGroup(d.spec.Name), netdev: map[string]bool{}, ports: map[string]*OVSPortState{}, inRoot: map[string]bool{}}
	d.stMu.Lock()
	d.st.OVS.Bridges = plan.bridges
	d.st.OVS.Group = od.group
	for bi := range d.st.OVS.Bridges {
		b := &d.st.OVS.Bridges[bi]
		od.netdev[b.Node] = b.Datapath == ovs.DatapathNetdev
		for pi := range b.Ports {
			p := &b.Ports[pi]
			od.ports[b.Node+":"+p.Iface] = p
			od.gso = od.gso || p.QoS == ovs.QoSHTB
		}
	}
	d.stMu.Unlock()
	d.ovs = od
	return d.save()
}

// createOVSLink makes the veth of a link with an ovs switch at one or both
// ends, each ovs end directly in the root namespace under its OVS name
// (moving a device between namespaces costs an RCU grace period under the
// RTNL lock: ~20 ms, serialised).
func (d *deployer) createOVSLink(l topo.Link, li int) error {
	root, err := netlink.NewHandleAt(hostNetns, unix.NETLINK_ROUTE)
	if err != nil {
		return err
	}
	defer root.Close()
	type end struct {
		n    *node
		ifc  *topo.Interface
		ps   *OVSPortState // nil: not an ovs port
		h    *netlink.Handle
		ns   netns.NsHandle
		name string
	}
	mk := func(ep topo.Endpoint) (end, error) {
		n := d.nodes[ep.Node]
		if n == nil {
			return end{}, errors.New("spec inconsistency: endpoint not found")
		}
		e := end{n: n, ifc: findIface(n.spec, ep.Iface), h: n.h, ns: n.ns, name: ep.Iface}
		if e.ifc == nil {
			return end{}, errors.New("spec inconsistency: endpoint not found")
		}
		if isOVS(n.spec) {
			e.ps = d.ovs.ports[ep.Node+":"+ep.Iface]
			if e.ps == nil {
				return end{}, fmt.Errorf("%s: no OVS port planned", ep)
			}
			e.h, e.ns, e.name = root, hostNetns, e.ps.Name
			if b := d.ovs.born[ep.String()]; b != "" {
				e.name = b // renamed to its topology name once marked (prepareOVSPort)
			}
		}
		return e, nil
	}
	a, err := mk(l.A)
	if err != nil {
		return err
	}
	b, err := mk(l.B)
	if err != nil {
		return err
	}
	la := netlink.NewLinkAttrs()
	la.Name = a.name
	la.HardwareAddr = parseMAC(a.ifc.MAC)
	if a.ifc.MTU > 0 {
		la.MTU = a.ifc.MTU
	}
	if a.ps != nil {
		la.Alias, la.Group = d.ovsAlias(l.A), d.ovs.group
	} else {
		la.Alias = d.marker
		if !a.n.root() {
			la.Index = d.ifindex(li, 0) // see createLink
		}
	}
	v := netlink.NewVeth(la)
	v.PeerName = b.name
	v.PeerNamespace = netlink.NsFd(int(b.ns))
	v.PeerHardwareAddr = parseMAC(b.ifc.MAC)
	if b.ifc.MTU > 0 {
		v.PeerMTU = uint32(b.ifc.MTU)
	}
	// An end in the root namespace exists unmarked until prepareOVSPort
	// (the kernel takes no alias at creation): its name goes in the
	// journal first (journal.go, rootLinkRemains).
	for _, e := range []end{a, b} {
		if e.ps != nil {
			if err := d.j.add("rootlink", e.name); err != nil {
				return err
			}
		}
	}
	if err := a.h.LinkAdd(v); err != nil {
		return fmt.Errorf("create veth: %w", err)
	}
	crashPoint("ovs-rootlink")
	d.log.Debug("veth created", "a", l.A.String(), "b", l.B.String(), "ovs_a", a.ps != nil, "ovs_b", b.ps != nil)
	for k, e := range []end{a, b} {
		ep := []topo.Endpoint{l.A, l.B}[k]
		if e.ps == nil {
			if err := d.finishEnd(e.n, e.ifc, k == 0); err != nil {
				return err
			}
			continue
		}
		d.ovs.mu.Lock()
		d.ovs.inRoot[ep.String()] = true
		d.ovs.mu.Unlock()
		if err := d.prepareOVSPort(root, ep, e.ifc, e.ps, e.name); err != nil {
			return err
		}
	}
	return nil
}

func (d *deployer) ovsAlias(ep topo.Endpoint) string {
	return fmt.Sprintf("%s ovs=%s", d.marker, ep)
}

// prepareOVSPort readies a port device that is in the root namespace
// under the name cur: marker, device group, its port name (a device
// created under a unique name gets its topology name only once marked),
// up, and what the datapath needs of it and of the device that sends
// into it (the link's far end).
func (d *deployer) prepareOVSPort(root *netlink.Handle, ep topo.Endpoint, ifc *topo.Interface, ps *OVSPortState, cur string) error {
	rl, err := root.LinkByName(cur)
	if err != nil {
		return fmt.Errorf("%s in the root namespace: %w", cur, err)
	}
	if !ps.External { // a real adapter keeps its ext= marker for restoring it
		if rl.Attrs().Alias != d.ovsAlias(ep) {
			if err := root.LinkSetAlias(rl, d.ovsAlias(ep)); err != nil {
				return fmt.Errorf("%s: set marker: %w", ps.Name, err)
			}
		}
		if rl.Attrs().Group != d.ovs.group {
			if err := root.LinkSetGroup(rl, int(d.ovs.group)); err != nil {
				return fmt.Errorf("%s: set group: %w", ps.Name, err)
			}
		}
		if cur != ps.Name {
			if err := root.LinkSetName(rl, ps.Name); err != nil {
				return d.takenErr(ep.Node, ps.Name, fmt.Errorf("%s: rename to %s: %w", cur, ps.Name, err))
			}
			d.log.Debug("switch port renamed to its topology name", "from", cur, "to", ps.Name)
		}
	}
	if err := root.LinkSetUp(rl); err != nil {
		return fmt.Errorf("%s: set up: %w", ps.Name, err)
	}
	if ps.External {
		return d.reshapeMoved(ifc, rl, ep.Node)
	}
	netdev := d.ovs.netdev[ep.Node]
	if netdev {
		if err := setTxChecksum(hostNetns, ps.Name, false); err != nil {
			return err
		}
	}
	if d.ovs.gso {
		if err := tc.SetGSOLimits(root, rl); err != nil {
			return fmt.Errorf("%s: %w", ps.Name, err)
		}
	}
	// The far end sends into this port: on the netdev datapath it must
	// finish checksums and segment itself (see setTxChecksum); under a
	// queue it must send frames, not GSO super-packets (the kernel
	// datapath forwards them as they are). Ends on other ovs switches are
	// sent by the datapath itself.
	if node, iface, ok := strings.Cut(ifc.Peer, ":"); ok {
		if far := d.nodes[node]; far != nil && !isOVS(far.spec) {
			err := with(func() error {
				if netdev {
					if err := setTxChecksum(far.ns, iface, false); err != nil {
						return err
					}
				}
				if d.ovs.gso {
					fl, err := far.h.LinkByName(iface)
					if err == nil {
						err = tc.SetGSOLimits(far.h, fl)
					}
					if err != nil {
						return fmt.Errorf("%s: %w", ifc.Peer, err)
					}
				}
				return nil
			}, far)
			if err != nil {
				return err
			}
		}
	}
	return d.reshapeMoved(ifc, rl, ep.Node)
}

// ovsSwitches is the deploy phase that builds every ovs switch: it moves
// the switch-side ends the links phase could not create in the root
// namespace (links of the userspace engine, real adapters), creates the
// lab's rows in one transaction and waits for ovs-vswitchd.
func (d *deployer) ovsSwitches(ctx context.Context) error {
	if !specHasOVS(d.spec) {
		return nil
	}
	if err := d.ovsPrepare(ctx); err != nil {
		return err
	}
	o := d.st.OVS
	c, err := ovs.Dial(ctx, o.DB)
	if err != nil {
		return err
	}
	defer c.Close()
	root, err := netlink.NewHandleAt(hostNetns, unix.NETLINK_ROUTE)
	if err != nil {
		return err
	}
	defer root.Close()
	bridges := o.Bridges
	moved, err := d.ovsMovePorts(ctx, root)
	if err != nil {
		return err
	}

	if err := d.topologyNamesFree(ctx, c, o.DB); err != nil {
		return err
	}
	// One transaction for the whole lab, then wait for ovs-vswitchd.
	t0 := time.Now()
	cfg, err := c.Create(ctx, d.ovs.lab)
	if err != nil {
		return fmt.Errorf("open vswitch (%s): %w", o.DB, err)
	}
	var all []string
	for _, b := range bridges {
		all = append(all, b.Name)
		for _, p := range b.Ports {
			all = append(all, p.Name)
		}
	}
	if err := d.ovsApplied(ctx, c, root, o, cfg, bridges, all); err != nil {
		return err
	}
	d.log.Debug("ovs transaction applied", "bridges", len(bridges), "ports", len(d.ovs.ports), "moved", moved, "took", time.Since(t0))
	return d.ovsWaitSpanningTree(ctx, c)
}

// ovsMovePorts moves into the root namespace, in parallel, every port of
// d.ovs.ports (up: all, a change: its new ones) whose device the links
// phase made in its switch's namespace, and returns how many it moved.
func (d *deployer) ovsMovePorts(ctx context.Context, root *netlink.Handle) (int, error) {
	type job struct {
		n   *node
		ifc *topo.Interface
		ps  *OVSPortState
	}
	var jobs []job
	for key, ps := range d.ovs.ports {
		if d.ovs.inRoot[key] {
			continue
		}
		name, _, _ := strings.Cut(key, ":")
		n := d.nodes[name]
		if n == nil {
			return 0, fmt.Errorf("switch %s: not open", name)
		}
		jobs = append(jobs, job{n, findIface(n.spec, ps.Iface), ps})
	}
	return len(jobs), parallel(ctx, d.opt.Workers, jobs, func(j job) error {
		if err := with(func() error { return d.moveToOVS(root, j.n, j.ifc, j.ps) }, j.n); err != nil {
			return fmt.Errorf("switch %s: %w", j.n.spec.Name, err)
		}
		return nil
	})
}

// ovsApplied finishes a transaction of up or of a run-time change: it
// waits for ovs-vswitchd to apply cfg and attach the interfaces named
// (bridges' and ports'), marks and groups the devices of the bridges it
// made, installs the HTB leaves and checks the ingress policing of the
// ports d.ovs.ports holds (up: all, a change: its new ones), and gives the
// nodes of new bridges their OVS environment.
func (d *deployer) ovsApplied(ctx context.Context, c *ovs.Client, root *netlink.Handle, o *OVSState, cfg int, made []OVSBridgeState, names []string) error {
	wctx, cancel := context.WithTimeout(ctx, 30*time.Second+time.Duration(len(names))*50*time.Millisecond)
	defer cancel()
	if err := c.WaitApplied(wctx, cfg); err != nil {
		return err
	}
	bad, err := c.WaitInterfaces(wctx, names)
	if err != nil {
		return err
	}
	if len(bad) > 0 {
		if len(bad) > 5 {
			bad = append(bad[:5], fmt.Sprintf("... and %d more", len(bad)-5))
		}
		return fmt.Errorf("ovs-vswitchd could not attach ports: %s", strings.Join(bad, "; "))
	}
	// The bridges' own devices are ovs-vswitchd's (a persistent tap on the
	// netdev datapath); marked and grouped, they can be removed in one
	// request when the embedded daemons stop without tearing each bridge
	// down (see ovsTeardown).
	crashPoint("ovs-bridges-unmarked")
	for _, b := range made {
		bl, err := root.LinkByName(b.Name)
		if err != nil {
			return fmt.Errorf("switch %s: bridge device %s: %w", b.Node, b.Name, err)
		}
		if err := root.LinkSetAlias(bl, fmt.Sprintf("%s ovs-bridge=%s", d.marker, b.Node)); err != nil {
			return fmt.Errorf("switch %s: mark bridge device: %w", b.Node, err)
		}
		if err := root.LinkSetGroup(bl, int(bridgeGroup(d.ovs.group))); err != nil {
			return fmt.Errorf("switch %s: group bridge device: %w", b.Node, err)
		}
	}
	for _, b := range d.ovs.lab.Bridges {
		for _, p := range b.Ports {
			ps := d.ovs.ports[b.Node+":"+p.Iface]
			if ps == nil {
				continue
			}
			if ps.QoS == ovs.QoSHTB {
				if err := installLeaves(root, ps.Name, ps.QueueLimits, ps.QueueLeaves); err != nil {
					return fmt.Errorf("switch %s: %s: %w", b.Node, p.Iface, err)
				}
			}
			if p.IngressPolicingRate > 0 {
				if err := checkPolicing(root, ps.Name); err != nil {
					return fmt.Errorf("switch %s: %s: ingress_policing_rate: %w", b.Node, p.Iface, err)
				}
			}
		}
	}
	if len(made) > 0 {
		return d.ovsExecEnv(o)
	}
	return nil
}

// topologyNamesFree checks, just before the transaction (of up or of a
// run-time change), that the names of the lab's switches with names:
// topology are still free: another lab
// coming up at the same moment, or a user, may have taken one since the
// plan. Then up says who, instead of failing in the transaction (a name
// taken in the database) or on a device ovs-vswitchd cannot make.
func (d *deployer) topologyNamesFree(ctx context.Context, c *ovs.Client, db string) error {
	if len(topologyNamed(d.spec)) == 0 {
		return nil
	}
	taken := nameHolders{}
	for _, l := range rootLinks() {
		if lab, ok := labFromMarker(l.Attrs().Alias); !ok || lab != d.spec.Name { // the lab's own ports have their names by now
			taken[l.Attrs().Name] = deviceHolder(l)
		}
	}
	names, err := c.Names(ctx)
	if err != nil {
		return err
	}
	for n, u := range names {
		if u.Marker == d.marker {
			delete(names, n) // the lab's own rows (a run-time change keeps them)
		}
	}
	taken.addDB(db, names)
	if errs := topologyNameConflicts(d.spec, taken); len(errs) > 0 {
		return errors.New(strings.Join(errs, "\n  "))
	}
	return nil
}

// moveToOVS moves one switch-side interface from the switch's namespace
// into the root namespace under its OVS name (links of the userspace
// engine, whose switch end shaping.go creates in the switch's namespace,
// and real adapters, which the externals phase moved there).
func (d *deployer) moveToOVS(root *netlink.Handle, n *node, ifc *topo.Interface, ps *OVSPortState) error {
	if ifc == nil {
		return errors.New("spec inconsistency: port without interface")
	}
	l, err := n.h.LinkByName(ifc.Name)
	if err != nil {
		return fmt.Errorf("%s: %w", ifc.Name, err)
	}
	if err := n.h.LinkSetDown(l); err != nil {
		return fmt.Errorf("%s: %w", ifc.Name, err)
	}
	if l.Attrs().Name != ps.Name {
		if err := n.h.LinkSetName(l, ps.Name); err != nil {
			return fmt.Errorf("%s: rename to %s: %w", ifc.Name, ps.Name, err)
		}
	}
	if err := n.h.LinkSetNsFd(l, int(hostNetns)); err != nil {
		return d.takenErr(n.spec.Name, ps.Name, fmt.Errorf("%s: move to the root namespace as %s: %w", ifc.Name, ps.Name, err))
	}
	d.log.Debug("switch port moved to the root namespace", "node", n.spec.Name, "iface", ifc.Name, "as", ps.Name)
	return d.prepareOVSPort(root, topo.Endpoint{Node: n.spec.Name, Iface: ifc.Name}, ifc, ps, ps.Name)
}

// takenErr turns a failure to give a device its topology name into the
// refusal that says who took the name meanwhile (another lab coming up
// at the same moment, a user); other errors pass unchanged.
func (d *deployer) takenErr(node, name string, err error) error {
	sn := d.spec.Node(node)
	if !errors.Is(err, unix.EEXIST) || sn == nil || !sn.OVS.TopologyNames() {
		return err
	}
	if h, ok := rootHolders()[name]; ok {
		return errors.New(nameConflict(d.spec.Name, sn, []string{name}, []nameHolder{h}))
	}
	return err
}

// reshapeMoved re-installs the kernel shaping of a moved link end: a
// namespace move drops a device's qdiscs (its GSO limits stay).
func (d *deployer) reshapeMoved(ifc *topo.Interface, link netlink.Link, node string) error {
	ls, ok := d.linkStateFor(ifc.Link)
	if !ok || ifc.Link < 0 || (ls.Backend != BackendNetem && ls.Backend != BackendShaper) {
		return nil
	}
	l := d.spec.Links[ifc.Link]
	dir := ls.BtoA
	if l.A.Node == node && l.A.Iface == ifc.Name {
		dir = ls.AtoB
	}
	if dir.IsZero() && dir.QueuePackets == 0 && dir.QueueBytes == 0 {
		return nil
	}
	var plan *tc.KernelPlan
	var err error
	if ls.Backend == BackendShaper {
		plan, err = tc.PlanShaper(dir, link.Attrs().MTU)
	} else {
		plan, err = tc.PlanKernel(dir, link.Attrs().MTU)
	}
	if err != nil {
		return fmt.Errorf("%s:%s: %w", node, ifc.Name, err)
	}
	if err := tc.ApplyKernel(hostNetns, link, plan); err != nil {
		return fmt.Errorf("%s:%s: %w", node, ifc.Name, err)
	}
	return nil
}

// ovsExecEnv makes OVS's own tools work inside the lab's ovs switches:
// OVS_RUNDIR points at a directory of links named after the switches
// (s1.mgmt -> <rundir>/<bridge>.mgmt, db.sock, the daemons' pid files and
// control sockets), so `emuctl exec s1 -- ovs-ofctl dump-flows s1`,
// `ovs-vsctl show` and `ovs-appctl` reach the daemons serving the lab.
func (d *deployer) ovsExecEnv(o *OVSState) error {
	dir := filepath.Join(stateDir(d.spec.Name), "ovs")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	link := func(name, target string) error {
		p := filepath.Join(dir, name)
		os.Remove(p)
		return os.Symlink(target, p)
	}
	if err := link("db.sock", socketPath(o.DB)); err != nil {
		return err
	}
	for _, daemon := range []string{"ovs-vswitchd", "ovsdb-server"} {
		pf := filepath.Join(o.RunDir, daemon+".pid")
		b, err := os.ReadFile(pf)
		if err != nil {
			continue
		}
		pid := strings.TrimSpace(string(b))
		if err := link(daemon+".pid", pf); err != nil {
			return err
		}
		ctl := daemon + "." + pid + ".ctl"
		if err := link(ctl, filepath.Join(o.RunDir, ctl)); err != nil {
			return err
		}
	}
	env := map[string][]topo.KV{}
	for _, b := range o.Bridges {
		for _, suf := range []string{".mgmt", ".snoop"} {
			if err := link(b.Node+suf, filepath.Join(o.RunDir, b.Name+suf)); err != nil {
				return err
			}
		}
		env[b.Node] = []topo.KV{{Key: "OVS_RUNDIR", Value: dir}, {Key: "EMUCTL_OVS_BRIDGE", Value: b.Name}}
	}
	d.stMu.Lock()
	d.st.OVS.ExecRunDir = dir
	d.st.NodeEnv = env
	d.stMu.Unlock()
	return nil
}

// ovsWaitSpanningTree returns once no port of an STP or RSTP bridge is
// still on its way to forwarding, so `up` returns a lab whose loops are
// resolved (as for Linux bridges).
func (d *deployer) ovsWaitSpanningTree(ctx context.Context, c *ovs.Client) error {
	stp := false
	for i := range d.spec.Nodes {
		sn := &d.spec.Nodes[i]
		if isOVS(sn) && (sn.STP || sn.OVS != nil && sn.OVS.RSTP) {
			stp = true
		}
	}
	if !stp {
		return nil
	}
	deadline := time.Now().Add(60 * time.Second)
	for {
		pending, err := c.SpanningTreePending(ctx, d.marker)
		if err != nil {
			return err
		}
		if len(pending) == 0 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("spanning tree did not converge in 60s: %s", strings.Join(pending, ", "))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}
