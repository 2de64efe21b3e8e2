package emu

// Multi-link at run time: taking one link of an AP MLD down while its
// stations stay associated on the others.

import (
	"fmt"
	"path/filepath"
	"slices"
	"time"

	"github.com/emuctl/emuctl/topo"
	"github.com/emuctl/emuctl/wifi"
	"golang.org/x/sys/unix"
)

// linkRemoveBeacons is how many beacon intervals (100 TU each) the AP MLD
// announces a link's removal before it removes it: stations learn of it
// from the Reconfiguration Multi-Link element (AP Removal Timer) and
// drop the link at the same time as the AP.
const linkRemoveBeacons = 5

// WiFiLinkDown takes link id of the multi-link access point ap down while
// the lab runs, the 802.11be way: hostapd's LINK_REMOVE announces the
// link's removal in the link's beacons for a few beacon intervals
// (multi-link reconfiguration), then removes the link from the AP MLD
// (nl80211), and mac80211 on each station MLD removes its side of the link
// when the announced time is up. Traffic goes on over the remaining links.
// It returns when neither the AP nor any of its multi-link stations has
// the link any more, with how long that took.
//
// LINK_REMOVE exists in hostapd built with CONFIG_TESTING_OPTIONS (and
// CONFIG_IEEE80211BE), as hostap's own multi-link tests build it; without
// it this is refused, saying so. A removed link stays down until the lab
// is brought up again (hostapd has no way to add a link back to a running
// AP MLD's stations). A station's association link is refused: hostapd
// frees the whole station MLD with it.
func WiFiLinkDown(st *State, ap string, id int) (time.Duration, error) {
	n := st.Spec.Node(ap)
	if n == nil || n.AP == nil {
		return 0, fmt.Errorf("%s is not an access point of lab %s", ap, st.Lab)
	}
	if !n.AP.MLO() {
		return 0, fmt.Errorf("access point %s has one link (no links: in its wifi settings); only a multi-link AP can lose a link and keep its stations", ap)
	}
	if id < 0 || id >= len(n.AP.Links) {
		return 0, fmt.Errorf("access point %s has links 0-%d, not %d", ap, len(n.AP.Links)-1, id)
	}
	h := wifiTools(st.Spec).Hostapd
	if !h.LinkRemove {
		return 0, fmt.Errorf("taking a link of %s down needs hostapd's LINK_REMOVE (a hostapd built with CONFIG_TESTING_OPTIONS and CONFIG_IEEE80211BE); %s has none", ap, h.Argv()[len(h.Argv())-1])
	}
	dir := filepath.Join(wifiDir(st.Lab, ap), "ctrl", fmt.Sprintf("link%d", id))
	sock, err := wifi.FindCtrlSocket(dir, n.AP.Iface, id)
	if err != nil {
		return 0, fmt.Errorf("access point %s link %d: %w", ap, id, err)
	}
	up, err := apLinks(st, n)
	if err != nil {
		return 0, err
	}
	if !slices.Contains(up, id) {
		return 0, fmt.Errorf("access point %s: link %d is already down (links up: %v)", ap, id, up)
	}
	if len(up) < 2 {
		return 0, fmt.Errorf("access point %s: link %d is its last link", ap, id)
	}
	// hostapd (2.12) frees the whole station MLD with the link it
	// associated on: measured in the kernel lab, the station's traffic
	// stopped for good while wpa_supplicant still reported it associated
	for i := range st.Spec.Nodes {
		s := &st.Spec.Nodes[i]
		if s.Station == nil || s.Station.AP != ap || !s.Station.MLO {
			continue
		}
		if r, err := wifi.CtrlRequest(ctrlPath(st.Lab, s), "MLO_STATUS", time.Second); err == nil {
			for _, l := range wifi.ParseMLOStatus(r) {
				if l.ID == id && l.FreqMHz != 0 {
					return 0, fmt.Errorf("access point %s: link %d is the link station %s associated on; hostapd frees the whole station MLD when that link goes (its traffic stops while wpa_supplicant still reports it associated): take another link down", ap, id, s.Name)
				}
			}
		}
	}
	t0 := time.Now()
	if _, err := wifi.CtrlRequest(sock, fmt.Sprintf("LINK_REMOVE %d", linkRemoveBeacons), 2*time.Second); err != nil {
		return 0, fmt.Errorf("access point %s link %d: %w", ap, id, err)
	}
	deadline := t0.Add(time.Duration(linkRemoveBeacons)*102400*time.Microsecond + 10*time.Second)
	for {
		pending := ""
		if up, err := apLinks(st, n); err != nil {
			return 0, err
		} else if slices.Contains(up, id) {
			pending = "the access point"
		}
		for i := range st.Spec.Nodes {
			s := &st.Spec.Nodes[i]
			if pending != "" || s.Station == nil || s.Station.AP != ap || !s.Station.MLO {
				continue
			}
			r, err := wifi.CtrlRequest(ctrlPath(st.Lab, s), "MLO_STATUS", time.Second)
			if err != nil {
				return 0, fmt.Errorf("station %s: MLO_STATUS: %w", s.Name, err)
			}
			for _, l := range wifi.ParseMLOStatus(r) {
				if l.ID == id {
					pending = "station " + s.Name
				}
			}
		}
		if pending == "" {
			return time.Since(t0), nil
		}
		if time.Now().After(deadline) {
			return 0, fmt.Errorf("access point %s: link %d announced as removed, but %s still has it after %v", ap, id, pending, time.Since(t0).Round(time.Millisecond))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// apLinks lists the link ids the kernel has for an AP MLD's interface.
func apLinks(st *State, n *topo.Node) ([]int, error) {
	fd, err := unix.Open(filepath.Join(NetnsDir, topo.Namespace(st.Lab, n.Name)), unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	info, err := wifi.InterfaceInfo(fd, n.AP.Iface)
	if err != nil {
		return nil, fmt.Errorf("access point %s: %w", n.Name, err)
	}
	var ids []int
	for _, l := range info.Links {
		ids = append(ids, l.ID)
	}
	return ids, nil
}
