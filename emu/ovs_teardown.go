package emu

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/emuctl/emuctl/ovs"
	"github.com/emuctl/emuctl/topo"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netlink/nl"
	"golang.org/x/sys/unix"
)

// ovsEndpoints returns the OVSDB endpoints that may hold rows of a lab:
// the recorded one, or, when nothing was recorded, every Open vSwitch
// that is there (the system's and emuctl's embedded pair).
func ovsEndpoints(st *State) []string {
	if st.OVS != nil && st.OVS.DB != "" {
		return []string{st.OVS.DB}
	}
	var out []string
	if ep, _ := systemOVSDB(); fileExists(socketPath(ep)) {
		out = append(out, ep)
	}
	if e := embeddedOVS(); len(e.Running()) > 0 {
		out = append(out, e.Endpoint())
	}
	return out
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// ovsTeardown deletes every OVSDB row carrying the lab's marker (one
// transaction per database), waits for ovs-vswitchd to let go of the
// ports, and deletes the lab's devices in the root namespace (both ends of
// a link between two ovs switches live there). Rows and devices without
// the marker are never touched.
func ovsTeardown(st *State, log *slog.Logger) []string {
	if st.OVS == nil && st.Spec != nil && !specHasOVS(st.Spec) {
		return nil
	}
	var errs []string
	marker := Marker(st.Lab)
	var group uint32
	if st.OVS != nil {
		group = st.OVS.Group
	}
	// The last lab on emuctl's embedded daemons stops them first: their
	// database goes with them, so no row needs deleting, and ovs-vswitchd
	// does not tear each bridge down (~60 ms a bridge on the netdev
	// datapath); the bridge devices it leaves are the lab's, marked and
	// grouped, and go below. Not when a bridge named by the topology is
	// there unmarked: that device goes by its rows, through ovs-vswitchd,
	// or stays (ovs_names.go).
	if st.OVS != nil && st.OVS.Embedded && !unmarkedTopologyBridge(st) {
		stopped, err := releaseEmbeddedOVS(st.Lab)
		if err != nil {
			errs = append(errs, "embedded open vswitch: "+err.Error())
		} else if stopped {
			log.Debug("embedded open vswitch stopped: no other lab uses it")
			if err := deleteMarkedRootLinks(st.Lab, []string{" ovs=", " ovs-bridge="}, []uint32{group, bridgeGroup(group)}, log); err != nil {
				errs = append(errs, err.Error())
			}
			deleteUnmarkedBridgeDevices(st, log)
			return errs
		}
	}
	for _, ep := range ovsEndpoints(st) {
		if err := deleteOVSRows(ep, marker, log); err != nil {
			if st.OVS != nil && st.OVS.Embedded && len(embeddedOVS().Running()) == 0 {
				// The embedded pair died: its database goes with it.
				log.Debug("embedded open vswitch not running; its rows go with it", "err", err)
				continue
			}
			errs = append(errs, err.Error())
		}
	}
	if err := deleteMarkedRootLinks(st.Lab, []string{" ovs="}, []uint32{group}, log); err != nil {
		errs = append(errs, err.Error())
	}
	// ovs-vswitchd removes the bridge devices itself once it has applied
	// the deletion, some of them a little later (it frees them lazily);
	// what is still there after a moment no row refers to any more.
	for end := time.Now().Add(3 * time.Second); time.Now().Before(end) && hasMarkedRootLinks(st.Lab, " ovs-bridge="); {
		time.Sleep(20 * time.Millisecond)
	}
	if err := deleteMarkedRootLinks(st.Lab, []string{" ovs-bridge="}, []uint32{bridgeGroup(group)}, log); err != nil {
		errs = append(errs, err.Error())
	}
	return errs
}

func hasMarkedRootLinks(lab, kind string) bool {
	for _, l := range rootLinks() {
		if ml, ok := labFromMarker(l.Attrs().Alias); ok && ml == lab && strings.Contains(l.Attrs().Alias, kind) {
			return true
		}
	}
	return false
}

// deleteOVSRows deletes a marker's rows from one database.
func deleteOVSRows(ep, marker string, log *slog.Logger) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	dctx, dcancel := context.WithTimeout(ctx, 3*time.Second)
	c, err := ovs.Dial(dctx, ep)
	dcancel()
	if err != nil {
		return fmt.Errorf("open vswitch %s: cannot delete the rows of %s (run `emuctl clean` once it answers): %w", ep, marker, err)
	}
	defer c.Close()
	n, cfg, err := c.Delete(ctx, marker)
	if err != nil {
		return fmt.Errorf("open vswitch %s: delete rows of %s: %w", ep, marker, err)
	}
	if n == 0 {
		return nil
	}
	// ovs-vswitchd releases the ports and removes the bridge devices as it
	// applies the deletion (on the netdev datapath ~60 ms a bridge); the
	// port devices go once it has.
	log.Debug("ovs rows deleted", "db", ep, "rows", n)
	wctx, wcancel := context.WithTimeout(ctx, 15*time.Second)
	defer wcancel()
	if err := c.WaitApplied(wctx, cfg); err != nil {
		log.Debug("ovs-vswitchd did not confirm the deletion", "err", err)
	}
	return nil
}

// deleteMarkedRootLinks deletes the root-namespace devices that carry the
// lab's OVS port marker ("emuctl:<lab> ovs=..."), and with them their veth
// peers. When every device of the lab's device group carries the marker,
// one request deletes the whole group (one RCU grace period for all);
// otherwise, and for what remains, one request per device. Real adapters
// carry an ext= marker instead and are restored, not deleted.
func deleteMarkedRootLinks(lab string, kinds []string, groups []uint32, log *slog.Logger) error {
	root, err := netlink.NewHandleAt(hostNetns, unix.NETLINK_ROUTE)
	if err != nil {
		return err
	}
	defer root.Close()
	ours := func(l netlink.Link) bool {
		alias := l.Attrs().Alias
		ml, ok := labFromMarker(alias)
		if !ok || ml != lab {
			return false
		}
		for _, k := range kinds {
			if strings.Contains(alias, k) {
				return true
			}
		}
		return false
	}
	list := func() []netlink.Link {
		links, err := root.LinkList()
		if err != nil && !errors.Is(err, netlink.ErrDumpInterrupted) {
			return nil
		}
		return links
	}
	links := list()
	for _, group := range groups {
		if group == 0 {
			continue
		}
		members, mine := 0, true
		for _, l := range links {
			if l.Attrs().Group == group {
				members++
				mine = mine && ours(l)
			}
		}
		if members > 0 && mine {
			if err := deleteGroup(group); err != nil {
				log.Debug("group delete failed, deleting one by one", "err", err)
			} else {
				log.Debug("ovs port devices deleted", "group", group, "count", members)
				links = list()
			}
		}
	}
	var errs []string
	for _, l := range links {
		if !ours(l) {
			continue
		}
		if err := root.LinkDel(l); err != nil && !errors.Is(err, unix.ENODEV) {
			errs = append(errs, fmt.Sprintf("delete %s: %v", l.Attrs().Name, err))
			continue
		}
		log.Debug("ovs port device deleted", "dev", l.Attrs().Name)
	}
	if len(errs) > 0 {
		return errors.New(strings.Join(errs, "; "))
	}
	return nil
}

// deleteGroup deletes every device of a device group of the root
// namespace in one RTM_DELLINK (`ip link delete group N`).
func deleteGroup(group uint32) error {
	sh, err := rootTCSocket()
	if err != nil {
		return err
	}
	defer sh.Close()
	req := nl.NewNetlinkRequest(unix.RTM_DELLINK, unix.NLM_F_ACK)
	req.AddData(nl.NewIfInfomsg(unix.AF_UNSPEC))
	req.AddData(nl.NewRtAttr(unix.IFLA_GROUP, nl.Uint32Attr(group)))
	req.Sockets = map[int]*nl.SocketHandle{unix.NETLINK_ROUTE: sh}
	_, err = req.Execute(unix.NETLINK_ROUTE, 0)
	return err
}

// ovsRelease stops the embedded daemons after the last lab using them.
func ovsRelease(st *State, log *slog.Logger) error {
	if st.OVS == nil || !st.OVS.Embedded {
		return nil
	}
	stopped, err := releaseEmbeddedOVS(st.Lab)
	if stopped {
		log.Debug("embedded open vswitch stopped: no lab uses it")
	}
	return err
}

// deleteUnmarkedBridgeDevices removes bridge devices that ovs-vswitchd
// created for the lab but emuctl had not marked yet (a deploy that failed
// between the transaction and the marking), once the embedded daemons are
// stopped: the persistent taps of the netdev datapath outlive them. Only a
// tap or OVS internal device with a unique name the lab's state records
// and no alias (or the lab's marker) is deleted; a bridge named by the
// topology (names: topology) has a name anyone may use, so without the
// lab's marker it is not emuctl's to delete (ovsTeardown leaves such a
// device to ovs-vswitchd).
func deleteUnmarkedBridgeDevices(st *State, log *slog.Logger) {
	if st.OVS == nil {
		return
	}
	root, err := netlink.NewHandleAt(hostNetns, unix.NETLINK_ROUTE)
	if err != nil {
		return
	}
	defer root.Close()
	for _, b := range st.OVS.Bridges {
		l, err := root.LinkByName(b.Name)
		if err != nil {
			continue
		}
		alias := l.Attrs().Alias
		if ml, ok := labFromMarker(alias); alias != "" && (!ok || ml != st.Lab) {
			continue
		}
		if alias == "" && b.Names == topo.OVSNamesTopology {
			continue
		}
		if t := l.Type(); t != "tuntap" && t != "openvswitch" {
			continue
		}
		if err := root.LinkDel(l); err == nil {
			log.Debug("unmarked bridge device deleted", "dev", b.Name)
		}
	}
}
