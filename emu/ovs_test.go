package emu

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/emuctl/emuctl/internal/testutil"
	"github.com/emuctl/emuctl/ovs"
	"github.com/emuctl/emuctl/topo"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// Root tier, real daemons: emuctl's embedded ovsdb-server + ovs-vswitchd
// (or a private "system" pair a test starts), the netdev datapath on
// kernels without the openvswitch module. Lab names start with "tov".

// needOVS skips without Open vSwitch. With a system Open vSwitch running,
// the labs use it (as users' labs do) and the assertions about emuctl's
// embedded daemons are skipped (systemOVSRuns).
func needOVS(t *testing.T) {
	t.Helper()
	needRoot(t)
	if systemOVSRuns() {
		return
	}
	if _, err := ovs.Binaries(); err != nil {
		t.Skip(err)
	}
}

func systemOVSRuns() bool {
	_, err := systemOVS(context.Background())
	return err == nil
}

// needEmbedded skips tests about emuctl's own daemons where a system Open
// vSwitch serves the labs (two ovs-vswitchd must not share a namespace).
func needEmbedded(t *testing.T) {
	t.Helper()
	needOVS(t)
	if systemOVSRuns() {
		t.Skip("a system Open vSwitch serves labs here; emuctl's embedded daemons are not used")
	}
}

// requireNoOVSLeft checks that no row of lab remains in any database and
// no port device of it in the root namespace.
func requireNoOVSLeft(t *testing.T, lab string) {
	t.Helper()
	for _, l := range OVSLeaks() {
		if strings.Contains(l, Marker(lab)+" ") || strings.HasSuffix(l, Marker(lab)) {
			t.Errorf("left behind: %s", l)
		}
	}
	for _, l := range rootLinks() {
		if ml, ok := labFromMarker(l.Attrs().Alias); ok && ml == lab {
			t.Errorf("device %s (%s) left in the root namespace", l.Attrs().Name, l.Attrs().Alias)
		}
	}
}

func requireEmbeddedStopped(t *testing.T) {
	t.Helper()
	if systemOVSRuns() {
		return
	}
	// Labs of other users of this machine may share the pair (by design).
	if users := embeddedUsers(""); len(users) > 0 {
		t.Logf("embedded daemons kept for other labs: %v", users)
		return
	}
	e := embeddedOVS()
	if r := e.Running(); len(r) > 0 {
		t.Errorf("embedded daemons still running: %v", r)
	}
	if fileExists(e.Dir) {
		t.Errorf("%s still exists", e.Dir)
	}
}

func execOut(t *testing.T, lab, node string, argv ...string) string {
	t.Helper()
	cmd, err := Command(lab, node, argv)
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v: %v\n%s", node, argv, err, out)
	}
	return string(out)
}

// Two and three OVS switches in a chain: every pair of hosts pings, TCP
// crosses every bridge, OpenFlow port numbers and datapath ids are
// Mininet's, OVS's tools work inside the switch nodes, and down leaves
// nothing (the embedded daemons stop with the last lab).
func TestOVSLinear(t *testing.T) {
	needOVS(t)
	for _, k := range []int{2, 3} {
		t.Run(fmt.Sprintf("linear%d", k), func(t *testing.T) {
			lab := fmt.Sprintf("tov%d", k)
			spec, err := topo.Generate(fmt.Sprintf("linear,%d", k), topo.GenOptions{Name: lab, Switch: "ovs"})
			if err != nil {
				t.Fatal(err)
			}
			st := up(t, spec, Options{})
			if st.OVS == nil || st.OVS.Embedded == systemOVSRuns() || len(st.OVS.Bridges) != k {
				t.Fatalf("ovs state %+v", st.OVS)
			}
			requirePingAll(t, st)
			last := fmt.Sprintf("h%d", k)
			got := bulk(t, lab, "h1", last, 2*time.Second, 500*time.Millisecond, "cubic", nil)
			t.Logf("TCP h1 -> %s through %d netdev bridges: %.0f Mbit/s", last, k, got/1e6)
			if got < 50e6 {
				t.Errorf("TCP through OVS: %.1f Mbit/s", got/1e6)
			}
			show := execOut(t, lab, "s1", "ovs-ofctl", "show", "s1")
			if !strings.Contains(show, "dpid:0000000000000001") || !strings.Contains(show, " 1(s1-eth1.") || !strings.Contains(show, " 2(s1-eth2.") {
				t.Errorf("ovs-ofctl show s1 inside s1:\n%s", show)
			}
			if flows := execOut(t, lab, "s2", "ovs-ofctl", "dump-flows", "s2"); !strings.Contains(flows, "actions=NORMAL") {
				t.Errorf("s2 flows:\n%s", flows)
			}
			execOut(t, lab, "s1", "ovs-appctl", "version")
			execOut(t, lab, "s1", "ovs-vsctl", "show")
			info := InspectOVS(st)
			if info == nil || info.Error != "" || len(info.Bridges) != k || !strings.HasPrefix(info.DB, "unix:") {
				t.Fatalf("inspect: %+v", info)
			}
			for _, b := range info.Bridges {
				for _, p := range b.Ports {
					if want := strings.TrimPrefix(p.Iface, b.Node+"-eth"); fmt.Sprint(p.OFPort) != want {
						t.Errorf("%s:%s has OpenFlow port %d", b.Node, p.Iface, p.OFPort)
					}
				}
			}
			if err := Down(lab, nil); err != nil {
				t.Fatal(err)
			}
			requireGone(t, lab)
			requireNoOVSLeft(t, lab)
			requireEmbeddedStopped(t)
		})
	}
}

// The embedded pair serves every lab that needs it and stops with the
// last one.
func TestOVSEmbeddedSharedAndStopped(t *testing.T) {
	needEmbedded(t)
	if users := embeddedUsers(""); len(users) > 0 {
		t.Skipf("other labs use the embedded daemons now (%v): this test needs to see them start and stop", users)
	}
	a := up(t, gen2(t, "single,2", "tova", "ovs"), Options{})
	pids := embeddedOVS().Running()
	if len(pids) != 2 {
		t.Fatalf("embedded daemons: %v", pids)
	}
	b := up(t, gen2(t, "single,2", "tovb", "ovs"), Options{})
	if got := embeddedOVS().Running(); fmt.Sprint(got) != fmt.Sprint(pids) {
		t.Errorf("second lab restarted the daemons: %v -> %v", pids, got)
	}
	requirePingAll(t, a)
	requirePingAll(t, b)
	if err := Down("tova", nil); err != nil {
		t.Fatal(err)
	}
	if len(embeddedOVS().Running()) != 2 {
		t.Fatal("daemons stopped while tovb still uses them")
	}
	requirePingAll(t, b)
	if err := Down("tovb", nil); err != nil {
		t.Fatal(err)
	}
	requireEmbeddedStopped(t)
	requireNoOVSLeft(t, "tova")
	requireNoOVSLeft(t, "tovb")
}

func gen2(t *testing.T, g, name, sw string) *topo.Spec {
	t.Helper()
	s, err := topo.Generate(g, topo.GenOptions{Name: name, Switch: sw})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// An HTB QoS of 10 Mbit/s on the egress port towards h2 gives TCP
// goodput within [0.95, 1.02] x 10 Mbit/s x 1448/1514.
func TestOVSQoSGoodput(t *testing.T) {
	needOVS(t)
	spec := loadYAML(t, "tovq", `name: tovq
nodes:
  h1: {}
  h2: {}
  s1: {kind: switch, type: ovs, ports: {s1-eth2: {qos: {max_rate: 10mbit}}}}
links: [{endpoints: [h1, s1]}, {endpoints: [h2, s1]}]
`)
	up(t, spec, Options{})
	got := bulk(t, "tovq", "h1", "h2", 10*time.Second, 3*time.Second, "cubic", nil)
	ratio := got / capacity(10e6)
	t.Logf("goodput %.3f Mbit/s = %.3f x capacity (%.3f Mbit/s)", got/1e6, ratio, capacity(10e6)/1e6)
	if ratio < 0.95 || ratio > 1.02 {
		t.Errorf("goodput %.3f x capacity, want [0.95, 1.02]", ratio)
	}
}

// A queue limit of N packets bounds the standing queue (RTT under load <=
// base + N x 1514 x 8 / R + 2 ms) and the queue really fills under one
// CUBIC flow (>= 0.6 x that), also beyond the ~90 frames the userspace
// datapath's default send buffer would allow (ovs_sndbuf.go); the FIFO
// stays emuctl's when OVS reconfigures the QoS.
func TestOVSQueueLimit(t *testing.T) {
	needOVS(t)
	for _, n := range []int{100, 250} {
		t.Run(fmt.Sprint(n), func(t *testing.T) { testOVSQueueLimit(t, n) })
	}
}

func testOVSQueueLimit(t *testing.T, n int) {
	if n > 90 && systemOVSRuns() && !kernelDatapath() {
		t.Skip("a system Open vSwitch on the netdev datapath holds about 90 frames in all its queues (its AF_PACKET send buffer); emuctl does not touch it")
	}
	const rate = 10e6
	spec := loadYAML(t, "tovl", fmt.Sprintf(`name: tovl
nodes:
  h1: {}
  h2: {}
  s1: {kind: switch, type: ovs, ports: {s1-eth2: {qos: {max_rate: 10mbit, queue_limit: %d}}}}
links: [{endpoints: [h1, s1]}, {endpoints: [h2, s1]}]
`, n))
	st := up(t, spec, Options{})
	if st.OVS.Warning != "" {
		t.Logf("warning: %s", st.OVS.Warning)
	}
	leaf := func() QueueStats {
		t.Helper()
		info := InspectOVS(st)
		qs := info.Queues["s1:s1-eth2"]
		if len(qs) != 1 {
			t.Fatalf("queue stats: %+v", info.Queues)
		}
		return qs[0]
	}
	if q := leaf(); !q.LeafByEmu || q.Leaf != "pfifo" || !q.ClassFound {
		t.Fatalf("leaf under 1:1: %+v", q)
	}
	dst, _ := PrimaryAddr(spec.Node("h2"))
	base := pings(t, "tovl", "h1", dst, 10, 10*time.Millisecond)[0]
	physics := time.Duration(float64(n*1514*8) / rate * float64(time.Second))
	// a host stall adds to the largest RTT, which bounds the queue: a
	// starved run is made again, then skipped
	type meas struct {
		got    float64
		loaded []time.Duration
	}
	// as many pings as fit in the 6 s of load after the warm-up, each
	// waiting behind up to a full queue (14 for 250 packets, 27 for 100)
	gap := 100 * time.Millisecond
	npings := min(40, int(6*time.Second/(gap+physics)))
	m := testutil.RetryStarved(t, fmt.Sprintf("N=%d", n), false, func() (m meas) {
		m.got = bulkOnce(t, "tovl", "h1", "h2", 9*time.Second, 3*time.Second, "cubic", func(until time.Time) {
			m.loaded = pingsUntil(t, "tovl", "h1", dst, npings, gap, until)
		})
		return m
	})
	got, loaded := m.got, m.loaded
	med, mx := loaded[len(loaded)/2], loaded[len(loaded)-1]
	added := med - base
	q := leaf()
	t.Logf("N=%d at %.0f Mbit/s: goodput %.2f Mbit/s, base RTT %v, under load median %v max %v: added %.1f ms (full queue %.1f ms); FIFO drops %d",
		n, rate/1e6, got/1e6, base, med, mx, float64(added)/1e6, float64(physics)/1e6, q.LeafDrops)
	if mx > base+physics+2*time.Millisecond {
		t.Errorf("RTT under load reached %v, above base + %v + 2 ms: the queue holds more than %d packets", mx, physics, n)
	}
	switch {
	case n <= 100 && float64(added) < 0.6*float64(physics):
		t.Errorf("added RTT %v < 0.6 x %v: the queue does not fill", added, physics)
	case n > 100 && float64(mx-base) < 0.9*float64(physics):
		// A deep buffer: one CUBIC flow's losses come in bursts and its
		// recovery drains the queue at times, so the median says little;
		// the queue must reach its limit, far beyond the ~90 frames the
		// default send buffer of ovs-vswitchd's socket would hold.
		t.Errorf("RTT under load peaked at %v: the %d-packet queue (%v) never filled", mx, n, physics)
	}
	if q.LeafDrops == 0 {
		t.Errorf("the %d-packet FIFO never dropped under a bulk flow, so something else limits the queue: %+v", n, q)
	}
	// OVS reconfigures the QoS (a new max-rate): its classes change in
	// place and emuctl's FIFO stays.
	db := "--db=" + st.OVS.DB
	port := st.OVS.Bridges[0].Ports[1].Name
	qos := strings.TrimSpace(sh2(t, "ovs-vsctl", db, "get", "port", port, "qos"))
	sh2(t, "ovs-vsctl", db, "set", "qos", qos, "other_config:max-rate=20000000")
	if q := leaf(); !q.LeafByEmu || q.Leaf != "pfifo" {
		t.Errorf("after OVS reconfigured the QoS the leaf is %+v", q)
	}
}

func sh2(t *testing.T, args ...string) string {
	t.Helper()
	out, err := exec.Command(args[0], args[1:]...).CombinedOutput()
	if err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
	return string(out)
}

// Link shaping and OVS QoS on one lab, one owner per port's qdiscs: a
// link shaped by the userspace engine leaves its switch port to an OVS
// QoS; a link shaped by kernel qdiscs (backend: kernel) gets linux-noop,
// and OVS keeps its hands off them.
func TestOVSQoSAndShapingCoexist(t *testing.T) {
	needOVS(t)
	spec := loadYAML(t, "tovc", `name: tovc
nodes:
  h1: {}
  h2: {}
  h3: {}
  s1: {kind: switch, type: ovs, ports: {s1-eth1: {qos: {max_rate: 5mbit, queue_limit: 50}}}}
links:
  - {endpoints: [h1, s1], link: {rate: 20mbit, backend: userspace}}
  - {endpoints: [h2, s1], link: {rate: 20mbit, backend: kernel}}
  - {endpoints: [h3, s1]}
`)
	st := up(t, spec, Options{})
	requirePingAll(t, st)
	qos := map[string]string{}
	for _, p := range st.OVS.Bridges[0].Ports {
		qos[p.Iface] = p.QoS
	}
	if qos["s1-eth1"] != ovs.QoSHTB || qos["s1-eth2"] != ovs.QoSNoop || qos["s1-eth3"] != "" {
		t.Fatalf("port QoS %v", qos)
	}
	tbf := func() string {
		root, _ := netlink.NewHandleAt(hostNetns, unix.NETLINK_ROUTE)
		defer root.Close()
		l, err := root.LinkByName(st.OVS.Bridges[0].Ports[1].Name)
		if err != nil {
			t.Fatal(err)
		}
		qs, _ := root.QdiscList(l)
		var kinds []string
		for _, q := range qs {
			kinds = append(kinds, q.Type())
		}
		return strings.Join(kinds, ",")
	}
	if k := tbf(); !strings.Contains(k, "tbf") {
		t.Fatalf("the kernel-shaped port lost its qdiscs: %s", k)
	}
	// h3 -> h1 leaves through s1-eth1: the OVS QoS (5 Mbit/s) below the
	// engine's 20 Mbit/s is the bottleneck; h3 -> h2 through the TBF.
	got := bulk(t, "tovc", "h3", "h1", 6*time.Second, 2*time.Second, "cubic", nil)
	t.Logf("h3 -> h1 (OVS HTB 5 Mbit/s, engine 20 Mbit/s): %.2f Mbit/s = %.3f x capacity", got/1e6, got/capacity(5e6))
	if r := got / capacity(5e6); r < 0.95 || r > 1.02 {
		t.Errorf("OVS QoS behind an engine link: %.3f x capacity", r)
	}
	got = bulk(t, "tovc", "h3", "h2", 4*time.Second, 1*time.Second, "cubic", nil)
	t.Logf("h3 -> h2 (kernel TBF 20 Mbit/s on the OVS port): %.2f Mbit/s", got/1e6)
	if got > 1.02*20e6 || got < 0.8*capacity(20e6) {
		t.Errorf("kernel-shaped port: %.2f Mbit/s, want about %.2f", got/1e6, capacity(20e6)/1e6)
	}
	// OVS reconfigures (a new controller target on the bridge); the
	// linux-noop port keeps emuctl's qdiscs.
	sh2(t, "ovs-vsctl", "--db="+st.OVS.DB, "set", "bridge", st.OVS.Bridges[0].Name, "other_config:mac-aging-time=301")
	if k := tbf(); !strings.Contains(k, "tbf") {
		t.Errorf("after an OVS reconfiguration the kernel-shaped port has %s", k)
	}
}

// A triangle of OVS switches closed by RSTP (and one by STP): up waits for
// the spanning tree, then every pair of hosts pings.
func TestOVSSpanningTree(t *testing.T) {
	needOVS(t)
	for _, proto := range []string{"rstp", "stp"} {
		t.Run(proto, func(t *testing.T) {
			spec := loadYAML(t, "tovs"+proto, fmt.Sprintf(`name: tovs%s
defaults: {switch: ovs}
nodes:
  h1: {}
  h2: {}
  h3: {}
  s1: {kind: switch, %s: true}
  s2: {kind: switch, %s: true}
  s3: {kind: switch, %s: true}
links:
  - {endpoints: [s1, s2]}
  - {endpoints: [s2, s3]}
  - {endpoints: [s3, s1]}
  - {endpoints: [h1, s1]}
  - {endpoints: [h2, s2]}
  - {endpoints: [h3, s3]}
`, proto, proto, proto, proto))
			t0 := time.Now()
			st := up(t, spec, Options{})
			t.Logf("%s triangle up in %v", proto, time.Since(t0).Round(time.Millisecond))
			requirePingAll(t, st)
		})
	}
}

// A controller target that answers nobody: a standalone bridge falls back
// to L2 learning (OVS does so after three inactivity probes, about 15 s,
// as under Mininet), inspect shows the target as not connected.
func TestOVSControllerStandalone(t *testing.T) {
	needOVS(t)
	spec := loadYAML(t, "tovctl", `name: tovctl
nodes:
  h1: {}
  h2: {}
  s1: {kind: switch, type: ovs, controller: "tcp:127.0.0.1:1", protocols: [OpenFlow13]}
links: [{endpoints: [h1, s1]}, {endpoints: [h2, s1]}]
`)
	st := up(t, spec, Options{})
	t0 := time.Now()
	for {
		ok := true
		for _, r := range PingAll(context.Background(), st, 1, 500*time.Millisecond) {
			ok = ok && r.OK
		}
		if ok {
			break
		}
		if time.Since(t0) > 30*time.Second {
			t.Fatal("the standalone bridge did not fall back to L2 learning in 30 s")
		}
	}
	t.Logf("fail-open to L2 learning after %v", time.Since(t0).Round(100*time.Millisecond))
	info := InspectOVS(st)
	b := info.Bridges[0]
	if len(b.Controllers) != 1 || b.Controllers[0].Target != "tcp:127.0.0.1:1" || b.Controllers[0].Connected || b.FailMode != "standalone" ||
		len(b.Protocols) != 1 || b.Protocols[0] != "OpenFlow13" {
		t.Errorf("bridge %+v", b)
	}
}

// A failed deploy after the OVS transaction rolls back: no row, no port
// device, no daemon remain.
func TestOVSRollback(t *testing.T) {
	needOVS(t)
	for _, phase := range []string{"externals", "ovs", "routes", "wait", "ready"} {
		t.Run(phase, func(t *testing.T) {
			_, err := Deploy(context.Background(), gen2(t, "linear,2", "tovr", "ovs"), Options{FaultAt: phase})
			if err == nil || !strings.Contains(err.Error(), "injected fault") {
				t.Fatalf("want the injected fault, got %v", err)
			}
			requireGone(t, "tovr")
			requireNoOVSLeft(t, "tovr")
			requireEmbeddedStopped(t)
		})
	}
}

// fakeSystemOVS starts a private pair that plays the system Open vSwitch
// (EMUCTL_OVS_DB points at it) and returns its database endpoint.
func fakeSystemOVS(t *testing.T) string {
	t.Helper()
	e := ovs.Embedded{Dir: filepath.Join(t.TempDir(), "sys")}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	testutil.RemoveNewTaps(t) // the user's bridge keeps its taps and ovs-netdev after the stop
	if err := e.Start(ctx, nil); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := e.Stop(5 * time.Second); err != nil {
			t.Error(err)
		}
	})
	t.Setenv("EMUCTL_OVS_DB", e.Endpoint())
	return e.Endpoint()
}

// A system Open vSwitch is used as is, and what a user made in it — a
// bridge br-user with a port, and a QoS row — survives up, down, clean,
// and clean after a deploy killed outright. emuctl's own daemons never
// start.
func TestOVSSystemDecoySurvives(t *testing.T) {
	needEmbedded(t) // it plays the system Open vSwitch with a private pair
	if users := embeddedUsers(""); len(users) > 0 {
		t.Skipf("other labs use emuctl's embedded daemons (%v); a second ovs-vswitchd in the root namespace would fight them", users)
	}
	ep := fakeSystemOVS(t)
	db := "--db=" + ep
	sh2(t, "ovs-vsctl", db, "add-br", "br-user", "--", "set", "bridge", "br-user", "datapath_type=netdev",
		"--", "add-port", "br-user", "tovuser0", "--", "set", "interface", "tovuser0", "type=internal",
		"--", "set", "port", "tovuser0", "qos=@q", "--", "--id=@q", "create", "qos", "type=linux-htb", "other_config:max-rate=1000000")
	userState := func() string {
		return sh2(t, "ovs-vsctl", db, "list-ports", "br-user") + sh2(t, "ovs-vsctl", db, "--columns=type,other_config", "list", "qos")
	}
	before := userState()

	st := up(t, gen2(t, "linear,2", "tovd", "ovs"), Options{})
	if st.OVS.Embedded || st.OVS.DB != ep {
		t.Fatalf("lab used %+v, want the system OVS at %s", st.OVS, ep)
	}
	requirePingAll(t, st)
	if len(embeddedOVS().Running()) > 0 {
		t.Error("emuctl started its embedded daemons although a system OVS answers")
	}
	if err := Down("tovd", nil); err != nil {
		t.Fatal(err)
	}
	requireNoOVSLeft(t, "tovd")
	// (not clean --all: other labs on this machine are not this test's)
	if _, err := Clean(false, nil); err != nil {
		t.Fatal(err)
	}
	if after := userState(); after != before {
		t.Errorf("the user's rows changed:\n%s\nnow:\n%s", before, after)
	}

	// A deploy killed right after the OVS transaction: clean finds the
	// rows and devices by marker.
	self, _ := os.Executable()
	cmd := exec.Command(self, "-test.run=^TestOVSCrashHelper$")
	cmd.Env = append(os.Environ(), "EMUCTL_TEST_OVS_CRASH=routes")
	out, err := cmd.CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 9 {
		t.Fatalf("crash helper: want exit 9, got %v\n%s", err, out)
	}
	found := false
	for _, l := range OVSLeaks() {
		found = found || strings.Contains(l, Marker("tovcrash"))
	}
	if !found {
		t.Fatal("the crashed deploy left no OVS rows; the test proves nothing")
	}
	if _, err := Clean(false, nil); err != nil {
		t.Fatal(err)
	}
	requireGone(t, "tovcrash")
	requireNoOVSLeft(t, "tovcrash")
	// A crash whose state dir is gone too: rows and devices are found by
	// marker alone.
	cmd = exec.Command(self, "-test.run=^TestOVSCrashHelper$")
	cmd.Env = append(os.Environ(), "EMUCTL_TEST_OVS_CRASH=routes")
	cmd.CombinedOutput()
	os.RemoveAll(stateDir("tovcrash"))
	if _, err := Clean(false, nil); err != nil {
		t.Fatal(err)
	}
	requireGone(t, "tovcrash")
	requireNoOVSLeft(t, "tovcrash")
	if after := userState(); after != before {
		t.Errorf("the user's rows changed:\n%s\nnow:\n%s", before, after)
	}
}

// TestOVSCrashHelper is run as a subprocess: it deploys an OVS lab and
// exits abruptly at a phase, like kill -9.
func TestOVSCrashHelper(t *testing.T) {
	phase := os.Getenv("EMUCTL_TEST_OVS_CRASH")
	if phase == "" {
		t.Skip("subprocess helper")
	}
	crashAt = phase
	Deploy(context.Background(), gen2(t, "linear,2", "tovcrash", "ovs"), Options{})
	t.Fatal("deploy returned")
}

// A real adapter on an ovs switch becomes a port under its own name in the
// root namespace, and down gives it back as it was.
func TestOVSExternalPort(t *testing.T) {
	needOVS(t)
	sh(t, "ip", "netns", "add", "tovx-peer")
	t.Cleanup(func() { exec.Command("ip", "netns", "del", "tovx-peer").Run() })
	sh(t, "ip", "link", "add", "tovext0", "type", "veth", "peer", "name", "tovext1", "netns", "tovx-peer")
	t.Cleanup(func() { exec.Command("ip", "link", "del", "tovext0").Run() })
	sh(t, "ip", "link", "set", "tovext0", "mtu", "1400", "up")
	sh(t, "ip", "-n", "tovx-peer", "addr", "add", "10.0.0.200/24", "dev", "tovext1")
	sh(t, "ip", "-n", "tovx-peer", "link", "set", "tovext1", "up")
	spec := loadYAML(t, "tovx", `name: tovx
nodes:
  h1: {}
  s1: {kind: switch, type: ovs, interfaces: {uplink: {external: tovext0}}}
links: [{endpoints: [h1, s1], ip: {h1: 10.0.0.1/24}}]
`)
	st := up(t, spec, Options{AllowExternal: true})
	var ext *OVSPortState
	for i, p := range st.OVS.Bridges[0].Ports {
		if p.Iface == "uplink" {
			ext = &st.OVS.Bridges[0].Ports[i]
		}
	}
	if ext == nil || !ext.External || ext.Name != "tovext0" {
		t.Fatalf("external port %+v", ext)
	}
	if rtt, err := Ping(context.Background(), "tovx", "h1", netip.MustParseAddr("10.0.0.200"), 3*time.Second); err != nil {
		t.Fatalf("ping through the real adapter: %v", err)
	} else {
		t.Logf("h1 -> 10.0.0.200 through OVS and the adapter: %v", rtt)
	}
	if err := Down("tovx", nil); err != nil {
		t.Fatal(err)
	}
	l, err := netlink.LinkByName("tovext0")
	if err != nil {
		t.Fatalf("the adapter did not come back: %v", err)
	}
	if l.Attrs().MTU != 1400 || l.Attrs().Alias != "" || l.Attrs().Flags&1 == 0 {
		t.Errorf("adapter not restored: mtu %d alias %q flags %v", l.Attrs().MTU, l.Attrs().Alias, l.Attrs().Flags)
	}
	requireNoOVSLeft(t, "tovx")
}

// Ingress policing needs the tc police action; without it OVS only logs a
// warning, so emuctl checks and refuses to run unpoliced.
func TestOVSIngressPolicing(t *testing.T) {
	needOVS(t)
	spec := loadYAML(t, "tovp", `name: tovp
nodes:
  h1: {}
  h2: {}
  s1: {kind: switch, type: ovs, ports: {s1-eth1: {ingress_policing_rate: 5mbit, ingress_policing_burst: 100kB}}}
links: [{endpoints: [h1, s1]}, {endpoints: [h2, s1]}]
`)
	st, err := Deploy(context.Background(), spec, Options{})
	if err != nil {
		if !strings.Contains(err.Error(), "lacks the tc police action") {
			t.Fatalf("deploy: %v", err)
		}
		t.Logf("refused on this kernel: %v", err)
		requireGone(t, "tovp")
		requireNoOVSLeft(t, "tovp")
		return
	}
	t.Cleanup(func() { Down("tovp", nil) })
	got := bulk(t, "tovp", "h1", "h2", 4*time.Second, time.Second, "cubic", nil)
	t.Logf("h1 -> h2 policed at 5 Mbit/s: %.2f Mbit/s", got/1e6)
	if got > 5.5e6 {
		t.Errorf("policer lets %.2f Mbit/s through", got/1e6)
	}
	_ = st
}

// Names, OpenFlow port numbers, datapath ids and port QoS are planned
// without touching the host (no root needed).
func TestOVSPlan(t *testing.T) {
	spec := loadYAML(t, "tovplan", `name: tovplan
defaults: {switch: ovs}
nodes:
  h1: {}
  h2: {}
  s1: {kind: switch, ports: {s1-eth3: {qos: {max_rate: 10mbit, queue_limit: 20, queues: [{max_rate: 5mbit}, {min_rate: 1mbit, queue_limit: 7}]}}}}
  t1: {kind: switch}
links:
  - {endpoints: [h1, s1]}
  - {endpoints: [h2, "s1:up"]}
  - {endpoints: [s1, t1]}
`)
	d := &deployer{spec: spec, marker: Marker(spec.Name), st: &State{}}
	taken := nameHolders{ovs.DeviceName("tovplan", "s1", "s1-eth1", 0): {desc: "a test's"}}
	plan, err := d.ovsPlan(taken, false)
	if err != nil {
		t.Fatal(err)
	}
	lab, states := plan.lab, plan.bridges
	if lab.Bridges[0].DatapathID == lab.Bridges[1].DatapathID {
		t.Errorf("s1 and t1 share datapath id %s", lab.Bridges[0].DatapathID)
	}
	got := map[string]OVSPortState{}
	for _, b := range states {
		if b.Datapath != ovs.DatapathNetdev {
			t.Errorf("%s: datapath %s", b.Node, b.Datapath)
		}
		for _, p := range b.Ports {
			got[b.Node+":"+p.Iface] = p
			if len(p.Name) > ovs.MaxIfName {
				t.Errorf("%s too long", p.Name)
			}
		}
	}
	if p := got["s1:s1-eth1"]; p.OFPort != 1 || p.Name == ovs.DeviceName("tovplan", "s1", "s1-eth1", 0) {
		t.Errorf("s1-eth1: %+v (a taken name must be avoided)", p)
	}
	if p := got["s1:up"]; p.OFPort != 2 {
		t.Errorf("s1:up takes the first free OpenFlow port: %+v", p)
	}
	if p := got["s1:s1-eth3"]; p.OFPort != 3 || p.QoS != ovs.QoSHTB || fmt.Sprint(p.QueueLimits) != "[20 7]" {
		t.Errorf("s1-eth3: %+v", p)
	}
}
