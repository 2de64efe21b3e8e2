package emu

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emuctl/emuctl/topo"
)

const changeLab = `name: tch
nodes:
  h1: {}
  h2: {}
  s1: {kind: switch}
  r1: {kind: router}
  r2: {kind: router}
  h9: {}
links:
  - endpoints: [h1, s1]
  - endpoints: [h2, s1]
  - endpoints: [s1, r1]
  - endpoints: [r1, r2]
  - endpoints: [r2, h9]
`

func minRTT(t *testing.T, lab, from, to string) time.Duration {
	t.Helper()
	st, err := ReadState(lab)
	if err != nil {
		t.Fatal(err)
	}
	dst, ok := PrimaryAddr(st.Spec.Node(to))
	if !ok {
		t.Fatalf("%s has no address", to)
	}
	return pings(t, lab, from, dst, 10, 20*time.Millisecond)[0]
}

// A host and its shaped link added to a running lab work as if they had
// been in the file: the link's rate and delay by physics, routes across
// two routers, and removal leaves the lab as it was.
func TestChangeAddHostShapedLink(t *testing.T) {
	needRoot(t)
	ctx := context.Background()
	spec := loadYAML(t, "tch", changeLab)
	up(t, spec, Options{})
	if _, err := AddNode(ctx, "tch", topo.NodeRequest{Name: "h3"}, Options{}); err != nil {
		t.Fatal(err)
	}
	st, err := AddLink(ctx, "tch", topo.LinkRequest{A: "h3", B: "s1", Params: "rate=10mbit,delay=5ms"}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	li := len(st.Spec.Links) - 1
	ls, ok := findLinkState(st.Links, li)
	if !ok {
		t.Fatalf("the new link has no recorded shaping: %+v", st.Links)
	}
	t.Logf("new link %d: backend %s", li, ls.Backend)
	// RTT floor: 2 x 5 ms across the new link
	if rtt := minRTT(t, "tch", "h1", "h3"); rtt < 10*time.Millisecond || rtt > 12*time.Millisecond {
		t.Errorf("h1 -> h3 min RTT %v, want 10..12 ms (2 x 5 ms)", rtt)
	}
	// capacity = R x 1448/1514
	got := bulk(t, "tch", "h1", "h3", 5*time.Second, 2*time.Second, "cubic", nil)
	if ratio := got / capacity(10_000_000); ratio < 0.95 || ratio > 1.02 {
		t.Errorf("goodput over the added link %.2f Mbit/s = %.3f x capacity (want 0.95..1.02)", got/1e6, ratio)
	} else {
		t.Logf("goodput %.3f Mbit/s = %.3f x capacity", got/1e6, ratio)
	}
	// a host behind the far router: routes follow on both routers
	if _, err := AddNode(ctx, "tch", topo.NodeRequest{Name: "h4"}, Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := AddLink(ctx, "tch", topo.LinkRequest{A: "h4", B: "r2"}, Options{}); err != nil {
		t.Fatal(err)
	}
	if rtt := minRTT(t, "tch", "h1", "h4"); rtt <= 0 {
		t.Errorf("h1 -> h4 through r1, r2: %v", rtt)
	}
	st, _ = ReadState("tch")
	if got := hostsFile(st.Spec); !strings.Contains(string(got), "\th4\n") {
		t.Errorf("hosts file lacks h4:\n%s", got)
	}
	// link show and the topology see what was added
	infos, err := ShowLinks("tch")
	if err != nil || len(infos) != 7 {
		t.Fatalf("link show: %d links, %v", len(infos), err)
	}
	if infos[5].StateA != "up" || infos[5].AtoB.Rate != 10_000_000 {
		t.Errorf("link show of the added link: %+v", infos[5])
	}
	doc, err := Topology("tch")
	if err != nil || !strings.Contains(string(doc), "h3:h3-eth0") {
		t.Fatalf("topology: %v\n%s", err, doc)
	}
	// removed: the node, its link, its engine; routes go back
	if _, err := RemoveNode(ctx, "tch", "h3", Options{}); err != nil {
		t.Fatal(err)
	}
	if netnsExists(topo.Namespace("tch", "h3")) {
		t.Errorf("h3's namespace is still there")
	}
	if ls.Netns != "" && netnsExists(ls.Netns) {
		t.Errorf("the removed link's engine namespace %s is still there", ls.Netns)
	}
}

// The unshaped and kernel-shaped kinds this kernel has, added and
// removed; a removal in the middle renumbers nothing that is built.
func TestChangeKinds(t *testing.T) {
	needRoot(t)
	ctx := context.Background()
	spec := loadYAML(t, "tck", "name: tck\naddressing: {p2p_prefix: 24}\nnodes: {h1: {}, h2: {}, s1: {kind: switch}}\nlinks:\n  - endpoints: [h1, s1]\n  - endpoints: [h2, s1]\n    link: {rate: 20mbit, delay: 2ms}\n")
	up(t, spec, Options{})
	for _, c := range []struct{ name, params string }{
		{"r1", ""},                          // a plain veth
		{"r2", "rate=8mbit,backend=kernel"}, // kernel: TBF (netem where the kernel has it)
		{"r3", "rate=12mbit,delay=3ms,loss=0.1%,queue=50"}, // netem or the engine
	} {
		if _, err := AddNode(ctx, "tck", topo.NodeRequest{Name: c.name, Kind: topo.KindRouter}, Options{}); err != nil {
			t.Fatal(err)
		}
		if _, err := AddLink(ctx, "tck", topo.LinkRequest{A: c.name, B: "s1", Params: c.params}, Options{}); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
	}
	st, _ := ReadState("tck")
	for i, want := range map[int]float64{3: 8e6, 4: 12e6} {
		ls, _ := findLinkState(st.Links, i)
		got := bulk(t, "tck", "h1", st.Spec.Links[i].A.Node, 4*time.Second, 1500*time.Millisecond, "cubic", nil)
		ratio := got / (want * 1448 / 1514)
		t.Logf("link %d (%s): %.3f Mbit/s = %.3f x capacity", i, ls.Backend, got/1e6, ratio)
		if ratio < 0.93 || ratio > 1.02 {
			t.Errorf("link %d (%s): goodput %.3f x capacity (want 0.93..1.02)", i, ls.Backend, ratio)
		}
	}
	// remove the plain link in the middle: the later links keep their
	// shaping under their new index, and still carry traffic
	if _, err := RemoveLink(ctx, "tck", 2, Options{}); err != nil {
		t.Fatal(err)
	}
	st, _ = ReadState("tck")
	if ls, ok := findLinkState(st.Links, 3); !ok || ls.AtoB.Rate != 12_000_000 {
		t.Fatalf("after removing link 2, link 3 is %+v", ls)
	}
	if rtt := minRTT(t, "tck", "h1", "r3"); rtt < 6*time.Millisecond {
		t.Errorf("h1 -> r3 min RTT %v after the renumbering, want >= 6 ms", rtt)
	}
	if err := Down("tck", nil); err != nil {
		t.Fatal(err)
	}
	requireGone(t, "tck")
}

// Bad input changes nothing; a failed add rolls back to the lab as it
// was; two changes at once serialise.
func TestChangeRefusedAndRolledBack(t *testing.T) {
	needRoot(t)
	ctx := context.Background()
	spec := loadYAML(t, "tcr", "name: tcr\naddressing: {p2p_prefix: 24}\nnodes: {h1: {}, h2: {}, s1: {kind: switch}}\nlinks:\n  - endpoints: [h1, s1]\n  - endpoints: [h2, s1]\n")
	up(t, spec, Options{})
	before := labObjects("tcr")
	stBefore, _ := ReadState("tcr")
	for _, c := range []struct {
		name string
		do   func() error
		want string
	}{
		{"duplicate", func() error { _, err := AddNode(ctx, "tcr", topo.NodeRequest{Name: "h1"}, Options{}); return err }, "already has"},
		{"unknown", func() error {
			_, err := AddLink(ctx, "tcr", topo.LinkRequest{A: "h1", B: "s7"}, Options{})
			return err
		}, `unknown node "s7"`},
		{"too long", func() error {
			_, err := AddNode(ctx, "tcr", topo.NodeRequest{Name: "hostwithaverylongname"}, Options{})
			if err == nil {
				_, err = AddLink(ctx, "tcr", topo.LinkRequest{A: "hostwithaverylongname", B: "s1"}, Options{})
				RemoveNode(ctx, "tcr", "hostwithaverylongname", Options{})
			}
			return err
		}, "15"},
		{"outside the plan", func() error {
			_, err := AddLink(ctx, "tcr", topo.LinkRequest{A: "h1", B: "h2", IP: map[string][]string{"h1": {"192.168.77.1/30"}}}, Options{})
			return err
		}, "outside the lab's plan"},
	} {
		if err := c.do(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
	// a fault after the new node and link exist: everything goes again
	if _, err := AddNode(ctx, "tcr", topo.NodeRequest{Name: "h3"}, Options{}); err != nil {
		t.Fatal(err)
	}
	mid, _ := ReadState("tcr")
	_, err := AddLink(ctx, "tcr", topo.LinkRequest{A: "h3", B: "s1", Params: "rate=5mbit,delay=1ms"}, Options{FaultAt: "change-wait"})
	if err == nil || !strings.Contains(err.Error(), "injected fault") {
		t.Fatalf("fault: %v", err)
	}
	after, _ := ReadState("tcr")
	if len(after.Spec.Links) != len(mid.Spec.Links) || len(after.Links) != len(mid.Links) || len(after.Namespaces) != len(mid.Namespaces) {
		t.Errorf("rollback left %d links (%d shaped), %d namespaces; want %d, %d, %d", len(after.Spec.Links), len(after.Links), len(after.Namespaces),
			len(mid.Spec.Links), len(mid.Links), len(mid.Namespaces))
	}
	for _, node := range []string{"h3", "s1"} {
		ns, h, err := openNamed(topo.Namespace("tcr", node))
		if err != nil {
			t.Fatal(err)
		}
		links, _ := h.LinkList()
		for _, l := range links {
			if strings.HasPrefix(l.Attrs().Name, "h3") || strings.HasPrefix(l.Attrs().Name, "s1-eth3") {
				t.Errorf("%s keeps interface %s after the rollback", node, l.Attrs().Name)
			}
		}
		h.Close()
		ns.Close()
	}
	if _, err := RemoveNode(ctx, "tcr", "h3", Options{}); err != nil {
		t.Fatal(err)
	}
	// two adds at once: both land, one after the other
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for k := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[k] = AddNode(ctx, "tcr", topo.NodeRequest{Name: fmt.Sprintf("c%d", k)}, Options{})
		}()
	}
	wg.Wait()
	st, _ := ReadState("tcr")
	for k, err := range errs {
		if err != nil || st.Spec.Node(fmt.Sprintf("c%d", k)) == nil {
			t.Errorf("concurrent add %d: %v", k, err)
		}
	}
	for k := range 2 {
		if _, err := RemoveNode(ctx, "tcr", fmt.Sprintf("c%d", k), Options{}); err != nil {
			t.Fatal(err)
		}
	}
	st, _ = ReadState("tcr")
	if got, want := topo.PlaceFree(string(mustJSONSpec(st.Spec))), topo.PlaceFree(string(mustJSONSpec(stBefore.Spec))); got != want {
		t.Errorf("the lab is not as it was after adding and removing:\n%s\n%s", got, want)
	}
	if got := labObjects("tcr"); strings.Join(got, ",") != strings.Join(before, ",") {
		t.Errorf("host objects %v, were %v", got, before)
	}
}

// The lab as it stands, written out, brings up the same lab.
func TestChangeTopologyRoundTrip(t *testing.T) {
	needRoot(t)
	ctx := context.Background()
	spec := gen(t, "linear,2", "tct")
	up(t, spec, Options{})
	if _, err := AddNode(ctx, "tct", topo.NodeRequest{Name: "h9"}, Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := AddLink(ctx, "tct", topo.LinkRequest{A: "h9", B: "s2", Params: "delay=1ms"}, Options{}); err != nil {
		t.Fatal(err)
	}
	doc, err := Topology("tct")
	if err != nil {
		t.Fatal(err)
	}
	st, _ := ReadState("tct")
	if err := Down("tct", nil); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "tct.yaml")
	os.WriteFile(path, doc, 0o644)
	again, err := topo.LoadFile(path)
	if err != nil {
		t.Fatalf("%v\n%s", err, doc)
	}
	st2 := up(t, again, Options{})
	if a, b := topo.PlaceFree(string(mustJSONSpec(st.Spec))), topo.PlaceFree(string(mustJSONSpec(st2.Spec))); strings.ReplaceAll(a, path, "") != strings.ReplaceAll(b, path, "") {
		t.Errorf("up of the written-out lab differs:\n%s\n%s", a, b)
	}
	requirePingAll(t, st2)
}

func mustJSONSpec(s *topo.Spec) []byte {
	c := *s
	c.Source, c.Document = "", nil
	b, _ := json.Marshal(c)
	return b
}

// An address freed by a removal and given to a new interface (another
// MAC) answers at once: the other nodes forget the old neighbour entry.
func TestChangeAddressReused(t *testing.T) {
	needRoot(t)
	ctx := context.Background()
	up(t, gen(t, "single,3", "tcu"), Options{})
	var addrs []string
	for k := range 3 {
		name := fmt.Sprintf("x%d", k)
		if _, err := AddNode(ctx, "tcu", topo.NodeRequest{Name: name}, Options{}); err != nil {
			t.Fatal(err)
		}
		st, err := AddLink(ctx, "tcu", topo.LinkRequest{A: name, B: "s1"}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		a, _ := PrimaryAddr(st.Spec.Node(name))
		addrs = append(addrs, a.String())
		if _, err := Ping(ctx, "tcu", "h1", a, time.Second); err != nil {
			t.Fatalf("%s (%s) right after it was added, the address freed by the last removal: %v", name, a, err)
		}
		if _, err := RemoveNode(ctx, "tcu", name, Options{}); err != nil {
			t.Fatal(err)
		}
	}
	if addrs[0] != addrs[1] || addrs[1] != addrs[2] {
		t.Logf("addresses %v: not reused, so the test proves less", addrs)
	}
}

// TestChangeLeavesNoHandles: a process that adds and removes nodes and
// links again and again (emuctl api, package lab) keeps no handle on any
// node's namespace once a change is done, so a removed node's namespace —
// and the end of its link left detached in the switch's — goes with it.
// (A change's handles on the existing far ends of its new links were
// never closed: two descriptors a link, and every removed node's
// namespace kept alive until the process exited.)
func TestChangeLeavesNoHandles(t *testing.T) {
	needRoot(t)
	ctx := context.Background()
	up(t, gen(t, "single,2", "tcl"), Options{})
	openFDs := func() int {
		fds, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Fatal(err)
		}
		return len(fds)
	}
	before := openFDs()
	for k := range 5 {
		name := fmt.Sprintf("x%d", k)
		if _, err := AddNode(ctx, "tcl", topo.NodeRequest{Name: name}, Options{}); err != nil {
			t.Fatal(err)
		}
		st, err := AddLink(ctx, "tcl", topo.LinkRequest{A: name, B: "s1"}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		a, _ := PrimaryAddr(st.Spec.Node(name))
		if _, err := Ping(ctx, "tcl", "h1", a, 2*time.Second); err != nil {
			t.Fatal(err)
		}
		if _, err := RemoveNode(ctx, "tcl", name, Options{}); err != nil {
			t.Fatal(err)
		}
	}
	if after := openFDs(); after > before {
		t.Errorf("%d descriptors open after 5 adds and removals, %d before", after, before)
	}
	// the detached ends go once the kernel frees the removed namespaces
	detached := func() []string {
		out, err := exec.Command("ip", "-n", topo.Namespace("tcl", "s1"), "-br", "link").Output()
		if err != nil {
			t.Fatal(err)
		}
		var rm []string
		for _, l := range strings.Split(string(out), "\n") {
			if strings.HasPrefix(l, "rm") {
				rm = append(rm, strings.Fields(l)[0])
			}
		}
		return rm
	}
	deadline := time.Now().Add(10 * time.Second)
	for rm := detached(); len(rm) > 0; rm = detached() {
		if time.Now().After(deadline) {
			t.Fatalf("10 s after the removals s1 still has the detached ends %v: their namespaces were not freed", rm)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A node add and a link add that write no state before they build
// (earlyState: hosts and a Linux bridge only) killed (kill -9) once their
// namespace, or their veth and its addresses, exist: the state names
// neither, and down still removes the whole lab — the new namespace found
// by its name and marker — and clean finds nothing more.
func TestChangeCrashUnrecorded(t *testing.T) {
	needRoot(t)
	const lab = "tcrn"
	for _, c := range []struct{ op, point string }{
		{"node", "change-netcfg"},
		{"link", "change-hosts"},
	} {
		t.Run(c.op+"@"+c.point, func(t *testing.T) {
			self, _ := os.Executable()
			cmd := exec.Command(self, "-test.run=^TestChangeCrashUnrecordedHelper$")
			cmd.Env = append(os.Environ(), "EMUCTL_TEST_CRASH="+c.point, "EMUCTL_TEST_CRASH_LAB="+lab, "EMUCTL_TEST_CRASH_OP="+c.op)
			out, err := cmd.CombinedOutput()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 9 {
				Down(lab, nil)
				t.Fatalf("crash helper: want exit 9, got %v\n%s", err, out)
			}
			st, err := ReadState(lab)
			if err != nil {
				t.Fatalf("state after the crash: %v", err)
			}
			if st.Spec.Node("x1") != nil && c.op == "node" {
				t.Fatal("the state names the node: it was written before the build, the window is not the one tested")
			}
			if !slices.Contains(labNetnsFiles(lab), topo.Namespace(lab, "x1")) && c.op == "node" {
				t.Fatalf("no namespace for x1 (%v): the window was not hit", labNetnsFiles(lab))
			}
			if c.op == "link" {
				if len(st.Spec.Links) != 2 {
					t.Fatalf("the state names %d links: it was written before the build, the window is not the one tested", len(st.Spec.Links))
				}
				if err := exec.Command("ip", "-n", topo.Namespace(lab, "s1"), "link", "show", "s1-eth3").Run(); err != nil {
					t.Fatalf("no s1-eth3 in s1 (%v): the window was not hit", err)
				}
			}
			if err := Down(lab, nil); err != nil {
				t.Fatal(err)
			}
			if _, err := Clean(false, nil); err != nil {
				t.Fatal(err)
			}
			requireGone(t, lab)
		})
	}
}

// TestChangeCrashUnrecordedHelper runs as TestChangeCrashUnrecorded's
// subprocess: up, then a node add (op node) or a node add and a link add
// (op link) killed at the crash point.
func TestChangeCrashUnrecordedHelper(t *testing.T) {
	point, lab, op := os.Getenv("EMUCTL_TEST_CRASH"), os.Getenv("EMUCTL_TEST_CRASH_LAB"), os.Getenv("EMUCTL_TEST_CRASH_OP")
	if point == "" || lab == "" {
		t.Skip("subprocess helper")
	}
	ctx := context.Background()
	spec, err := topo.Generate("single,2", topo.GenOptions{Name: lab})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Deploy(ctx, spec, Options{}); err != nil {
		t.Fatal(err)
	}
	if op == "link" {
		if _, err := AddNode(ctx, lab, topo.NodeRequest{Name: "x1"}, Options{}); err != nil {
			t.Fatal(err)
		}
		crashAt = point
		AddLink(ctx, lab, topo.LinkRequest{A: "x1", B: "s1"}, Options{})
	} else {
		crashAt = point
		AddNode(ctx, lab, topo.NodeRequest{Name: "x1"}, Options{})
	}
	t.Fatal("not killed at " + point)
}
