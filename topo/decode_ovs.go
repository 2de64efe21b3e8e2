package topo

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"

	"github.com/emuctl/emuctl/units"
	"go.yaml.in/yaml/v3"
)

// Open vSwitch keys of a switch node (type: ovs) and of its ports.
var (
	ovsPortKeys  = []string{"qos", "ingress_policing_rate", "ingress_policing_burst"}
	ovsQoSKeys   = []string{"max_rate", "queue_limit", "queue", "queues"}
	ovsQueueKeys = []string{"min_rate", "max_rate", "priority", "burst", "queue_limit", "queue"}
	ovsDatapaths = []string{"kernel", "netdev"}
	ovsFailModes = []string{"standalone", "secure"}
	ovsNameModes = []string{OVSNamesUnique, OVSNamesTopology}
	ofProtocols  = []string{"OpenFlow10", "OpenFlow11", "OpenFlow12", "OpenFlow13", "OpenFlow14", "OpenFlow15"}
)

// DefaultControllerPort is the IANA OpenFlow port, filled into "tcp:IP".
const DefaultControllerPort = 6653

// MaxOVSQueues bounds the queues of one port's QoS.
const MaxOVSQueues = 1024

// rawOVS is what a switch node says about Open vSwitch, before the switch
// type is known (defaults.switch may come later in the file).
type rawOVS struct {
	keys  []loc // every OVS key given, for "needs type: ovs"
	cfg   OVSConfig
	rstp  loc
	names loc // the names key
	ports []rawOVSPort
}

type rawOVSPort struct {
	loc  loc
	port OVSPort
}

// ovsKey decodes one Open vSwitch key of a switch node.
func (d *dec) ovsKey(nd *rawNode, e entry, path string) {
	if nd.ovs == nil {
		nd.ovs = &rawOVS{}
	}
	o := nd.ovs
	o.keys = append(o.keys, at(e.K, path))
	switch e.Key {
	case "datapath":
		o.cfg.Datapath, _ = d.oneOf(e.V, path, "datapath", ovsDatapaths)
	case "fail_mode":
		o.cfg.FailMode, _ = d.oneOf(e.V, path, "fail mode", ovsFailModes)
	case "controller":
		seen := map[string]bool{}
		for i, item := range d.list(e.V, path, true) {
			p := path
			if deref(e.V).Kind == yaml.SequenceNode {
				p = idx(path, i)
			}
			s, ok := d.str(item, p, "a controller target such as tcp:127.0.0.1:6653")
			if !ok {
				continue
			}
			t, msg := parseController(s)
			switch {
			case msg != "":
				d.errorf(at(item, p), "%s", msg)
			case seen[t]:
				d.errorf(at(item, p), "controller %s is listed twice", t)
			default:
				seen[t] = true
				o.cfg.Controllers = append(o.cfg.Controllers, t)
			}
		}
	case "protocols":
		seen := map[string]bool{}
		for i, item := range d.list(e.V, path, true) {
			p := path
			if deref(e.V).Kind == yaml.SequenceNode {
				p = idx(path, i)
			}
			if s, ok := d.oneOf(item, p, "OpenFlow version", ofProtocols); ok {
				if seen[s] {
					d.errorf(at(item, p), "%s is listed twice", s)
					continue
				}
				seen[s] = true
				o.cfg.Protocols = append(o.cfg.Protocols, s)
			}
		}
	case "rstp":
		o.cfg.RSTP, _ = d.boolean(e.V, path)
		o.rstp = at(e.K, path)
	case "names":
		o.cfg.Names, _ = d.oneOf(e.V, path, "naming", ovsNameModes)
		o.names = at(e.K, path)
	case "ports":
		for _, pe := range d.entries(e.V, path) {
			p := joinPath(path, keyPath(pe.Key))
			o.ports = append(o.ports, rawOVSPort{loc: at(pe.K, p), port: d.ovsPort(pe.Key, pe.V, p)})
		}
	}
}

// ovsPort decodes the settings of one port.
func (d *dec) ovsPort(iface string, n *yaml.Node, path string) OVSPort {
	pt := OVSPort{Iface: iface}
	var burstLoc loc
	for _, e := range d.fields(n, path, ovsPortKeys) {
		p := joinPath(path, e.Key)
		switch e.Key {
		case "qos":
			pt.QoS = d.ovsQoS(e.K, e.V, p)
		case "ingress_policing_rate":
			pt.IngressPolicingRate, _ = d.rate(e.V, p)
		case "ingress_policing_burst":
			pt.IngressPolicingBurst, _ = d.size(e.V, p)
			burstLoc = at(e.K, p)
		}
	}
	if pt.IngressPolicingBurst > 0 && pt.IngressPolicingRate == 0 && burstLoc.line > 0 {
		d.errorf(burstLoc, "ingress_policing_burst needs ingress_policing_rate")
	}
	return pt
}

// ovsQoS decodes qos: {max_rate, queue_limit, queues: [...]}.
func (d *dec) ovsQoS(k, n *yaml.Node, path string) *OVSQoS {
	q := &OVSQoS{}
	var queuesLoc, leafLoc loc
	hasMax := false
	for _, e := range d.fields(n, path, ovsQoSKeys) {
		p := joinPath(path, e.Key)
		switch e.Key {
		case "max_rate":
			q.MaxRate, hasMax = d.rate(e.V, p)
		case "queue_limit":
			if v, ok := d.integer(e.V, p, 1, MaxQueuePackets); ok {
				q.QueueLimit = int(v)
			}
		case "queue":
			q.Queue, leafLoc = d.ovsLeaf(e.K, e.V, p), at(e.K, p)
		case "queues":
			queuesLoc = at(e.K, p)
			items := d.list(e.V, p, false)
			if len(items) > MaxOVSQueues {
				d.errorf(queuesLoc, "%d queues: at most %d", len(items), MaxOVSQueues)
				items = items[:MaxOVSQueues]
			}
			for i, item := range items {
				q.Queues = append(q.Queues, d.ovsQueue(item, idx(p, i)))
			}
		}
	}
	d.leafAlone(q.Queue != nil && q.QueueLimit > 0, leafLoc)
	if !hasMax {
		if !d.failedAt(at(k, path)) {
			d.errorf(at(k, path), "qos needs max_rate (the port's egress rate, e.g. max_rate: 10mbit)")
		}
		return q
	}
	var minSum units.BitRate
	for i, qu := range q.Queues {
		if qu.MaxRate > q.MaxRate {
			d.errorf(queuesLoc, "queues[%d]: max_rate %s is above the qos max_rate %s (OVS would clamp it)", i, qu.MaxRate, q.MaxRate)
		}
		if qu.MaxRate > 0 && qu.MinRate > qu.MaxRate {
			d.errorf(queuesLoc, "queues[%d]: min_rate %s is above its max_rate %s", i, qu.MinRate, qu.MaxRate)
		}
		minSum += qu.MinRate
	}
	if minSum > q.MaxRate {
		d.errorf(queuesLoc, "the queues' min_rate add up to %s, more than max_rate %s: the guarantees cannot all hold", minSum, q.MaxRate)
	}
	return q
}

func (d *dec) ovsQueue(n *yaml.Node, path string) OVSQueue {
	var q OVSQueue
	var leafLoc loc
	for _, e := range d.fields(n, path, ovsQueueKeys) {
		p := joinPath(path, e.Key)
		switch e.Key {
		case "min_rate":
			q.MinRate, _ = d.rate(e.V, p)
		case "max_rate":
			q.MaxRate, _ = d.rate(e.V, p)
		case "priority":
			q.Priority, _ = d.integer(e.V, p, 0, 4294967295)
		case "burst":
			q.Burst, _ = d.size(e.V, p)
		case "queue_limit":
			if v, ok := d.integer(e.V, p, 1, MaxQueuePackets); ok {
				q.QueueLimit = int(v)
			}
		case "queue":
			q.Queue, leafLoc = d.ovsLeaf(e.K, e.V, p), at(e.K, p)
		}
	}
	d.leafAlone(q.Queue != nil && q.QueueLimit > 0, leafLoc)
	return q
}

// leafAlone reports queue: beside queue_limit.
func (d *dec) leafAlone(both bool, l loc) {
	if both {
		d.errorf(l, "queue and queue_limit are alternatives (queue_limit: N is queue: N, a drop-tail FIFO): set one of them")
	}
}

// ovsLeaf decodes the queue: under an OVS QoS class: a discipline with
// its limit, in the link syntax (mapping or string). queue_limit is its
// drop-tail shorthand, so both together are an error.
func (d *dec) ovsLeaf(k, v *yaml.Node, path string) *Queue {
	kl := at(k, path)
	var q *Queue
	if n := deref(v); n != nil && n.Kind == yaml.MappingNode {
		q = d.queueMapping(v, path, kl)
	} else if s, ok := d.scalar(v, path, paramWant("queue")); ok {
		var err error
		if q, err = ParseQueue(s); err != nil {
			d.errorf(at(v, path), "%s", err)
			return nil
		}
		q.At = posString(d.file, kl)
	}
	if q == nil {
		return nil
	}
	switch {
	case q.BDP > 0:
		d.errorf(kl, "an OVS queue's limit cannot be a bdp multiple (the class has no delay): give packets or bytes")
		return nil
	case q.Bytes > 0 && !q.hasDiscipline():
		d.errorf(kl, "an OVS queue's drop-tail limit counts packets (emuctl's pfifo): give a number of packets")
		return nil
	}
	return q
}

// rate decodes a bit rate such as 10mbit.
func (d *dec) rate(n *yaml.Node, path string) (units.BitRate, bool) {
	s, ok := d.str(n, path, "a rate such as 10mbit")
	if !ok {
		return 0, false
	}
	r, err := units.ParseBitRate(s)
	if err != nil {
		d.errorf(at(n, path), "%v", err)
		return 0, false
	}
	return r, true
}

// size decodes an amount of data in bytes: 1500b, 15kB, 64KiB, 1MB.
func (d *dec) size(n *yaml.Node, path string) (units.Bytes, bool) {
	s, ok := d.str(n, path, "a size such as 15kB")
	if !ok {
		return 0, false
	}
	q, err := ParseQueue(s)
	switch {
	case err != nil && strings.Contains(err.Error(), "is a rate"):
		d.errorf(at(n, path), "%q is a rate; a burst is an amount of data in bytes (e.g. 15kB, 1500b, 64KiB)", clip(s))
	case err != nil:
		d.errorf(at(n, path), "%q is not a size in bytes (e.g. 15kB, 1500b, 64KiB)", clip(s))
	case q.Bytes == 0:
		d.errorf(at(n, path), "%q needs a byte unit (e.g. 15kB, 1500b, 64KiB)", clip(s))
	default:
		return q.Bytes, true
	}
	return 0, false
}

// parseController checks an OpenFlow controller target and returns it in
// the form OVS expects ("tcp:IP:PORT" with the port filled in).
func parseController(s string) (string, string) {
	proto, rest, _ := strings.Cut(strings.TrimSpace(s), ":")
	bad := func(why string) (string, string) {
		return "", fmt.Sprintf("controller %q: %s", clip(s), why)
	}
	switch proto {
	case "tcp":
		host, port := rest, ""
		if strings.HasPrefix(rest, "[") {
			i := strings.Index(rest, "]")
			if i < 0 {
				return bad("unclosed [ in the IPv6 address")
			}
			host, port = rest[1:i], strings.TrimPrefix(rest[i+1:], ":")
		} else if h, p, ok := strings.Cut(rest, ":"); ok {
			host, port = h, p
		}
		a, err := netip.ParseAddr(host)
		if err != nil || a.Zone() != "" {
			return bad("needs an IP address: tcp:IP[:PORT], e.g. tcp:127.0.0.1:6653")
		}
		pn, msg := controllerPort(port)
		if msg != "" {
			return bad(msg)
		}
		if a.Is6() {
			return fmt.Sprintf("tcp:[%s]:%d", a, pn), ""
		}
		return fmt.Sprintf("tcp:%s:%d", a, pn), ""
	case "ptcp":
		port, host, _ := strings.Cut(rest, ":")
		pn, msg := controllerPort(port)
		if msg != "" {
			return bad(msg)
		}
		if host == "" {
			return fmt.Sprintf("ptcp:%d", pn), ""
		}
		a, err := netip.ParseAddr(strings.Trim(host, "[]"))
		if err != nil {
			return bad("the listening address must be an IP: ptcp:PORT[:IP]")
		}
		if a.Is6() {
			return fmt.Sprintf("ptcp:%d:[%s]", pn, a), ""
		}
		return fmt.Sprintf("ptcp:%d:%s", pn, a), ""
	case "unix":
		if !strings.HasPrefix(rest, "/") {
			return bad("needs an absolute socket path: unix:/path/to/socket")
		}
		return "unix:" + rest, ""
	case "ssl", "pssl":
		return bad("ssl targets need certificates, which emuctl does not configure: use tcp:IP:PORT")
	}
	return bad("valid forms: tcp:IP[:PORT], ptcp:PORT[:IP], unix:PATH")
}

func controllerPort(s string) (int, string) {
	if s == "" {
		return DefaultControllerPort, ""
	}
	p, err := strconv.Atoi(s)
	if err != nil || p < 1 || p > 65535 {
		return 0, fmt.Sprintf("port %q is not in 1 .. 65535", clip(s))
	}
	return p, ""
}

// resolveOVS gives every ovs switch its settings (defaults filled in),
// reports OVS keys on other switches, and checks that ports name
// interfaces of their switch and that names: topology gives every device
// a name of its own. It runs once interfaces are assigned.
func (r *resolver) resolveOVS() {
	defer r.checkTopologyNames()
	for i, rn := range r.doc.nodes {
		n := &r.spec.Nodes[i]
		if n.Kind != KindSwitch {
			continue
		}
		if n.SwitchType != SwitchOVS {
			if rn.ovs != nil {
				for _, l := range rn.ovs.keys {
					r.d.errorf(l, "%s is an Open vSwitch setting and %s is a %s switch: set type: ovs on it (or defaults.switch: ovs)", lastKey(l.path), n.Name, n.SwitchType)
				}
			}
			continue
		}
		cfg := &OVSConfig{FailMode: "standalone"}
		if rn.ovs != nil {
			c := rn.ovs.cfg
			cfg.Datapath, cfg.Controllers, cfg.Protocols, cfg.RSTP = c.Datapath, c.Controllers, c.Protocols, c.RSTP
			if c.FailMode != "" {
				cfg.FailMode = c.FailMode
			}
			if c.Names == OVSNamesTopology { // unique is the default, kept as ""
				cfg.Names, cfg.NamesAt = c.Names, posString(r.spec.Source, rn.ovs.names)
			}
			if c.RSTP && n.STP {
				r.d.errorf(rn.ovs.rstp, "stp and rstp are exclusive: choose one spanning tree protocol")
			}
			var names []string
			for _, ifc := range n.Interfaces {
				names = append(names, ifc.Name)
			}
			byIface := map[string]OVSPort{}
			for _, rp := range rn.ovs.ports {
				if !slices.Contains(names, rp.port.Iface) {
					r.d.errorf(rp.loc, "%s has no interface %q %s", n.Name, clip(rp.port.Iface), choicesOrNone("interfaces", rp.port.Iface, names))
					continue
				}
				rp.port.Pos = posString(r.spec.Source, rp.loc)
				byIface[rp.port.Iface] = rp.port
			}
			for _, name := range names { // interface order, not file order
				if p, ok := byIface[name]; ok {
					cfg.Ports = append(cfg.Ports, p)
				}
			}
		}
		n.OVS = cfg
	}
}

// checkTopologyNames checks the device names of switches with names:
// topology, which live in the root namespace beside every other ovs
// switch's devices: the switch's name must be a valid interface name
// (its bridge's), and no two devices of the lab may share a name — a
// topology name against another one, or against a real adapter of an ovs
// switch, which keeps its own name there. (Names taken on the host are
// checked at up.)
func (r *resolver) checkTopologyNames() {
	owner := map[string]string{} // root-namespace name -> what it is
	for i := range r.spec.Nodes {
		n := &r.spec.Nodes[i]
		if n.Kind != KindSwitch || n.SwitchType != SwitchOVS {
			continue
		}
		for _, ifc := range n.Interfaces {
			if ifc.External != nil {
				owner[ifc.External.HostName] = fmt.Sprintf("real adapter %s of %s", ifc.External.HostName, n.Name)
			}
		}
	}
	for i, rn := range r.doc.nodes {
		n := &r.spec.Nodes[i]
		if !n.OVS.TopologyNames() {
			continue
		}
		l := rn.ovs.names
		if msg := checkIfaceName(n.Name); msg != "" {
			r.d.errorf(l, "names: topology names the bridge device after the switch, and %s: rename the switch or use names: unique (the default)", msg)
		}
		claim := func(name, what string) {
			if prev, ok := owner[name]; ok {
				r.d.errorf(l, "names: topology would give %s the name %s in the root namespace, which %s has already: rename one of them or use names: unique (the default) on %s", what, name, prev, n.Name)
				return
			}
			owner[name] = what
		}
		claim(n.Name, "the bridge of "+n.Name)
		for _, ifc := range n.Interfaces {
			if ifc.External == nil {
				claim(ifc.Name, fmt.Sprintf("port %s:%s", n.Name, ifc.Name))
			}
		}
	}
}

// spanningTree reports whether a switch runs STP or RSTP.
func spanningTree(n *Node) bool {
	return n.STP || n.OVS != nil && n.OVS.RSTP
}

// lastKey returns the last element of a path: "nodes.s1.datapath" -> "datapath".
func lastKey(path string) string {
	if i := strings.LastIndexByte(path, '.'); i >= 0 {
		return path[i+1:]
	}
	return path
}
