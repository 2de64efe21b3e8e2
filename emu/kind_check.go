package emu

import (
	"cmp"
	"context"
	"fmt"
	"net"
	"slices"
	"strings"
	"time"

	"github.com/emuctl/emuctl/internal/sysctl"
	"github.com/emuctl/emuctl/ovs"
	"github.com/emuctl/emuctl/topo"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Read back and verify: each node kind reads what it built back from the
// kernel (and OVSDB), and compares it with the node's spec, so a lab —
// brought up, or changed while it runs — can be checked against its
// topology without traffic (emuctl verify --built; lab.VerifyBuilt).
// Link parameters are measured by Verify; what is checked here is what
// the kinds build: namespaces, interfaces, their MACs, MTUs and
// addresses, a switch's bridge and its ports, OVS bridges and ports, the
// kernel settings a node's kind needs.

// IfaceBuilt is one interface of a node as the kernel has it.
type IfaceBuilt struct {
	Name string `json:"name"`
	// Device is the kernel's name when it is not Name (an OVS port).
	Device string `json:"device,omitempty"`
	MAC    string `json:"mac,omitempty"`
	MTU    int    `json:"mtu"`
	// Up is the administrative state (link down and schedules change
	// it; it is shown, not judged).
	Up bool `json:"up"`
	// Master is the device the interface is a port of (a bridge).
	Master string   `json:"master,omitempty"`
	Addrs  []string `json:"addrs,omitempty"`
}

// NodeBuilt is one node as read back, and what differs from its spec.
type NodeBuilt struct {
	Node   string       `json:"node"`
	Kind   string       `json:"kind"`
	Netns  string       `json:"netns,omitempty"`
	Ifaces []IfaceBuilt `json:"interfaces"`
	// Sysctls are the kernel settings the node's kind and its topology
	// ask for, as the kernel has them.
	Sysctls map[string]string `json:"sysctls,omitempty"`
	// Bridge is a switch's bridge device (linux-bridge, or an access
	// point's), or an OVS bridge's name in OVSDB.
	Bridge string `json:"bridge,omitempty"`
	// Problems are the differences from the spec, each a sentence.
	Problems []string `json:"problems,omitempty"`
}

// OK says whether the node is built as its spec says.
func (b NodeBuilt) OK() bool { return len(b.Problems) == 0 }

// VerifyBuilt reads every node of a running lab back and compares it
// with the lab's topology. A lab over several machines is refused: each
// machine's kernel holds its own nodes, and reading them through the
// workers is not supported yet.
func VerifyBuilt(lab string) ([]NodeBuilt, error) {
	st, err := ReadState(lab)
	if err != nil {
		return nil, err
	}
	if st.Status != StatusUp {
		return nil, fmt.Errorf("lab %s is %s, not up", lab, st.Status)
	}
	if st.Spec.Cluster != nil {
		return nil, fmt.Errorf("lab %s runs over several machines: reading its nodes back is supported on one machine only yet (emuctl verify measures its links)", lab)
	}
	out := make([]NodeBuilt, 0, len(st.Spec.Nodes))
	for i := range st.Spec.Nodes {
		sn := &st.Spec.Nodes[i]
		k := nodeKindOf(sn)
		b := k.readBack(st, sn)
		b.Node, b.Kind = sn.Name, k.name()
		k.verify(st, sn, &b)
		out = append(out, b)
	}
	return out, nil
}

// readIfaces reads the named interfaces (topology name -> device name)
// through h; one missing is a problem of b.
func readIfaces(h *netlink.Handle, names [][2]string, b *NodeBuilt) map[string]netlink.Link {
	found := map[string]netlink.Link{}
	for _, nm := range names {
		l, err := h.LinkByName(nm[1])
		if err != nil {
			where := "its namespace"
			if b.Netns == "" {
				where = "the machine's namespace"
			}
			if nm[0] != nm[1] {
				b.Problems = append(b.Problems, fmt.Sprintf("interface %s (device %s) is missing from %s", nm[0], nm[1], where))
			} else {
				b.Problems = append(b.Problems, fmt.Sprintf("interface %s is missing from %s", nm[0], where))
			}
			continue
		}
		found[nm[0]] = l
		a := l.Attrs()
		ib := IfaceBuilt{Name: nm[0], MTU: a.MTU, Up: a.Flags&net.FlagUp != 0, MAC: a.HardwareAddr.String()}
		if nm[0] != nm[1] {
			ib.Device = nm[1]
		}
		if a.MasterIndex > 0 {
			if m, err := h.LinkByIndex(a.MasterIndex); err == nil {
				ib.Master = m.Attrs().Name
			}
		}
		if addrs, err := h.AddrList(l, unix.AF_UNSPEC); err == nil {
			for _, ad := range addrs {
				if ad.IP.IsLinkLocalUnicast() {
					continue
				}
				ib.Addrs = append(ib.Addrs, ad.IPNet.String())
			}
		}
		b.Ifaces = append(b.Ifaces, ib)
	}
	return found
}

// verifyIfaces compares the interfaces read back with the spec's: MAC,
// MTU (where the topology sets one) and every address.
func verifyIfaces(sn *topo.Node, b *NodeBuilt) {
	for _, ifc := range sn.Interfaces {
		i := slices.IndexFunc(b.Ifaces, func(x IfaceBuilt) bool { return x.Name == ifc.Name })
		if i < 0 {
			continue // said missing
		}
		got := b.Ifaces[i]
		if ifc.MAC != "" && ifc.External == nil && !strings.EqualFold(got.MAC, ifc.MAC) {
			b.Problems = append(b.Problems, fmt.Sprintf("interface %s has MAC %s, the topology says %s", ifc.Name, got.MAC, ifc.MAC))
		}
		if ifc.MTU > 0 && got.MTU != ifc.MTU {
			b.Problems = append(b.Problems, fmt.Sprintf("interface %s has MTU %d, the topology says %d", ifc.Name, got.MTU, ifc.MTU))
		}
		for _, a := range ifc.Addrs {
			if !slices.Contains(got.Addrs, a.String()) {
				b.Problems = append(b.Problems, fmt.Sprintf("interface %s lacks address %s (it has %s)", ifc.Name, a, orNone(strings.Join(got.Addrs, ", "))))
			}
		}
	}
}

// ownIfaceNames are a node's interfaces, each under its own name.
func ownIfaceNames(sn *topo.Node) [][2]string {
	var out [][2]string
	for _, ifc := range sn.Interfaces {
		out = append(out, [2]string{ifc.Name, ifc.Name})
	}
	return out
}

// readBack is a namespace's node: its interfaces and the kernel settings
// its kind and topology ask for.
func (nsNode) readBack(st *State, sn *topo.Node) NodeBuilt {
	return readNamespace(st, sn, false)
}

// readNamespace reads a namespace's node through one handle: its
// interfaces, its kernel settings (all in one visit), and with bridge its
// bridge device (b.Bridge is set only when it is there).
func readNamespace(st *State, sn *topo.Node, bridge bool) NodeBuilt {
	b := NodeBuilt{Netns: topo.Namespace(st.Lab, sn.Name)}
	ns, h, err := openNamed(b.Netns)
	if err != nil {
		b.Problems = append(b.Problems, fmt.Sprintf("its namespace %s cannot be opened: %v", b.Netns, err))
		return b
	}
	defer ns.Close()
	defer h.Close()
	readIfaces(h, ownIfaceNames(sn), &b)
	if bridge {
		if br, err := h.LinkByName(sn.Name); err == nil && br.Type() == "bridge" {
			b.Bridge = sn.Name
		} else {
			b.Problems = append(b.Problems, fmt.Sprintf("its bridge %s is missing from its namespace", sn.Name))
		}
	}
	if want := append(nodeSysctls(sn), sn.Sysctls...); len(want) > 0 {
		b.Sysctls = map[string]string{}
		do(ns, func() error {
			for _, kv := range want {
				v, err := sysctl.Read(kv.Key)
				b.Sysctls[kv.Key] = strings.TrimSpace(string(v))
				if err != nil {
					b.Sysctls[kv.Key] = "? (" + err.Error() + ")"
				}
			}
			return nil
		})
	}
	return b
}

// verify compares a namespace's node with its spec.
func (nsNode) verify(st *State, sn *topo.Node, b *NodeBuilt) {
	verifyIfaces(sn, b)
	for _, kv := range append(nodeSysctls(sn), sn.Sysctls...) {
		if got, ok := b.Sysctls[kv.Key]; ok && norm(got) != norm(kv.Value) {
			b.Problems = append(b.Problems, fmt.Sprintf("sysctl %s is %s, the topology (or the node's kind) says %s", kv.Key, got, kv.Value))
		}
	}
}

// readBack is a Linux bridge's: a namespace's node, and its bridge.
func (bridgeKind) readBack(st *State, sn *topo.Node) NodeBuilt {
	return readNamespace(st, sn, true)
}

// verify: a namespace's node whose every interface is a port of the
// bridge named after the switch.
func (k bridgeKind) verify(st *State, sn *topo.Node, b *NodeBuilt) {
	k.nsNode.verify(st, sn, b)
	verifyPorts(sn, b)
}

// verifyPorts checks that every wired interface of a bridge switch is
// its bridge's port (an access point's radio joins it too, through
// hostapd); a missing bridge is readNamespace's problem.
func verifyPorts(sn *topo.Node, b *NodeBuilt) {
	if b.Bridge == "" {
		return
	}
	for _, ib := range b.Ifaces {
		if ifc := sn.Iface(ib.Name); ifc != nil && ifc.External == nil && ib.Master != sn.Name {
			b.Problems = append(b.Problems, fmt.Sprintf("interface %s is not a port of bridge %s (master: %s)", ib.Name, sn.Name, orNone(ib.Master)))
		}
	}
}

// readBack of an access point: a namespace's node, with its bridge when
// it bridges (a routed one is a router).
func (apKind) readBack(st *State, sn *topo.Node) NodeBuilt {
	return readNamespace(st, sn, sn.Kind == topo.KindSwitch)
}

func (k apKind) verify(st *State, sn *topo.Node, b *NodeBuilt) {
	k.nsNode.verify(st, sn, b)
	if sn.Kind == topo.KindSwitch {
		verifyPorts(sn, b)
	}
}

// readBack of an ovs switch: its ports are devices in the machine's
// namespace, under the names the state records; its bridge and ports
// are read from OVSDB in verify.
func (ovsKind) readBack(st *State, sn *topo.Node) NodeBuilt {
	var b NodeBuilt
	port := map[string]string{} // interface -> its port's device
	if st.OVS != nil {
		for _, br := range st.OVS.Bridges {
			if br.Node != sn.Name {
				continue
			}
			b.Bridge = br.Name
			for _, p := range br.Ports {
				port[p.Iface] = p.Name
			}
		}
	}
	if b.Bridge == "" {
		b.Problems = append(b.Problems, "the lab's state records no OVS bridge for it")
		return b
	}
	var names [][2]string
	for _, ifc := range sn.Interfaces {
		if dev, ok := port[ifc.Name]; ok {
			names = append(names, [2]string{ifc.Name, dev})
		} else {
			b.Problems = append(b.Problems, fmt.Sprintf("interface %s has no OVS port in the lab's state", ifc.Name))
		}
	}
	ns, h, err := openNamed("")
	if err != nil {
		b.Problems = append(b.Problems, fmt.Sprintf("the machine's namespace: %v", err))
		return b
	}
	defer ns.Close()
	defer h.Close()
	readIfaces(h, names, &b)
	return b
}

// verify: every interface of the switch is a port of its bridge in
// OVSDB, and a device in the machine's namespace.
func (ovsKind) verify(st *State, sn *topo.Node, b *NodeBuilt) {
	if b.Bridge == "" {
		return
	}
	verifyIfaces(sn, b)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := ovs.Dial(ctx, st.OVS.DB)
	if err != nil {
		b.Problems = append(b.Problems, fmt.Sprintf("OVSDB %s: %v", st.OVS.DB, err))
		return
	}
	defer c.Close()
	brs, err := c.Show(ctx, Marker(st.Lab))
	if err != nil {
		b.Problems = append(b.Problems, fmt.Sprintf("OVSDB %s: %v", st.OVS.DB, err))
		return
	}
	i := slices.IndexFunc(brs, func(x ovs.BridgeInfo) bool { return x.Name == b.Bridge })
	if i < 0 {
		b.Problems = append(b.Problems, fmt.Sprintf("bridge %s is missing from OVSDB", b.Bridge))
		return
	}
	for _, ib := range b.Ifaces {
		dev := cmp.Or(ib.Device, ib.Name)
		if !slices.ContainsFunc(brs[i].Ports, func(p ovs.PortInfo) bool { return p.Name == dev }) {
			b.Problems = append(b.Problems, fmt.Sprintf("interface %s (port %s) is not a port of OVS bridge %s", ib.Name, dev, b.Bridge))
		}
	}
}

// readBack of the machine's own namespace: the lab's link ends there.
func (rootKind) readBack(st *State, sn *topo.Node) NodeBuilt {
	var b NodeBuilt
	ns, h, err := openNamed("")
	if err != nil {
		b.Problems = append(b.Problems, fmt.Sprintf("the machine's namespace: %v", err))
		return b
	}
	defer ns.Close()
	defer h.Close()
	readIfaces(h, ownIfaceNames(sn), &b)
	return b
}

func (rootKind) verify(st *State, sn *topo.Node, b *NodeBuilt) { verifyIfaces(sn, b) }
