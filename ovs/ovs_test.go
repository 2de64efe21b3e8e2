package ovs

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/emuctl/emuctl/internal/testutil"
	"github.com/emuctl/emuctl/ovs/vswitchd"
	"github.com/ovn-kubernetes/libovsdb/model"
	"github.com/vishvananda/netlink"
)

// Tier 1: names and rows, no OVS needed.

func TestDeviceName(t *testing.T) {
	a := DeviceName("tov1", "s1", "s1-eth1", 0)
	if len(a) > MaxIfName || !strings.HasPrefix(a, "s1-eth1.") {
		t.Errorf("DeviceName = %q", a)
	}
	if a != DeviceName("tov1", "s1", "s1-eth1", 0) {
		t.Error("not deterministic")
	}
	for _, o := range []string{DeviceName("tov2", "s1", "s1-eth1", 0), DeviceName("tov1", "s1", "s1-eth1", 1), DeviceName("tov1", "s1", "", 0)} {
		if o == a {
			t.Errorf("%q collides", o)
		}
	}
	long := DeviceName("lab", "s1", "a-very-long-interface", 0)
	if len(long) != MaxIfName || !strings.HasPrefix(long, "a-very-lo.") {
		t.Errorf("long name %q", long)
	}
	if b := DeviceName("lab", "switch1", "", 0); !strings.HasPrefix(b, "switch1.") {
		t.Errorf("bridge name %q", b)
	}
}

func TestDatapathID(t *testing.T) {
	for node, want := range map[string]string{"s1": "0000000000000001", "s12": "000000000000000c", "edge": "00"} {
		if got := DatapathID(node, "lab", 0); !strings.HasPrefix(got, want) || len(got) != 16 {
			t.Errorf("DatapathID(%s) = %s, want %s...", node, got, want)
		}
	}
	if a, b := DatapathID("s1", "lab", 1), DatapathID("s1", "lab", 2); a == b || a == DatapathID("s1", "lab", 0) || len(a) != 16 {
		t.Errorf("salted ids %s %s", a, b)
	}
}

func TestRows(t *testing.T) {
	l := &Lab{Marker: "emuctl:t", Bridges: []Bridge{{
		Name: "s1.aaaaa", Node: "s1", Datapath: DatapathNetdev, FailMode: "standalone", Protocols: []string{"OpenFlow13"},
		Controllers: []string{"tcp:127.0.0.1:6653"}, DatapathID: "0000000000000001",
		Ports: []Port{
			{Name: "s1-eth1.bbbbb", Iface: "s1-eth1", OFPort: 1, QoS: &QoS{MaxRate: 10e6}},
			{Name: "s1-eth2.ccccc", Iface: "s1-eth2", OFPort: 2, Noop: true, IngressPolicingRate: 1000},
			{Name: "s1-eth3.ddddd", Iface: "s1-eth3", OFPort: 3, QoS: &QoS{MaxRate: 10e6, Queues: []Queue{{MinRate: 1e6}, {MaxRate: 5e6, Priority: 2, Burst: 96000}}}},
			{Name: "s1-eth4.eeeee", Iface: "s1-eth4", Noop: true},
		},
	}}}
	if err := l.Check(); err != nil {
		t.Fatal(err)
	}
	rows, bridges := l.rows()
	if len(bridges) != 1 {
		t.Fatalf("bridges %v", bridges)
	}
	count := map[string]int{}
	for _, r := range rows {
		var ids map[string]string
		switch m := r.(type) {
		case *vswitchd.Bridge:
			count["bridge"]++
			ids = m.ExternalIDs
			if len(m.Ports) != 5 || m.OtherConfig["disable-in-band"] != "true" || len(m.Controller) != 1 {
				t.Errorf("bridge %+v", m)
			}
		case *vswitchd.Port:
			count["port"]++
			ids = m.ExternalIDs
		case *vswitchd.Interface:
			count["iface"]++
			ids = m.ExternalIDs
			if m.Name == "s1-eth2.ccccc" && m.IngressPolicingRate != 1000 {
				t.Errorf("policing not set: %+v", m)
			}
		case *vswitchd.QoS:
			count["qos/"+m.Type]++
			ids = m.ExternalIDs
			if m.Type == QoSHTB && m.OtherConfig["max-rate"] != "10000000" {
				t.Errorf("qos %+v", m)
			}
		case *vswitchd.Queue:
			count["queue"]++
			ids = m.ExternalIDs
		case *vswitchd.Controller:
			count["controller"]++
			ids = m.ExternalIDs
		default:
			t.Errorf("unexpected row %T", r)
		}
		if ids[MarkerKey] != "emuctl:t" {
			t.Errorf("%T without marker: %v", r, ids)
		}
	}
	want := map[string]int{"bridge": 1, "port": 5, "iface": 5, "qos/linux-htb": 2, "qos/linux-noop": 1, "queue": 3, "controller": 1}
	for k, v := range want {
		if count[k] != v {
			t.Errorf("%s rows: %d, want %d (all: %v)", k, count[k], v, count)
		}
	}
	bad := &Lab{Marker: "emuctl:t", Bridges: []Bridge{{Name: "x", Datapath: DatapathNetdev, Ports: []Port{{Name: "x"}}}}}
	if err := bad.Check(); err == nil {
		t.Error("duplicate names accepted")
	}
}

// Tier 2: a private pair in a temporary directory, in the root namespace.
// Only internal ports are created (tap devices named tovNN.*), no traffic.

func TestEmbeddedRoundTrip(t *testing.T) {
	testutil.NeedRoot(t)
	if _, err := Binaries(); err != nil {
		t.Skip(err)
	}
	if otherVswitchd() {
		t.Skip("an ovs-vswitchd already runs here; a second one in the root namespace would fight it over the datapath")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	e := Embedded{Dir: t.TempDir() + "/ovs"}
	testutil.RemoveNewTaps(t) // the decoy bridge keeps its taps and ovs-netdev after the stop
	if err := e.Start(ctx, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Stop(5 * time.Second); err != nil {
			t.Error(err)
		}
		if len(e.Running()) != 0 {
			t.Errorf("daemons still running: %v", e.Running())
		}
	})
	if r := e.Running(); len(r) != 2 {
		t.Fatalf("running: %v", r)
	}
	c, err := Dial(ctx, e.Endpoint())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()

	// A user's bridge with a port and a QoS row: never touched.
	decoyIf := &vswitchd.Interface{UUID: "di", Name: "tovdecoy", Type: "internal"}
	decoyPort := &vswitchd.Port{UUID: "dp", Name: "tovdecoy", Interfaces: []string{"di"}}
	decoyQoS := &vswitchd.QoS{UUID: "dq", Type: QoSHTB, ExternalIDs: map[string]string{"owner": "user"}}
	decoy := &vswitchd.Bridge{UUID: "db", Name: "tovdecoy", DatapathType: DatapathNetdev, Ports: []string{"dp"}}
	root, err := c.root(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ops, err := c.inserts([]model.Model{decoyIf, decoyPort, decoyQoS, decoy})
	if err != nil {
		t.Fatal(err)
	}
	mut, _ := c.c.Where(root).Mutate(root, model.Mutation{Field: &root.Bridges, Mutator: "insert", Value: []string{"db"}})
	if _, err := c.transact(ctx, append(ops, mut...)); err != nil {
		t.Fatal(err)
	}

	l := &Lab{Marker: "emuctl:tov0", Bridges: []Bridge{
		{Name: "tov0.s1", Node: "s1", Datapath: DatapathNetdev, FailMode: "standalone", RSTP: true, DatapathID: DatapathID("s1", "tov0", 0),
			Ports: []Port{{Name: "tov0.p1", Iface: "p1", OFPort: 7}}},
		{Name: "tov0.s2", Node: "s2", Datapath: DatapathNetdev, FailMode: "secure", Controllers: []string{"tcp:127.0.0.1:1"}},
	}}
	// p1 is a port whose device does not exist: OVS reports an error.
	cfg, err := c.Create(ctx, l)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WaitApplied(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	wctx, wcancel := context.WithTimeout(ctx, 10*time.Second)
	bad, err := c.WaitInterfaces(wctx, []string{"tov0.s1", "tov0.s2", "tov0.p1"})
	wcancel()
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) != 1 || !strings.HasPrefix(bad[0], "tov0.p1: ") {
		t.Errorf("interface errors %v, want one for tov0.p1", bad)
	}
	if _, err := netlink.LinkByName("tov0.s1"); err != nil {
		t.Errorf("bridge device tov0.s1: %v", err)
	}
	info, err := c.Show(ctx, l.Marker)
	if err != nil || len(info) != 2 || info[1].FailMode != "secure" || len(info[1].Controllers) != 1 {
		t.Fatalf("show: %v %+v", err, info)
	}
	names, err := c.Names(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if u := names["tov0.s1"]; u != (NameUse{Table: "bridge", Marker: "emuctl:tov0"}) {
		t.Errorf("tov0.s1 held by %+v", u)
	}
	if u := names["tov0.p1"]; u != (NameUse{Table: "port", Marker: "emuctl:tov0"}) {
		t.Errorf("tov0.p1 held by %+v", u)
	}
	if u := names["tovdecoy"]; u != (NameUse{Table: "bridge"}) {
		t.Errorf("the user's tovdecoy held by %+v", u)
	}
	// A second create of the same names fails whole.
	if _, err := c.Create(ctx, l); err == nil {
		t.Error("second Create of the same bridges succeeded")
	}
	m, _ := c.Markers(ctx)
	if m["emuctl:tov0"] == 0 || len(m) != 1 {
		t.Errorf("markers %v", m)
	}
	n, cfg, err := c.Delete(ctx, l.Marker)
	if err != nil || n == 0 {
		t.Fatalf("delete: %d %v", n, err)
	}
	if err := c.WaitApplied(ctx, cfg); err != nil {
		t.Fatal(err)
	}
	if m, _ := c.Markers(ctx); len(m) != 0 {
		t.Errorf("rows left: %v", m)
	}
	if _, err := netlink.LinkByName("tov0.s1"); err == nil {
		t.Error("bridge device tov0.s1 still exists")
	}
	var brs []vswitchd.Bridge
	var qs []vswitchd.QoS
	c.c.List(ctx, &brs)
	c.c.List(ctx, &qs)
	if len(brs) != 1 || brs[0].Name != "tovdecoy" || len(brs[0].Ports) != 1 || len(qs) != 1 {
		t.Errorf("decoy changed: bridges %+v qos %+v", brs, qs)
	}
	if _, _, err := c.Delete(ctx, "emuctl:"); err == nil {
		t.Error("empty marker accepted")
	}
	short, scancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer scancel()
	if err := c.WaitApplied(short, 1<<30); !errors.Is(err, ErrNotApplied) {
		t.Errorf("WaitApplied for a configuration never made: %v", err)
	}
}

// otherVswitchd reports whether some ovs-vswitchd (not a zombie) runs on
// this machine. It only decides whether to skip; nothing is stopped.
func otherVswitchd() bool {
	procs, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, p := range procs {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		st := string(b)
		if strings.Contains(st, "(ovs-vswitchd) ") && !strings.Contains(st, "(ovs-vswitchd) Z") {
			return true
		}
	}
	return false
}
