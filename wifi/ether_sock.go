package wifi

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// etherSock is the engine medium's one AF_PACKET socket: bound to every
// interface of the medium namespace (the radios' veth ends), it reads the
// frames the nodes send with their virtio_net_hdr (checksum state kept, so
// nothing needs offloads turned off) and the port they came in on, and
// sends frames out of a chosen port. Its own transmissions are not read
// back (PACKET_IGNORE_OUTGOING). It must be opened inside the namespace.
type etherSock struct {
	fd int
	rx etherBatch
	tx etherBatch
	// pending sends, flushed by flush
	out [][]byte
	to  []int
}

const etherBatchLen = 64

type etherBatch struct {
	msgs  [etherBatchLen]unix.Mmsghdr
	iovs  [etherBatchLen]unix.Iovec
	names [etherBatchLen]unix.RawSockaddrLinklayer
	bufs  [etherBatchLen][]byte
}

func (b *etherBatch) init(bufLen int) {
	for i := range b.msgs {
		if bufLen > 0 {
			b.bufs[i] = make([]byte, bufLen)
			b.iovs[i].Base = &b.bufs[i][0]
			b.iovs[i].SetLen(bufLen)
		}
		b.msgs[i].Hdr.Iov = &b.iovs[i]
		b.msgs[i].Hdr.SetIovlen(1)
		b.msgs[i].Hdr.Name = (*byte)(unsafe.Pointer(&b.names[i]))
		b.msgs[i].Hdr.Namelen = unix.SizeofSockaddrLinklayer
	}
}

// etherBufLen holds a vnet header and a frame of MTU 9000 (the largest a
// lab allows on a wireless interface's veth): longer frames are truncated
// by the kernel and counted as errors.
const etherBufLen = 10 + 14 + 9000 + 4

func openEtherSock() (*etherSock, error) {
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("packet socket: %w", err)
	}
	for _, o := range []struct {
		level, opt, val int
		name            string
	}{
		{unix.SOL_PACKET, unix.PACKET_VNET_HDR, 1, "PACKET_VNET_HDR"},
		{unix.SOL_PACKET, unix.PACKET_IGNORE_OUTGOING, 1, "PACKET_IGNORE_OUTGOING"},
		{unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 8 << 20, "SO_RCVBUFFORCE"},
		{unix.SOL_SOCKET, unix.SO_SNDBUFFORCE, 8 << 20, "SO_SNDBUFFORCE"},
	} {
		if err := unix.SetsockoptInt(fd, o.level, o.opt, o.val); err != nil {
			unix.Close(fd)
			return nil, fmt.Errorf("%s: %w", o.name, err)
		}
	}
	// ifindex 0: every interface of the namespace
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL)}); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("bind packet socket: %w", err)
	}
	s := &etherSock{fd: fd}
	s.rx.init(etherBufLen)
	s.tx.init(0)
	return s, nil
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

func (s *etherSock) close() { unix.Close(s.fd) }

// recv reads up to a batch of frames without blocking and calls fn with
// each (vnet header + frame, valid until the next recv) and the index of
// the interface it came in on. It returns how many it read.
func (s *etherSock) recv(fn func(raw []byte, ifindex int)) (int, error) {
	b := &s.rx
	for i := range b.msgs {
		b.msgs[i].Hdr.Namelen = unix.SizeofSockaddrLinklayer
		b.msgs[i].Hdr.Flags = 0
	}
	for {
		r, _, e := unix.Syscall6(unix.SYS_RECVMMSG, uintptr(s.fd), uintptr(unsafe.Pointer(&b.msgs[0])),
			uintptr(len(b.msgs)), unix.MSG_DONTWAIT, 0, 0)
		switch e {
		case 0:
		case unix.EINTR:
			continue
		case unix.EAGAIN:
			return 0, nil
		default:
			return 0, fmt.Errorf("recvmmsg: %w", e)
		}
		n := int(r)
		for i := 0; i < n; i++ {
			if b.names[i].Pkttype == unix.PACKET_OUTGOING {
				continue
			}
			l := int(b.msgs[i].Len)
			if b.msgs[i].Hdr.Flags&unix.MSG_TRUNC != 0 || l > len(b.bufs[i]) {
				continue
			}
			fn(b.bufs[i][:l], int(b.names[i].Ifindex))
		}
		return n, nil
	}
}

// queue adds a frame (vnet header + frame) to send out of ifindex at the
// next flush; the buffer must stay untouched until then.
func (s *etherSock) queue(raw []byte, ifindex int) {
	s.out = append(s.out, raw)
	s.to = append(s.to, ifindex)
}

// flush sends every queued frame, in order, without blocking; it returns
// how many the kernel refused or had no room for (dropped).
func (s *etherSock) flush() (refused int) {
	b := &s.tx
	for off := 0; off < len(s.out); {
		n := min(len(s.out)-off, etherBatchLen)
		for i := 0; i < n; i++ {
			raw := s.out[off+i]
			b.iovs[i].Base = &raw[0]
			b.iovs[i].SetLen(len(raw))
			b.names[i] = unix.RawSockaddrLinklayer{Family: unix.AF_PACKET, Protocol: htons(unix.ETH_P_ALL), Ifindex: int32(s.to[off+i])}
			b.msgs[i].Hdr.Namelen = unix.SizeofSockaddrLinklayer
		}
		i := 0
		for i < n {
			r, _, e := unix.Syscall6(unix.SYS_SENDMMSG, uintptr(s.fd), uintptr(unsafe.Pointer(&b.msgs[i])),
				uintptr(n-i), unix.MSG_DONTWAIT, 0, 0)
			switch e {
			case 0:
				i += int(r)
			case unix.EINTR:
			default: // EAGAIN (socket buffer full) or a refusal: drop this one
				refused++
				i++
			}
		}
		off += n
	}
	clear(s.out)
	s.out, s.to = s.out[:0], s.to[:0]
	return refused
}
