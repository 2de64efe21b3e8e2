package kernellab

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/emuctl/emuctl/emu"
	"github.com/vishvananda/netlink"
)

// TestMain runs the tests and, inside the lab, checks that they left
// nothing behind: no ekl- namespace, link or radio, no OVS datapath, no
// daemon. Outside the lab the smoke tests skip, so there is nothing to check.
func TestMain(m *testing.M) {
	code := m.Run()
	if InLab() {
		leaks := append(findLeaks(), emu.Leaks()...)
		if len(leaks) > 0 {
			fmt.Fprintf(os.Stderr, "kernel lab leak check: left behind: %s\n", strings.Join(leaks, ", "))
			if code == 0 {
				code = 1
			}
		} else {
			fmt.Println("kernel lab leak check: clean")
		}
	}
	os.Exit(code)
}

func findLeaks() []string {
	var leaks []string
	glob := func(pattern, what string) {
		names, _ := filepath.Glob(pattern)
		for _, n := range names {
			leaks = append(leaks, what+" "+filepath.Base(n))
		}
	}
	glob("/run/netns/"+prefix+"*", "netns")
	glob("/sys/class/ieee80211/"+prefix+"*", "radio")
	links, _ := netlink.LinkList()
	for _, l := range links {
		if n := l.Attrs().Name; strings.HasPrefix(n, prefix) || l.Type() == "openvswitch" {
			leaks = append(leaks, "link "+n)
		}
	}
	daemons := map[string]bool{"hostapd": true, "wpa_supplicant": true, "ovsdb-server": true, "ovs-vswitchd": true}
	procs, _ := filepath.Glob("/proc/[0-9]*/comm")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if comm := strings.TrimSpace(string(b)); err == nil && daemons[comm] {
			leaks = append(leaks, "process "+comm+" (pid "+filepath.Base(filepath.Dir(p))+")")
		}
	}
	return leaks
}
