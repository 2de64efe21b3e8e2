package emu

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/emuctl/emuctl/internal/tracefs"
	"github.com/emuctl/emuctl/topo"
	"github.com/emuctl/emuctl/wifi"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Leaks lists every object on the host that carries an emuctl marker or
// lives in emuctl's run dir: namespaces, root-namespace interfaces, state
// dirs, hosts links and processes inside marked namespaces. A clean machine
// returns nothing. Used by the test suites' final leak check and by
// `emuctl clean --check`.
func Leaks() []string {
	var out []string
	names, _ := listNetns()
	inos := map[uint64]bool{}
	for _, n := range names {
		m, err := netnsMarker(n)
		if err != nil {
			continue
		}
		if _, ok := labFromMarker(m); ok {
			out = append(out, "netns "+n+" ("+m+")")
			if ino, err := nsInode(filepath.Join(NetnsDir, n)); err == nil {
				inos[ino] = true
			}
		}
	}
	for _, n := range names {
		if lab, ok := anchorLab(filepath.Join(NetnsDir, n)); ok { // nsutil.go
			out = append(out, "namespace file "+filepath.Join(NetnsDir, n)+" (unmounted, of lab "+lab+")")
		}
	}
	for ino, pids := range pidsInNetns(inos) {
		for _, p := range pids {
			out = append(out, fmt.Sprintf("process %d in emuctl namespace (inode %d)", p, ino))
		}
	}
	links, err := netlink.LinkList()
	if err == nil || errors.Is(err, netlink.ErrDumpInterrupted) {
		for _, l := range links {
			if _, ok := labFromMarker(l.Attrs().Alias); ok {
				out = append(out, "interface "+l.Attrs().Name+" ("+l.Attrs().Alias+")")
			}
		}
	}
	out = append(out, ovsLeaks()...) // OVS rows with a marker (ovs_clean.go)
	stale, _ := tracefs.Stale(false)
	out = append(out, stale...)
	// Wi-Fi radios die with the namespace they are in; one named by emuctl
	// in the root namespace would be a leak (wifi.go).
	if ws, err := wifi.Wiphys(0); err == nil {
		for _, w := range ws {
			if strings.HasPrefix(w.Name, "emu.") {
				out = append(out, "radio "+w.Name+" (mac80211_hwsim, root namespace)")
			}
		}
	}
	if ents, err := os.ReadDir(RunDir()); err == nil {
		for _, e := range ents {
			if e.IsDir() && e.Name() != sshMuxBase {
				out = append(out, "state dir "+filepath.Join(RunDir(), e.Name()))
			}
		}
		for _, d := range staleSSHSockets() { // a live process's shared SSH connections are not left behind
			out = append(out, "ssh socket "+d)
		}
	}
	out = append(out, mountLeaks(RunDir())...) // local machines' mounts (cluster_local.go)
	if ents, err := os.ReadDir("/etc/netns"); err == nil {
		for _, e := range ents {
			if t, err := os.Readlink(filepath.Join("/etc/netns", e.Name())); err == nil {
				if strings.HasPrefix(t, RunDir()+"/") {
					out = append(out, "hosts link /etc/netns/"+e.Name())
				}
				continue
			}
			t, err := os.Readlink(filepath.Join("/etc/netns", e.Name(), "hosts"))
			if err == nil && strings.HasPrefix(t, RunDir()+"/") {
				out = append(out, "hosts link /etc/netns/"+e.Name()+"/hosts")
			}
		}
	}
	return out
}

// nodeHandle opens a netlink handle in a node's namespace.
func nodeHandle(lab, node string) (*netlink.Handle, error) {
	h, err := netns.GetFromPath(filepath.Join(NetnsDir, topo.Namespace(lab, node)))
	if err != nil {
		return nil, err
	}
	defer h.Close()
	return netlink.NewHandleAt(h, unix.NETLINK_ROUTE)
}
