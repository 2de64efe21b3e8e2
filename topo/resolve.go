package topo

import (
	"fmt"
	"sort"
)

// ifRec is the resolver's view of one interface of the Spec.
type ifRec struct {
	node  int // index into Spec.Nodes
	iface int // index into that node's Interfaces
	link  int // index into Spec.Links, -1 for external interfaces
	addrs []rawAddr
	seg   int // index into resolver.segs, -1 for switch ports
	loc   loc // the endpoint (or interfaces: key) that created it
}

type resolver struct {
	d      *diag
	doc    *rawDoc
	spec   *Spec
	byName map[string]int
	ifs    []*ifRec   // every interface, in creation order
	byNode [][]*ifRec // per node, in Interfaces order
	segs   []*segment
	// per Spec link: the raw link it came from
	rawOf []*rawLink
	// wifiAP maps every wireless interface to its access point's node
	// (the AP's own and its stations'; resolve_wifi.go).
	wifiAP map[*ifRec]int
	// wifiIBSS maps the wireless interface of every ad hoc station to its
	// network (an index into Spec.WiFiAdhoc; decode_adhoc.go).
	wifiIBSS map[*ifRec]int
	// macs are the MACs the file gave interfaces (mac.go)
	macs []givenMAC
}

// resolve turns a decoded document into a Spec, or every problem found.
func resolve(d *diag, doc *rawDoc) (*Spec, error) {
	a := doc.addr
	r := &resolver{d: d, doc: doc, spec: &Spec{Source: doc.source, Routing: doc.routing,
		Addressing: &AddressPlan{Pool: a.pool, Pool6: a.pool6, Prefix: a.prefix, P2P: a.p2p, Auto: a.auto}}}
	r.spec.Name = doc.name
	if r.spec.Name == "" {
		r.spec.Name = labNameFrom(doc.source)
	}
	r.makeNodes()
	n := len(d.errs)
	r.makeLinks()
	r.checkLinkNames()
	r.makeSchedules() // resolve_schedule.go
	r.makeExternals()
	r.makeWiFi()   // resolve_wifi.go: APs' and stations' wireless interfaces
	r.resolveOVS() // decode_ovs.go: OVS settings and ports, once interfaces exist
	r.assignMACs()
	r.segments()
	r.checkESS() // resolve_wifi.go
	r.address()
	d.broken = d.broken || len(d.errs) > n
	r.checkSwitchLoops()
	r.checkMTU()
	r.resolveCluster() // resolve_cluster.go: machines, placement, tunnels
	// Routes and MPTCP endpoints are checked against the final addresses;
	// when links or addresses were dropped those are incomplete, and the
	// checks would only echo earlier errors.
	if !d.broken {
		r.routes()
		for i := range r.spec.Nodes {
			checkMPTCPEndpoints(d, &r.spec.Nodes[i], doc.nodes[i].mpEndLocs)
		}
	}
	if d.failed() {
		return nil, d.result()
	}
	return r.spec, nil
}

func (r *resolver) makeNodes() {
	r.byName = make(map[string]int, len(r.doc.nodes))
	for _, rn := range r.doc.nodes {
		n := Node{Name: rn.name, Kind: rn.kind, Sysctls: rn.sysctls, Env: rn.env, Start: rn.start}
		switch rn.kind {
		case KindSwitch:
			n.SwitchType = firstNonEmpty(rn.switchType, r.doc.defSwitch, SwitchLinuxBridge)
			n.STP = rn.stp
		case KindRoot: // the machine's: no defaults.tcp
		default:
			n.TCP = mergeTCP(r.doc.defTCP, rn.tcp)
			n.MPTCP = rn.mptcp
		}
		if _, dup := r.byName[rn.name]; dup { // YAML reports duplicate keys already
			r.d.errorf(rn.loc, "duplicate node name %q", rn.name)
		} else {
			r.byName[rn.name] = len(r.spec.Nodes)
		}
		r.spec.Nodes = append(r.spec.Nodes, n)
	}
	r.byNode = make([][]*ifRec, len(r.spec.Nodes))
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

// nodeNames lists the node names in declaration order, for messages.
func (r *resolver) nodeNames() []string {
	out := make([]string, len(r.spec.Nodes))
	for i, n := range r.spec.Nodes {
		out[i] = n.Name
	}
	return out
}

// lookup finds a node for an endpoint or ip: key, reporting unknown names.
func (r *resolver) lookup(name string, l loc) (int, bool) {
	if i, ok := r.byName[name]; ok {
		return i, true
	}
	r.d.errorf(l, "unknown node %q %s", clip(name), choicesOrNone("known", name, r.nodeNames()))
	return 0, false
}

func (r *resolver) addIface(node int, ifc Interface, l loc) *ifRec {
	n := &r.spec.Nodes[node]
	rec := &ifRec{node: node, iface: len(n.Interfaces), link: ifc.Link, seg: -1, loc: l}
	n.Interfaces = append(n.Interfaces, ifc)
	r.ifs = append(r.ifs, rec)
	r.byNode[node] = append(r.byNode[node], rec)
	return rec
}

// linkAddrs attaches a link's ip: entries to its interfaces.
func (r *resolver) linkAddrs(l *rawLink, a, b int, recs [2]*ifRec) {
	for _, ip := range l.ips {
		ni, ok := r.lookup(ip.node, ip.loc)
		if !ok {
			continue
		}
		var rec *ifRec
		switch ni {
		case a:
			rec = recs[0]
		case b:
			rec = recs[1]
		default:
			r.d.errorf(ip.loc, "%s is not an endpoint of this link (endpoints: %s, %s): ip: is keyed by the link's nodes", ip.node, l.ends[0].node, l.ends[1].node)
			continue
		}
		if r.spec.Nodes[ni].Kind == KindSwitch {
			r.d.errorf(ip.loc, "%s is a switch: switches are layer 2 and take no addresses (address the hosts or routers instead)", ip.node)
			continue
		}
		rec.addrs = append(rec.addrs, ip.addrs...)
	}
}

// makeExternals adds the interfaces: entries after the link interfaces.
func (r *resolver) makeExternals() {
	owner := map[string]loc{}
	for ni, rn := range r.doc.nodes {
		for _, ifc := range rn.ifaces {
			if prev, dup := owner[ifc.external]; dup {
				r.d.errorf(ifc.extLoc, "host interface %q is already taken at line %d: a host interface can join the lab once", ifc.external, prev.line)
				continue
			}
			owner[ifc.external] = ifc.extLoc
			rec := r.addIface(ni, Interface{Name: ifc.name, Link: -1, External: &External{HostName: ifc.external, Force: ifc.force}}, ifc.loc)
			rec.addrs = ifc.addrs
		}
	}
}

// linkParams merges defaults.link, the link's symmetric keys and its
// per-direction keys, and validates each direction.
func (r *resolver) linkParams(l *rawLink) *LinkParams {
	eff := r.doc.defLink.over(l.params)
	// a link's own backend: userspace keeps it on the link engine even
	// unshaped, to be shaped in place at run time (a kernel without
	// sch_netem cannot shape an unshaped veth later)
	engine := l.params.backend != nil && *l.params.backend == BackendUserspace
	if eff.empty() && l.dirs[0] == nil && l.dirs[1] == nil && !engine {
		return nil
	}
	p := eff.params()
	for j, dp := range l.dirs {
		if dp == nil {
			continue
		}
		d := eff.over(*dp).params()
		if j == 0 {
			p.AtoB = &d
		} else {
			p.BtoA = &d
		}
	}
	where := l.paramsLoc
	if where.line == 0 && r.doc.defLinkLoc.line > 0 {
		where = r.doc.defLinkLoc
	}
	for j := range l.dirs {
		dir := eff
		if l.dirs[j] != nil {
			dir = eff.over(*l.dirs[j])
		}
		for _, msg := range dir.check() {
			wl := where
			if l.dirLocs[j].line > 0 {
				wl = l.dirLocs[j]
			}
			r.d.errorf(wl, "%s", msg)
		}
	}
	return &p
}

// posString renders a location as "file:line:col", or for generated
// input (no position) "<generator>: <path>".
func posString(file string, l loc) string {
	if l.line == 0 {
		if l.path != "" {
			return file + ": " + l.path
		}
		return file
	}
	return fmt.Sprintf("%s:%d:%d", file, l.line, l.col)
}

// sortedNodeIfs returns recs sorted by node declaration then interface.
func sortRecs(recs []*ifRec) {
	sort.Slice(recs, func(i, j int) bool {
		if recs[i].node != recs[j].node {
			return recs[i].node < recs[j].node
		}
		return recs[i].iface < recs[j].iface
	})
}
