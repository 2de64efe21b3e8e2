package topo

import (
	"fmt"
	"net/netip"
	"strings"

	"go.yaml.in/yaml/v3"
)

// MaxNodeName bounds node names; namespace names are "<lab>.<node>".
const MaxNodeName = 64

func (d *dec) nodes(n *yaml.Node, doc *rawDoc) {
	for _, e := range d.entries(n, "nodes") {
		path := "nodes." + keyPath(e.Key)
		if msg := checkNodeName(e.Key); msg != "" {
			d.errorf(at(e.K, path), "%s", msg)
		}
		doc.nodes = append(doc.nodes, d.node(e.Key, e.K, e.V, path))
	}
	if len(doc.nodes) == 0 && !d.failed() {
		d.errorf(doc.nodesLoc, "no nodes defined: add at least one (e.g. nodes: {h1: {}, h2: {}})")
	}
}

// checkNodeName returns what is wrong with a node name, or "".
func checkNodeName(s string) string {
	valid := s != "" && len(s) <= MaxNodeName
	for i := 0; valid && i < len(s); i++ {
		c := s[i]
		letter := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
		valid = letter || i > 0 && (c >= '0' && c <= '9' || c == '-' || c == '_')
	}
	switch {
	case !valid:
		return fmt.Sprintf("node name %q is not valid: use a letter followed by letters, digits, '-' or '_' (at most %d bytes, no dots)", clip(s), MaxNodeName)
	case s == "fabric":
		return `node name "fabric" is reserved: choose another name`
	}
	return ""
}

func (d *dec) node(name string, k, v *yaml.Node, path string) *rawNode {
	nd := &rawNode{name: name, loc: at(k, path), kind: KindHost}
	es := d.fields(v, path, nodeKeys)
	kindOK := true
	for _, e := range es {
		if e.Key == "kind" {
			var s string
			if s, kindOK = d.oneOf(e.V, path+".kind", "kind", kinds); kindOK {
				nd.kind = NodeKind(s)
			}
		}
	}
	switch nd.kind {
	case kindAP: // a bridge (switch) unless wifi.routed
		nd.wifiKind, nd.kind = kindAP, KindSwitch
		if wifiPrescan(v) {
			nd.kind = KindRouter
		}
	case kindStation:
		nd.wifiKind, nd.kind = kindStation, KindHost
	}
	isSwitch := nd.kind == KindSwitch
	for _, e := range es {
		p := joinPath(path, e.Key)
		if nd.kind == KindRoot && kindOK && e.Key != "kind" {
			d.errorf(at(e.K, p), "%s is not valid on kind root: %s is the machine's own network namespace, whose settings and interfaces are the machine's; only its link ends are the lab's (addresses in the link's ip:)", e.Key, name)
			continue
		}
		switch e.Key {
		case "type", "datapath", "fail_mode", "controller", "protocols", "rstp", "names", "ports":
			if kindOK && nd.wifiKind == kindAP {
				d.errorf(at(e.K, p), "%s is not valid on an access point: an AP bridges with a Linux bridge (put an ovs switch next to it and link the two)", e.Key)
				continue
			}
		}
		switch e.Key {
		case "position", "mobility":
			if !kindOK {
				continue
			}
			if nd.wifiKind == "" {
				why := map[string]string{"position": "the Wi-Fi medium places radios", "mobility": "it moves a radio on the Wi-Fi medium"}[e.Key]
				d.errorf(at(e.K, p), "%s is only valid on access points and stations (kind: ap or kind: station; %s is a %s): %s", e.Key, name, nd.kind, why)
				continue
			}
			if e.Key == "mobility" {
				nd.mobility = d.mobility(e.V, p, at(e.K, p))
				continue
			}
			nd.pos, nd.posSet = d.position(e.V, p)
			nd.posLoc = at(e.V, p)
			continue
		case "wifi":
			if !kindOK {
				continue
			}
			if nd.wifiKind == "" {
				d.errorf(at(e.K, p), "wifi is only valid on access points and stations (kind: ap or kind: station; %s is a %s)", name, nd.kind)
				continue
			}
			nd.wifi = d.wifiBlock(e.V, p, nd.wifiKind == kindAP, at(e.K, p))
			continue
		case "type", "stp", "datapath", "fail_mode", "controller", "protocols", "rstp", "names", "ports":
			if !kindOK {
				continue // the kind is wrong; which keys fit is unknown
			}
			if !isSwitch {
				d.errorf(at(e.K, p), "%s is only valid on switches (%s is a %s)", e.Key, name, nd.kind)
				continue
			}
		case "routes", "tcp", "mptcp":
			if !kindOK {
				continue
			}
			if isSwitch && nd.wifiKind == kindAP {
				d.errorf(at(e.K, p), "%s is not valid on a bridging access point, which is layer 2: set wifi: {routed: true} to make %s a router", e.Key, name)
				continue
			}
			if isSwitch {
				d.errorf(at(e.K, p), "%s is not valid on a switch: switches are layer 2 (use kind: host or router)", e.Key)
				continue
			}
		}
		switch e.Key {
		case "type":
			nd.switchType, _ = d.oneOf(e.V, p, "switch type", switchTypes)
		case "stp":
			nd.stp, _ = d.boolean(e.V, p)
		case "routes":
			for i, item := range d.list(e.V, p, true) {
				if r, ok := d.route(item, idx(p, i)); ok {
					nd.routes = append(nd.routes, r)
				}
			}
		case "sysctls":
			nd.sysctls = d.sysctls(e.V, p)
		case "env":
			nd.env = d.env(e.V, p)
		case "machine":
			d.nodeMachine(nd, e.V, p) // decode_cluster.go
		case "start":
			for i, item := range d.list(e.V, p, true) {
				if s, ok := d.str(item, idx(p, i), "a shell command line"); ok {
					if strings.ContainsRune(s, 0) {
						d.errorf(at(item, idx(p, i)), "a command line cannot contain NUL bytes")
						continue
					}
					nd.start = append(nd.start, s)
				}
			}
		case "tcp":
			nd.tcp, nd.tcpLoc = d.tcp(e.V, p), at(e.K, p)
		case "mptcp":
			nd.mptcp, nd.mpEndLocs = d.mptcp(e.V, p)
			nd.mptcpLoc = at(e.K, p)
		case "interfaces":
			nd.ifaces = d.ifaces(e.V, p, isSwitch)
		case "datapath", "fail_mode", "controller", "protocols", "rstp", "names", "ports":
			d.ovsKey(nd, e, p) // decode_ovs.go
		}
	}
	if nd.wifiKind != "" && nd.wifi == nil {
		nd.wifi = &rawWiFi{loc: nd.loc, isAP: nd.wifiKind == kindAP}
	}
	return nd
}

// ifaces decodes interfaces: {name: {external: hostif, force: bool, ip: ...}}.
func (d *dec) ifaces(n *yaml.Node, path string, isSwitch bool) []rawIface {
	var out []rawIface
	for _, e := range d.entries(n, path) {
		p := joinPath(path, keyPath(e.Key))
		ifc := rawIface{name: e.Key, loc: at(e.K, p)}
		if msg := checkIfaceName(e.Key); msg != "" {
			d.errorf(ifc.loc, "%s", msg)
		}
		for _, f := range d.fields(e.V, p, ifaceKeys) {
			fp := joinPath(p, f.Key)
			switch f.Key {
			case "external":
				if s, ok := d.str(f.V, fp, "a host interface name such as enp3s0"); ok {
					if msg := checkIfaceName(s); msg != "" {
						d.errorf(at(f.V, fp), "%s", msg)
					}
					ifc.external, ifc.extLoc = s, at(f.V, fp)
				}
			case "force":
				ifc.force, _ = d.boolean(f.V, fp)
			case "ip":
				if isSwitch {
					d.errorf(at(f.K, fp), "switches are layer 2 and take no addresses: put the address on a host or router")
					continue
				}
				ifc.addrs = d.addrs(f.V, fp)
			}
		}
		if ifc.external == "" && !d.failedAt(ifc.loc) {
			d.errorf(ifc.loc, "interface %s needs external: <host interface> (interfaces: only takes existing host interfaces; links create the others)", e.Key)
		}
		out = append(out, ifc)
	}
	return out
}

// failedAt reports whether an error was already recorded at l.
func (d *dec) failedAt(l loc) bool {
	for _, e := range d.errs {
		if e.Line == l.line && e.Col == l.col && e.Line > 0 {
			return true
		}
	}
	return false
}

// addrs decodes one address or a list of them, each "address/prefix".
func (d *dec) addrs(n *yaml.Node, path string) []rawAddr {
	items := d.list(n, path, true)
	var out []rawAddr
	for i, item := range items {
		p := path
		if deref(n).Kind == yaml.SequenceNode {
			p = idx(path, i)
		}
		s, ok := d.str(item, p, "an address with prefix length such as 10.0.1.1/24")
		if !ok {
			d.broken = true
			continue
		}
		if pfx, msg := parseHostPrefix(s); msg != "" {
			d.errorf(at(item, p), "%s", msg)
			d.broken = true
		} else {
			out = append(out, rawAddr{p: pfx, loc: at(item, p)})
		}
	}
	return out
}

// parseHostPrefix parses an interface address "10.0.1.1/24" and checks it
// is a usable unicast host address.
func parseHostPrefix(s string) (netip.Prefix, string) {
	p, err := netip.ParsePrefix(strings.TrimSpace(s))
	if err != nil {
		if a, err2 := netip.ParseAddr(strings.TrimSpace(s)); err2 == nil {
			ex := "/24"
			if a.Is6() {
				ex = "/64"
			}
			return p, fmt.Sprintf("address %s needs a prefix length, e.g. %s%s", a, a, ex)
		}
		return p, fmt.Sprintf("%q is not an address with prefix length (e.g. 10.0.1.1/24 or fd00:1::1/64)", clip(s))
	}
	a := p.Addr()
	switch {
	case a.Is4In6():
		return p, fmt.Sprintf("%s is an IPv4-mapped IPv6 address: write the IPv4 address (%s/%d)", p, a.Unmap(), p.Bits()-96)
	case a.Zone() != "":
		return p, fmt.Sprintf("%s: zones are not allowed in addresses", p)
	case a.IsUnspecified(), a.IsLoopback(), a.IsMulticast():
		return p, fmt.Sprintf("%s is not a unicast host address", p)
	case a.IsLinkLocalUnicast() && a.Is6():
		return p, fmt.Sprintf("%s is link-local: the kernel assigns those; use a global or ULA address (e.g. fd00:1::1/64)", p)
	}
	if a.Is4() && p.Bits() <= 30 {
		last := lastAddr(p.Masked())
		if a == p.Masked().Addr() {
			return p, fmt.Sprintf("%s is the network address of %s: use a host address such as %s/%d", p, p.Masked(), a.Next(), p.Bits())
		}
		if a == last {
			return p, fmt.Sprintf("%s is the broadcast address of %s: use a host address such as %s/%d", p, p.Masked(), a.Prev(), p.Bits())
		}
	}
	return p, ""
}
