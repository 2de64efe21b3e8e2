package capture

import (
	"errors"
	"fmt"
	"net"
	"time"

	"github.com/emuctl/emuctl/capture/pcapng"
	"github.com/emuctl/emuctl/internal/sockinfo"
	"golang.org/x/sys/unix"
)

// socket is an AF_PACKET socket bound to one interface.
type socket struct {
	fd       int
	iface    string
	linkType uint16
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// openSocket opens the socket in the namespace at nsPath. It is created
// with protocol 0 (receiving nothing) and starts receiving only when bound
// to the interface, so no other interface's packets slip in.
func openSocket(nsPath, iface string) (*socket, error) {
	s := &socket{fd: -1, iface: iface}
	err := inNetns(nsPath, func() error {
		ifc, err := net.InterfaceByName(iface)
		if err != nil {
			return fmt.Errorf("interface %q: %w", iface, err)
		}
		fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("AF_PACKET socket: %w", err)
		}
		s.fd = fd
		s.linkType, err = linkTypeOf(fd, iface)
		if err != nil {
			return err
		}
		_ = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 8<<20)
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1); err != nil {
			return fmt.Errorf("SO_TIMESTAMPNS: %w", err)
		}
		tv := unix.NsecToTimeval((100 * time.Millisecond).Nanoseconds())
		if err := unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
			return fmt.Errorf("SO_RCVTIMEO: %w", err)
		}
		sa := &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: ifc.Index}
		if err := unix.Bind(fd, sa); err != nil {
			return fmt.Errorf("bind to %s: %w", iface, err)
		}
		return nil
	})
	if err != nil {
		if s.fd >= 0 {
			unix.Close(s.fd)
		}
		return nil, err
	}
	return s, nil
}

// linkTypeOf maps the interface's ARP hardware type to a pcap link type.
func linkTypeOf(fd int, iface string) (uint16, error) {
	ifr, err := unix.NewIfreq(iface)
	if err != nil {
		return 0, err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFHWADDR, ifr); err != nil {
		return 0, fmt.Errorf("interface %q hardware type: %w", iface, err)
	}
	switch hw := ifr.Uint16(); hw {
	case unix.ARPHRD_ETHER, unix.ARPHRD_LOOPBACK:
		return pcapng.LinkTypeEthernet, nil
	case unix.ARPHRD_NONE, unix.ARPHRD_PPP, unix.ARPHRD_TUNNEL, unix.ARPHRD_TUNNEL6, unix.ARPHRD_SIT, unix.ARPHRD_IPGRE:
		return pcapng.LinkTypeRaw, nil
	default:
		return 0, fmt.Errorf("interface %q: unsupported hardware type %d (supported: Ethernet, loopback, tun/IP tunnels)", iface, hw)
	}
}

// frame is one received packet.
type frame struct {
	n     int // bytes in buf (≤ len(buf))
	wire  int // length on the wire
	tsNs  int64
	flags uint32
}

var errTimeout = errors.New("receive timeout")

// recv reads one packet into buf. It returns errTimeout when nothing
// arrived within the receive timeout.
func (s *socket) recv(buf, oob []byte) (frame, error) {
	n, oobn, _, from, err := unix.Recvmsg(s.fd, buf, oob, unix.MSG_TRUNC)
	if err != nil {
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
			return frame{}, errTimeout
		}
		return frame{}, err
	}
	f := frame{wire: n, n: min(n, len(buf))}
	if ll, ok := from.(*unix.SockaddrLinklayer); ok {
		if ll.Pkttype == unix.PACKET_OUTGOING {
			f.flags = pcapng.FlagOutbound
		} else {
			f.flags = pcapng.FlagInbound
		}
	}
	if ns, ok := sockinfo.RxTime(oob[:oobn]); ok {
		f.tsNs = ns
	} else {
		f.tsNs = time.Now().UnixNano()
	}
	return f, nil
}

// drops returns and resets the kernel's drop counter for this socket.
func (s *socket) drops() uint64 {
	st, err := unix.GetsockoptTpacketStats(s.fd, unix.SOL_PACKET, unix.PACKET_STATISTICS)
	if err != nil {
		return 0
	}
	return uint64(st.Drops)
}

func (s *socket) close() error { return unix.Close(s.fd) }
