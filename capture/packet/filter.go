package packet

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Filter is a capture filter: a conjunction of simple terms. The zero
// Filter matches everything.
type Filter struct {
	// Proto restricts the IP protocol (0 = any).
	Proto uint8
	// Ports: a packet matches when its source or destination port is one
	// of them (empty = any).
	Ports []uint16
	// Hosts: a packet matches when its source or destination address is
	// one of them (empty = any).
	Hosts []netip.Addr
	text  string
}

// ParseFilter parses a filter expression: terms joined by "and" (or just
// spaces) — "tcp", "udp", "icmp", "port N", "host ADDR". Repeating "port"
// or "host" means any of them. Examples: "tcp and port 5201",
// "udp host 10.0.0.2". An empty string matches everything.
func ParseFilter(s string) (Filter, error) {
	f := Filter{text: strings.TrimSpace(s)}
	tok := strings.Fields(strings.ToLower(s))
	for i := 0; i < len(tok); i++ {
		switch t := tok[i]; t {
		case "and", "&&":
		case "tcp", "udp", "icmp", "icmp6":
			p := map[string]uint8{"tcp": ProtoTCP, "udp": ProtoUDP, "icmp": ProtoICMP, "icmp6": ProtoICMPv6}[t]
			if f.Proto != 0 && f.Proto != p {
				return Filter{}, fmt.Errorf("filter %q: two protocols can never both match (this filter language only has \"and\")", s)
			}
			f.Proto = p
		case "port", "host":
			if i+1 >= len(tok) {
				return Filter{}, fmt.Errorf("filter %q: %q needs a value", s, t)
			}
			i++
			if t == "port" {
				n, err := strconv.ParseUint(tok[i], 10, 16)
				if err != nil || n == 0 {
					return Filter{}, fmt.Errorf("filter %q: bad port %q (1..65535)", s, tok[i])
				}
				f.Ports = append(f.Ports, uint16(n))
			} else {
				a, err := netip.ParseAddr(tok[i])
				if err != nil {
					return Filter{}, fmt.Errorf("filter %q: bad host %q (an IPv4 or IPv6 address)", s, tok[i])
				}
				f.Hosts = append(f.Hosts, a.Unmap())
			}
		default:
			return Filter{}, fmt.Errorf("filter %q: unknown term %q (valid: tcp, udp, icmp, icmp6, port N, host ADDR, joined by \"and\")", s, t)
		}
	}
	return f, nil
}

// String is the expression the filter was parsed from.
func (f Filter) String() string { return f.text }

// Empty reports whether the filter matches everything.
func (f Filter) Empty() bool { return f.Proto == 0 && len(f.Ports) == 0 && len(f.Hosts) == 0 }

// Match reports whether a packet passes. ok is Decode's result: non-IP
// packets pass only the empty filter.
func (f Filter) Match(in *Info, ok bool) bool {
	if f.Empty() {
		return true
	}
	if !ok {
		return false
	}
	if f.Proto != 0 && in.Proto != f.Proto {
		return false
	}
	if len(f.Ports) > 0 {
		if !in.Transport {
			return false
		}
		hit := false
		for _, p := range f.Ports {
			if in.SrcPort == p || in.DstPort == p {
				hit = true
				break
			}
		}
		if !hit {
			return false
		}
	}
	if len(f.Hosts) > 0 {
		hit := false
		for _, h := range f.Hosts {
			if in.Src.Unmap() == h || in.Dst.Unmap() == h {
				hit = true
				break
			}
		}
		if !hit {
			return false
		}
	}
	return true
}
