package emu

import (
	"cmp"
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/emuctl/emuctl/topo"
	"github.com/emuctl/emuctl/wifi"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
)

// Run-time changes of labs with Wi-Fi. Wired nodes and links come and go
// as in any lab (the document pins every wireless address: topo's
// pinWireless). A station joins or leaves a running lab on either
// backend. On the engine: a new veth port in the medium namespace and a
// radio added to the running medium (wifi.EtherMedium.AddRadio), or its
// radio taken off the medium before its namespace goes. On
// mac80211_hwsim: the running medium learns the radio first
// (wifi.MediumServer.AddRadio), then the kernel's radio is made in the
// medium namespace and moved into the station, its wpa_supplicant kept by
// the supervisor, and the change waits for the association; removed, the
// radio leaves the medium, its wpa_supplicant is stopped for good and its
// kernel radio deleted before the namespace goes (the kernel would return
// it to the machine's namespace). An access point joins the same way,
// with its BSS on the channel its keys name (and on hwsim its hostapd,
// the change waiting for the BSS to be up), and leaves once no station
// uses it; an ad hoc or mesh member joins its network (engine: its radio
// on the medium; hwsim: its IBSS or mesh joined, the change waiting for
// the peers it hears). Multi-link access points, roaming and multi-link
// stations and shaped wireless hops are refused before anything is
// touched, saying why.

// wifiChangeRefused says why a change cannot be made to a lab with Wi-Fi
// (nil: it can).
func wifiChangeRefused(st *State, old, spec *topo.Spec, diff labDiff) error {
	for _, name := range diff.addNodes {
		n := spec.Node(name)
		switch {
		case n.AP != nil:
			if err := apChangeable(st, spec, n, "node add"); err != nil {
				return err
			}
		case n.Station != nil:
			if err := stationChangeable(st, n, "node add"); err != nil {
				return err
			}
		}
	}
	for _, name := range diff.delNodes {
		n := old.Node(name)
		// an access point with stations is refused before the edit
		// (apRemovalRefused: the edit's own errors would name them)
		switch {
		case n.Station != nil:
			if err := stationChangeable(st, n, "node del"); err != nil {
				return err
			}
		case n.AP != nil:
			if err := apChangeable(st, old, n, "node del"); err != nil {
				return err
			}
		}
	}
	return nil
}

// apRemovalRefused says why an access point cannot leave spec's lab
// (nil: none of its stations is left): the stations that use it,
// associated or roaming to it, would be left without one.
func apRemovalRefused(spec *topo.Spec, name string) error {
	var left []string
	for _, o := range spec.Nodes {
		if sn := o.Station; sn != nil && (sn.AP == name || slices.Contains(sn.ESS, name)) {
			left = append(left, o.Name)
		}
	}
	if len(left) == 0 {
		return nil
	}
	return fmt.Errorf("node del %s: an access point cannot leave a running lab while stations use it (%s would be left without one): remove them first (emuctl node del), or move them to another access point in the file and bring the lab up again; nothing was changed", name, strings.Join(left, ", "))
}

// apChangeable: an access point joins or leaves a running lab served by
// emuctl's medium (engine or hwsim), when it is not multi-link and no
// roaming station's network gains it (a station's network of access
// points is set at up).
func apChangeable(st *State, spec *topo.Spec, n *topo.Node, call string) error {
	switch {
	case st.Medium == nil:
		return fmt.Errorf("%s %s: this lab's Wi-Fi runs on mac80211_hwsim's own instant medium (medium: false), which emuctl does not serve: access points join and leave a running lab on emuctl's medium (drop medium: false), or add it to the file and bring the lab up again; nothing was changed", call, n.Name)
	case n.AP.MLO():
		return fmt.Errorf("%s %s: a multi-link access point cannot join or leave a running lab; nothing was changed", call, n.Name)
	}
	for _, o := range spec.Nodes {
		if sn := o.Station; sn != nil && len(sn.ESS) > 1 && slices.Contains(sn.ESS, n.Name) {
			return fmt.Errorf("%s %s: roaming station %s's network (ssid %s) would gain or lose it, and a station's network of access points is set at up: give the access point an ssid of its own, or add it to the file and bring the lab up again; nothing was changed", call, n.Name, o.Name, n.AP.SSID)
		}
	}
	return nil
}

// stationChangeable: a station joins or leaves a running lab served by
// emuctl's medium (engine or hwsim), when it neither roams, nor is
// multi-link, nor has a shaped wireless hop.
func stationChangeable(st *State, n *topo.Node, call string) error {
	sn := n.Station
	switch {
	case st.Medium == nil:
		return fmt.Errorf("%s %s: this lab's Wi-Fi runs on mac80211_hwsim's own instant medium (medium: false), which emuctl does not serve: stations join and leave a running lab on emuctl's medium (drop medium: false), or add the station to the file and bring the lab up again; nothing was changed", call, n.Name)
	case len(sn.ESS) > 1:
		return fmt.Errorf("%s %s: a roaming station (ssid: of a network of %d access points) cannot join or leave a running lab yet; nothing was changed", call, n.Name, len(sn.ESS))
	case sn.MLO:
		return fmt.Errorf("%s %s: a multi-link station cannot join or leave a running lab yet; nothing was changed", call, n.Name)
	case sn.Params != nil:
		return fmt.Errorf("%s %s: a station whose wireless hop is shaped (wifi: {link: ...}) cannot join or leave a running lab yet; nothing was changed", call, n.Name)
	}
	return nil
}

// wifiChange is a change's Wi-Fi phase: each station it adds gets its
// port in the medium namespace and its radio on the running medium
// (recorded in the state once the medium has it), then its routes; the
// supervisor then follows the lab's mobility.
func (d *deployer) wifiChange(ctx context.Context) error {
	var added []*node
	for _, n := range d.nodeList() {
		if d.builds(n.spec.Name) && (n.spec.Station != nil || n.spec.AP != nil) {
			added = append(added, n)
		}
	}
	if len(added) == 0 {
		return nil
	}
	// access points first: a station added with its AP finds its radio
	slices.SortFunc(added, func(a, b *node) int { return strings.Compare(a.spec.Name, b.spec.Name) })
	slices.SortStableFunc(added, func(a, b *node) int { return cmp.Compare(apRank(b.spec), apRank(a.spec)) })
	ms := d.st.Medium
	if ms.Backend != WiFiEngine {
		return d.hwsimStationsChange(ctx, added)
	}
	mh, err := netns.GetFromPath(filepath.Join(NetnsDir, ms.Netns))
	if err != nil {
		return fmt.Errorf("wifi medium namespace: %w", err)
	}
	defer mh.Close()
	mnh, err := netlink.NewHandleAt(mh)
	if err != nil {
		return err
	}
	defer mnh.Close()
	for _, n := range added {
		if err := ctx.Err(); err != nil {
			return err
		}
		i := len(ms.Radios) // ports are named by their radio's index
		var ifindex int
		if err := with(func() error {
			var err error
			ifindex, err = d.createEnginePort(mh, mnh, n, i)
			return err
		}, n); err != nil {
			return err
		}
		r, err := d.changeRadio(n, ms)
		if err != nil {
			return err
		}
		engineBSS(&r, n.spec, d.bssOf(n.spec))
		r.Port = enginePort(i)
		resp, err := supervisorCall(d.spec.Name, ctlRequest{Op: "medium-add", Radio: &r, Ifindex: ifindex})
		if err != nil {
			return fmt.Errorf("station %s: the medium: %w", n.spec.Name, err)
		}
		if resp.Index == nil || *resp.Index != i {
			return fmt.Errorf("station %s: the medium gave it radio %v, its port is %s: the lab's state and its medium disagree (emuctl down, then up)", n.spec.Name, resp.Index, r.Port)
		}
		d.stMu.Lock()
		ms.Radios = append(ms.Radios, r)
		d.stMu.Unlock()
		if err := d.save(); err != nil {
			return err
		}
		if n.spec.AP != nil {
			d.log.Debug("access point joined the medium", "node", n.spec.Name, "radio", i, "freq", r.FreqMHz)
			continue
		}
		d.log.Debug("station joined the medium", "node", n.spec.Name, "radio", i, "ap", n.spec.Station.AP, "adhoc", n.spec.Station.Adhoc)
		if err := with(func() error { return nodeRoutes(n) }, n); err != nil {
			return err
		}
	}
	if _, err := supervisorCall(d.spec.Name, ctlRequest{Op: "mobility-sync"}); err != nil {
		return fmt.Errorf("mobility: %w", err)
	}
	return nil
}

// hwsimStationsChange adds each access point, then each station, to a
// running hwsim lab: its radio on the medium (recorded once the medium has
// it), then the kernel's radio moved into the node; an AP's hostapd and
// its BSS up; a station's wpa_supplicant, the association, its routes.
func (d *deployer) hwsimStationsChange(ctx context.Context, added []*node) error {
	ms := d.st.Medium
	mh, err := netns.GetFromPath(filepath.Join(NetnsDir, ms.Netns))
	if err != nil {
		return fmt.Errorf("wifi medium namespace: %w", err)
	}
	defer mh.Close()
	hw, err := wifi.DialHwsim(int(mh))
	if err != nil {
		return fmt.Errorf("wifi: %w", err)
	}
	defer hw.Close()
	tools := wifiTools(d.spec)
	for _, n := range added {
		if err := ctx.Err(); err != nil {
			return err
		}
		i := len(ms.Radios) // permanent addresses are numbered by radio
		r, err := d.changeRadio(n, ms)
		if err != nil {
			return err
		}
		r.Perm = permAddr(d.spec.Name, deployTag(d.st.Created), i)
		resp, err := supervisorCall(d.spec.Name, ctlRequest{Op: "medium-add", Radio: &r})
		if err != nil {
			return fmt.Errorf("%s: the medium: %w", n.spec.Name, err)
		}
		if resp.Index == nil || *resp.Index != i {
			return fmt.Errorf("station %s: the medium gave it radio %v, the lab's state has %d: they disagree (emuctl down, then up)", n.spec.Name, resp.Index, i)
		}
		d.stMu.Lock()
		ms.Radios = append(ms.Radios, r)
		d.stMu.Unlock()
		if err := d.save(); err != nil {
			return err
		}
		if err := with(func() error { return d.createRadio(hw, int(mh), n, r.Perm) }, n); err != nil {
			return err
		}
		if n.spec.AP != nil {
			// its hostapd, kept by the supervisor; the change goes on once
			// the BSS is up (beaconing, as up waits for its APs)
			if err := d.startHostapd(n, tools.Hostapd); err != nil {
				return err
			}
			if err := d.save(); err != nil {
				return err
			}
			if err := d.waitWiFi(ctx, []*node{n}, true); err != nil {
				return err
			}
			d.log.Debug("access point enabled", "node", n.spec.Name, "radio", i, "freq", r.FreqMHz)
			continue
		}
		if n.spec.AdhocStation() {
			// it joins its network, as up's members do, and the change
			// waits for the peers it hears
			if err := d.joinAdhocMembers(ctx, []*node{n}); err != nil {
				return err
			}
		} else {
			if err := d.startWpaSupplicant(n, tools.WpaSupplicant); err != nil {
				return err
			}
			if err := d.save(); err != nil {
				return err
			}
			if err := d.waitWiFi(ctx, []*node{n}, false); err != nil {
				return err
			}
		}
		d.log.Debug("station associated", "node", n.spec.Name, "radio", i, "ap", n.spec.Station.AP)
		if err := with(func() error { return nodeRoutes(n) }, n); err != nil {
			return err
		}
	}
	if _, err := supervisorCall(d.spec.Name, ctlRequest{Op: "mobility-sync"}); err != nil {
		return fmt.Errorf("mobility: %w", err)
	}
	return nil
}

// changeRadio is the radio a change adds to the running medium for n: an
// access point's own BSS, an ad hoc or mesh member's network (its number
// and channel), or a station's, of its AP (addedRadio).
func (d *deployer) changeRadio(n *node, ms *MediumState) (wifi.MediumRadio, error) {
	if n.spec.AP != nil || n.spec.AdhocStation() {
		return d.mediumRadios([]*node{n})[0], nil // AP -1; a member's Adhoc
	}
	return d.addedRadio(n, ms)
}

// bssOf is the BSS whose framing and channel n's radio takes on the
// engine: its own (an AP), its ad hoc network's, or its AP's.
func (d *deployer) bssOf(n *topo.Node) *topo.WiFiAP {
	switch {
	case n.AP != nil:
		return n.AP
	case n.AdhocStation():
		return d.spec.Adhoc(n.Station.Adhoc).BSS()
	}
	return d.spec.Node(n.Station.AP).AP
}

// addedRadio is a station's radio as a running medium takes it: the
// spec's (position, power, fixed rate, its BSS's mode and channel) and
// its AP's radio index in ms (the engine adds the BSS's framing and
// security: engineBSS).
func (d *deployer) addedRadio(n *node, ms *MediumState) (wifi.MediumRadio, error) {
	r := d.mediumRadios([]*node{n})[0]
	st := n.spec.Station
	r.AP = -1
	for j, o := range ms.Radios {
		if o.Node == st.AP && !o.Gone {
			r.AP = j
		}
	}
	apn := d.spec.Node(st.AP)
	if r.AP < 0 || apn == nil || apn.AP == nil {
		return r, fmt.Errorf("station %s: its access point %s has no radio on the medium", n.spec.Name, st.AP)
	}
	return r, nil
}

// removeStations takes the stations a change removes off the running
// medium (before their namespaces go) and records that in the state.
func removeStations(st *State, old *topo.Spec, diff labDiff) error {
	removed := false
	for _, name := range wifiFirst(old, diff.delNodes) {
		if n := old.Node(name); n == nil || n.Station == nil && n.AP == nil || st.Medium == nil {
			continue
		}
		if err := leaveMedium(st, name); err != nil {
			return fmt.Errorf("node del %s: %w", name, err)
		}
		removed = true
	}
	if !removed {
		return nil
	}
	return writeState(st)
}

// leaveMedium takes a station's radio off the running medium (the
// supervisor forgets its mobility), marks it Gone in st and deletes its
// port now — the veth's other end would go only once the kernel has
// freed the station's namespace, later. A radio the medium already let go
// (a removal tried again) is no error.
func leaveMedium(st *State, name string) error {
	for i := range st.Medium.Radios {
		r := &st.Medium.Radios[i]
		if r.Node != name || r.Gone {
			continue
		}
		if _, err := supervisorCall(st.Lab, ctlRequest{Op: "medium-remove", Node: name}); err != nil && !strings.Contains(err.Error(), "has no radio of node") {
			return fmt.Errorf("the medium: %w", err)
		}
		r.Gone = true
		if st.Medium.Backend != WiFiEngine {
			return deleteRadio(st, name)
		}
		return deletePort(st.Medium.Netns, r.Port)
	}
	return nil
}

// deleteRadio ends a hwsim station's daemons for good and deletes its
// kernel radio, from inside the station (the kernel deletes a radio only
// from its own namespace); a radio already gone is no error.
func deleteRadio(st *State, name string) error {
	if _, err := supervisorCall(st.Lab, ctlRequest{Op: "daemon-stop", Node: name}); err != nil {
		return fmt.Errorf("stop the daemons of %s: %w", name, err)
	}
	ns, err := netns.GetFromPath(filepath.Join(NetnsDir, topo.Namespace(st.Lab, name)))
	if err != nil {
		return nil // its namespace, and with it the radio, is gone
	}
	defer ns.Close()
	hw, err := wifi.DialHwsim(int(ns))
	if err != nil {
		return fmt.Errorf("wifi: %w", err)
	}
	defer hw.Close()
	radio := radioName(st.Lab, name, deployTag(st.Created))
	if err := hw.DelRadio(radio); err != nil && !strings.Contains(err.Error(), "no such device") {
		return err
	}
	return nil
}

// deletePort deletes a radio's port in the medium namespace (and with it
// the node's end of the veth pair); one already gone is no error.
func deletePort(mediumNS, port string) error {
	ns, h, err := openNamed(mediumNS)
	if err != nil {
		return fmt.Errorf("wifi medium namespace: %w", err)
	}
	defer ns.Close()
	defer h.Close()
	l, err := h.LinkByName(port)
	if err != nil {
		return nil
	}
	if err := h.LinkDel(l); err != nil {
		return fmt.Errorf("delete port %s: %w", port, err)
	}
	return nil
}

// wifiFirst orders names for leaving the medium: stations before access
// points (an AP leaves once its stations have).
func wifiFirst(spec *topo.Spec, names []string) []string {
	out := slices.Clone(names)
	slices.SortStableFunc(out, func(a, b string) int { return cmp.Compare(apRank(spec.Node(a)), apRank(spec.Node(b))) })
	return out
}

// apRank is 1 for an access point, 0 for any other node.
func apRank(n *topo.Node) int {
	if n != nil && n.AP != nil {
		return 1
	}
	return 0
}

// undoStations takes the stations and access points an add put on the
// medium off it again (a failed change's rollback).
func undoStations(st *State, spec *topo.Spec, added []string) []error {
	if st.Medium == nil {
		return nil
	}
	var errs []error
	for _, name := range wifiFirst(spec, added) {
		if err := leaveMedium(st, name); err != nil {
			errs = append(errs, fmt.Errorf("station %s: %w", name, err))
		}
	}
	return errs
}
