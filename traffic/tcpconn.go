package traffic

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// dialTimeout bounds connection set-up; a peer that does not answer in
// this time is reported as unreachable.
const dialTimeout = 5 * time.Second

// control returns a net.ListenConfig / net.Dialer Control hook that sets
// the options that must precede connect or listen.
func control(o SockOpts) func(network, address string, c syscall.RawConn) error {
	return func(network, address string, c syscall.RawConn) error {
		var serr error
		if err := c.Control(func(fd uintptr) { serr = applyPreConnect(int(fd), o) }); err != nil {
			return err
		}
		return serr
	}
}

func network(a netip.Addr, base string) string {
	if a.Is4() {
		return base + "4"
	}
	return base + "6"
}

// listenTCP opens a TCP or MPTCP listener inside a node, on every address
// of the node (MPTCP joins arrive on the node's other addresses). Port 0
// lets the kernel pick a port that is free in that node.
func listenTCP(lab, node string, family netip.Addr, port int, mptcp bool, o SockOpts) (*net.TCPListener, error) {
	var ln net.Listener
	err := inNode(lab, node, func() error {
		lc := net.ListenConfig{Control: control(o)}
		// Go's listeners default to MPTCP since 1.24: say what we want.
		lc.SetMultipathTCP(mptcp)
		var err error
		ln, err = lc.Listen(context.Background(), network(family, "tcp"), ":"+strconv.Itoa(port))
		return err
	})
	if err != nil {
		return nil, portError(node, "TCP", port, err)
	}
	return ln.(*net.TCPListener), nil
}

// dialTCP connects from inside a node.
func dialTCP(ctx context.Context, lab, node string, dst netip.AddrPort, mptcp bool, o SockOpts) (*net.TCPConn, error) {
	var c net.Conn
	err := inNode(lab, node, func() error {
		d := net.Dialer{Control: control(o), Timeout: dialTimeout}
		d.SetMultipathTCP(mptcp)
		var err error
		c, err = d.DialContext(ctx, network(dst.Addr(), "tcp"), dst.String())
		return err
	})
	if err != nil {
		return nil, dialError(node, dst, err)
	}
	return c.(*net.TCPConn), nil
}

// portError explains a failed bind.
func portError(node, proto string, port int, err error) error {
	if errors.Is(err, unix.EADDRINUSE) {
		return fmt.Errorf("node %s: %s port %d is already in use (choose another --port, or 0 for a free one)", node, proto, port)
	}
	if errors.Is(err, unix.EACCES) {
		return fmt.Errorf("node %s: %s port %d: permission denied", node, proto, port)
	}
	return fmt.Errorf("node %s: listen on %s port %d: %w", node, proto, port, err)
}

// dialError explains a failed connect.
func dialError(node string, dst netip.AddrPort, err error) error {
	var ne net.Error
	switch {
	case errors.Is(err, unix.ECONNREFUSED):
		return fmt.Errorf("node %s: connect to %s: connection refused (nothing listens there)", node, dst)
	case errors.Is(err, unix.ENETUNREACH), errors.Is(err, unix.EHOSTUNREACH):
		return fmt.Errorf("node %s: %s is unreachable (no route from %s)", node, dst.Addr(), node)
	case errors.As(err, &ne) && ne.Timeout():
		return fmt.Errorf("node %s: %s did not answer within %v (unreachable peer?)", node, dst, dialTimeout)
	}
	return fmt.Errorf("node %s: connect to %s: %w", node, dst, err)
}

func addrPort(a net.Addr) netip.AddrPort {
	switch v := a.(type) {
	case *net.TCPAddr:
		return v.AddrPort()
	case *net.UDPAddr:
		return v.AddrPort()
	}
	return netip.AddrPort{}
}

// unmapped normalises IPv4-mapped addresses for comparisons and display.
func unmapped(ap netip.AddrPort) netip.AddrPort {
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port())
}
