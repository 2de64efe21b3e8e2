package emu

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/emuctl/emuctl/ovs"
	"github.com/emuctl/emuctl/topo"
	"github.com/vishvananda/netlink"
)

// names: topology. The switches are called tn<N>, not s1: Mininet scripts
// on this machine may hold s1 with names: topology while these tests run
// (exactly what the refusal is for).

const topoNamesLab = `name: %s
nodes:
  h1: {}
  h2: {}
  %s: {kind: switch, type: ovs, names: topology}
links: [{endpoints: [h1, %s]}, {endpoints: [h2, %s]}]
`

func topoNamesSpec(lab, sw string) string {
	return fmt.Sprintf(topoNamesLab, lab, sw, sw, sw)
}

// requireNoDevices fails when a root-namespace device of one of names
// exists.
func requireNoDevices(t *testing.T, names ...string) {
	t.Helper()
	for _, n := range names {
		if l, err := netlink.LinkByName(n); err == nil {
			t.Errorf("device %s (%s, alias %q) is still in the root namespace", n, l.Type(), l.Attrs().Alias)
		}
	}
}

// requireNoRows fails when a row of one of names is in the database.
func requireNoRows(t *testing.T, db string, names ...string) {
	t.Helper()
	if db == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := ovs.Dial(ctx, db)
	if err != nil {
		return // the embedded pair stopped with the last lab: no rows
	}
	defer c.Close()
	have, err := c.Names(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if u, ok := have[n]; ok {
			t.Errorf("the database still has a %s %s (%q)", u.Table, n, u.Marker)
		}
	}
}

// A switch with names: topology: its bridge and ports are devices and
// rows named exactly like the switch and its interfaces, marked as the
// lab's — a port made in the root namespace (tn1-eth1) and one moved
// there from the switch's namespace (tn1-eth2: its link is shaped by
// kernel qdiscs); OVS's own tools take those names on the host and inside
// the switch node; hosts ping; down leaves nothing of that name.
func TestOVSTopologyNames(t *testing.T) {
	needOVS(t)
	const lab, sw = "tovn1", "tn1"
	spec := strings.Replace(topoNamesSpec(lab, sw), "{endpoints: [h2, tn1]}", "{endpoints: [h2, tn1], link: {rate: 100mbit, backend: kernel}}", 1)
	st := up(t, loadYAML(t, lab, spec), Options{})
	if st.OVS.Bridges[0].Ports[1].QoS != ovs.QoSNoop {
		t.Fatalf("tn1-eth2 is not a kernel-shaped port: %+v", st.OVS.Bridges[0].Ports[1])
	}
	b := st.OVS.Bridges[0]
	if b.Name != sw || b.Names != "topology" || len(b.Ports) != 2 || b.Ports[0].Name != "tn1-eth1" || b.Ports[1].Name != "tn1-eth2" {
		t.Fatalf("bridge state %+v", b)
	}
	for name, alias := range map[string]string{sw: Marker(lab) + " ovs-bridge=tn1", "tn1-eth1": Marker(lab) + " ovs=tn1:tn1-eth1", "tn1-eth2": Marker(lab) + " ovs=tn1:tn1-eth2"} {
		l, err := netlink.LinkByName(name)
		if err != nil {
			t.Errorf("no device %s in the root namespace: %v", name, err)
			continue
		}
		if l.Attrs().Alias != alias {
			t.Errorf("%s has alias %q, want %q", name, l.Attrs().Alias, alias)
		}
	}
	db := "--db=" + st.OVS.DB
	if got := strings.TrimSpace(sh2(t, "ovs-vsctl", db, "get", "Interface", "tn1-eth2", "ofport")); got != "2" {
		t.Errorf("ovs-vsctl get Interface tn1-eth2 ofport: %q, want 2", got)
	}
	if got := strings.TrimSpace(sh2(t, "ovs-vsctl", db, "port-to-br", "tn1-eth1")); got != sw {
		t.Errorf("ovs-vsctl port-to-br tn1-eth1: %q", got)
	}
	if got := sh2(t, "ovs-vsctl", db, "get", "Bridge", sw, "external_ids"); !strings.Contains(got, `emuctl="`+Marker(lab)+`"`) {
		t.Errorf("bridge %s external_ids: %s", sw, got)
	}
	// inside the switch node, through its OVS_RUNDIR links
	if show := execOut(t, lab, sw, "ovs-ofctl", "show", sw); !strings.Contains(show, "dpid:0000000000000001") || !strings.Contains(show, " 1(tn1-eth1)") || !strings.Contains(show, " 2(tn1-eth2)") {
		t.Errorf("ovs-ofctl show %s inside %s:\n%s", sw, sw, show)
	}
	requirePingAll(t, st)
	if err := Down(lab, nil); err != nil {
		t.Fatal(err)
	}
	requireGone(t, lab)
	requireNoOVSLeft(t, lab)
	requireNoDevices(t, sw, "tn1-eth1", "tn1-eth2")
	requireNoRows(t, st.OVS.DB, sw, "tn1-eth1", "tn1-eth2")
}

// A second lab that needs the same topology names is refused before it
// changes anything, naming the switch, the name, the lab holding it and
// the ways out; the first lab keeps working.
func TestOVSTopologyNamesTakenByLab(t *testing.T) {
	needOVS(t)
	a := up(t, loadYAML(t, "tovn2", topoNamesSpec("tovn2", "tn2")), Options{})
	_, err := Deploy(context.Background(), loadYAML(t, "tovn3", topoNamesSpec("tovn3", "tn2")), Options{})
	if err == nil {
		Down("tovn3", nil)
		t.Fatal("a second lab with the same topology names came up")
	}
	t.Logf("refused: %v", err)
	for _, want := range []string{"nothing was changed", "tovn3.yaml:5:34: switch tn2 (names: topology) needs names that are taken: tn2 by a tuntap device",
		"tn2-eth1 by a veth device in the root namespace of emuctl lab tovn2 (alias \"emuctl:tovn2 ovs=tn2:tn2-eth1\")", "tn2-eth2 by",
		"rename the switch, set names: unique (the default) on it, or take lab tovn2 down first (emuctl down tovn2)"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not say %q", want)
		}
	}
	requireGone(t, "tovn3")
	requireNoOVSLeft(t, "tovn3")
	requirePingAll(t, a)
	for _, n := range []string{"tn2", "tn2-eth1", "tn2-eth2"} {
		if l, err := netlink.LinkByName(n); err != nil || !strings.HasPrefix(l.Attrs().Alias, Marker("tovn2")+" ") {
			t.Errorf("%s after the refusal: %v", n, err)
		}
	}
}

// A device of the user named like a port (tn9-eth1) or like the bridge
// (tn9) makes up refuse; the devices are untouched, also by clean, and
// nothing of the lab remains.
func TestOVSTopologyNamesTakenByUser(t *testing.T) {
	needOVS(t)
	sh(t, "ip", "link", "add", "tn9-eth1", "type", "bridge") // (this kernel has no dummy devices)
	t.Cleanup(func() { exec.Command("ip", "link", "del", "tn9-eth1").Run() })
	sh(t, "ip", "tuntap", "add", "tn9", "mode", "tap")
	t.Cleanup(func() { exec.Command("ip", "link", "del", "tn9").Run() })
	before := map[string]int{}
	for _, n := range []string{"tn9", "tn9-eth1"} {
		l, err := netlink.LinkByName(n)
		if err != nil {
			t.Fatal(err)
		}
		before[n] = l.Attrs().Index
	}
	_, err := Deploy(context.Background(), loadYAML(t, "tovn4", topoNamesSpec("tovn4", "tn9")), Options{})
	if err == nil {
		Down("tovn4", nil)
		t.Fatal("up took names a user's devices hold")
	}
	t.Logf("refused: %v", err)
	for _, want := range []string{"nothing was changed", "switch tn9 (names: topology) needs names that are taken: ",
		"tn9 by a tuntap device in the root namespace that is not emuctl's", "tn9-eth1 by a bridge device in the root namespace that is not emuctl's",
		"; rename the switch, set names: unique (the default) on it, or remove what is not emuctl's, if it is yours"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not say %q", want)
		}
	}
	requireGone(t, "tovn4")
	requireNoOVSLeft(t, "tovn4")
	requireNoDevices(t, "tn9-eth2")
	if _, err := Clean(false, nil); err != nil {
		t.Fatal(err)
	}
	for n, idx := range before {
		l, err := netlink.LinkByName(n)
		if err != nil || l.Attrs().Index != idx || l.Attrs().Alias != "" {
			t.Errorf("the user's %s was touched: %v", n, err)
		}
	}
}

// up killed outright (kill -9) while the ports are being made (created
// under their unique names, not yet marked), when ovs-vswitchd has made
// the bridge device and emuctl has not marked it yet, and after the OVS
// phase: clean removes everything of the lab, and a user's tap named like
// the bridge, made after the first crash, survives.
func TestOVSTopologyNamesCrash(t *testing.T) {
	needOVS(t)
	const lab, sw = "tovn5", "tn5"
	for _, point := range []string{"ovs-rootlink", "ovs-bridges-unmarked", "routes"} {
		t.Run(point, func(t *testing.T) {
			self, _ := os.Executable()
			cmd := exec.Command(self, "-test.run=^TestCrashWindowHelper$")
			cmd.Env = append(os.Environ(), "EMUCTL_TEST_CRASH="+point, "EMUCTL_TEST_CRASH_LAB="+lab, "EMUCTL_TEST_CRASH_YAML="+topoNamesSpec(lab, sw))
			out, err := cmd.CombinedOutput()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 9 {
				t.Fatalf("crash helper: want exit 9, got %v\n%s", err, out)
			}
			st, _ := ReadState(lab)
			db := ""
			if st != nil && st.OVS != nil {
				db = st.OVS.DB
			}
			decoy := false
			switch point {
			case "ovs-rootlink":
				unmarked := 0
				for _, name := range readJournal(lab).RootLinks {
					if l, err := netlink.LinkByName(name); err == nil && l.Attrs().Alias == "" {
						unmarked++
						if strings.HasPrefix(name, "tn5-eth") && !strings.Contains(name, ".") {
							t.Errorf("port device created under its topology name %s before it was marked", name)
						}
					}
				}
				if unmarked == 0 {
					t.Fatal("no unmarked root device: the window was not hit")
				}
				// the bridge was not made yet: a user takes its name
				sh(t, "ip", "tuntap", "add", sw, "mode", "tap")
				t.Cleanup(func() { exec.Command("ip", "link", "del", sw).Run() })
				decoy = true
			case "ovs-bridges-unmarked":
				if l, err := netlink.LinkByName(sw); err != nil || l.Attrs().Alias != "" {
					t.Fatalf("want the bridge device %s unmarked after the crash: %v", sw, err)
				}
			case "routes":
				if l, err := netlink.LinkByName("tn5-eth1"); err != nil || !strings.HasPrefix(l.Attrs().Alias, Marker(lab)+" ") {
					t.Fatalf("tn5-eth1 after the crash: %v", err)
				}
			}
			if _, err := Clean(false, nil); err != nil {
				t.Fatal(err)
			}
			requireGone(t, lab)
			requireNoOVSLeft(t, lab)
			requireNoDevices(t, "tn5-eth1", "tn5-eth2")
			requireNoRows(t, db, sw, "tn5-eth1", "tn5-eth2")
			if decoy {
				if l, err := netlink.LinkByName(sw); err != nil || l.Attrs().Alias != "" {
					t.Errorf("clean touched the user's tap %s: %v", sw, err)
				}
			} else {
				requireNoDevices(t, sw)
			}
		})
	}
}

// Planning without root: a switch with names: topology gets its own and
// its interfaces' names, its ports a unique name to be created under, and
// a unique-named switch beside it never picks one of those; a name taken
// on the host fails the plan with who holds it.
func TestOVSPlanTopologyNames(t *testing.T) {
	spec := loadYAML(t, "tovnp", `name: tovnp
nodes:
  h1: {}
  h2: {}
  tn7: {kind: switch, type: ovs, names: topology}
  u1: {kind: switch, type: ovs}
links: [{endpoints: [h1, tn7]}, {endpoints: [tn7, u1]}, {endpoints: [h2, u1]}]
`)
	d := &deployer{spec: spec, marker: Marker(spec.Name), st: &State{}}
	plan, err := d.ovsPlan(nameHolders{}, false)
	if err != nil {
		t.Fatal(err)
	}
	tn, u := plan.bridges[0], plan.bridges[1]
	if tn.Name != "tn7" || tn.Names != "topology" || tn.Ports[0].Name != "tn7-eth1" || tn.Ports[1].Name != "tn7-eth2" || tn.Ports[1].OFPort != 2 {
		t.Errorf("tn7: %+v", tn)
	}
	if u.Names != "" || !strings.HasPrefix(u.Name, "u1.") || !strings.HasPrefix(u.Ports[0].Name, "u1-eth1.") {
		t.Errorf("u1: %+v", u)
	}
	for _, iface := range []string{"tn7-eth1", "tn7-eth2"} {
		b := plan.born["tn7:"+iface]
		if !strings.HasPrefix(b, iface+".") || len(b) > ovs.MaxIfName {
			t.Errorf("%s is created as %q", iface, b)
		}
	}
	if len(plan.born) != 2 || plan.lab.Bridges[0].Name != "tn7" || plan.lab.Bridges[0].Ports[0].Name != "tn7-eth1" {
		t.Errorf("born %v, rows %+v", plan.born, plan.lab.Bridges[0])
	}
	taken := nameHolders{"tn7-eth2": {desc: "a veth device in the root namespace of emuctl lab other (alias \"emuctl:other ovs=tn7:tn7-eth2\")", lab: "other"}}
	_, err = d.ovsPlan(taken, false)
	want := `tovnp.yaml:5:34: switch tn7 (names: topology) needs a name that is taken: tn7-eth2 by a veth device in the root namespace of emuctl lab other (alias "emuctl:other ovs=tn7:tn7-eth2"); rename the switch, set names: unique (the default) on it, or take lab other down first (emuctl down other)`
	if err == nil || err.Error() != want {
		t.Errorf("plan with a taken name:\n got %v\nwant %s", err, want)
	}
}

// A run-time change of a lab with names: topology (a host and a link
// between hosts) leaves the lab's bridge and ports, and their record, as
// they were; a link to the switch then gets its port under its topology
// name (ovs_change_test.go has more).
func TestOVSTopologyNamesRuntimeChange(t *testing.T) {
	needOVS(t)
	const lab = "tovn6"
	// a /24 for the switch's segment, so a third host could join it
	st := up(t, loadYAML(t, lab, topoNamesSpec(lab, "tn6")+"addressing: {p2p_prefix: 24}\n"), Options{})
	before := fmt.Sprintf("%+v %s", st.OVS.Bridges, st.OVS.ExecRunDir)
	if _, err := AddNode(context.Background(), lab, topo.NodeRequest{Name: "h3"}, Options{}); err != nil {
		t.Fatal(err)
	}
	st2, err := AddLink(context.Background(), lab, topo.LinkRequest{A: "h3", B: "h1"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if after := fmt.Sprintf("%+v %s", st2.OVS.Bridges, st2.OVS.ExecRunDir); after != before {
		t.Errorf("the change altered the lab's OVS record:\n%s\nnow:\n%s", before, after)
	}
	if st3, err := ReadState(lab); err != nil || fmt.Sprintf("%+v %s", st3.OVS.Bridges, st3.OVS.ExecRunDir) != before {
		t.Errorf("recorded state after the change differs (%v)", err)
	}
	if got := strings.TrimSpace(sh2(t, "ovs-vsctl", "--db="+st.OVS.DB, "get", "Interface", "tn6-eth1", "ofport")); got != "1" {
		t.Errorf("tn6-eth1 ofport %q after the change", got)
	}
	if _, err := AddLink(context.Background(), lab, topo.LinkRequest{A: "h3", B: "tn6"}, Options{}); err != nil {
		t.Fatalf("a run-time link to an ovs switch: %v", err)
	}
	if got := strings.TrimSpace(sh2(t, "ovs-vsctl", "--db="+st.OVS.DB, "get", "Interface", "tn6-eth3", "ofport")); got != "3" {
		t.Errorf("tn6-eth3 ofport %q after the link add", got)
	}
	requirePingAll(t, st)      // the lab as it was up
	pingOK(t, lab, "h3", "h2") // across the new port (h3's own address is on its link to h1)
}

// A link between two switches, one with names: topology and one with
// unique names: both ends are made in the root namespace, one renamed to
// its topology name once marked; traffic crosses both bridges.
func TestOVSTopologyNamesMixed(t *testing.T) {
	needOVS(t)
	const lab = "tovn7"
	st := up(t, loadYAML(t, lab, `name: tovn7
nodes:
  h1: {}
  h2: {}
  tm1: {kind: switch, type: ovs, names: topology}
  tm2: {kind: switch, type: ovs}
links: [{endpoints: [h1, tm1]}, {endpoints: [tm1, tm2]}, {endpoints: [tm2, h2]}]
`), Options{})
	a, b := st.OVS.Bridges[0], st.OVS.Bridges[1]
	if a.Name != "tm1" || a.Ports[1].Name != "tm1-eth2" || b.Names != "" || !strings.HasPrefix(b.Ports[0].Name, "tm2-eth1.") {
		t.Fatalf("bridges %+v %+v", a, b)
	}
	l, err := netlink.LinkByName("tm1-eth2")
	if err != nil {
		t.Fatal(err)
	}
	peer, err := netlink.LinkByIndex(l.Attrs().ParentIndex)
	if err != nil || peer.Attrs().Name != b.Ports[0].Name {
		t.Errorf("tm1-eth2's peer is %v (%v), want %s", peer, err, b.Ports[0].Name)
	}
	requirePingAll(t, st)
	if err := Down(lab, nil); err != nil {
		t.Fatal(err)
	}
	requireGone(t, lab)
	requireNoOVSLeft(t, lab)
	requireNoDevices(t, "tm1", "tm1-eth1", "tm1-eth2")
}
