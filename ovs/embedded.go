package ovs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/emuctl/emuctl/ovs/vswitchd"
)

// SystemDB is where a system Open vSwitch (Debian's and Red Hat's
// packages) serves its database; /var/run is /run.
const SystemDB = "/run/openvswitch/db.sock"

// Package names the error messages point to.
const Package = "openvswitch-switch"

// ErrNotInstalled wraps a missing Open vSwitch binary.
//
//lint:ignore ST1005 a proper noun
var ErrNotInstalled = errors.New("Open vSwitch is not installed")

// Binaries finds ovsdb-tool, ovsdb-server and ovs-vswitchd, also in the
// sbin directories a non-login PATH may lack.
func Binaries() (map[string]string, error) {
	out := map[string]string{}
	var missing []string
	for _, b := range []string{"ovsdb-tool", "ovsdb-server", "ovs-vswitchd"} {
		p, err := exec.LookPath(b)
		if err != nil {
			for _, d := range []string{"/usr/sbin", "/usr/local/sbin", "/usr/bin", "/usr/local/bin"} {
				if fi, e := os.Stat(filepath.Join(d, b)); e == nil && fi.Mode()&0o111 != 0 {
					p, err = filepath.Join(d, b), nil
					break
				}
			}
		}
		if err != nil {
			missing = append(missing, b)
			continue
		}
		out[b] = p
	}
	if len(missing) > 0 {
		return out, fmt.Errorf("%w: %s not found (install the package %s, e.g. `apt-get install %s`)", ErrNotInstalled, strings.Join(missing, ", "), Package, Package)
	}
	return out, nil
}

// Embedded is a private ovsdb-server + ovs-vswitchd pair whose database,
// sockets, pid files and logs all live in Dir. It shares nothing with a
// system Open vSwitch except the network namespace its caller starts it in.
type Embedded struct {
	Dir string
	// Cleanup makes Stop ask ovs-vswitchd to `exit --cleanup`, which
	// removes the kernel datapath it created (set it where the kernel
	// datapath may be in use). Without it Stop sends SIGTERM at once: the
	// userspace datapath's devices go with the process, and tearing its
	// bridges down one by one takes ovs-vswitchd ~60 ms each.
	Cleanup bool
}

// DBSocket is the database socket; Endpoint the same as an OVSDB endpoint.
func (e Embedded) DBSocket() string { return filepath.Join(e.Dir, "db.sock") }
func (e Embedded) Endpoint() string { return "unix:" + e.DBSocket() }
func (e Embedded) path(n string) string {
	return filepath.Join(e.Dir, n)
}

// env points every OVS path default into Dir.
func (e Embedded) env() []string {
	env := os.Environ()
	for _, k := range []string{"OVS_RUNDIR", "OVS_LOGDIR", "OVS_DBDIR", "OVS_SYSCONFDIR"} {
		env = append(env, k+"="+e.Dir)
	}
	return env
}

// Daemon is one running daemon of an embedded pair.
type Daemon struct {
	Name string `json:"name"`
	PID  int    `json:"pid"`
}

// Running returns the live daemons of the pair: a pid file whose process
// exists and is that program (pids are never trusted blindly).
func (e Embedded) Running() []Daemon {
	var out []Daemon
	for _, n := range []string{"ovsdb-server", "ovs-vswitchd"} {
		if pid := e.pid(n); pid > 0 {
			out = append(out, Daemon{n, pid})
		}
	}
	return out
}

func (e Embedded) pid(name string) int {
	b, err := os.ReadFile(e.path(name + ".pid"))
	if err != nil {
		return 0
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 0 {
		return 0
	}
	exe, err := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
	if err != nil || filepath.Base(strings.TrimSuffix(exe, " (deleted)")) != name {
		return 0
	}
	return pid
}

// Starter runs a daemon's launch command to completion. OVS daemons
// started with --detach fork, and the first process exits once the daemon
// is ready; the caller decides the namespace the command runs in.
type Starter func(*exec.Cmd) error

// Start creates a fresh database if Dir has none, starts ovsdb-server,
// initialises the database, starts ovs-vswitchd and returns once the
// switch daemon has confirmed a configuration. run may be nil (plain Run).
func (e Embedded) Start(ctx context.Context, run Starter) error {
	bins, err := Binaries()
	if err != nil {
		return err
	}
	if run == nil {
		run = func(c *exec.Cmd) error { return c.Run() }
	}
	if err := os.MkdirAll(e.Dir, 0o755); err != nil {
		return err
	}
	db := e.path("conf.db")
	if _, err := os.Stat(db); errors.Is(err, os.ErrNotExist) {
		schema, err := e.schema()
		if err != nil {
			return err
		}
		if out, err := exec.CommandContext(ctx, bins["ovsdb-tool"], "create", db, schema).CombinedOutput(); err != nil {
			return fmt.Errorf("ovsdb-tool create: %v: %s", err, strings.TrimSpace(string(out)))
		}
	}
	launch := func(name string, args ...string) error {
		cmd := exec.CommandContext(ctx, bins[name], args...)
		cmd.Env = e.env()
		cmd.Dir = e.Dir
		// Its own session: no signal of the caller's terminal reaches it.
		cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
		out, err := os.OpenFile(e.path(name+".out"), os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
		if err != nil {
			return err
		}
		defer out.Close()
		cmd.Stdout, cmd.Stderr = out, out
		if err := run(cmd); err != nil {
			return fmt.Errorf("start %s: %v%s", name, err, e.tail(name))
		}
		if e.pid(name) == 0 {
			return fmt.Errorf("%s did not stay up%s", name, e.tail(name))
		}
		return nil
	}
	common := func(name string) []string {
		return []string{"--pidfile=" + e.path(name+".pid"), "--log-file=" + e.path(name+".log"),
			"--detach", "--no-chdir", "-vconsole:off", "-vfile:info"}
	}
	if e.pid("ovsdb-server") == 0 {
		args := append([]string{db, "--remote=punix:" + e.DBSocket()}, common("ovsdb-server")...)
		if err := launch("ovsdb-server", args...); err != nil {
			return err
		}
	}
	c, err := Dial(ctx, e.Endpoint())
	if err != nil {
		return fmt.Errorf("embedded ovsdb-server: %w%s", err, e.tail("ovsdb-server"))
	}
	defer c.Close()
	if err := c.Init(ctx); err != nil {
		return fmt.Errorf("embedded ovsdb-server: %w", err)
	}
	if e.pid("ovs-vswitchd") == 0 {
		args := append([]string{e.Endpoint()}, common("ovs-vswitchd")...)
		if err := launch("ovs-vswitchd", args...); err != nil {
			return err
		}
	}
	if err := c.Sync(ctx); err != nil {
		return fmt.Errorf("embedded ovs-vswitchd: %w%s", err, e.tail("ovs-vswitchd"))
	}
	return nil
}

// schema returns the installed Open_vSwitch schema, or writes the one the
// models were generated from into Dir.
func (e Embedded) schema() (string, error) {
	for _, p := range []string{os.Getenv("OVS_PKGDATADIR"), "/usr/share/openvswitch", "/usr/local/share/openvswitch"} {
		if p == "" {
			continue
		}
		if _, err := os.Stat(filepath.Join(p, "vswitch.ovsschema")); err == nil {
			return filepath.Join(p, "vswitch.ovsschema"), nil
		}
	}
	p := e.path("vswitch.ovsschema")
	return p, os.WriteFile(p, vswitchd.SchemaFile, 0o644)
}

// tail returns the end of a daemon's log, for error messages.
func (e Embedded) tail(name string) string {
	var parts []string
	for _, f := range []string{name + ".out", name + ".log"} {
		b, err := os.ReadFile(e.path(f))
		if err != nil || len(b) == 0 {
			continue
		}
		lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
		if len(lines) > 8 {
			lines = lines[len(lines)-8:]
		}
		parts = append(parts, f+":\n  "+strings.Join(lines, "\n  "))
	}
	if len(parts) == 0 {
		return ""
	}
	return "\n" + strings.Join(parts, "\n")
}

// Stop ends both daemons by pid — ovs-vswitchd first (with Cleanup asked
// to `exit --cleanup`, so it removes its kernel datapath), then SIGTERM,
// then SIGKILL — and removes Dir. Stopping a pair that is not running is
// not an error.
func (e Embedded) Stop(timeout time.Duration) error {
	var errs []error
	if pid := e.pid("ovs-vswitchd"); pid > 0 {
		grace := time.Duration(0)
		if e.Cleanup {
			e.appctl(fmt.Sprintf("ovs-vswitchd.%d.ctl", pid), "exit", "--cleanup")
			grace = timeout / 2
		}
		if err := stopPID(pid, "ovs-vswitchd", grace, timeout); err != nil {
			errs = append(errs, err)
		}
	}
	if pid := e.pid("ovsdb-server"); pid > 0 {
		if err := stopPID(pid, "ovsdb-server", 0, timeout); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	return os.RemoveAll(e.Dir)
}

// appctl sends one unixctl command (JSON-RPC over the daemon's control
// socket) and waits briefly for the answer; errors are ignored because
// Stop falls back to signals.
func (e Embedded) appctl(sock, method string, params ...string) {
	c, err := net.DialTimeout("unix", e.path(sock), time.Second)
	if err != nil {
		return
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(3 * time.Second))
	if params == nil {
		params = []string{}
	}
	if json.NewEncoder(c).Encode(map[string]any{"id": 0, "method": method, "params": params}) != nil {
		return
	}
	var resp map[string]any
	json.NewDecoder(c).Decode(&resp)
}

// stopPID ends one process we identified by pid and program name: it
// waits grace for it to leave on its own, then sends SIGTERM, and SIGKILL
// when it is still there after timeout (then waits for the kernel to
// finish the exit, up to 30 s).
func stopPID(pid int, name string, grace, timeout time.Duration) error {
	start := procStartTime(pid)
	// Gone means reaped or a zombie: an exiting process loses its exe link
	// before it has closed its files (ovs-vswitchd's taps and sockets),
	// and a successor must not meet those.
	gone := func() bool {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return true
		}
		st := string(b)
		i := strings.LastIndexByte(st, ')')
		if i < 0 || i+2 >= len(st) {
			return true
		}
		if state := st[i+2]; state == 'Z' || state == 'X' {
			return true
		}
		return procStartTime(pid) != start
	}
	wait := func(d time.Duration) bool {
		for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
			if gone() {
				return true
			}
		}
		return gone()
	}
	if wait(grace) {
		return nil
	}
	syscall.Kill(pid, syscall.SIGTERM)
	if wait(timeout) {
		return nil
	}
	syscall.Kill(pid, syscall.SIGKILL)
	// a killed process still closes its files before it is gone: an
	// ovs-vswitchd with a thousand tap devices (Mininet's tree1024 on the
	// netdev datapath) takes seconds, each tap unregistered by the kernel
	if wait(30 * time.Second) {
		return nil
	}
	return fmt.Errorf("%s (pid %d) did not exit", name, pid)
}

// procStartTime returns field 22 of /proc/<pid>/stat (start time in
// ticks), or "" when the process is gone.
func procStartTime(pid int) string {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ""
	}
	st := string(b)
	i := strings.LastIndexByte(st, ')')
	if i < 0 {
		return ""
	}
	fs := strings.Fields(st[i+1:])
	if len(fs) < 20 {
		return ""
	}
	return fs[19]
}
