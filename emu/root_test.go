package emu

import (
	"context"
	"net/netip"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/emuctl/emuctl/topo"
	"github.com/vishvananda/netlink"
)

// A lab with nodes of kind root: the machine's own namespace, where the
// lab's link ends are made under the topology's names (Mininet's
// Node(inNamespace=False)).
const rootLabYAML = `name: trt
addressing: {auto: false}
routing: none
nodes:
  h1: {}
  h2: {}
  s1: {kind: switch}
  root: {kind: root}
  up: {kind: root}
links:
  - endpoints: [h1, s1]
    ip: {h1: [10.77.0.1/24]}
  - endpoints: [h2, s1]
    ip: {h2: [10.77.0.3/24]}
  - endpoints: [root, s1]
    ip: {root: [10.77.0.2/24]}
  - endpoints: [h2, up]
    ip: {h2: [10.78.0.1/24], up: [10.78.0.2/24]}
    link: {rate: 10mbit, delay: 5ms}
`

// rootPing pings from the machine's own namespace (this process's).
func rootPing(t *testing.T, addr string) time.Duration {
	t.Helper()
	out, err := exec.Command("ping", "-n", "-c", "3", "-i", "0.2", "-W", "1", addr).CombinedOutput()
	if err != nil {
		t.Fatalf("ping %s from the machine's namespace: %v\n%s", addr, err, out)
	}
	m := regexp.MustCompile(`= ([\d.]+)/`).FindSubmatch(out)
	if m == nil {
		t.Fatalf("ping %s: no rtt in\n%s", addr, out)
	}
	ms, _ := strconv.ParseFloat(string(m[1]), 64)
	return time.Duration(ms * float64(time.Millisecond))
}

func TestKindRoot(t *testing.T) {
	needRoot(t)
	spec := loadYAML(t, "trt", rootLabYAML)
	// without the opt-in: refused, nothing made
	if _, err := Deploy(context.Background(), spec, Options{}); err == nil || !strings.Contains(err.Error(), "--allow-external") {
		t.Fatalf("deploy without --allow-external: %v", err)
	}
	if _, err := netlink.LinkByName("root-eth0"); err == nil {
		t.Fatal("a refused lab left root-eth0")
	}
	// a name the machine's namespace holds (not emuctl's) is refused and left alone
	decoy := &netlink.Bridge{LinkAttrs: netlink.LinkAttrs{Name: "up-eth0"}}
	if err := netlink.LinkAdd(decoy); err != nil {
		t.Fatal(err)
	}
	_, err := Deploy(context.Background(), spec, Options{AllowExternal: true})
	if err == nil || !strings.Contains(err.Error(), "has a device up-eth0 already (not emuctl's)") {
		t.Errorf("deploy over a device of the machine's: %v", err)
	}
	if _, lerr := netlink.LinkByName("up-eth0"); lerr != nil {
		t.Fatalf("the refused deploy touched up-eth0: %v", lerr)
	}
	netlink.LinkDel(decoy)

	st := up(t, spec, Options{AllowExternal: true})
	for _, name := range []string{"root-eth0", "up-eth0"} {
		l, err := netlink.LinkByName(name)
		if err != nil {
			t.Fatalf("%s not in the machine's namespace: %v", name, err)
		}
		if l.Attrs().Alias != Marker("trt") {
			t.Errorf("%s alias %q, want the lab's marker", name, l.Attrs().Alias)
		}
	}
	// both ways: the machine reaches h1 across the bridge, and h1 the machine
	rootPing(t, "10.77.0.1")
	pingOK(t, "trt", "h1", "h2")
	if _, err := Ping(context.Background(), "trt", "h1", netip.MustParseAddr("10.77.0.2"), time.Second); err != nil {
		t.Errorf("h1 -> root (10.77.0.2): %v", err)
	}
	// the shaped link to the machine: RTT floor 2 x 5 ms
	if rtt := rootPing(t, "10.78.0.1"); rtt < 10*time.Millisecond || rtt > 40*time.Millisecond {
		t.Errorf("machine -> h2 over 10 Mbit/s 5 ms: average RTT %v, want >= 10 ms (2 x delay)", rtt)
	}
	// pingall, hosts files and routes leave the machine alone
	for _, n := range st.Spec.Hosts() {
		if n.Kind == topo.KindRoot {
			t.Errorf("Hosts() lists %s", n.Name)
		}
	}
	requirePingAll(t, st)
	if _, err := Command("trt", "root", []string{"true"}); err == nil || !strings.Contains(err.Error(), "kind root") {
		t.Errorf("exec in a kind root node: %v", err)
	}
	if _, err := os.Lstat("/etc/netns/trt.root"); err == nil {
		t.Error("a hosts file for the machine's namespace")
	}
	// a link to the machine removed at run time takes its end with it
	li, err := FindLink(st.Spec, "h2:up")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := RemoveLink(context.Background(), "trt", li, Options{}); err != nil {
		t.Fatal(err)
	}
	if _, err := netlink.LinkByName("up-eth0"); err == nil {
		t.Error("up-eth0 still in the machine's namespace after link del")
	}
	if err := Down("trt", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := netlink.LinkByName("root-eth0"); err == nil {
		t.Error("root-eth0 still in the machine's namespace after down")
	}
}

// A kill -9 while the lab is built leaves nothing in the machine's
// namespace after clean.
func TestKindRootCrash(t *testing.T) {
	needRoot(t)
	for _, point := range []string{"shaping", "routes"} {
		t.Run(point, func(t *testing.T) {
			self, _ := os.Executable()
			cmd := exec.Command(self, "-test.run=^TestCrashWindowHelper$")
			cmd.Env = append(os.Environ(), "EMUCTL_TEST_CRASH="+point, "EMUCTL_TEST_CRASH_LAB=trt",
				"EMUCTL_TEST_CRASH_YAML="+rootLabYAML, "EMUCTL_TEST_CRASH_EXTERNAL=1")
			out, err := cmd.CombinedOutput()
			if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 9 {
				t.Fatalf("crash helper: want exit 9, got %v\n%s", err, out)
			}
			if _, err := netlink.LinkByName("root-eth0"); err != nil {
				t.Fatalf("no root-eth0 after a crash at %s: the window was not hit", point)
			}
			if _, err := Clean(false, nil); err != nil {
				t.Fatal(err)
			}
			requireGone(t, "trt")
			for _, name := range []string{"root-eth0", "up-eth0"} {
				if _, err := netlink.LinkByName(name); err == nil {
					t.Errorf("%s left in the machine's namespace after clean", name)
				}
			}
		})
	}
}
