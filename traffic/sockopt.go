package traffic

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/emuctl/emuctl/units"
	"golang.org/x/sys/unix"
)

// SockOpts are the per-socket TCP options of a flow.
type SockOpts struct {
	// CC is the congestion control set with TCP_CONGESTION ("" keeps the
	// node's default, which is still read back and reported).
	CC string
	// NoDelay sets TCP_NODELAY (Go's own default is on; here the default is
	// off, the kernel's and iperf3's).
	NoDelay bool
	// QuickAck sets TCP_QUICKACK on the receiver after every read (the
	// option is not permanent in Linux, see tcp(7)).
	QuickAck bool
	// SndBuf and RcvBuf set SO_SNDBUF / SO_RCVBUF in bytes before connect
	// (0 leaves autotuning on).
	SndBuf, RcvBuf units.Bytes
}

// setCC sets TCP_CONGESTION, turning the kernel's ENOENT into a message
// that lists what is available.
func setCC(fd int, cc string) error {
	err := unix.SetsockoptString(fd, unix.IPPROTO_TCP, unix.TCP_CONGESTION, cc)
	if err == nil {
		return nil
	}
	if errors.Is(err, unix.ENOENT) {
		return fmt.Errorf("congestion control %q is not available in this kernel (available: %s)", cc, availableCC())
	}
	if errors.Is(err, unix.EPERM) {
		return fmt.Errorf("congestion control %q: not permitted (needs CAP_NET_ADMIN or an entry in net.ipv4.tcp_allowed_congestion_control)", cc)
	}
	return fmt.Errorf("set congestion control %q: %w", cc, err)
}

// getCC reads TCP_CONGESTION back.
func getCC(fd int) (string, error) {
	return unix.GetsockoptString(fd, unix.IPPROTO_TCP, unix.TCP_CONGESTION)
}

// availableCC lists the congestion controls the kernel has (a global,
// read-only list, the same in every namespace).
func availableCC() string {
	b, err := os.ReadFile("/proc/sys/net/ipv4/tcp_available_congestion_control")
	if err != nil {
		return "unknown"
	}
	return strings.Join(strings.Fields(string(b)), ", ")
}

// CheckCC reports whether the kernel has a congestion control, so a flow
// with a typo fails before any socket is opened. One built as a module
// that is not loaded yet (tcp_dctcp on distribution kernels) is not in
// the available list: a throw-away socket asks for it, which loads it
// (the kernel does so for CAP_NET_ADMIN, as it will for the flow).
func CheckCC(cc string) error {
	if cc == "" {
		return nil
	}
	b, err := os.ReadFile("/proc/sys/net/ipv4/tcp_available_congestion_control")
	if err != nil {
		return nil // let setsockopt decide
	}
	for _, a := range strings.Fields(string(b)) {
		if a == cc {
			return nil
		}
	}
	if fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, 0); err == nil {
		serr := unix.SetsockoptString(fd, unix.IPPROTO_TCP, unix.TCP_CONGESTION, cc)
		unix.Close(fd)
		if serr == nil {
			return nil
		}
	}
	return fmt.Errorf("congestion control %q is not available in this kernel (available: %s)", cc, availableCC())
}

// linuxCCs are the congestion controls mainline Linux ships (net/ipv4
// tcp_*.c): a flows file may name one its kernel lacks, since it may run
// on another kernel; the run refuses it (CheckCC).
var linuxCCs = []string{"bbr", "bic", "cdg", "cubic", "dctcp", "highspeed", "htcp", "hybla", "illinois",
	"lp", "nv", "reno", "scalable", "vegas", "veno", "westwood", "yeah"}

// CheckCCName is the decode-time check: a congestion control this kernel
// has, or one of mainline Linux's (another kernel may have it); anything
// else is a typo, reported with what this kernel has.
func CheckCCName(cc string) error {
	err := CheckCC(cc)
	if err != nil && slices.Contains(linuxCCs, cc) {
		return nil
	}
	return err
}

// applyPreConnect sets the options that must precede connect/listen:
// buffer sizes (they fix the window scale) and the congestion control.
func applyPreConnect(fd int, o SockOpts) error {
	if o.SndBuf > 0 {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF, int(o.SndBuf)); err != nil {
			return fmt.Errorf("SO_SNDBUF %d: %w", o.SndBuf, err)
		}
	}
	if o.RcvBuf > 0 {
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, int(o.RcvBuf)); err != nil {
			return fmt.Errorf("SO_RCVBUF %d: %w", o.RcvBuf, err)
		}
	}
	if o.CC != "" {
		return setCC(fd, o.CC)
	}
	return nil
}

// applyConnected sets the options of an established connection and
// returns the congestion control read back from the socket.
func applyConnected(fd int, o SockOpts) (string, error) {
	if o.CC != "" {
		if err := setCC(fd, o.CC); err != nil {
			return "", err
		}
	}
	nd := 0
	if o.NoDelay {
		nd = 1
	}
	if err := unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, nd); err != nil {
		return "", fmt.Errorf("TCP_NODELAY: %w", err)
	}
	cc, err := getCC(fd)
	if err != nil {
		return "", fmt.Errorf("read back TCP_CONGESTION: %w", err)
	}
	if o.CC != "" && cc != o.CC {
		return cc, fmt.Errorf("congestion control %q was set but the socket reports %q", o.CC, cc)
	}
	return cc, nil
}

// quickAck re-arms TCP_QUICKACK; errors are ignored (best effort, called
// after every read).
func quickAck(fd int) {
	unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_QUICKACK, 1)
}
