package sockinfo

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// MPTCP socket options at level SOL_MPTCP (include/uapi/linux/mptcp.h);
// x/sys/unix defines only the level.
const (
	optInfo     = 1 // struct mptcp_info (5.16+)
	optTCPInfo  = 2 // mptcp_subflow_data + tcp_info[] (5.16+)
	optAddrs    = 3 // mptcp_subflow_data + mptcp_subflow_addrs[] (5.17+)
	optFullInfo = 4 // struct mptcp_full_info (6.5+)
)

// maxSubflows bounds the arrays handed to the kernel (the in-kernel path
// manager allows at most 8 subflows besides the initial one).
const maxSubflows = 16

// ErrFallback is returned for a socket that is not, or no longer, MPTCP:
// the kernel then answers SOL_MPTCP options with EOPNOTSUPP (IPv4) or
// ENOPROTOOPT (IPv6).
var ErrFallback = errors.New("the connection fell back to plain TCP")

// mapFallback turns the kernel's answers for a non-MPTCP socket into
// ErrFallback.
func mapFallback(err error) error {
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOPROTOOPT) {
		return ErrFallback
	}
	return err
}

// getsockopt is getsockopt(2) into the l bytes at p; l is updated to the
// length the kernel wrote.
func getsockopt(fd, level, opt int, p unsafe.Pointer, l *uint32) error {
	_, _, e := unix.Syscall6(unix.SYS_GETSOCKOPT, uintptr(fd), uintptr(level), uintptr(opt),
		uintptr(p), uintptr(unsafe.Pointer(l)), 0)
	if e != 0 {
		return e
	}
	return nil
}

// ReadInfo reads MPTCP_INFO (Linux 5.16+) of the socket fd: the
// connection-level state.
func ReadInfo(fd int) (*MPTCPInfo, error) {
	var b [sizeofInfo]byte
	l := uint32(len(b))
	if err := getsockopt(fd, unix.SOL_MPTCP, optInfo, unsafe.Pointer(&b[0]), &l); err != nil {
		return nil, mapFallback(err)
	}
	mi := decodeInfo(b[:min(int(l), len(b))])
	return &mi, nil
}

// ReadFullInfo reads MPTCP_FULL_INFO (Linux 6.5+) of the socket fd: the
// connection-level state and, per subflow, its id, addresses and
// tcp_info. On older kernels it fails with ErrFallback, the kernel's
// answer to an unknown option being the one it gives for a fallen-back
// socket.
//
// The option value carries the addresses of two arrays: they are pinned
// so that they stay where the kernel writes for the length of the call.
func ReadFullInfo(fd int) (*MPTCPInfo, []Subflow, error) {
	sfBuf := make([]byte, maxSubflows*sizeofSubflowInfo)
	tcBuf := make([]byte, maxSubflows*sizeofTCPInfo)
	var pin runtime.Pinner
	pin.Pin(&sfBuf[0])
	pin.Pin(&tcBuf[0])
	defer pin.Unpin()
	fi := fullInfo{
		SizeTCPInfoUser: uint32(sizeofTCPInfo),
		SizeSfInfoUser:  uint32(sizeofSubflowInfo),
		SizeArraysUser:  maxSubflows,
		SubflowInfo:     uint64(uintptr(unsafe.Pointer(&sfBuf[0]))),
		TCPInfo:         uint64(uintptr(unsafe.Pointer(&tcBuf[0]))),
	}
	l := uint32(unsafe.Sizeof(fi))
	if err := getsockopt(fd, unix.SOL_MPTCP, optFullInfo, unsafe.Pointer(&fi), &l); err != nil {
		return nil, nil, mapFallback(err)
	}
	mi := fi.Info
	return &mi, fi.subflows(sfBuf, tcBuf), nil
}

// ReadSubflows returns the connection-level MPTCP_INFO of the socket fd
// and every subflow, with MPTCP_FULL_INFO (6.5+) or, failing that,
// MPTCP_INFO plus MPTCP_TCPINFO (5.16+: no subflow ids or addresses,
// HaveIdentities is false).
func ReadSubflows(fd int) (*MPTCPInfo, []Subflow, error) {
	mi, sfs, err := ReadFullInfo(fd)
	if err == nil {
		return mi, sfs, nil
	}
	// Kernels before 6.5 answer MPTCP_FULL_INFO with EOPNOTSUPP, as for a
	// fallen-back socket: MPTCP_INFO tells the two apart.
	if mi, err = ReadInfo(fd); err != nil {
		return nil, nil, err
	}
	if sfs, err = readSubflowData(fd); err != nil {
		return nil, nil, err
	}
	// MPTCP_SUBFLOW_ADDRS (5.17+) lists the same subflows in the same
	// order with their addresses; a subflow added or closed between the
	// two calls makes the lists disagree, and then addresses are left out.
	if addrs, err := readSubflowAddrs(fd); err == nil && len(addrs) == len(sfs) {
		for i := range sfs {
			sfs[i].Local, sfs[i].Remote = addrs[i][0], addrs[i][1]
		}
	}
	return mi, sfs, nil
}

// readSubflowAddrs reads MPTCP_SUBFLOW_ADDRS: each subflow's local and
// remote address.
func readSubflowAddrs(fd int) ([][2]netip.AddrPort, error) {
	buf := make([]byte, subflowDataLen+maxSubflows*sizeofSubflowAddrs)
	binary.NativeEndian.PutUint32(buf[0:], subflowDataLen)
	binary.NativeEndian.PutUint32(buf[12:], sizeofSubflowAddrs)
	l := uint32(len(buf))
	if err := getsockopt(fd, unix.SOL_MPTCP, optAddrs, unsafe.Pointer(&buf[0]), &l); err != nil {
		return nil, mapFallback(err)
	}
	return decodeSubflowAddrs(buf[:min(int(l), len(buf))])
}

// readSubflowData reads MPTCP_TCPINFO: one tcp_info per subflow.
func readSubflowData(fd int) ([]Subflow, error) {
	buf := make([]byte, subflowDataLen+maxSubflows*sizeofTCPInfo)
	binary.NativeEndian.PutUint32(buf[0:], subflowDataLen)         // size_subflow_data
	binary.NativeEndian.PutUint32(buf[12:], uint32(sizeofTCPInfo)) // size_user
	l := uint32(len(buf))
	if err := getsockopt(fd, unix.SOL_MPTCP, optTCPInfo, unsafe.Pointer(&buf[0]), &l); err != nil {
		return nil, mapFallback(err)
	}
	return decodeSubflowData(buf[:min(int(l), len(buf))])
}

// WithFD runs fn on the file descriptor of a connection or listener.
func WithFD(c syscall.Conn, fn func(fd int) error) error {
	rc, err := c.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := rc.Control(func(fd uintptr) { ferr = fn(int(fd)) }); err != nil {
		return err
	}
	return ferr
}
