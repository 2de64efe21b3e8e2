package main

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/emuctl/emuctl/topo"
)

// TestBenchPeerMessage: when Mininet cannot run, bench names the missing
// tool and the package to install, never the PATH (Mininet's own check
// prints the whole PATH instead). Tier 1: no root, nothing is run.
func TestBenchPeerMessage(t *testing.T) {
	const path = "/opt/emuctl-test-nowhere/bin:/srv/emuctl-test-elsewhere/sbin"
	t.Setenv("PATH", path)
	for _, c := range []struct {
		sw, missing, pkg string
	}{
		{"", "brctl", "bridge-utils"},
		{topo.SwitchLinuxBridge, "brctl", "bridge-utils"},
		{topo.SwitchOVS, "ovs-vsctl", "openvswitch-switch"},
		{"", "mn", "mininet"},
		{"", "mnexec", "mininet"},
		{topo.SwitchOVS, "ifconfig", "net-tools"},
	} {
		look := func(bin string) (string, error) {
			if bin == c.missing {
				return "", errors.New("executable file not found in $PATH")
			}
			return "/usr/bin/" + bin, nil
		}
		tl, ok := missingPeerTool(mininetTools(c.sw), look)
		if !ok || tl.bin != c.missing {
			t.Errorf("switch %q, %s missing: got %+v, %v", c.sw, c.missing, tl, ok)
			continue
		}
		msg := peerSkipMessage(tl)
		for _, want := range []string{"Mininet peer skipped", c.missing + " not found", "Debian package " + c.pkg, "apt-get install " + c.pkg} {
			if !strings.Contains(msg, want) {
				t.Errorf("%q does not say %q", msg, want)
			}
		}
		if strings.Contains(msg, path) || strings.Contains(msg, "/opt/") || strings.Contains(msg, "PATH") {
			t.Errorf("%q shows the PATH", msg)
		}
		if cell := peerSkipCell(tl); cell != "skipped: no "+c.missing {
			t.Errorf("cell %q", cell)
		}
	}
	all := func(bin string) (string, error) { return "/usr/bin/" + bin, nil }
	if tl, ok := missingPeerTool(mininetTools(""), all); ok {
		t.Errorf("nothing missing, got %+v", tl)
	}
}

// TestBenchMininetOutput: a tool Mininet's own check reports (its
// "Cannot find required executable" line, then the PATH) becomes the
// same plain message.
func TestBenchMininetOutput(t *testing.T) {
	out := "*** Creating network\n*** Adding controller\n*** Adding hosts:\nh1 h2\n*** Adding switches:\n" +
		"Cannot find required executable brctl.\nPlease make sure that bridge-utils is installed and available in your $PATH:\n(" +
		os.Getenv("PATH") + ")\n"
	tl, ok := mininetMissing(out, "")
	if !ok || tl != (peerTool{"brctl", "bridge-utils"}) {
		t.Fatalf("got %+v, %v", tl, ok)
	}
	tl, ok = mininetMissing("Cannot find required executable ofdatapath.\nPlease make sure that ... $PATH:\n(/usr/bin)\n", "")
	if !ok || tl.bin != "ofdatapath" || tl.pkg != "" {
		t.Fatalf("unknown tool: got %+v, %v", tl, ok)
	}
	msg := peerSkipMessage(tl)
	if !strings.Contains(msg, "ofdatapath not found") || strings.Contains(msg, "apt-get install ") || strings.Contains(msg, "/usr/bin") {
		t.Errorf("unknown tool: %q", msg)
	}
	if _, ok := mininetMissing("*** Error: something else\n", ""); ok {
		t.Errorf("matched output without a missing executable")
	}
}
