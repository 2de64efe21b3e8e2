package traffic

import (
	"net"
	"net/netip"
	"time"

	"github.com/emuctl/emuctl/internal/sockinfo"
	"golang.org/x/sys/unix"
)

// udpRcvBuf is the receive buffer of UDP receivers, so a burst is not
// dropped by the receiving socket and counted as network loss.
const udpRcvBuf = 4 << 20

// listenUDP opens a UDP socket inside a node with kernel receive
// timestamps on.
func listenUDP(lab, node string, family netip.Addr, port int) (*net.UDPConn, error) {
	var c *net.UDPConn
	err := inNode(lab, node, func() error {
		addr := &net.UDPAddr{Port: port}
		var err error
		c, err = net.ListenUDP(network(family, "udp"), addr)
		return err
	})
	if err != nil {
		return nil, portError(node, "UDP", port, err)
	}
	sockinfo.WithFD(c, func(fd int) error {
		if unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, udpRcvBuf) != nil {
			unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, udpRcvBuf)
		}
		return unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	})
	return c, nil
}

// dialUDP opens a connected UDP socket inside a node.
func dialUDP(lab, node string, dst netip.AddrPort) (*net.UDPConn, error) {
	var c *net.UDPConn
	err := inNode(lab, node, func() error {
		var err error
		c, err = net.DialUDP(network(dst.Addr(), "udp"), nil, net.UDPAddrFromAddrPort(dst))
		return err
	})
	if err != nil {
		return nil, dialError(node, dst, err)
	}
	return c, nil
}

// oobSize holds one SCM_TIMESTAMPNS control message.
var oobSize = sockinfo.RxTimeOOB

// rxTime returns the kernel receive timestamp (SCM_TIMESTAMPNS,
// CLOCK_REALTIME) from a control buffer, or now when there is none.
func rxTime(oob []byte) int64 {
	if ns, ok := sockinfo.RxTime(oob); ok {
		return ns
	}
	return time.Now().UnixNano()
}
