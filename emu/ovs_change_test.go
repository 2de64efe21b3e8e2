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

// Run-time changes of labs with Open vSwitch switches (ovs_change.go).
// Labs are called torc<N>; switches with names: topology tq<N> (not s1:
// other tests and Mininet scripts on this machine may hold s1).

// Planning without root: a change keeps the recorded bridges and ports
// (names, OpenFlow ports) and plans only what it adds — a port on a kept
// bridge with Mininet's port number, a new bridge whole; a topology name
// the lab holds is no conflict, one held by someone else is.
func TestOVSPlanChange(t *testing.T) {
	for _, names := range []string{"unique", "topology"} {
		t.Run(names, func(t *testing.T) {
			sw := "s1"
			if names == "topology" {
				sw = "tq1"
			}
			spec := loadYAML(t, "torcp", fmt.Sprintf("name: torcp\naddressing: {p2p_prefix: 24}\nnodes:\n  h1: {}\n  h2: {}\n  %s: {kind: switch, type: ovs, names: %s}\nlinks: [{endpoints: [h1, %s]}, {endpoints: [h2, %s]}]\n", sw, names, sw, sw))
			d := &deployer{spec: spec, marker: Marker(spec.Name), st: &State{}}
			up, err := d.ovsPlan(nameHolders{}, false)
			if err != nil {
				t.Fatal(err)
			}
			// the lab's own names are in use (its devices and rows)
			taken := nameHolders{}
			self := nameHolder{desc: "the lab's", lab: "torcp"}
			taken[up.bridges[0].Name] = self
			for _, p := range up.bridges[0].Ports {
				taken[p.Name] = self
			}
			s2, err := topo.AddNode(spec, topo.NodeRequest{Name: "h3"})
			if err != nil {
				t.Fatal(err)
			}
			s2, err = topo.AddLink(s2, topo.LinkRequest{A: "h3", B: sw})
			if err != nil {
				t.Fatal(err)
			}
			s2, err = topo.AddNode(s2, topo.NodeRequest{Name: sw + "x", Kind: topo.KindSwitch, SwitchType: topo.SwitchOVS})
			if err != nil {
				t.Fatal(err)
			}
			s2, err = topo.AddLink(s2, topo.LinkRequest{A: sw, B: sw + "x"})
			if err != nil {
				t.Fatal(err)
			}
			d2 := &deployer{spec: s2, marker: Marker(spec.Name), st: &State{}}
			plan, err := d2.ovsPlanKeeping(taken, false, up.bridges)
			if err != nil {
				t.Fatal(err)
			}
			b := plan.bridges[0]
			if b.Name != up.bridges[0].Name || len(b.Ports) != 4 {
				t.Fatalf("kept bridge %+v", b)
			}
			for k := range 2 {
				if fmt.Sprintf("%+v", b.Ports[k]) != fmt.Sprintf("%+v", up.bridges[0].Ports[k]) {
					t.Errorf("port %d: %+v, was %+v", k, b.Ports[k], up.bridges[0].Ports[k])
				}
			}
			if p := b.Ports[2]; p.Iface != sw+"-eth3" || p.OFPort != 3 || p.Peer != "h3:h3-eth0" || !plan.added[sw+":"+sw+"-eth3"] {
				t.Errorf("new port %+v (added %v)", p, plan.added)
			}
			if names == "topology" && (b.Ports[2].Name != "tq1-eth3" || !strings.HasPrefix(plan.born["tq1:tq1-eth3"], "tq1-eth3.")) {
				t.Errorf("new port %s, born %v", b.Ports[2].Name, plan.born)
			}
			if names == "unique" && !strings.HasPrefix(b.Ports[2].Name, "s1-eth3.") {
				t.Errorf("new port %s", b.Ports[2].Name)
			}
			if plan.added[sw] || plan.added[sw+":"+sw+"-eth1"] || !plan.added[sw+"x"] || plan.bridges[1].Node != sw+"x" || len(plan.bridges[1].Ports) != 1 {
				t.Errorf("added %v, bridges %+v", plan.added, plan.bridges)
			}
			// a new topology name held by another lab is refused
			if names == "topology" {
				taken["tq1-eth3"] = nameHolder{desc: "a veth device of emuctl lab other", lab: "other"}
				if _, err := d2.ovsPlanKeeping(taken, false, up.bridges); err == nil || !strings.Contains(err.Error(), "tq1-eth3 by a veth device of emuctl lab other") {
					t.Errorf("a taken new name: %v", err)
				}
			}
		})
	}
}

// ovsChangeLab is a lab with one ovs switch and two hosts, with room on
// the switch's segment for more.
func ovsChangeLab(lab, sw, names string) string {
	return fmt.Sprintf("name: %s\naddressing: {p2p_prefix: 24}\nnodes:\n  h1: {}\n  h2: {}\n  %s: {kind: switch, type: ovs, names: %s}\nlinks: [{endpoints: [h1, %s]}, {endpoints: [h2, %s]}]\n", lab, sw, names, sw, sw)
}

// portOf is the recorded port of node:iface.
func portOf(st *State, node, iface string) *OVSPortState {
	if st.OVS == nil {
		return nil
	}
	for _, b := range st.OVS.Bridges {
		for i, p := range b.Ports {
			if b.Node == node && p.Iface == iface {
				return &b.Ports[i]
			}
		}
	}
	return nil
}

func pingOK(t *testing.T, lab, from, to string) {
	t.Helper()
	st, err := ReadState(lab)
	if err != nil {
		t.Fatal(err)
	}
	dst, ok := PrimaryAddr(st.Spec.Node(to))
	if !ok {
		t.Fatalf("%s has no address", to)
	}
	var last error
	for range 10 { // a learning switch, ARP: a first probe may go unanswered
		if _, last = Ping(context.Background(), lab, from, dst, time.Second); last == nil {
			return
		}
	}
	t.Fatalf("%s -> %s (%s): %v", from, to, dst, last)
}

// A host and its link to a running ovs switch (unique or topology
// names), then a second switch behind it with a host: pings cross them,
// the new port has Mininet's OpenFlow port number in the lab's database,
// the state lists it as up would; link del removes its row and device;
// node del of the new switch removes its bridge; down leaves nothing.
func TestOVSChangeLinkAndSwitch(t *testing.T) {
	needOVS(t)
	for _, c := range []struct{ names, lab, sw, sw2 string }{{"unique", "torc1", "s1", "s2"}, {"topology", "torc2", "tq1", "tq2"}} {
		t.Run(c.names, func(t *testing.T) {
			ctx := context.Background()
			lab, sw := c.lab, c.sw
			up(t, loadYAML(t, lab, ovsChangeLab(lab, sw, c.names)), Options{})
			if _, err := AddNode(ctx, lab, topo.NodeRequest{Name: "h3"}, Options{}); err != nil {
				t.Fatal(err)
			}
			st, err := AddLink(ctx, lab, topo.LinkRequest{A: "h3", B: sw}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			iface := sw + "-eth3"
			p := portOf(st, sw, iface)
			if p == nil || p.OFPort != 3 || p.Peer != "h3:h3-eth0" || (c.names == "topology") != (p.Name == iface) {
				t.Fatalf("recorded port %+v", p)
			}
			if again, _ := ReadState(lab); portOf(again, sw, iface) == nil {
				t.Fatal("the state on disk does not list the new port")
			}
			if got := strings.TrimSpace(sh2(t, "ovs-vsctl", "--db="+st.OVS.DB, "get", "Interface", p.Name, "ofport")); got != "3" {
				t.Errorf("%s ofport %q, want 3", p.Name, got)
			}
			l, err := netlink.LinkByName(p.Name)
			if err != nil || l.Attrs().Alias != Marker(lab)+" ovs="+sw+":"+iface {
				t.Fatalf("port device %s: %v", p.Name, err)
			}
			pingOK(t, lab, "h3", "h1")
			info := InspectOVS(st)
			if info == nil || info.Error != "" || len(info.Bridges) != 1 || len(info.Bridges[0].Ports) != 3 {
				t.Fatalf("inspect: %+v", info)
			}
			// a second switch behind the first, and a host behind it
			// with more of its keys, the file's: they reach the bridge row
			req := topo.NodeRequest{Name: c.sw2, Kind: topo.KindSwitch, SwitchType: topo.SwitchOVS,
				Entry: "{fail_mode: standalone, protocols: [OpenFlow10, OpenFlow13]}"}
			if c.names == "topology" {
				req.OVSNames = "topology"
			}
			if _, err := AddNode(ctx, lab, req, Options{}); err != nil {
				t.Fatal(err)
			}
			if _, err := AddLink(ctx, lab, topo.LinkRequest{A: sw, B: c.sw2}, Options{}); err != nil {
				t.Fatal(err)
			}
			if _, err := AddNode(ctx, lab, topo.NodeRequest{Name: "h4"}, Options{}); err != nil {
				t.Fatal(err)
			}
			st, err = AddLink(ctx, lab, topo.LinkRequest{A: "h4", B: c.sw2}, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(st.OVS.Bridges) != 2 || (c.names == "topology") != (st.OVS.Bridges[1].Name == c.sw2) {
				t.Fatalf("bridges %+v", st.OVS.Bridges)
			}
			pingOK(t, lab, "h4", "h1")
			br2 := st.OVS.Bridges[1].Name
			for col, want := range map[string]string{"fail_mode": "standalone", "protocols": "[OpenFlow10, OpenFlow13]"} {
				if got := strings.TrimSpace(sh2(t, "ovs-vsctl", "--db="+st.OVS.DB, "get", "Bridge", br2, col)); got != want {
					t.Errorf("bridge %s added with keys: %s %s, want %s", br2, col, got, want)
				}
			}
			execOut(t, lab, c.sw2, "ovs-ofctl", "show", c.sw2)
			// the lab as it stands loads again
			if doc, err := Topology(lab); err != nil {
				t.Fatal(err)
			} else if _, err := topo.Load(lab+".yaml", doc); err != nil {
				t.Fatalf("%v\n%s", err, doc)
			}
			// link del: row and device go
			li, err := FindLink(st.Spec, "h3:h3-eth0")
			if err != nil {
				t.Fatal(err)
			}
			st, err = RemoveLink(ctx, lab, li, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if portOf(st, sw, iface) != nil {
				t.Errorf("the state still lists %s", iface)
			}
			requireNoDevices(t, p.Name)
			requireNoRows(t, st.OVS.DB, p.Name)
			// node del of the second switch: its bridge, ports and rows go
			b2 := st.OVS.Bridges[1]
			if _, err := RemoveNode(ctx, lab, c.sw2, Options{}); err != nil {
				t.Fatal(err)
			}
			st, _ = ReadState(lab)
			if len(st.OVS.Bridges) != 1 {
				t.Errorf("bridges after node del %+v", st.OVS.Bridges)
			}
			names := []string{b2.Name}
			for _, p := range b2.Ports {
				names = append(names, p.Name)
			}
			requireNoDevices(t, names...)
			requireNoRows(t, st.OVS.DB, names...)
			for _, h := range []string{"h3", "h4"} { // no links left: pingall would miss them
				if st, err = RemoveNode(ctx, lab, h, Options{}); err != nil {
					t.Fatal(err)
				}
			}
			requirePingAll(t, st)
			if err := Down(lab, nil); err != nil {
				t.Fatal(err)
			}
			requireGone(t, lab)
			requireNoOVSLeft(t, lab)
		})
	}
}

// A failed add (a fault after the new port is attached) leaves the lab
// as it was: no row, no device, the state as before; a lab without ovs
// switches gains one and gives it back.
func TestOVSChangeRolledBack(t *testing.T) {
	needOVS(t)
	ctx := context.Background()
	const lab = "torc3"
	st0 := up(t, loadYAML(t, lab, ovsChangeLab(lab, "s1", "unique")), Options{})
	if _, err := AddNode(ctx, lab, topo.NodeRequest{Name: "h3"}, Options{}); err != nil {
		t.Fatal(err)
	}
	mid, _ := ReadState(lab)
	_, err := AddLink(ctx, lab, topo.LinkRequest{A: "h3", B: "s1"}, Options{FaultAt: "change-wait"})
	if err == nil || !strings.Contains(err.Error(), "injected fault") {
		t.Fatalf("fault: %v", err)
	}
	after, _ := ReadState(lab)
	if fmt.Sprintf("%+v", after.OVS.Bridges) != fmt.Sprintf("%+v", mid.OVS.Bridges) || len(after.Spec.Links) != len(mid.Spec.Links) {
		t.Errorf("after the rollback: %+v, want %+v", after.OVS.Bridges, mid.OVS.Bridges)
	}
	have, err := ovsRowNames(st0.OVS.DB)
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range rootLinks() {
		if strings.HasPrefix(l.Attrs().Name, "s1-eth3.") && strings.HasPrefix(l.Attrs().Alias, Marker(lab)) {
			t.Errorf("device %s left by the rollback", l.Attrs().Name)
		}
	}
	for n, u := range have {
		if strings.HasPrefix(n, "s1-eth3.") && u.Marker == Marker(lab) {
			t.Errorf("%s %s left by the rollback", u.Table, n)
		}
	}
	// and the add works afterwards
	if _, err := AddLink(ctx, lab, topo.LinkRequest{A: "h3", B: "s1"}, Options{}); err != nil {
		t.Fatal(err)
	}
	pingOK(t, lab, "h3", "h2")
}

func ovsRowNames(db string) (map[string]ovs.NameUse, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := ovs.Dial(ctx, db)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	return c.Names(ctx)
}

// A link add to an ovs switch killed (kill -9) while its port device is
// in the root namespace and not yet marked, and once the port is
// attached: down removes the whole lab, the journalled device and the
// rows included, and clean finds nothing more.
func TestOVSChangeCrash(t *testing.T) {
	needOVS(t)
	const lab = "torc4"
	for _, point := range []string{"ovs-rootlink", "change-sysctls"} {
		t.Run(point, func(t *testing.T) {
			self, _ := os.Executable()
			cmd := exec.Command(self, "-test.run=^TestOVSChangeCrashHelper$")
			cmd.Env = append(os.Environ(), "EMUCTL_TEST_CRASH="+point, "EMUCTL_TEST_CRASH_LAB="+lab)
			out, err := cmd.CombinedOutput()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 9 {
				Down(lab, nil)
				t.Fatalf("crash helper: want exit 9, got %v\n%s", err, out)
			}
			st, err := ReadState(lab)
			if err != nil || st.OVS == nil {
				t.Fatalf("state after the crash: %v", err)
			}
			db := st.OVS.DB
			var port string
			if p := portOf(st, "s1", "s1-eth3"); p != nil {
				port = p.Name
			}
			if point == "ovs-rootlink" {
				unmarked := 0
				for _, name := range readJournal(lab).RootLinks {
					if l, err := netlink.LinkByName(name); err == nil && l.Attrs().Alias == "" {
						unmarked++
					}
				}
				if unmarked == 0 {
					t.Fatal("no unmarked root device: the window was not hit")
				}
			} else if port == "" {
				t.Fatal("the new port is not recorded")
			}
			if err := Down(lab, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := Clean(false, nil); err != nil {
				t.Fatal(err)
			}
			requireGone(t, lab)
			requireNoOVSLeft(t, lab)
			if port != "" {
				requireNoDevices(t, port)
				requireNoRows(t, db, port)
			}
		})
	}
}

// TestOVSChangeCrashHelper runs as TestOVSChangeCrash's subprocess: up,
// then a link add killed at the crash point.
func TestOVSChangeCrashHelper(t *testing.T) {
	point := os.Getenv("EMUCTL_TEST_CRASH")
	lab := os.Getenv("EMUCTL_TEST_CRASH_LAB")
	if point == "" || lab == "" {
		t.Skip("subprocess helper")
	}
	if _, err := Deploy(context.Background(), loadYAML(t, lab, ovsChangeLab(lab, "s1", "unique")), Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := AddNode(context.Background(), lab, topo.NodeRequest{Name: "h3"}, Options{}); err != nil {
		t.Fatal(err)
	}
	crashAt = point
	AddLink(context.Background(), lab, topo.LinkRequest{A: "h3", B: "s1"}, Options{})
	t.Fatal("not killed at " + point)
}

// Links added to a running ovs switch on each backend up uses for them:
// kernel-shaped (its switch end shaped in the switch's namespace, moved to
// the root namespace, its qdiscs put back, a linux-noop QoS keeping OVS
// off them) and the userspace engine (its switch end moved likewise).
func TestOVSChangeShaped(t *testing.T) {
	needOVS(t)
	ctx := context.Background()
	const lab = "torc5"
	up(t, loadYAML(t, lab, ovsChangeLab(lab, "s1", "unique")), Options{})
	for _, c := range []struct{ host, params, backend string }{
		{"h3", "rate=8mbit,backend=kernel", ""},
		{"h4", "delay=1ms,rate=12mbit,backend=userspace", BackendEngine},
	} {
		if _, err := AddNode(ctx, lab, topo.NodeRequest{Name: c.host}, Options{}); err != nil {
			t.Fatal(err)
		}
		st, err := AddLink(ctx, lab, topo.LinkRequest{A: c.host, B: "s1", Params: c.params}, Options{})
		if err != nil {
			t.Fatalf("%s: %v", c.host, err)
		}
		li := len(st.Spec.Links) - 1
		ls, _ := findLinkState(st.Links, li)
		p := portOf(st, "s1", st.Spec.Links[li].B.Iface)
		if p == nil {
			t.Fatalf("%s: no port recorded", c.host)
		}
		infos, err := ShowLinks(lab)
		if err != nil {
			t.Fatal(err)
		}
		info := infos[li]
		t.Logf("%s: backend %s, port %s (qos %q), states %s/%s, qdiscs %q", c.host, ls.Backend, p.Name, p.QoS, info.StateA, info.StateB, info.Qdiscs)
		if info.StateA != "up" || info.StateB != "up" {
			t.Errorf("%s: link states %s/%s", c.host, info.StateA, info.StateB)
		}
		if c.backend == "" { // kernel: netem or TBF on both ends, the switch's in the root namespace
			if ls.Backend != BackendNetem && ls.Backend != BackendShaper {
				t.Errorf("%s: backend %s", c.host, ls.Backend)
			}
			if p.QoS != ovs.QoSNoop || len(info.Qdiscs) != 2 || strings.Contains(info.Qdiscs[1], "device default") {
				t.Errorf("%s: port qos %q, qdiscs %q", c.host, p.QoS, info.Qdiscs)
			}
		} else if ls.Backend != c.backend {
			t.Errorf("%s: backend %s, want %s", c.host, ls.Backend, c.backend)
		}
		if l, err := netlink.LinkByName(p.Name); err != nil || !strings.HasPrefix(l.Attrs().Alias, Marker(lab)+" ovs=") {
			t.Errorf("%s: port device %s in the root namespace: %v", c.host, p.Name, err)
		}
		pingOK(t, lab, c.host, "h1")
	}
	if err := Down(lab, nil); err != nil {
		t.Fatal(err)
	}
	requireGone(t, lab)
	requireNoOVSLeft(t, lab)
}
