package main

import (
	"fmt"
	"regexp"

	"github.com/emuctl/emuctl/topo"
)

// peerTool is an executable the Mininet peer of bench needs and the
// Debian package that provides it.
type peerTool struct{ bin, pkg string }

// mininetTools lists what mn needs before it builds anything for a row
// of switch type sw: mn itself and what Mininet's own set-up checks look
// for (Node: mnexec and ifconfig; LinuxBridge: brctl; OVSSwitch:
// ovs-vsctl). Mininet's check, when one is missing, prints the whole PATH
// and exits, and that line is all a failed row could show.
func mininetTools(sw string) []peerTool {
	ts := []peerTool{{"mn", "mininet"}, {"mnexec", "mininet"}, {"ifconfig", "net-tools"}}
	if sw == topo.SwitchOVS {
		return append(ts, peerTool{"ovs-vsctl", "openvswitch-switch"})
	}
	return append(ts, peerTool{"brctl", "bridge-utils"})
}

// missingPeerTool returns the first of ts that look (exec.LookPath: the
// PATH mn is started with, so the same search Mininet's check makes)
// does not find.
func missingPeerTool(ts []peerTool, look func(string) (string, error)) (peerTool, bool) {
	for _, t := range ts {
		if _, err := look(t.bin); err != nil {
			return t, true
		}
	}
	return peerTool{}, false
}

// peerSkipMessage says what is missing and what to install.
func peerSkipMessage(t peerTool) string {
	if t.pkg == "" {
		return fmt.Sprintf("Mininet peer skipped: %s not found (install the Debian package that provides it: apt-file search bin/%s names it)", t.bin, t.bin)
	}
	return fmt.Sprintf("Mininet peer skipped: %s not found (install Debian package %s: apt-get install %s)", t.bin, t.pkg, t.pkg)
}

// peerSkipCell is the short form for the table's mininet column.
func peerSkipCell(t peerTool) string { return "skipped: no " + t.bin }

var mininetMissingRE = regexp.MustCompile(`Cannot find required executable (\S+?)\.?\s`)

// mininetMissing recognises Mininet's "Cannot find required executable X"
// in its output (a check of a Mininet version newer than mininetTools
// knows of); the package is unknown unless mininetTools names X.
func mininetMissing(out, sw string) (peerTool, bool) {
	m := mininetMissingRE.FindStringSubmatch(out + "\n")
	if m == nil {
		return peerTool{}, false
	}
	for _, t := range mininetTools(sw) {
		if t.bin == m[1] {
			return t, true
		}
	}
	return peerTool{bin: m[1]}, true
}
