package traffic

import (
	"errors"
	"fmt"
	"net/netip"
	"os/exec"
	"strings"

	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/topo"
)

// resolve applies defaults, validates every flow against the lab and
// resolves addresses and paths. Every problem is reported at once.
func resolve(s *topo.Spec, flows []Flow) ([]*plan, error) {
	var problems []string
	var plans []*plan
	names := map[string]bool{}
	for i, f := range flows {
		f = f.withDefaults(i)
		bad := func(format string, args ...any) {
			where := ""
			if f.Pos != "" {
				where = f.Pos + ": "
			}
			problems = append(problems, where+fmt.Sprintf("flow %s: ", f.Name)+fmt.Sprintf(format, args...))
		}
		if names[f.Name] {
			bad("duplicate flow name")
		}
		names[f.Name] = true
		for _, p := range f.check() {
			bad("%s", p)
		}
		client, server := checkNode(s, f.Client, bad), checkNode(s, f.Server, bad)
		if client == nil || server == nil || f.Client == f.Server {
			continue
		}
		p := &plan{f: f}
		p.dst = f.Dst
		if !p.dst.IsValid() {
			p.dst, _ = emu.PrimaryAddr(server)
		}
		if !p.dst.IsValid() {
			bad("node %s has no address", f.Server)
			continue
		}
		if f.Dst.IsValid() && !hasAddr(server, f.Dst) {
			bad("%s is not an address of node %s (its addresses: %s)", f.Dst, f.Server, addrList(server))
			continue
		}
		p.rxAddr = p.dst
		if f.Reverse {
			p.rxAddr = addrOfFamily(client, p.dst)
			if !p.rxAddr.IsValid() {
				bad("node %s has no address of the same family as %s", f.Client, p.dst)
				continue
			}
		}
		var ok bool
		if p.hops, p.nodes, ok = path(s, f.dataFrom(), f.dataTo()); !ok {
			bad("no path from %s to %s in the topology", f.dataFrom(), f.dataTo())
			continue
		}
		plans = append(plans, p)
	}
	if len(problems) > 0 {
		return nil, errors.New(strings.Join(problems, "\n"))
	}
	for _, p := range plans {
		if p.f.Engine == EngineIperf3 {
			if _, err := lookIperf3(); err != nil {
				return nil, fmt.Errorf("flow %s: the iperf3 engine needs iperf3 installed (apt-get install iperf3): %w", p.f.Name, err)
			}
		}
	}
	return plans, nil
}

func lookIperf3() (string, error) { return exec.LookPath("iperf3") }

func checkNode(s *topo.Spec, name string, bad func(string, ...any)) *topo.Node {
	if name == "" {
		return nil
	}
	n := s.Node(name)
	if n == nil {
		var hosts []string
		for _, h := range s.Hosts() {
			hosts = append(hosts, h.Name)
		}
		bad("unknown node %q (hosts and routers of this lab: %s)", name, strings.Join(hosts, ", "))
		return nil
	}
	if n.Kind == topo.KindSwitch {
		bad("node %s is a switch (layer 2, no address); flows run between hosts and routers", name)
		return nil
	}
	return n
}

func hasAddr(n *topo.Node, a netip.Addr) bool {
	for _, ifc := range n.Interfaces {
		for _, p := range ifc.Addrs {
			if p.Addr() == a {
				return true
			}
		}
	}
	return false
}

func addrList(n *topo.Node) string {
	var out []string
	for _, ifc := range n.Interfaces {
		for _, p := range ifc.Addrs {
			out = append(out, p.Addr().String())
		}
	}
	return strings.Join(out, ", ")
}

// addrOfFamily is a node's first address of a's family.
func addrOfFamily(n *topo.Node, a netip.Addr) netip.Addr {
	if pa, ok := emu.PrimaryAddr(n); ok && pa.Is4() == a.Is4() {
		return pa
	}
	for _, ifc := range n.Interfaces {
		for _, p := range ifc.Addrs {
			if p.Addr().Is4() == a.Is4() {
				return p.Addr()
			}
		}
	}
	return netip.Addr{}
}
