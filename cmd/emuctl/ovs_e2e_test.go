package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/emuctl/emuctl/ovs"
)

// `emuctl up --topo linear,3 --switch ovs` as a user types it: the lab
// comes up on Open vSwitch, hosts reach each other, OVS's own tools work
// inside a switch with the topology's names, ls and inspect show the
// bridges and the socket, down leaves nothing.
func TestOVSUpLinearE2E(t *testing.T) {
	needRoot(t)
	if _, err := ovs.Binaries(); err != nil {
		t.Skip(err)
	}
	must(t, run(t, "", "up", "--topo", "linear,3", "--switch", "ovs", "--name", "tove2e"), "up")
	defer run(t, "", "down", "tove2e")
	must(t, run(t, "", "exec", "-l", "tove2e", "h1", "--", "ping", "-c1", "-W2", "h3"), "exec ping")
	show := must(t, run(t, "", "exec", "-l", "tove2e", "s2", "--", "ovs-ofctl", "show", "s2"), "ovs-ofctl show s2")
	if !strings.Contains(show.stdout, "dpid:0000000000000002") {
		t.Errorf("ovs-ofctl show s2 inside s2:\n%s", show.stdout)
	}
	// capture on a switch port (in the root namespace under emuctl's port
	// name) while h1 pings h3 across it
	pcap := filepath.Join(t.TempDir(), "s1.pcapng")
	pinger := exec.Command(bin, "exec", "-l", "tove2e", "h1", "--", "ping", "-c", "8", "-i", "0.25", "h3")
	if err := pinger.Start(); err != nil {
		t.Fatal(err)
	}
	must(t, run(t, "", "capture", "-l", "tove2e", "s1:s1-eth1", "--filter", "icmp", "-c", "4", "-d", "5s", "-w", pcap), "capture on an ovs port")
	pinger.Wait()
	acks := run(t, "", "capture", "acks", pcap)
	if fi, err := os.Stat(pcap); err != nil || fi.Size() < 200 {
		t.Errorf("capture on s1:s1-eth1 wrote %v (%v); capture acks: %s %s", fi, err, acks.stdout, acks.stderr)
	}
	ls := must(t, run(t, "", "ls", "tove2e"), "ls")
	for _, want := range []string{"switch/ovs", "OVS: ", "db unix:", "s1:s1-eth1", "OVS_RUNDIR="} {
		if !strings.Contains(ls.stdout, want) {
			t.Errorf("ls lacks %q:\n%s", want, ls.stdout)
		}
	}
	var st struct {
		OVSLive struct {
			DB      string `json:"db"`
			Bridges []struct {
				Node string `json:"node"`
			} `json:"bridges"`
		} `json:"ovs_live"`
	}
	insp := must(t, run(t, "", "inspect", "tove2e"), "inspect")
	if err := json.Unmarshal([]byte(insp.stdout), &st); err != nil || !strings.HasPrefix(st.OVSLive.DB, "unix:") || len(st.OVSLive.Bridges) != 3 {
		t.Errorf("inspect ovs_live: %v %+v", err, st.OVSLive)
	}
	doc := must(t, run(t, "", "doctor"), "doctor")
	if !strings.Contains(doc.stdout, "switch (type: ovs)") || !strings.Contains(doc.stdout, "OVS datapath") {
		t.Errorf("doctor:\n%s", doc.stdout)
	}
	must(t, run(t, "", "down", "tove2e"), "down")
	// (clean --check also lists other labs on this machine: only ours matter)
	if left := run(t, "", "clean", "--check"); strings.Contains(left.stdout, "tove2e") {
		t.Errorf("left behind:\n%s", left.stdout)
	}
}
