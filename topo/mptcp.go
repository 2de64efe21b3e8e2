package topo

import (
	"fmt"
	"net/netip"
	"slices"
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
	es := d.fields(n, path, mptcpKeys)
	for _, e := range es {
		p := joinPath(path, e.Key)
		switch e.Key {
		case "enabled":
			m.Enabled = d.optBool(e.V, p)
		case "policy_routing":
			m.PolicyRouting = d.optBool(e.V, p)
		case "path_manager":
			m.PathManager, _ = d.oneOf(e.V, p, "path manager", pathManagers)
		case "scheduler":
			if s, ok := d.str(e.V, p, "a scheduler name such as default"); ok {
				if !validAlgName(s) {
					d.errorf(at(e.V, p), "scheduler %q is not valid: use a kernel name such as default (lower-case letters, digits, '_')", clip(s))
				} else {
					m.Scheduler = s
					m.SchedulerAt = d.where(at(e.V, p))
				}
			}
		case "limits":
			for _, f := range d.fields(e.V, p, mptcpLimitKeys) {
				fp := joinPath(p, f.Key)
				if f.Key == "subflows" {
					m.Subflows = d.optInt(f.V, fp, 0, MaxMPTCPLimit)
				} else {
					m.AddAddrAccepted = d.optInt(f.V, fp, 0, MaxMPTCPLimit)
				}
			}
		case "endpoints":
			if v := deref(e.V); v != nil && v.Kind == yaml.ScalarNode && v.Tag != "!!null" {
				if v.Value == "auto" {
					m.AutoEndpoints = true
				} else {
					d.errorf(at(e.V, p), "must be auto or a list of endpoints such as [{address: 10.0.2.1, flags: [signal]}], got %s", describe(e.V))
				}
				continue
			}
			ids := map[int]bool{}
			for i, item := range d.list(e.V, p, false) {
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
	for _, e := range es {
		p := joinPath(path, e.Key)
		switch {
		case m.Enabled != nil && !*m.Enabled && e.Key != "enabled" && e.Key != "policy_routing":
			d.errorf(at(e.K, p), "%s has no effect with enabled: false (MPTCP is off in this node; remove it or enable MPTCP)", e.Key)
		case m.PathManager == "userspace" && (e.Key == "endpoints" || e.Key == "limits"):
			d.errorf(at(e.K, p), "%s configure the in-kernel path manager and have no effect with path_manager: userspace (a userspace daemon such as mptcpd announces addresses and opens subflows)", e.Key)
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
		p := joinPath(path, f.Key)
		switch f.Key {
		case "address":
			s, good := d.str(f.V, p, "an IP address such as 10.0.2.1")
			if !good {
				ok = false
				continue
			}
			a, err := netip.ParseAddr(s)
			if err != nil || a.Zone() != "" || !a.IsGlobalUnicast() && !a.IsPrivate() {
				d.errorf(at(f.V, p), "%q is not a unicast IP address without prefix length (e.g. 10.0.2.1)", clip(s))
				ok = false
				continue
			}
			ep.Address = a.Unmap()
		case "interface":
			s, good := d.str(f.V, p, "an interface name of this node such as h1-eth1")
			if good {
				ep.Interface = s
			}
			ok = ok && good
		case "flags":
			for i, item := range d.list(f.V, p, true) {
				s, good := d.oneOf(item, idx(p, i), "flag", mptcpFlags)
				if !good {
					ok = false
					continue
				}
				if slices.Contains(ep.Flags, s) {
					d.errorf(at(item, idx(p, i)), "flag %s is given twice", s)
					continue
				}
				ep.Flags = append(ep.Flags, s)
			}
		case "id":
			if v, good := d.integer(f.V, p, 1, 255); good {
				ep.ID = int(v)
			} else {
				ok = false
			}
		case "port":
			if v, good := d.integer(f.V, p, 0, 65535); good {
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
	if slices.Contains(ep.Flags, "fullmesh") && slices.Contains(ep.Flags, "signal") {
		d.errorf(l, "flags fullmesh and signal cannot be combined (the kernel refuses it): use fullmesh with subflow")
		ok = false
	}
	if ep.Port != 0 && !slices.Contains(ep.Flags, "signal") {
		d.errorf(l, "port %d is only valid with the signal flag (flags: [%s])", ep.Port, strings.Join(append(append([]string(nil), ep.Flags...), "signal"), ", "))
		ok = false
	}
	return ep, ok
}

// checkMPTCPEndpoints verifies that endpoints name the node's own
// interfaces and addresses; called once interfaces, addresses and routes
// are known. It also runs the other per-node checks of the tcp: and
// mptcp: blocks that need them (checkTCPRoutes).
func checkMPTCPEndpoints(d *diag, nd *Node, locs []loc) {
	checkTCPRoutes(d, nd)
	if nd.MPTCP == nil {
		return
	}
	ifAddrs := map[string][]netip.Prefix{}
	for _, ifc := range nd.Interfaces {
		ifAddrs[ifc.Name] = ifc.Addrs
	}
	used := map[netip.Addr]int{} // address -> endpoint index, for duplicates
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
		if ep.Interface != "" && !slices.Contains(names, ep.Interface) {
			d.errorf(l.sub("interface"), "%s has no interface %q %s", nd.Name, clip(ep.Interface), choicesOrNone("known", ep.Interface, names))
		}
		var covers []netip.Addr // the addresses this endpoint stands for
		if ep.Address.IsValid() {
			ifc, ok := owned[ep.Address]
			switch {
			case !ok:
				d.errorf(l.sub("address"), "%s is not an address of %s %s", ep.Address, nd.Name, choicesOrNone("its addresses", ep.Address.String(), addrs))
			case ep.Interface != "" && ifc != ep.Interface:
				d.errorf(l.sub("address"), "%s is on %s, not on %s", ep.Address, ifc, ep.Interface)
			default:
				covers = []netip.Addr{ep.Address}
			}
		} else if pfxs, ok := ifAddrs[ep.Interface]; ok {
			switch {
			case len(pfxs) == 0:
				d.errorf(l.sub("interface"), "%s has no address on %s: an endpoint needs one (give the interface an address, or name an address)", nd.Name, ep.Interface)
			case len(pfxs) > 1 && ep.ID != 0:
				d.errorf(l.sub("id"), "id %d names one endpoint, but %s has %d addresses, so this entry makes %d endpoints: give address: as well", ep.ID, ep.Interface, len(pfxs), len(pfxs))
			}
			for _, p := range pfxs {
				covers = append(covers, p.Addr())
			}
		}
		for _, a := range covers {
			if j, dup := used[a]; dup {
				d.errorf(l, "endpoint %s is already given by endpoints[%d]: the kernel takes each address once", a, j)
				break
			}
			used[a] = i
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
