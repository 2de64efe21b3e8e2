package emu

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/emuctl/emuctl/topo"
	"github.com/emuctl/emuctl/wifi"
)

// Real Wi-Fi adapters (interfaces: {x: {external: wlp2s0}}): a wireless
// interface cannot change network namespace by itself (the kernel marks it
// netns-local); its radio (wiphy) moves, with every interface it has. So a
// Wi-Fi adapter is moved by moving its wiphy into the node and back on
// down. If the node's namespace disappears first, the kernel returns a
// radio created in the root namespace (real hardware always is) to the
// root namespace by itself; restoreExternal then renames it back by its
// alias as for any adapter.

// wiphyOf returns the wiphy name of a host interface, "" if it is not a
// wireless interface.
func wiphyOf(host string) string {
	b, err := os.ReadFile(filepath.Join("/sys/class/net", host, "phy80211", "name"))
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}

// wiphyNetdevs lists the interfaces of a wiphy in the root namespace.
func wiphyNetdevs(phy string) []string {
	ents, _ := os.ReadDir("/sys/class/net")
	var out []string
	for _, e := range ents {
		if wiphyOf(e.Name()) == phy {
			out = append(out, e.Name())
		}
	}
	return out
}

// checkWirelessExternal refuses what cannot work with a Wi-Fi adapter
// before anything changes: a bridge port (an 802.11 client interface does
// not bridge), and a radio that carries other interfaces, which would move
// into the lab too.
func checkWirelessExternal(n *topo.Node, ifc topo.Interface) error {
	host := ifc.External.HostName
	phy := wiphyOf(host)
	if phy == "" {
		return nil
	}
	if n.Kind == topo.KindSwitch {
		return fmt.Errorf("node %s: %s is a Wi-Fi interface (radio %s): it cannot be a switch port (an 802.11 client interface does not bridge); give it to a host or station node", n.Name, host, phy)
	}
	if others := wiphyNetdevs(phy); len(others) > 1 {
		return fmt.Errorf("node %s: %s is a Wi-Fi interface whose radio %s also carries %s; the whole radio moves into the lab, so remove the other interfaces first (iw dev <name> del) or take them all", n.Name, host, phy, strings.Join(others, ", "))
	}
	return nil
}

// moveWiphy moves the radio called phy from the namespace fromFd to toFd.
func moveWiphy(phy string, fromFd, toFd int) error {
	w, err := wifi.WiphyByName(fromFd, phy)
	if err != nil {
		return err
	}
	return wifi.SetWiphyNetns(fromFd, w.Index, toFd)
}
