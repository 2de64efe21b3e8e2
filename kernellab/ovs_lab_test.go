package kernellab

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vishvananda/netlink"
)

// privateOVS is an ovsdb-server + ovs-vswitchd pair with their own database,
// sockets, pid and log files in one directory, so they never meet a system
// Open vSwitch. They are driven with ovs-vsctl/ovs-appctl pointed at the
// private sockets: acceptable in this test until emuctl's ovs package (OVSDB
// over libovsdb) exists, which should then replace these calls.
type privateOVS struct {
	dir string
	env []string
}

func (o *privateOVS) path(name string) string { return filepath.Join(o.dir, name) }

func (o *privateOVS) cmd(t *testing.T, argv ...string) string {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = append(os.Environ(), o.env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(argv, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}

func (o *privateOVS) vsctl(t *testing.T, args ...string) string {
	t.Helper()
	return o.cmd(t, append([]string{"ovs-vsctl", "--db=unix:" + o.path("db.sock"), "--timeout=60"}, args...)...)
}

func (o *privateOVS) appctl(t *testing.T, target string, args ...string) string {
	t.Helper()
	return o.cmd(t, append([]string{"ovs-appctl", "-t", o.path(target + ".ctl")}, args...)...)
}

// startOVS starts the private daemons; when t ends they exit (vswitchd with
// --cleanup, which deletes the kernel datapath) or are killed by pid.
func startOVS(t *testing.T) *privateOVS {
	t.Helper()
	dir := t.TempDir()
	o := &privateOVS{dir: dir, env: []string{"OVS_RUNDIR=" + dir, "OVS_LOGDIR=" + dir, "OVS_DBDIR=" + dir, "OVS_SYSCONFDIR=" + dir}}
	dumpOnFailure(t, o.path("ovsdb-server.log"), o.path("ovs-vswitchd.log"))
	o.cmd(t, "ovsdb-tool", "create", o.path("conf.db"), "/usr/share/openvswitch/vswitch.ovsschema")

	db := startProc(t, nil, o.env, o.path("ovsdb-server.log"), "ovsdb-server", o.path("conf.db"),
		"--remote=punix:"+o.path("db.sock"), "--unixctl="+o.path("ovsdb-server.ctl"),
		"--pidfile="+o.path("ovsdb-server.pid"), "-vconsole:info")
	waitFor(t, 30*time.Second, "ovsdb-server socket", func() (bool, error) {
		_, err := os.Stat(o.path("db.sock"))
		return err == nil, err
	})
	t.Logf("ovsdb-server pid %d", db.Pid)
	o.vsctl(t, "--no-wait", "init")

	sw := startProc(t, nil, o.env, o.path("ovs-vswitchd.log"), "ovs-vswitchd", "unix:"+o.path("db.sock"),
		"--unixctl="+o.path("ovs-vswitchd.ctl"), "--pidfile="+o.path("ovs-vswitchd.pid"), "-vconsole:info")
	t.Logf("ovs-vswitchd pid %d", sw.Pid)
	// Registered after startProc's, so this runs first: a clean exit that
	// removes the datapath; startProc's cleanup then finds the pid gone
	// (or kills it by pid if it hangs).
	t.Cleanup(func() {
		cmd := exec.Command("ovs-appctl", "-t", o.path("ovs-vswitchd.ctl"), "exit", "--cleanup")
		cmd.Env = append(os.Environ(), o.env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Logf("ovs-vswitchd exit --cleanup: %v %s", err, out)
		}
		sw.wait(10 * time.Second)
	})
	return o
}

// TestLabOVSKernelDatapath: a bridge on the kernel (system) datapath with
// two veth ports into two namespaces, and TCP between them.
func TestLabOVSKernelDatapath(t *testing.T) {
	RequireLab(t, "runs ovs-vswitchd on the kernel's ovs-system datapath")
	_, err := os.Stat("/sys/module/openvswitch")
	Require(t, "openvswitch kernel module", err == nil, errString(err))
	requireTools(t, "openvswitch-switch", "ovsdb-tool", "ovsdb-server", "ovs-vswitchd", "ovs-vsctl", "ovs-appctl")

	o := startOVS(t)
	const br = prefix + "br0"
	o.vsctl(t, "add-br", br, "--", "set", "bridge", br, "datapath_type=system")
	t.Cleanup(func() { o.vsctl(t, "--if-exists", "del-br", br) })

	a, b := newNS(t, "ovs-a"), newNS(t, "ovs-b")
	veth(t, nil, prefix+"ovs-a", a, "eth0")
	veth(t, nil, prefix+"ovs-b", b, "eth0")
	o.vsctl(t, "add-port", br, prefix+"ovs-a", "--", "add-port", br, prefix+"ovs-b")
	a.addr(t, "eth0", "10.72.0.1/24")
	b.addr(t, "eth0", "10.72.0.2/24")

	const size = 8 << 20
	if got := tcpTransfer(t, a, b, "10.72.0.2:5001", size); got != size {
		t.Fatalf("TCP through the bridge: received %d of %d bytes", got, size)
	}
	// Kernel flows idle out after 10 s: look while they are fresh.
	flows := o.appctl(t, "ovs-vswitchd", "dpctl/dump-flows")
	show := o.appctl(t, "ovs-vswitchd", "dpctl/show")
	t.Logf("dpctl/show:\n%s\nkernel flows:\n%s", show, flows)

	if dp := o.vsctl(t, "get", "bridge", br, "datapath_type"); dp != "system" {
		t.Errorf("datapath_type = %s, want system", dp)
	}
	if !strings.Contains(show, "system@ovs-system") {
		t.Errorf("dpctl/show does not list the kernel datapath system@ovs-system")
	}
	if !strings.Contains(flows, "in_port") {
		t.Errorf("no kernel datapath flows after the transfer")
	}
	if l, err := netlink.LinkByName("ovs-system"); err != nil || l.Type() != "openvswitch" {
		t.Errorf("no openvswitch link ovs-system in the root namespace (%v)", err)
	}
}

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
