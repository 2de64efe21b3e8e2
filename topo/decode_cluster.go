package topo

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// Keys of a lab over several machines (spec_cluster.go).
var (
	machineKeys     = []string{"ssh", "underlay", "mtu", "rate"}
	tunnelKeys      = []string{"port", "vni_base"}
	placementValues = []string{"auto", "explicit"}
)

// rawCluster is machines:, placement: and tunnel: as written.
type rawCluster struct {
	machines     []*rawMachine
	machinesLoc  loc
	placement    string // "" = not given
	placementLoc loc
	port         int
	vniBase      int
	vniLoc       loc
}

type rawMachine struct {
	m           Machine
	loc         loc
	underlayLoc loc
	mtuLoc      loc
}

// clusterTop decodes one of the top-level keys machines, placement and
// tunnel.
func (d *dec) clusterTop(e entry, doc *rawDoc) {
	if doc.cluster == nil {
		doc.cluster = &rawCluster{port: DefaultVXLANPort, vniBase: DefaultVNIBase}
	}
	c := doc.cluster
	switch e.Key {
	case "machines":
		c.machinesLoc = at(e.K, "machines")
		for _, me := range d.entries(e.V, "machines") {
			p := "machines." + keyPath(me.Key)
			if msg := checkNodeName(me.Key); msg != "" {
				d.errorf(at(me.K, p), "%s", strings.Replace(msg, "node name", "machine name", 1))
				continue
			}
			if m := d.machine(me, p); m != nil {
				c.machines = append(c.machines, m)
			}
		}
		if len(c.machines) == 0 && !d.failed() {
			d.errorf(c.machinesLoc, "no machines defined: add at least one (e.g. machines: {m1: {ssh: local, underlay: 192.168.100.1}})")
		}
	case "placement":
		if s, ok := d.oneOf(e.V, "placement", "placement", placementValues); ok {
			c.placement, c.placementLoc = s, at(e.V, "placement")
		}
	case "tunnel":
		for _, te := range d.fields(e.V, "tunnel", tunnelKeys) {
			p := joinPath("tunnel", te.Key)
			switch te.Key {
			case "port":
				if v, ok := d.integer(te.V, p, 1, 65535); ok {
					c.port = int(v)
				}
			case "vni_base":
				if v, ok := d.integer(te.V, p, 1, 1<<24-1); ok {
					c.vniBase, c.vniLoc = int(v), at(te.V, p)
				}
			}
		}
	}
}

// machine decodes one machines: entry.
func (d *dec) machine(me entry, path string) *rawMachine {
	m := &rawMachine{m: Machine{Name: me.Key}, loc: at(me.K, path)}
	sshSet, bad := false, false
	for _, e := range d.fields(me.V, path, machineKeys) {
		p := joinPath(path, e.Key)
		switch e.Key {
		case "ssh":
			sshSet = true
			s, ok := d.str(e.V, p, "local or user@host[:port]")
			if !ok {
				bad = true
			} else if err := parseSSH(s, &m.m); err != "" {
				d.errorf(at(e.V, p), "%s (valid: local, or user@host[:port] such as root@10.0.0.11:22)", err)
				bad = true
			}
		case "underlay":
			s, ok := d.str(e.V, p, "an IPv4 address such as 192.168.100.11")
			if !ok {
				bad = true
				continue
			}
			a, err := netip.ParseAddr(s)
			if err != nil || !a.Is4() || a.IsUnspecified() || a.IsMulticast() || a.IsLoopback() {
				d.errorf(at(e.V, p), "%q is not a unicast IPv4 address (e.g. 192.168.100.11; VXLAN over IPv6 is not supported yet)", clip(s))
				bad = true
				continue
			}
			m.m.Underlay, m.underlayLoc = a, at(e.V, p)
		case "mtu":
			if v, ok := d.integer(e.V, p, 1280, 65535); ok {
				m.m.MTU, m.mtuLoc = int(v), at(e.V, p)
			} else {
				bad = true
			}
		case "rate":
			if v, ok := d.rate(e.V, p); ok && v > 0 {
				m.m.Rate = v
			} else {
				if ok {
					d.errorf(at(e.V, p), "the underlay's rate must be above 0 (e.g. rate: 1gbit)")
				}
				bad = true
			}
		}
	}
	if !sshSet {
		d.errorf(m.loc, "machine %s has no ssh: key (valid: ssh: local, or ssh: user@host[:port])", me.Key)
		return nil
	}
	if bad {
		return nil
	}
	if !m.m.Underlay.IsValid() {
		if a, err := netip.ParseAddr(m.m.Host); err == nil && a.Is4() {
			m.m.Underlay = a // the SSH address carries the tunnels too
		} else {
			d.errorf(m.loc, "machine %s has no underlay: address: give the IPv4 address its tunnels use (e.g. underlay: 192.168.100.11)", me.Key)
			return nil
		}
	}
	if m.m.MTU == 0 && m.m.Local() {
		m.m.MTU = DefaultLocalMTU
	}
	return m
}

// parseSSH fills m from "local" or "user@host[:port]", or says what is
// wrong.
func parseSSH(s string, m *Machine) string {
	m.SSH = s
	if s == SSHLocal {
		return ""
	}
	user, hostport, ok := strings.Cut(s, "@")
	if !ok || user == "" || hostport == "" {
		return fmt.Sprintf("%q is not an SSH destination", clip(s))
	}
	host, port := hostport, 22
	if h, p, found := strings.Cut(hostport, ":"); found && !strings.Contains(p, ":") {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return fmt.Sprintf("%q: port %q is not 1 .. 65535", clip(s), clip(p))
		}
		host, port = h, n
	}
	if host == "" || strings.ContainsAny(host, " /") {
		return fmt.Sprintf("%q: %q is not a host name or address", clip(s), clip(host))
	}
	m.User, m.Host, m.Port = user, host, port
	return ""
}

// nodeMachine decodes a node's machine: key.
func (d *dec) nodeMachine(nd *rawNode, v *yaml.Node, path string) {
	if s, ok := d.str(v, path, "a machine name"); ok {
		nd.machine, nd.machineLoc = s, at(v, path)
	}
}

// The top-level keys of a lab over several machines, after the others in
// documentation order.
func init() { docKeys = append(docKeys, "machines", "placement", "tunnel") }
