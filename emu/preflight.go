package emu

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/emuctl/emuctl/netcfg"
	"github.com/emuctl/emuctl/tc"
	"github.com/emuctl/emuctl/topo"
	"github.com/vishvananda/netlink"
)

// preflightAll runs preflight, plans the shaped links (probing the
// kernel only when some link is shaped), and asks the kinds with
// lab-wide parts whether the lab can be built (OVS, Wi-Fi: their
// kindPhase's plan).
func preflightAll(spec *topo.Spec, opt Options) ([]LinkState, error) {
	if err := preflight(spec, opt); err != nil {
		return nil, err
	}
	shaped := false
	for _, l := range spec.Links {
		if l.Params != nil {
			shaped = true
		}
	}
	var links []LinkState
	var errs []string
	if shaped {
		links, errs = planLinks(spec, tc.Probe())
		// A worker shapes its machine's part (link_vxlan.go).
		links = sliceLinks(spec, links)
	}
	for _, kp := range kindPhases() {
		if kp.plan != nil {
			errs = append(errs, kp.plan(spec, links)...)
		}
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("lab %q cannot be deployed; nothing was changed:\n  %s", spec.Name, strings.Join(errs, "\n  "))
	}
	return links, nil
}

// preflight checks everything that can be checked before the first host
// change, so a lab that cannot come up changes nothing: each node by its
// kind's plan, then what the lab as a whole needs.
func preflight(spec *topo.Spec, opt Options) error {
	if os.Geteuid() != 0 {
		return errors.New("emuctl needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN) to create namespaces: run it with sudo")
	}
	var errs []string
	if _, err := os.Stat(stateDir(spec.Name)); err == nil {
		st, rerr := ReadState(spec.Name)
		status := "unknown"
		if rerr == nil {
			status = st.Status
		}
		return fmt.Errorf("lab %q already exists (status %s): run `emuctl down %s` first, or `emuctl clean` if it crashed: %w", spec.Name, status, spec.Name, ErrExists)
	}
	for i := range spec.Nodes {
		n := &spec.Nodes[i]
		if !spec.Here(n.Name) {
			continue // on another machine of the lab
		}
		errs = append(errs, nodeKindOf(n).plan(spec, n, opt)...)
	}
	errs = append(errs, tunnelPreflight(spec)...) // labs over several machines (link_vxlan.go)
	if err := netcfg.Preflight(spec, netcfg.PreflightOptions{ExtendAllowedCC: opt.ExtendAllowedCC}); err != nil {
		errs = append(errs, strings.Split(err.Error(), "\n")...)
	}
	if len(errs) > 0 {
		return fmt.Errorf("lab %q cannot be deployed; nothing was changed:\n  %s", spec.Name, strings.Join(errs, "\n  "))
	}
	return nil
}

// plan is a namespace's node's: its namespace and hosts file are free,
// and the real adapters it takes may be taken.
func (nsNode) plan(spec *topo.Spec, n *topo.Node, opt Options) []string {
	var errs []string
	ns := topo.Namespace(spec.Name, n.Name)
	if _, err := os.Lstat(filepath.Join(NetnsDir, ns)); err == nil {
		errs = append(errs, fmt.Sprintf("network namespace %q already exists and is not part of a known lab; emuctl will not touch it (remove it yourself, or choose another lab name with --name)", ns))
	}
	hosts := filepath.Join("/etc/netns", ns, "hosts")
	if _, err := os.Lstat(hosts); err == nil {
		errs = append(errs, fmt.Sprintf("%s already exists; emuctl will not overwrite it (choose another lab name with --name)", hosts))
	}
	for _, ifc := range n.Interfaces {
		if ifc.External == nil {
			continue
		}
		if err := checkExternal(n.Name, ifc, opt); err != nil {
			errs = append(errs, err.Error())
		} else if err := checkWirelessExternal(n, ifc); err != nil { // Wi-Fi adapters (wifi_external.go)
			errs = append(errs, err.Error())
		}
	}
	return errs
}

// plan of a switch type this version does not know: refused.
func (k unknownKind) plan(spec *topo.Spec, n *topo.Node, opt Options) []string {
	errs := []string{fmt.Sprintf("switch %s: type %q is not supported by this version of emuctl (supported: %s, %s)", n.Name, n.SwitchType, topo.SwitchLinuxBridge, topo.SwitchOVS)}
	return append(errs, k.nsNode.plan(spec, n, opt)...)
}

// plan of the machine's namespace: the opt-in, and its ends' names free.
func (rootKind) plan(spec *topo.Spec, n *topo.Node, opt Options) []string {
	return rootPreflight(n, opt)
}

// rootPreflight checks a node of kind root: the opt-in, and that its
// link ends' names are free in the machine's namespace (emuctl makes them
// there and removes them; it never takes a device it did not make).
func rootPreflight(n *topo.Node, opt Options) []string {
	if !opt.AllowExternal {
		return []string{fmt.Sprintf("node %s is of kind root, the machine's own network namespace: putting the lab's link ends (and their addresses) there needs the explicit opt-in --allow-external", n.Name)}
	}
	var errs []string
	for _, ifc := range n.Interfaces {
		if msg := rootNameTaken(n.Name, ifc.Name); msg != "" {
			errs = append(errs, msg)
		}
	}
	return errs
}

// rootNameTaken says who holds a kind root node's end name in the
// machine's namespace, or "" when it is free.
func rootNameTaken(node, iface string) string {
	l, err := netlink.LinkByName(iface)
	if err != nil {
		return ""
	}
	holder := "not emuctl's"
	if a := l.Attrs().Alias; strings.HasPrefix(a, markerPrefix) {
		holder = "lab " + strings.TrimPrefix(strings.Fields(a)[0], markerPrefix) + "'s"
	}
	return fmt.Sprintf("node %s (kind root): the machine's namespace has a device %s already (%s); emuctl will not touch it: name the link's end otherwise (\"%s:NAME\")", node, iface, holder, node)
}

func checkExternal(node string, ifc topo.Interface, opt Options) error {
	host := ifc.External.HostName
	if !opt.AllowExternal {
		return fmt.Errorf("node %s takes the host interface %q: real adapters need the explicit opt-in --allow-external", node, host)
	}
	l, err := netlink.LinkByName(host)
	if err != nil {
		return fmt.Errorf("node %s: host interface %q not found in the root namespace", node, host)
	}
	if l.Attrs().Alias != "" && strings.HasPrefix(l.Attrs().Alias, markerPrefix) {
		return fmt.Errorf("node %s: host interface %q is already used by lab %s", node, host, l.Attrs().Alias)
	}
	if !ifc.External.Force {
		routes, _ := netlink.RouteList(l, netlink.FAMILY_ALL)
		for _, r := range routes {
			if r.Dst == nil || isDefault(r.Dst) {
				return fmt.Errorf("node %s: host interface %q carries the machine's default route; refusing (set force: true on the interface to take it anyway)", node, host)
			}
		}
	}
	return nil
}

func isDefault(n *net.IPNet) bool {
	ones, _ := n.Mask.Size()
	return ones == 0
}
