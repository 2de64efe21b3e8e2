package topo

import (
	"fmt"
	"net/netip"
	"strings"

	"go.yaml.in/yaml/v3"
)

var (
	mptcpKeys         = []string{"enabled", "path_manager", "scheduler", "limits", "endpoints", "policy_routing"}
	mptcpLimitKeys    = []string{"subflows", "add_addr_accepted"}
	mptcpEndpointKeys = []string{"address", "interface", "flags", "id", "port"}
	mptcpFlags        = []string{"signal", "subflow", "backup", "fullmesh"}
	pathManagers      = []string{"kernel", "userspace"}
)

// MaxMPTCPLimit is the kernel's upper bound for subflows and
// add_addr_accepted (MPTCP_PM_ADDR_MAX is 8).
const MaxMPTCPLimit = 8

// mptcp decodes an mptcp: block. It returns the config and the location of
// each endpoint, which resolution checks against the node's interfaces.
func (d *dec) mptcp(n *yaml.Node, path string) (*MPTCPConfig, []loc) {
	m := &MPTCPConfig{}
	var locs []loc
	for _, e := range d.fields(n, path, mptcpKeys) {
		p := joinPath(path, e.key)
		switch e.key {
		case "enabled":
			m.Enabled = d.optBool(e.v, p)
		case "policy_routing":
			m.PolicyRouting = d.optBool(e.v, p)
		case "path_manager":
			m.PathManager, _ = d.oneOf(e.v, p, "path manager", pathManagers)
		case "scheduler":
			if s, ok := d.str(e.v, p, "a scheduler name such as default"); ok {
				if !validAlgName(s) {
					d.errorf(at(e.v, p), "scheduler %q is not valid: use a kernel name such as default (lower-case letters, digits, '_')", clip(s))
				} else {
					m.Scheduler = s
				}
			}
		case "limits":
			for _, f := range d.fields(e.v, p, mptcpLimitKeys) {
				fp := joinPath(p, f.key)
				if f.key == "subflows" {
					m.Subflows = d.optInt(f.v, fp, 0, MaxMPTCPLimit)
				} else {
					m.AddAddrAccepted = d.optInt(f.v, fp, 0, MaxMPTCPLimit)
				}
			}
		case "endpoints":
			ids := map[int]bool{}
			for i, item := range d.list(e.v, p, false) {
				ip := idx(p, i)
				if ep, ok := d.mptcpEndpoint(item, ip); ok {
					if ep.ID != 0 && ids[ep.ID] {
						d.errorf(at(item, ip), "endpoint id %d is used twice: ids must be unique", ep.ID)
						continue
					}
					ids[ep.ID] = true
					m.Endpoints = append(m.Endpoints, ep)
					locs = append(locs, at(item, ip))
				}
			}
		}
	}
	return m, locs
}

func (d *dec) mptcpEndpoint(n *yaml.Node, path string) (MPTCPEndpoint, bool) {
	var ep MPTCPEndpoint
	before := len(d.errs)
	fields := d.fields(n, path, mptcpEndpointKeys)
	ok := len(d.errs) == before // unknown keys: the rest would only echo them
	for _, f := range fields {
		p := joinPath(path, f.key)
		switch f.key {
		case "address":
			s, good := d.str(f.v, p, "an IP address such as 10.0.2.1")
			if !good {
				ok = false
				continue
			}
			a, err := netip.ParseAddr(s)
			if err != nil || a.Zone() != "" || !a.IsGlobalUnicast() && !a.IsPrivate() {
				d.errorf(at(f.v, p), "%q is not a unicast IP address without prefix length (e.g. 10.0.2.1)", clip(s))
				ok = false
				continue
			}
			ep.Address = a.Unmap()
		case "interface":
			s, good := d.str(f.v, p, "an interface name of this node such as h1-eth1")
			if good {
				ep.Interface = s
			}
			ok = ok && good
		case "flags":
			for i, item := range d.list(f.v, p, true) {
				s, good := d.oneOf(item, idx(p, i), "flag", mptcpFlags)
				if !good {
					ok = false
					continue
				}
				if contains(ep.Flags, s) {
					d.errorf(at(item, idx(p, i)), "flag %s is given twice", s)
					continue
				}
				ep.Flags = append(ep.Flags, s)
			}
		case "id":
			if v, good := d.integer(f.v, p, 1, 255); good {
				ep.ID = int(v)
			} else {
				ok = false
			}
		case "port":
			if v, good := d.integer(f.v, p, 0, 65535); good {
				ep.Port = int(v)
			} else {
				ok = false
			}
		}
	}
	l := at(n, path)
	if !ep.Address.IsValid() && ep.Interface == "" && ok {
		d.errorf(l, "an endpoint needs an address or an interface (e.g. {address: 10.0.2.1, flags: [signal]})")
		ok = false
	}
	if contains(ep.Flags, "fullmesh") && contains(ep.Flags, "signal") {
		d.errorf(l, "flags fullmesh and signal cannot be combined (the kernel refuses it): use fullmesh with subflow")
		ok = false
	}
	if ep.Port != 0 && !contains(ep.Flags, "signal") {
		d.errorf(l, "port %d is only valid with the signal flag (flags: [%s])", ep.Port, strings.Join(append(append([]string(nil), ep.Flags...), "signal"), ", "))
		ok = false
	}
	return ep, ok
}

// checkMPTCPEndpoints verifies that endpoints name the node's own
// interfaces and addresses; called once interfaces and addresses are known.
func checkMPTCPEndpoints(d *diag, nd *Node, locs []loc) {
	if nd.MPTCP == nil {
		return
	}
	var names []string
	var addrs []string
	owned := map[netip.Addr]string{}
	for _, ifc := range nd.Interfaces {
		names = append(names, ifc.Name)
		for _, a := range ifc.Addrs {
			owned[a.Addr()] = ifc.Name
			addrs = append(addrs, a.Addr().String())
		}
	}
	for i, ep := range nd.MPTCP.Endpoints {
		if i >= len(locs) {
			break
		}
		l := locs[i]
		if ep.Interface != "" && !contains(names, ep.Interface) {
			d.errorf(l.sub("interface"), "%s has no interface %q %s", nd.Name, clip(ep.Interface), choicesOrNone("known", ep.Interface, names))
		}
		if ep.Address.IsValid() {
			ifc, ok := owned[ep.Address]
			switch {
			case !ok:
				d.errorf(l.sub("address"), "%s is not an address of %s %s", ep.Address, nd.Name, choicesOrNone("its addresses", ep.Address.String(), addrs))
			case ep.Interface != "" && ifc != ep.Interface:
				d.errorf(l.sub("address"), "%s is on %s, not on %s", ep.Address, ifc, ep.Interface)
			}
		}
	}
}

// choicesOrNone is choices, or "(none)" for an empty list.
func choicesOrNone(label, got string, valid []string) string {
	if len(valid) == 0 {
		return fmt.Sprintf("(%s: none)", label)
	}
	return choices(label, got, valid)
}
