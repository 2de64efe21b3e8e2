package topo

import (
	"fmt"
	"net/netip"
	"strings"

	"go.yaml.in/yaml/v3"
)

// route decodes one explicit route: a string "default via 10.0.1.254",
// "10.9.0.0/16 via 10.0.1.254 dev h1-eth0", "10.9.0.0/16 dev h1-eth1", or a
// mapping {to, via, dev}. Whether via is reachable is checked once
// addresses are known.
func (d *dec) route(n *yaml.Node, path string) (rawRoute, bool) {
	r := rawRoute{loc: at(n, path)}
	var to, via, dev string
	v := deref(n)
	switch {
	case v != nil && v.Kind == yaml.MappingNode:
		for _, f := range d.fields(v, path, routeKeys) {
			fp := joinPath(path, f.Key)
			s, ok := d.str(f.V, fp, "a string")
			if !ok {
				return r, false
			}
			switch f.Key {
			case "to":
				to = s
			case "via":
				via = s
			case "dev":
				dev = s
			}
		}
		if to == "" {
			d.errorf(r.loc, "a route needs to: (a prefix such as 10.9.0.0/16, or default)")
			return r, false
		}
	case v != nil && v.Kind == yaml.ScalarNode && v.Tag != "!!null":
		var msg string
		if to, via, dev, msg = splitRoute(v.Value); msg != "" {
			d.errorf(r.loc, "%s", msg)
			return r, false
		}
	default:
		d.errorf(r.loc, "a route must be a string such as \"default via 10.0.1.254\" or a mapping {to, via, dev}, got %s", describe(n))
		return r, false
	}
	var msg string
	if r, msg = buildRoute(r, to, via, dev); msg != "" {
		d.errorf(r.loc, "%s", msg)
		return r, false
	}
	return r, true
}

const routeSyntax = `"<prefix>|default [via <ip>] [dev <iface>]"`

// splitRoute splits "<dst> [via X] [dev Y]" into its words.
func splitRoute(s string) (to, via, dev, msg string) {
	f := strings.Fields(s)
	if len(f) == 0 || len(f)%2 != 1 {
		return "", "", "", fmt.Sprintf("route %q is not %s", clip(s), routeSyntax)
	}
	to = f[0]
	for i := 1; i+1 < len(f); i += 2 {
		switch f[i] {
		case "via":
			if via != "" {
				return "", "", "", fmt.Sprintf("route %q has via twice", clip(s))
			}
			via = f[i+1]
		case "dev":
			if dev != "" {
				return "", "", "", fmt.Sprintf("route %q has dev twice", clip(s))
			}
			dev = f[i+1]
		default:
			return "", "", "", fmt.Sprintf("route %q: unknown word %q (valid: via, dev; the form is %s)", clip(s), clip(f[i]), routeSyntax)
		}
	}
	return to, via, dev, ""
}

// buildRoute parses the parts of a route and checks they agree.
func buildRoute(r rawRoute, to, via, dev string) (rawRoute, string) {
	if via == "" && dev == "" {
		return r, fmt.Sprintf("route to %s needs via <gateway> or dev <interface>", clip(to))
	}
	if via != "" {
		a, err := netip.ParseAddr(via)
		if err != nil || a.Zone() != "" || a.IsUnspecified() || a.IsMulticast() || a.IsLoopback() {
			return r, fmt.Sprintf("via %q is not a unicast IP address (e.g. 10.0.1.254)", clip(via))
		}
		r.via = a.Unmap()
	}
	if dev != "" {
		if msg := checkIfaceName(dev); msg != "" {
			return r, "dev: " + msg
		}
		r.dev = dev
	}
	switch {
	case to == "default" && r.via.Is6():
		r.dst = netip.MustParsePrefix("::/0")
	case to == "default":
		r.dst = netip.MustParsePrefix("0.0.0.0/0")
	default:
		p, err := netip.ParsePrefix(to)
		if err != nil {
			a, err2 := netip.ParseAddr(to)
			if err2 != nil || a.Zone() != "" {
				return r, fmt.Sprintf("route destination %q is not a prefix such as 10.9.0.0/16, an address, or default", clip(to))
			}
			p = netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()) // a host route
		}
		if p.Addr().Is4In6() {
			return r, fmt.Sprintf("route destination %s is IPv4-mapped: write it as IPv4", p)
		}
		if p != p.Masked() {
			return r, fmt.Sprintf("route destination %s has host bits set: did you mean %s?", p, p.Masked())
		}
		r.dst = p
	}
	if r.via.IsValid() && r.via.Is4() != r.dst.Addr().Is4() {
		return r, fmt.Sprintf("route to %s via %s mixes IPv4 and IPv6", r.dst, r.via)
	}
	return r, ""
}
