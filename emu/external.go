package emu

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/emuctl/emuctl/topo"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// extAlias marks a real interface while it is in a lab, naming its host
// name so a crashed lab's interface can be renamed back by Clean.
func extAlias(lab, host string) string { return Marker(lab) + " ext=" + host }

// externals moves real host interfaces into their nodes (a switch node
// enslaves them to its bridge), recording their original state first.
func (d *deployer) externals(ctx context.Context) error {
	for _, n := range d.nodeList() {
		if !hasExternal(n.spec) {
			continue
		}
		if err := with(func() error { return d.externalsOf(n) }, n); err != nil {
			return err
		}
	}
	return nil
}

func hasExternal(n *topo.Node) bool {
	for _, ifc := range n.Interfaces {
		if ifc.External != nil {
			return true
		}
	}
	return false
}

// externalsOf takes node n's real interfaces in; n is held.
func (d *deployer) externalsOf(n *node) error {
	{
		for _, ifc := range n.spec.Interfaces {
			if ifc.External == nil {
				continue
			}
			host := ifc.External.HostName
			l, err := netlink.LinkByName(host)
			if err != nil {
				return fmt.Errorf("node %s: host interface %s: %w", n.spec.Name, host, err)
			}
			es := ExtState{HostName: host, Node: n.spec.Name, Iface: ifc.Name,
				Up: l.Attrs().Flags&1 != 0, MTU: l.Attrs().MTU, Alias: l.Attrs().Alias}
			if m := l.Attrs().MasterIndex; m != 0 {
				if ml, err := netlink.LinkByIndex(m); err == nil {
					es.Master = ml.Attrs().Name
				}
			}
			addrs, _ := netlink.AddrList(l, netlink.FAMILY_ALL)
			for _, a := range addrs {
				if a.IP.IsLinkLocalUnicast() {
					continue
				}
				es.Addrs = append(es.Addrs, a.IPNet.String())
			}
			es.Moved = true
			es.Wiphy = wiphyOf(host) // Wi-Fi adapter: its radio moves (wifi_external.go)
			d.stMu.Lock()
			d.st.Externals = append(d.st.Externals, es)
			d.stMu.Unlock()
			if err := d.save(); err != nil {
				return err
			}
			if err := netlink.LinkSetDown(l); err != nil {
				return fmt.Errorf("host interface %s: %w", host, err)
			}
			if err := netlink.LinkSetAlias(l, extAlias(d.spec.Name, host)); err != nil {
				return fmt.Errorf("host interface %s: %w", host, err)
			}
			if es.Wiphy != "" {
				if err := moveWiphy(es.Wiphy, int(hostNetns), int(n.ns)); err != nil {
					return fmt.Errorf("host interface %s: move its radio %s into %s: %w", host, es.Wiphy, n.spec.Name, err)
				}
			} else if err := netlink.LinkSetNsFd(l, int(n.ns)); err != nil {
				return fmt.Errorf("host interface %s: move into %s: %w", host, n.spec.Name, err)
			}
			d.log.Debug("external moved", "host", host, "node", n.spec.Name, "iface", ifc.Name)
			nl, err := n.h.LinkByName(host)
			if err != nil {
				return fmt.Errorf("host interface %s in %s: %w", host, n.spec.Name, err)
			}
			if ifc.Name != host {
				if err := n.h.LinkSetName(nl, ifc.Name); err != nil {
					return fmt.Errorf("host interface %s: rename to %s: %w", host, ifc.Name, err)
				}
			}
			if n.bridge != 0 {
				if err := n.h.LinkSetMasterByIndex(nl, n.bridge); err != nil {
					return fmt.Errorf("host interface %s: attach to %s: %w", host, n.spec.Name, err)
				}
			}
			if err := addAddrs(n.h, nl, ifc.Addrs); err != nil {
				return fmt.Errorf("host interface %s: %w", host, err)
			}
			if err := n.h.LinkSetUp(nl); err != nil {
				return fmt.Errorf("host interface %s: %w", host, err)
			}
			n.setIndex(ifc.Name, nl.Attrs().Index)
		}
	}
	return nil
}

// restoreExternal moves a real interface back to the root namespace under
// its original name and restores its MTU, alias, addresses, master and
// up/down state. A missing namespace or interface is looked up in the root
// namespace by its marker.
func restoreExternal(lab, nsName string, es ExtState) error {
	root, err := netlink.NewHandle(unix.NETLINK_ROUTE)
	if err != nil {
		return err
	}
	defer root.Close()
	rootNs := hostNetns
	if !rootNs.IsOpen() {
		return errors.New("the host network namespace is unknown")
	}
	alias := extAlias(lab, es.HostName)
	if h, err := netns.GetFromPath(NetnsDir + "/" + nsName); err == nil {
		nh, herr := netlink.NewHandleAt(h, unix.NETLINK_ROUTE)
		defer h.Close() // a Wi-Fi adapter's radio is moved out of it below
		if herr == nil {
			l := findByAlias(nh, alias)
			if l != nil {
				nh.LinkSetDown(l)
				nh.LinkSetNoMaster(l)
				var err error
				if es.Wiphy != "" {
					err = moveWiphy(es.Wiphy, int(h), int(rootNs))
				} else {
					err = nh.LinkSetNsFd(l, int(rootNs))
				}
				if err != nil {
					nh.Close()
					return fmt.Errorf("move %s back: %w", es.HostName, err)
				}
			}
			nh.Close()
		}
	}
	l := findByAlias(root, alias)
	if l == nil {
		// Already restored, or gone: a virtual device (veth) taken into a lab
		// is destroyed with its namespace or by its owner; either way there
		// is nothing left to give back.
		return nil
	}
	if l.Attrs().Name != es.HostName {
		if err := root.LinkSetName(l, es.HostName); err != nil {
			return fmt.Errorf("rename %s back to %s: %w", l.Attrs().Name, es.HostName, err)
		}
	}
	if es.MTU > 0 && l.Attrs().MTU != es.MTU {
		root.LinkSetMTU(l, es.MTU)
	}
	addrs, _ := root.AddrList(l, netlink.FAMILY_ALL)
	for _, a := range addrs {
		if !a.IP.IsLinkLocalUnicast() {
			root.AddrDel(l, &a)
		}
	}
	var errs []string
	for _, s := range es.Addrs {
		a, err := netlink.ParseAddr(s)
		if err == nil {
			err = root.AddrAdd(l, a)
		}
		if err != nil && !errors.Is(err, unix.EEXIST) {
			errs = append(errs, fmt.Sprintf("address %s: %v", s, err))
		}
	}
	if es.Master != "" {
		if m, err := root.LinkByName(es.Master); err == nil {
			root.LinkSetMaster(l, m)
		}
	}
	if err := root.LinkSetAlias(l, es.Alias); err != nil {
		errs = append(errs, err.Error())
	}
	if es.Up {
		root.LinkSetUp(l)
	}
	if len(errs) > 0 {
		return fmt.Errorf("restore %s: %s", es.HostName, strings.Join(errs, "; "))
	}
	return nil
}

func findByAlias(h *netlink.Handle, alias string) netlink.Link {
	links, err := h.LinkList()
	if err != nil && !errors.Is(err, netlink.ErrDumpInterrupted) {
		return nil
	}
	for _, l := range links {
		if l.Attrs().Alias == alias {
			return l
		}
	}
	return nil
}
