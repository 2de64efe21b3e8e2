package topo

import (
	"net/netip"

	"github.com/emuctl/emuctl/units"
)

// Cluster places a lab on several machines (machines:, placement:,
// tunnel:): every node on one machine, and one unicast VXLAN tunnel per
// link whose ends are on two machines (a cut link). It is resolved once,
// with the rest of the Spec, so every machine builds its part from the
// same addresses, MACs and VNIs.
type Cluster struct {
	Machines []Machine `json:"machines"`
	// Placement is "auto" (nodes without machine: placed by Partition) or
	// "explicit" (every node names its machine).
	Placement string `json:"placement"`
	// Nodes maps every node to its machine.
	Nodes map[string]string `json:"nodes"`
	// Port is the tunnels' UDP port; VNIBase the first VNI (cut k gets
	// VNIBase + k).
	Port    int   `json:"port"`
	VNIBase int   `json:"vni_base"`
	Cuts    []Cut `json:"cuts,omitempty"`
	// Slice is set only in the copy of the Spec a worker deploys: the
	// machine whose nodes it builds. Empty in the controller's Spec.
	Slice string `json:"slice,omitempty"`
}

// Machine is one machine of a cluster.
type Machine struct {
	Name string `json:"name"`
	// SSH is "local" (a machine emuctl makes on this host: a network
	// namespace with its own mount namespace) or "user@host[:port]".
	SSH  string `json:"ssh"`
	User string `json:"user,omitempty"`
	Host string `json:"host,omitempty"`
	Port int    `json:"port,omitempty"`
	// Underlay is the machine's address the tunnels use.
	Underlay netip.Addr `json:"underlay"`
	// MTU is the underlay's MTU (0: not given; read at up).
	MTU int `json:"mtu,omitempty"`
	// Rate is the underlay's capacity (rate:; 0: not given, the link
	// speed of the machine's underlay device is read at up). A warning
	// says when the cut links come near it.
	Rate units.BitRate `json:"rate,omitempty"`
	Pos  string        `json:"pos,omitempty"`
}

// SSHLocal is Machine.SSH for a machine on this host.
const SSHLocal = "local"

// Local reports whether the machine is made on this host.
func (m *Machine) Local() bool { return m.SSH == SSHLocal }

// Cut is a link whose ends are on two machines.
type Cut struct {
	Link int `json:"link"`
	VNI  int `json:"vni"`
	// A and B are the machines of the link's A and B ends.
	A string `json:"a"`
	B string `json:"b"`
}

// VXLANOverhead is what VXLAN over IPv4 adds to a frame on the underlay
// (outer IPv4 20 + UDP 8 + VXLAN 8 + inner Ethernet 14): a link of MTU m
// needs an underlay MTU of at least m + 50.
const VXLANOverhead = 50

// DefaultVXLANPort is the IANA VXLAN port; DefaultVNIBase the first VNI.
const (
	DefaultVXLANPort = 4789
	DefaultVNIBase   = 10000
	// DefaultLocalMTU is a local machine's underlay MTU when the file
	// gives none: room for a 1500-byte link and VXLAN's 50 bytes.
	DefaultLocalMTU = 1550
)

// Machine returns the named machine, or nil.
func (c *Cluster) Machine(name string) *Machine {
	if c == nil {
		return nil
	}
	for i := range c.Machines {
		if c.Machines[i].Name == name {
			return &c.Machines[i]
		}
	}
	return nil
}

// CutOf returns link li's tunnel, or nil when the link is not cut.
func (c *Cluster) CutOf(li int) *Cut {
	if c == nil {
		return nil
	}
	for i := range c.Cuts {
		if c.Cuts[i].Link == li {
			return &c.Cuts[i]
		}
	}
	return nil
}

// Here reports whether node is built by this Spec's deployment: always
// without a cluster or in the controller's Spec (Slice ""), else when
// the node is on the slice's machine.
func (s *Spec) Here(node string) bool {
	c := s.Cluster
	return c == nil || c.Slice == "" || c.Nodes[node] == c.Slice
}

// SliceFor returns a copy of s whose Cluster.Slice is machine: what the
// worker on that machine deploys (the Spec is shared, not deep-copied).
func (s *Spec) SliceFor(machine string) *Spec {
	cp := *s
	c := *s.Cluster
	c.Slice = machine
	cp.Cluster = &c
	return &cp
}
