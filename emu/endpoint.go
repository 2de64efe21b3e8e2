package emu

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/emuctl/emuctl/topo"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// EndpointNetns says where a node's interface lives while the lab is up:
// the node's namespace and the interface's own name, except for a port of
// an ovs switch, which lives in the root namespace under the port name
// emuctl gave it (ovs-vswitchd attaches only devices of its namespace),
// and the ends of a kind root node, which are in the root namespace.
// nsPath can be opened as a namespace file.
func EndpointNetns(st *State, node, iface string) (nsPath, ifname string) {
	if st.OVS != nil {
		for _, b := range st.OVS.Bridges {
			if b.Node != node {
				continue
			}
			for _, p := range b.Ports {
				if p.Iface == iface {
					return hostNetnsPath(), p.Name
				}
			}
		}
	}
	if st.Spec != nil {
		if n := st.Spec.Node(node); n != nil && n.Kind == topo.KindRoot {
			return hostNetnsPath(), iface // the machine's own namespace
		}
	}
	return filepath.Join(NetnsDir, topo.Namespace(st.Lab, node)), iface
}

// hostNetnsPath is a path to the host (root) network namespace as this
// process saw it at start, valid while the process runs.
func hostNetnsPath() string {
	if hostNetns.IsOpen() {
		return fmt.Sprintf("/proc/%d/fd/%d", os.Getpid(), int(hostNetns))
	}
	return "/proc/1/ns/net"
}

// openEnd opens the namespace of a link end and a netlink handle in it,
// and returns the end's device name there (EndpointNetns).
func openEnd(st *State, ep topo.Endpoint) (netns.NsHandle, *netlink.Handle, string, error) {
	path, name := EndpointNetns(st, ep.Node, ep.Iface)
	h, err := netns.GetFromPath(path)
	if err != nil {
		return -1, nil, "", err
	}
	nh, err := netlink.NewHandleAt(h, unix.NETLINK_ROUTE)
	if err != nil {
		h.Close()
		return -1, nil, "", err
	}
	return h, nh, name, nil
}
