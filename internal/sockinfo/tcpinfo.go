package sockinfo

import (
	"encoding/binary"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TCPFlags are the bit fields of struct tcp_info that x/sys/unix's
// TCPInfo leaves out: its bytes 6 and 7 are padding there, while
// include/uapi/linux/tcp.h declares
//
//	__u8 tcpi_snd_wscale : 4, tcpi_rcv_wscale : 4;
//	__u8 tcpi_delivery_rate_app_limited:1, tcpi_fastopen_client_fail:2;
type TCPFlags struct {
	SndWscale, RcvWscale uint8
	// AppLimited is tcpi_delivery_rate_app_limited (Linux 4.9+): the
	// latest delivery-rate sample was taken while the sender was
	// application-limited — fewer packets in flight than cwnd allowed and
	// nothing more written to send (tcp_rate_check_app_limited).
	AppLimited bool
}

// bigEndian is true on big-endian machines, where C bit fields are
// allocated from the most significant bit.
var bigEndian = binary.NativeEndian.Uint16([]byte{0, 1}) == 1

// decodeTCPFlags reads the bit fields from the first 8 bytes of a
// struct tcp_info (fewer bytes: none).
func decodeTCPFlags(b []byte) TCPFlags {
	if len(b) < 8 {
		return TCPFlags{}
	}
	if bigEndian {
		return TCPFlags{SndWscale: b[6] >> 4, RcvWscale: b[6] & 0xf, AppLimited: b[7]&0x80 != 0}
	}
	return TCPFlags{SndWscale: b[6] & 0xf, RcvWscale: b[6] >> 4, AppLimited: b[7]&1 != 0}
}

// ReadTCPInfo reads TCP_INFO of the socket fd with its bit fields. On an
// MPTCP socket the kernel answers for the first subflow.
func ReadTCPInfo(fd int) (unix.TCPInfo, TCPFlags, error) {
	var b [sizeofTCPInfo]byte
	l := uint32(len(b))
	if err := getsockopt(fd, unix.IPPROTO_TCP, unix.TCP_INFO, unsafe.Pointer(&b[0]), &l); err != nil {
		return unix.TCPInfo{}, TCPFlags{}, err
	}
	n := min(int(l), len(b))
	return decodeTCPInfo(b[:n]), decodeTCPFlags(b[:n]), nil
}

// SendQueue is a socket's send buffer: its limit and what it holds.
type SendQueue struct {
	// Size is SO_SNDBUF, the limit in bytes. On an MPTCP socket it is
	// the connection's sk_sndbuf: tcp_wmem[0] plus every subflow's
	// buffer (__mptcp_sync_sndbuf), unless SO_SNDBUF locked it.
	Size int
	// Queued is SIOCOUTQ: bytes written and not yet acknowledged (on an
	// MPTCP socket at the data level: write_seq − snd_una, so data a
	// subflow delivered behind another subflow's hole still counts).
	Queued int
	// Unsent is SIOCOUTQNSD: bytes written and not yet sent (MPTCP:
	// write_seq − snd_nxt, not yet handed to any subflow).
	Unsent int
	// WmemQueued is sk_wmem_queued (SO_MEMINFO, Linux 4.12+): the memory
	// the queued data is charged, what the kernel compares with Size
	// before it lets the writer add more (sk_stream_memory_free).
	WmemQueued int
}

// skMeminfoVars is the length of SO_MEMINFO's answer we read, in u32s
// (include/uapi/linux/sock_diag.h: RMEM_ALLOC, RCVBUF, WMEM_ALLOC,
// SNDBUF, FWD_ALLOC, WMEM_QUEUED, ...).
const (
	skMeminfoVars       = 9
	skMeminfoWmemQueued = 5
)

// ReadSendQueue reads SO_SNDBUF, SIOCOUTQ, SIOCOUTQNSD and SO_MEMINFO of
// the socket fd (the ioctls on MPTCP sockets since Linux 6.7).
func ReadSendQueue(fd int) (SendQueue, error) {
	var q SendQueue
	var err error
	if q.Size, err = unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_SNDBUF); err != nil {
		return q, err
	}
	if q.Queued, err = ioctlInt(fd, unix.SIOCOUTQ); err != nil {
		return q, err
	}
	if q.Unsent, err = ioctlInt(fd, unix.SIOCOUTQNSD); err != nil {
		return q, err
	}
	var mem [skMeminfoVars]uint32
	l := uint32(unsafe.Sizeof(mem))
	if err := getsockopt(fd, unix.SOL_SOCKET, unix.SO_MEMINFO, unsafe.Pointer(&mem[0]), &l); err != nil {
		return q, err
	}
	if l > skMeminfoWmemQueued*4 {
		q.WmemQueued = int(mem[skMeminfoWmemQueued])
	}
	return q, nil
}

// ioctlInt is an ioctl whose answer is a C int written at the argument.
func ioctlInt(fd int, req uint) (int, error) {
	var v int32
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(unsafe.Pointer(&v))); e != 0 {
		return 0, e
	}
	return int(v), nil
}
