package emu

import (
	"context"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
)

func sh(t *testing.T, args ...string) {
	t.Helper()
	if out, err := exec.Command(args[0], args[1:]...).CombinedOutput(); err != nil {
		t.Fatalf("%v: %v\n%s", args, err, out)
	}
}

// Objects a user made, with names like the ones emuctl uses, survive up,
// down, clean and clean --all; a lab whose namespace name is taken is
// refused and the user's namespace is untouched.
func TestDecoysSurvive(t *testing.T) {
	needRoot(t)
	// user objects in the root namespace
	sh(t, "ip", "link", "add", "h1-eth0", "type", "veth", "peer", "name", "s1-eth1")
	sh(t, "ip", "link", "add", "s1", "type", "bridge")
	sh(t, "ip", "link", "set", "s1-eth1", "master", "s1")
	t.Cleanup(func() {
		exec.Command("ip", "link", "del", "h1-eth0").Run()
		exec.Command("ip", "link", "del", "s1").Run()
	})
	// user namespaces named like a lab's
	for _, ns := range []string{"tdecoy.h9", "tdecoy-h1", "tdecoy2.h1"} {
		sh(t, "ip", "netns", "add", ns)
		ns := ns
		t.Cleanup(func() { exec.Command("ip", "netns", "del", ns).Run() })
	}
	os.MkdirAll("/etc/netns/tdecoy.h9", 0o755)
	os.WriteFile("/etc/netns/tdecoy.h9/hosts", []byte("10.1.1.1 mine\n"), 0o644)
	t.Cleanup(func() { os.RemoveAll("/etc/netns/tdecoy.h9") })
	// a user process inside one of them
	sleeper := exec.Command("ip", "netns", "exec", "tdecoy.h9", "sleep", "300")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sleeper.Process.Kill(); sleeper.Wait() })

	st := up(t, gen(t, "single,2", "tdecoy"), Options{})
	requirePingAll(t, st)
	if err := Down("tdecoy", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := Clean(false, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := Clean(true, nil); err != nil {
		t.Fatal(err)
	}
	requireGone(t, "tdecoy")

	// the lab tdecoy2 would need namespace tdecoy2.h1, which the user owns
	_, err := Deploy(context.Background(), gen(t, "single,2", "tdecoy2"), Options{})
	if err == nil || !strings.Contains(err.Error(), "tdecoy2.h1") {
		t.Fatalf("want refusal naming tdecoy2.h1, got %v", err)
	}
	requireGone(t, "tdecoy2")

	for _, n := range []string{"h1-eth0", "s1-eth1", "s1"} {
		if _, err := netlink.LinkByName(n); err != nil {
			t.Errorf("user interface %s is gone: %v", n, err)
		}
	}
	if l, err := netlink.LinkByName("s1-eth1"); err == nil {
		if m, _ := netlink.LinkByName("s1"); m == nil || l.Attrs().MasterIndex != m.Attrs().Index {
			t.Error("user bridge port was detached")
		}
	}
	for _, ns := range []string{"tdecoy.h9", "tdecoy-h1", "tdecoy2.h1"} {
		if _, err := os.Stat(NetnsDir + "/" + ns); err != nil {
			t.Errorf("user namespace %s is gone", ns)
		}
	}
	if b, err := os.ReadFile("/etc/netns/tdecoy.h9/hosts"); err != nil || string(b) != "10.1.1.1 mine\n" {
		t.Errorf("user hosts file changed: %q %v", b, err)
	}
	time.Sleep(50 * time.Millisecond)
	if err := sleeper.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("user process in a decoy namespace was killed: %v", err)
	}
}
