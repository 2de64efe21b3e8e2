package netcfg

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/emuctl/emuctl/topo"
)

// Policy routing numbers. A multihomed MPTCP node's k-th address (k from
// 0, in interface order, then address order) gets routing table
// TableBase+k and the rule "from <address> lookup TableBase+k" with
// priority RulePriorityBase+k, ahead of the main table's 32766.
const (
	TableBase        = 100
	RulePriorityBase = 100
	// maxPolicyTables bounds the range emuctl owns and cleans up:
	// tables TableBase .. TableBase+maxPolicyTables-1.
	maxPolicyTables = 128
)

// MPTCPPlan is what ApplyMPTCP does in one node, derived from the Spec
// alone (PlanMPTCP), so it can be shown and tested without privileges.
type MPTCPPlan struct {
	Enabled     bool   `json:"enabled"`
	PathManager string `json:"path_manager,omitempty"` // "" leaves the kernel's
	Scheduler   string `json:"scheduler,omitempty"`    // "" leaves the kernel's
	// Limits to set; a field of -1 keeps the kernel's value. Nil: none.
	Limits    *PlanLimits   `json:"limits,omitempty"`
	Endpoints []Endpoint    `json:"endpoints,omitempty"`
	Policy    []PolicyRoute `json:"policy_routing,omitempty"`
}

// PlanLimits are the limits to set; -1 keeps the kernel's value.
type PlanLimits struct {
	Subflows        int  `json:"subflows"`
	AddAddrAccepted int  `json:"add_addr_accepted"`
	Auto            bool `json:"auto,omitempty"` // derived from endpoints: auto
}

// Endpoint is one mptcp_pm endpoint of a node.
type Endpoint struct {
	ID        int        `json:"id,omitempty"` // 0: the kernel picks
	Addr      netip.Addr `json:"addr"`
	Interface string     `json:"interface,omitempty"` // "dev": subflows are bound to it
	Port      int        `json:"port,omitempty"`
	Flags     []string   `json:"flags,omitempty"`
}

func (e Endpoint) String() string {
	s := e.Addr.String()
	if e.Interface != "" {
		s += " dev " + e.Interface
	}
	if e.ID != 0 {
		s += fmt.Sprintf(" id %d", e.ID)
	}
	if e.Port != 0 {
		s += fmt.Sprintf(" port %d", e.Port)
	}
	if len(e.Flags) > 0 {
		s += " " + strings.Join(e.Flags, " ")
	}
	return s
}

// PolicyRoute is the source-based routing of one address: rule "from
// From lookup Table" (priority Priority), and in Table the connected
// Subnet on Interface plus, when a gateway is known, a default route via
// Gateway on Interface. Lookups that find no route in Table fall through
// to the main table.
type PolicyRoute struct {
	Table     int          `json:"table"`
	Priority  int          `json:"priority"`
	From      netip.Addr   `json:"from"`
	Subnet    netip.Prefix `json:"subnet"`
	Interface string       `json:"interface"`
	Gateway   netip.Addr   `json:"gateway,omitzero"`
}

func (p PolicyRoute) String() string {
	s := fmt.Sprintf("from %s lookup %d pref %d: %s dev %s", p.From, p.Table, p.Priority, p.Subnet, p.Interface)
	if p.Gateway.IsValid() {
		s += fmt.Sprintf(", default via %s dev %s", p.Gateway, p.Interface)
	}
	return s
}

// PlanMPTCP derives what ApplyMPTCP does in node: nil when the node has
// no mptcp: block (its kernel defaults stay). spec is needed for
// endpoints: auto (limits that accept what the lab announces) and for
// finding gateways for policy routing.
//
//   - endpoints: auto announces (flag signal) every address on the node's
//     interfaces after the first one that has addresses.
//   - When any node of the lab uses endpoints: auto, every node with an
//     mptcp: block and no limits: gets add_addr_accepted = S and
//     subflows = S + its own subflow endpoints (both at most 8), where S
//     is the largest number of signal endpoints of any MPTCP node.
//   - Policy routing is on for enabled nodes with two or more interfaces
//     carrying addresses, unless policy_routing: false.
func PlanMPTCP(node *topo.Node, spec *topo.Spec) (*MPTCPPlan, error) {
	m := node.MPTCP
	if m == nil {
		return nil, nil
	}
	p := &MPTCPPlan{Enabled: m.Enabled == nil || *m.Enabled, PathManager: m.PathManager, Scheduler: m.Scheduler}
	if !p.Enabled {
		return p, nil
	}
	eps, err := endpoints(node)
	if err != nil {
		return nil, err
	}
	p.Endpoints = eps
	switch {
	case m.Subflows != nil || m.AddAddrAccepted != nil:
		p.Limits = &PlanLimits{Subflows: -1, AddAddrAccepted: -1}
		if m.Subflows != nil {
			p.Limits.Subflows = *m.Subflows
		}
		if m.AddAddrAccepted != nil {
			p.Limits.AddAddrAccepted = *m.AddAddrAccepted
		}
	case labUsesAuto(spec):
		s := 0
		for _, n := range spec.Hosts() {
			if n.MPTCP == nil || n.MPTCP.Enabled != nil && !*n.MPTCP.Enabled {
				continue
			}
			neps, err := endpoints(n)
			if err != nil {
				return nil, err
			}
			s = max(s, countFlag(neps, "signal"))
		}
		p.Limits = &PlanLimits{Subflows: min(topo.MaxMPTCPLimit, s+countFlag(eps, "subflow")), AddAddrAccepted: min(topo.MaxMPTCPLimit, s), Auto: true}
	}
	if m.PolicyRouting == nil || *m.PolicyRouting {
		p.Policy = policyRoutes(node, spec)
	}
	return p, nil
}

func labUsesAuto(spec *topo.Spec) bool {
	for _, n := range spec.Hosts() {
		if n.MPTCP != nil && n.MPTCP.AutoEndpoints {
			return true
		}
	}
	return false
}

func countFlag(eps []Endpoint, flag string) int {
	n := 0
	for _, e := range eps {
		for _, f := range e.Flags {
			if f == flag {
				n++
			}
		}
	}
	return n
}

// endpoints expands a node's endpoints: auto, interface-only entries (one
// endpoint per address of the interface) and address-only entries (bound
// to the interface that has the address).
func endpoints(node *topo.Node) ([]Endpoint, error) {
	m := node.MPTCP
	if m.AutoEndpoints {
		var out []Endpoint
		first := true
		for _, ifc := range node.Interfaces {
			if len(ifc.Addrs) == 0 {
				continue
			}
			if first {
				first = false
				continue
			}
			for _, a := range ifc.Addrs {
				out = append(out, Endpoint{Addr: a.Addr(), Interface: ifc.Name, Flags: []string{"signal"}})
			}
		}
		return out, nil
	}
	var out []Endpoint
	for i, e := range m.Endpoints {
		base := Endpoint{ID: e.ID, Port: e.Port, Flags: append([]string(nil), e.Flags...), Interface: e.Interface}
		if e.Address.IsValid() {
			ifc := ifaceOf(node, e.Address)
			if ifc == "" {
				return nil, fmt.Errorf("node %s: mptcp.endpoints[%d]: %s is not an address of the node", node.Name, i, e.Address)
			}
			base.Addr, base.Interface = e.Address, ifc
			out = append(out, base)
			continue
		}
		var found bool
		for _, ifc := range node.Interfaces {
			if ifc.Name != e.Interface {
				continue
			}
			found = true
			for _, a := range ifc.Addrs {
				ep := base
				ep.Addr = a.Addr()
				out = append(out, ep)
			}
			if len(ifc.Addrs) == 0 {
				return nil, fmt.Errorf("node %s: mptcp.endpoints[%d]: interface %s has no address", node.Name, i, e.Interface)
			}
		}
		if !found {
			return nil, fmt.Errorf("node %s: mptcp.endpoints[%d]: no interface %s", node.Name, i, e.Interface)
		}
	}
	return out, nil
}

func ifaceOf(node *topo.Node, a netip.Addr) string {
	for _, ifc := range node.Interfaces {
		for _, p := range ifc.Addrs {
			if p.Addr() == a {
				return ifc.Name
			}
		}
	}
	return ""
}

// policyRoutes plans one table and rule per address of a node with two or
// more addressed interfaces.
func policyRoutes(node *topo.Node, spec *topo.Spec) []PolicyRoute {
	addressed := 0
	for _, ifc := range node.Interfaces {
		if len(ifc.Addrs) > 0 {
			addressed++
		}
	}
	if addressed < 2 {
		return nil
	}
	var out []PolicyRoute
	for _, ifc := range node.Interfaces {
		for _, a := range ifc.Addrs {
			k := len(out)
			if k >= maxPolicyTables {
				return out
			}
			out = append(out, PolicyRoute{
				Table: TableBase + k, Priority: RulePriorityBase + k,
				From: a.Addr(), Subnet: a.Masked(), Interface: ifc.Name,
				Gateway: gateway(node, ifc, a, spec),
			})
		}
	}
	return out
}

// gateway finds the next hop for traffic leaving by ifc from address a:
// the node's default route's gateway when it is on a's subnet, else the
// first gateway of its other routes on that subnet, else the address on
// that subnet of a router reached through ifc (directly or across
// switches). Invalid when there is none: the table then holds only the
// connected subnet, and other destinations fall through to the main table.
func gateway(node *topo.Node, ifc topo.Interface, a netip.Prefix, spec *topo.Spec) netip.Addr {
	subnet := a.Masked()
	var first netip.Addr
	for _, r := range node.Routes {
		if !r.Via.IsValid() || !subnet.Contains(r.Via) || r.Dev != "" && r.Dev != ifc.Name {
			continue
		}
		if r.Dst.Bits() == 0 {
			return r.Via
		}
		if !first.IsValid() {
			first = r.Via
		}
	}
	if first.IsValid() {
		return first
	}
	// Walk the L2 segment behind ifc: the peer, and through switches their
	// other ports' peers, breadth first.
	seen := map[string]bool{node.Name: true}
	queue := []string{ifc.Peer}
	if ifc.Wireless && node.Station != nil { // Wi-Fi: the segment starts at the AP
		if ap := spec.Node(node.Station.AP); ap != nil && ap.AP != nil {
			queue = []string{ap.Name + ":" + ap.AP.Iface}
		}
	}
	for len(queue) > 0 {
		peer := queue[0]
		queue = queue[1:]
		nodeName, ifName, ok := strings.Cut(peer, ":")
		if !ok {
			continue
		}
		n := spec.Node(nodeName)
		if n == nil {
			continue
		}
		switch n.Kind {
		case topo.KindRouter:
			for _, pi := range n.Interfaces {
				if pi.Name != ifName {
					continue
				}
				for _, pa := range pi.Addrs {
					if subnet.Contains(pa.Addr()) {
						return pa.Addr()
					}
				}
			}
		case topo.KindSwitch:
			if seen[n.Name] {
				continue
			}
			seen[n.Name] = true
			for _, port := range n.Interfaces {
				if port.Name != ifName && port.Peer != "" {
					queue = append(queue, port.Peer)
				}
			}
		}
	}
	return netip.Addr{}
}
