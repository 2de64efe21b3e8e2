package sysctl_test

import (
	"os"
	"strings"
	"testing"

	"github.com/emuctl/emuctl/internal/nsutil"
	"github.com/emuctl/emuctl/internal/sysctl"
	"github.com/emuctl/emuctl/internal/testutil"
	"github.com/vishvananda/netns"
)

func fds(t *testing.T) int {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	return len(ents)
}

// Inside a namespace scope, keys go through a private procfs instance,
// see that namespace (not the host's, not another one's), and the
// instance is gone when the scope ends.
func TestPrivateProcPerNamespace(t *testing.T) {
	a, b := testutil.NewNetns(t), testutil.NewNetns(t)
	const key = "net.ipv4.tcp_no_metrics_save"
	host, err := os.ReadFile("/proc/sys/net/ipv4/tcp_no_metrics_save")
	if err != nil {
		t.Fatal(err)
	}
	before := fds(t)
	for _, c := range []struct {
		ns  netns.NsHandle
		val string
	}{{a, "1"}, {b, "0"}} {
		err := nsutil.Do(c.ns, func() error {
			if !sysctl.Private() {
				t.Error("no private procfs instance on a kernel that has fsopen")
			}
			if err := sysctl.Write(key, c.val); err != nil {
				return err
			}
			// The host procfs, read from the same thread, agrees.
			got, err := os.ReadFile(sysctl.Path(key))
			if err != nil {
				return err
			}
			if strings.TrimSpace(string(got)) != c.val {
				t.Errorf("host procfs sees %q, want %q", got, c.val)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range []struct {
		ns  netns.NsHandle
		val string
	}{{a, "1"}, {b, "0"}} {
		nsutil.Do(c.ns, func() error {
			got, err := sysctl.Read(key)
			if err != nil || strings.TrimSpace(string(got)) != c.val {
				t.Errorf("read back %q %v, want %q", got, err, c.val)
			}
			if !sysctl.Exists(key) || sysctl.Exists("net.ipv4.no_such_key") {
				t.Error("Exists is wrong")
			}
			return nil
		})
	}
	if now, _ := os.ReadFile("/proc/sys/net/ipv4/tcp_no_metrics_save"); string(now) != string(host) {
		t.Errorf("the host's value changed: %q -> %q", host, now)
	}
	if after := fds(t); after != before {
		t.Errorf("descriptors %d before, %d after: a procfs instance leaked", before, after)
	}
	// Outside a scope the host's /proc is used.
	if sysctl.Private() {
		t.Error("a thread outside any scope claims a private instance")
	}
}

func TestRel(t *testing.T) {
	for in, want := range map[string]string{
		"net.ipv4.ip_forward":             "sys/net/ipv4/ip_forward",
		"net/ipv4/conf/eth0.10/rp_filter": "sys/net/ipv4/conf/eth0.10/rp_filter",
		"/proc/sys/net/core/somaxconn":    "sys/net/core/somaxconn",
	} {
		if got := sysctl.Rel(in); got != want {
			t.Errorf("Rel(%q) = %q, want %q", in, got, want)
		}
	}
}
