package topo

import (
	"encoding/json"
	"fmt"
	"strings"
)

// dump renders a Spec as compact text for golden files (MACs left out:
// they are checked separately).
func dump(s *Spec) string {
	var b strings.Builder
	fmt.Fprintf(&b, "lab %s routing=%s source=%s\n", s.Name, s.Routing, s.Source)
	for _, n := range s.Nodes {
		fmt.Fprintf(&b, "node %s %s", n.Name, n.Kind)
		if n.SwitchType != "" {
			fmt.Fprintf(&b, " %s", n.SwitchType)
		}
		if n.STP {
			b.WriteString(" stp")
		}
		b.WriteString("\n")
		for _, ifc := range n.Interfaces {
			fmt.Fprintf(&b, "  if %s link=%d", ifc.Name, ifc.Link)
			if ifc.Peer != "" {
				fmt.Fprintf(&b, " peer=%s", ifc.Peer)
			}
			fmt.Fprintf(&b, " mtu=%d", ifc.MTU)
			if ifc.Wireless {
				fmt.Fprintf(&b, " wireless")
			}
			if ifc.External != nil {
				fmt.Fprintf(&b, " external=%s force=%v", ifc.External.HostName, ifc.External.Force)
			}
			for _, a := range ifc.Addrs {
				fmt.Fprintf(&b, " %s", a)
			}
			b.WriteString("\n")
		}
		for _, r := range n.Routes {
			fmt.Fprintf(&b, "  route %s", r.Dst)
			if r.Via.IsValid() {
				fmt.Fprintf(&b, " via %s", r.Via)
			}
			if r.Dev != "" {
				fmt.Fprintf(&b, " dev %s", r.Dev)
			}
			if r.Auto {
				b.WriteString(" auto")
			}
			b.WriteString("\n")
		}
		for _, kv := range n.Sysctls {
			fmt.Fprintf(&b, "  sysctl %s=%s\n", kv.Key, kv.Value)
		}
		for _, kv := range n.Env {
			fmt.Fprintf(&b, "  env %s=%q\n", kv.Key, kv.Value)
		}
		for _, s := range n.Start {
			fmt.Fprintf(&b, "  start %q\n", s)
		}
		if n.TCP != nil {
			j, _ := json.Marshal(n.TCP)
			fmt.Fprintf(&b, "  tcp %s\n", j)
		}
		if n.MPTCP != nil {
			j, _ := json.Marshal(n.MPTCP)
			fmt.Fprintf(&b, "  mptcp %s\n", j)
		}
		if n.OVS != nil {
			j, _ := json.Marshal(n.OVS)
			fmt.Fprintf(&b, "  ovs %s\n", j)
		}
		if n.AP != nil {
			j, _ := json.Marshal(n.AP)
			fmt.Fprintf(&b, "  ap %s\n", j)
		}
		if n.Station != nil {
			j, _ := json.Marshal(n.Station)
			fmt.Fprintf(&b, "  station %s\n", j)
		}
	}
	for _, a := range s.WiFiAdhoc {
		j, _ := json.Marshal(a)
		fmt.Fprintf(&b, "adhoc %s\n", j)
	}
	for i, l := range s.Links {
		fmt.Fprintf(&b, "link %d %s -- %s pos=%s", i, l.A, l.B, l.Pos)
		if l.Params != nil {
			fmt.Fprintf(&b, " params=%q", l.Params.String())
		}
		b.WriteString("\n")
	}
	return b.String()
}
