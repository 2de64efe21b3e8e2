package engine

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// pktSock is a non-blocking AF_PACKET socket bound to one interface. The
// engine's direction loops poll it themselves (see engine_dir.go).
type pktSock struct {
	fd      int
	ifindex int
	name    string
}

const sockBufBytes = 4 << 20

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// openPktSock must run inside the interface's namespace. The socket is
// created with protocol 0 (receives nothing) and only starts receiving at
// bind, so no frame of another interface is ever queued on it.
func openPktSock(name string, ifindex int) (*pktSock, error) {
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("packet socket: %w", err)
	}
	opts := []struct {
		level, opt, val int
		name            string
	}{
		{unix.SOL_PACKET, unix.PACKET_VNET_HDR, 1, "PACKET_VNET_HDR"},
		// our own transmissions on this interface must not come back in
		{unix.SOL_PACKET, unix.PACKET_IGNORE_OUTGOING, 1, "PACKET_IGNORE_OUTGOING"},
		{unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, sockBufBytes, "SO_RCVBUFFORCE"},
		{unix.SOL_SOCKET, unix.SO_SNDBUFFORCE, sockBufBytes, "SO_SNDBUFFORCE"},
		// the kernel stamps each frame as it arrives: the engine times a
		// frame from there, not from when its thread woke up to read it
		{unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1, "SO_TIMESTAMPNS"},
	}
	for _, o := range opts {
		if err := unix.SetsockoptInt(fd, o.level, o.opt, o.val); err != nil {
			unix.Close(fd)
			return nil, fmt.Errorf("%s on %s: %w", o.name, name, err)
		}
	}
	sa := &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: ifindex}
	if err := unix.Bind(fd, sa); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("bind packet socket to %s: %w", name, err)
	}
	return &pktSock{fd: fd, ifindex: ifindex, name: name}, nil
}

func (s *pktSock) close() { unix.Close(s.fd) }

// mmsgBatch is a reusable set of message headers for recvmmsg/sendmmsg.
type mmsgBatch struct {
	msgs []unix.Mmsghdr
	iovs []unix.Iovec
	ctl  []byte // receive batches: one control buffer per message (ctlLen)
}

// ctlLen holds one SCM_TIMESTAMPNS control message (a cmsghdr and a
// timespec).
var ctlLen = unix.CmsgSpace(int(unsafe.Sizeof(unix.Timespec{})))

// newRecvBatch is a batch for recv: each message also gets room for the
// frame's kernel timestamp.
func newRecvBatch(n int) *mmsgBatch {
	b := newMmsgBatch(n)
	b.ctl = make([]byte, n*ctlLen)
	return b
}

// stamp returns message i's kernel receive timestamp (CLOCK_REALTIME, ns),
// or 0 if the kernel gave none.
func (b *mmsgBatch) stamp(i int) int64 {
	n := int(b.msgs[i].Hdr.Controllen)
	c := b.ctl[i*ctlLen : i*ctlLen+min(n, ctlLen)]
	hl := unix.CmsgLen(0)
	if len(c) < hl+int(unsafe.Sizeof(unix.Timespec{})) {
		return 0
	}
	h := (*unix.Cmsghdr)(unsafe.Pointer(&c[0]))
	if h.Level != unix.SOL_SOCKET || h.Type != unix.SO_TIMESTAMPNS {
		return 0
	}
	ts := (*unix.Timespec)(unsafe.Pointer(&c[hl]))
	return ts.Nano()
}

func newMmsgBatch(n int) *mmsgBatch {
	b := &mmsgBatch{msgs: make([]unix.Mmsghdr, n), iovs: make([]unix.Iovec, n)}
	for i := range b.msgs {
		b.msgs[i].Hdr.Iov = &b.iovs[i]
		b.msgs[i].Hdr.SetIovlen(1)
	}
	return b
}

func (b *mmsgBatch) set(i int, buf []byte) {
	b.iovs[i].Base = &buf[0]
	b.iovs[i].SetLen(len(buf))
}

// recv reads up to len(b.msgs) frames without blocking; lengths are in
// b.msgs[i].Len. Nothing to read is (0, nil).
func (s *pktSock) recv(b *mmsgBatch) (int, error) {
	if b.ctl != nil {
		for i := range b.msgs {
			b.msgs[i].Hdr.Control = &b.ctl[i*ctlLen]
			b.msgs[i].Hdr.SetControllen(ctlLen)
		}
	}
	for {
		r, _, e := unix.Syscall6(unix.SYS_RECVMMSG, uintptr(s.fd), uintptr(unsafe.Pointer(&b.msgs[0])),
			uintptr(len(b.msgs)), unix.MSG_DONTWAIT, 0, 0)
		switch e {
		case 0:
			return int(r), nil
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return 0, nil
		}
		return 0, e
	}
}

// send transmits pkts in order without blocking. It returns how many it
// consumed: sent, or refused by the kernel (marked refused, skipped).
// Fewer than len(pkts) means the socket buffer is full.
func (s *pktSock) send(b *mmsgBatch, pkts []*packet) int {
	n := min(len(pkts), len(b.msgs))
	for i, p := range pkts[:n] {
		b.set(i, p.buf)
	}
	i := 0
	for i < n {
		r, _, e := unix.Syscall6(unix.SYS_SENDMMSG, uintptr(s.fd), uintptr(unsafe.Pointer(&b.msgs[i])),
			uintptr(n-i), unix.MSG_DONTWAIT, 0, 0)
		switch e {
		case 0:
			i += int(r)
		case unix.EINTR:
		case unix.EAGAIN:
			return i
		default:
			pkts[i].refused = true
			i++
		}
	}
	return i
}

// drops returns (and resets, as the kernel does) the frames the socket
// dropped for lack of receive buffer.
func (s *pktSock) drops() uint64 {
	st, err := unix.GetsockoptTpacketStats(s.fd, unix.SOL_PACKET, unix.PACKET_STATISTICS)
	if err != nil {
		return 0
	}
	return uint64(st.Drops)
}
