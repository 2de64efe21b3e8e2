package netcfg

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"syscall"

	"github.com/emuctl/emuctl/internal/sockinfo"
	"github.com/emuctl/emuctl/internal/sysctl"
	"golang.org/x/sys/unix"
)

// Host-wide congestion control lists. They are global (not per namespace)
// and read the same from any namespace.
const (
	availableCCKey = "net.ipv4.tcp_available_congestion_control"
	allowedCCKey   = "net.ipv4.tcp_allowed_congestion_control"
	defaultCCKey   = "net.ipv4.tcp_congestion_control" // per namespace
)

// ErrCCNotAllowed is wrapped when a node's default congestion control is
// available but not in the root namespace's allowed list: the kernel lets
// only the root namespace pick a default outside that list (EPERM).
var ErrCCNotAllowed = errors.New("congestion control is not in the root namespace's allowed list")

// ErrCCNotAvailable is wrapped when the kernel does not have an algorithm.
var ErrCCNotAvailable = errors.New("congestion control is not available in this kernel")

// Host is what the running kernel offers, read by ReadHost and checked by
// Preflight.
type Host struct {
	AvailableCC []string // tcp_available_congestion_control
	AllowedCC   []string // tcp_allowed_congestion_control
	MPTCP       bool     // /proc/sys/net/mptcp exists
	Schedulers  []string // net.mptcp.available_schedulers ("default" when the file is missing)
	PathManager bool     // net.mptcp.pm_type exists (kernel/userspace choice)
}

// ReadHost reads the host's congestion control and MPTCP capabilities.
func ReadHost() (Host, error) {
	var h Host
	av, err := readSysctl(availableCCKey)
	if err != nil {
		return h, err
	}
	al, err := readSysctl(allowedCCKey)
	if err != nil {
		return h, err
	}
	h.AvailableCC, h.AllowedCC = strings.Fields(av), strings.Fields(al)
	if hasSysctl("net.mptcp.enabled") {
		h.MPTCP = true
		h.PathManager = hasSysctl(pmTypeKey)
		h.Schedulers = []string{"default"}
		if s, err := readSysctl(schedulersKey); err == nil {
			h.Schedulers = strings.Fields(s)
		}
	}
	return h, nil
}

// ccAllowedAdvice explains the non-root namespace rule and the ways out.
func ccAllowedAdvice(name string, allowed []string) string {
	return fmt.Sprintf("only the root namespace may default to an algorithm outside net.ipv4.tcp_allowed_congestion_control (%s). "+
		"Opt in with `emuctl up --extend-allowed-cc` (adds %s to that host-wide list while the lab is up), "+
		"or keep the default and set %s per socket (emuctl's traffic does) or per route (tcp.routes: [{to: all, congctl: %s}])",
		strings.Join(allowed, " "), name, name, name)
}

// ExtendAllowedCC appends the given algorithms to the root namespace's
// tcp_allowed_congestion_control (a host-wide setting) and returns the
// names it added, which the caller must record and later pass to
// RestoreAllowedCC. Names already allowed are left alone. This is the
// explicit opt-in for node defaults outside the allowed list; nothing else
// in emuctl changes that list.
func ExtendAllowedCC(names []string) (added []string, err error) {
	cur, err := readSysctl(allowedCCKey)
	if err != nil {
		return nil, err
	}
	list := strings.Fields(cur)
	for _, n := range names {
		if !slices.Contains(list, n) && !slices.Contains(added, n) {
			added = append(added, n)
		}
	}
	if len(added) == 0 {
		return nil, nil
	}
	want := strings.Join(append(list, added...), " ")
	if err := writeSysctl(allowedCCKey, want); err != nil {
		// The kernel sorts the list its own way; accept any order.
		got, rerr := readSysctl(allowedCCKey)
		if rerr != nil || !sameSet(strings.Fields(got), strings.Fields(want)) {
			return nil, fmt.Errorf("extend the allowed congestion control list: %w", err)
		}
	}
	return added, nil
}

// RestoreAllowedCC removes names that ExtendAllowedCC added from the root
// namespace's allowed list. Names no longer there are done. Namespaces
// that already default to one of them keep it (the kernel checks the list
// only when a default is set).
func RestoreAllowedCC(added []string) error {
	if len(added) == 0 {
		return nil
	}
	cur, err := readSysctl(allowedCCKey)
	if err != nil {
		return err
	}
	var keep []string
	for _, n := range strings.Fields(cur) {
		if !slices.Contains(added, n) {
			keep = append(keep, n)
		}
	}
	if len(keep) == len(strings.Fields(cur)) {
		return nil
	}
	if err := sysctl.Write(allowedCCKey, strings.Join(keep, " ")); err != nil {
		return fmt.Errorf("restore the allowed congestion control list to %q: %w", strings.Join(keep, " "), err)
	}
	return nil
}

func sameSet(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for _, x := range a {
		if !slices.Contains(b, x) {
			return false
		}
	}
	return true
}

// SetSocketCC sets the congestion control of one TCP (or MPTCP) socket with
// TCP_CONGESTION and reads it back. A root process may pick any available
// algorithm this way, whatever the namespace's allowed list says.
func SetSocketCC(fd int, name string) error {
	if err := unix.SetsockoptString(fd, unix.IPPROTO_TCP, unix.TCP_CONGESTION, name); err != nil {
		if errors.Is(err, unix.ENOENT) {
			return fmt.Errorf("TCP_CONGESTION %s: %w", name, ErrCCNotAvailable)
		}
		return fmt.Errorf("TCP_CONGESTION %s: %w", name, err)
	}
	got, err := SocketCC(fd)
	if err != nil {
		return err
	}
	if got != name {
		return fmt.Errorf("TCP_CONGESTION %s: the socket kept %s", name, got)
	}
	return nil
}

// SocketCC reads a socket's congestion control (TCP_CONGESTION).
func SocketCC(fd int) (string, error) {
	s, err := unix.GetsockoptString(fd, unix.IPPROTO_TCP, unix.TCP_CONGESTION)
	if err != nil {
		return "", fmt.Errorf("read TCP_CONGESTION: %w", err)
	}
	return strings.TrimRight(s, "\x00"), nil
}

// ConnCC reads the congestion control of a connection such as *net.TCPConn.
func ConnCC(c syscall.Conn) (string, error) {
	var name string
	err := sockinfo.WithFD(c, func(fd int) (err error) {
		name, err = SocketCC(fd)
		return err
	})
	return name, err
}

// CCControl returns a net.Dialer / net.ListenConfig Control function that
// sets the congestion control on the socket before it connects or listens
// (accepted sockets inherit a listener's). An empty name does nothing.
func CCControl(name string) func(network, address string, c syscall.RawConn) error {
	return func(network, address string, c syscall.RawConn) error {
		if name == "" {
			return nil
		}
		var serr error
		if err := c.Control(func(fd uintptr) { serr = SetSocketCC(int(fd), name) }); err != nil {
			return err
		}
		return serr
	}
}
