package traffic

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"runtime"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// MPTCP socket options at level SOL_MPTCP (include/uapi/linux/mptcp.h);
// x/sys defines only the level.
const (
	optMPTCPInfo     = 1 // struct mptcp_info (5.16+)
	optMPTCPTCPInfo  = 2 // mptcp_subflow_data + tcp_info[] (5.16+)
	optMPTCPFullInfo = 4 // struct mptcp_full_info (6.5+)
)

// mptcpInfo mirrors struct mptcp_info (96 bytes on 6.10+; older kernels
// fill a prefix: bytes_* from 6.5, subflows_total 6.8, last_* 6.10).
type mptcpInfo struct {
	Subflows           uint8 // additional subflows (the initial one not counted)
	AddAddrSignal      uint8
	AddAddrAccepted    uint8
	SubflowsMax        uint8
	AddAddrSignalMax   uint8
	AddAddrAcceptedMax uint8
	_                  [2]byte
	Flags              uint32 // 1 fallback, 2 remote key received
	Token              uint32
	WriteSeq           uint64
	SndUna             uint64
	RcvNxt             uint64
	LocalAddrUsed      uint8
	LocalAddrMax       uint8
	CsumEnabled        uint8
	_                  uint8
	Retransmits        uint32
	BytesRetrans       uint64
	BytesSent          uint64
	BytesReceived      uint64
	BytesAcked         uint64
	SubflowsTotal      uint8
	_                  [3]byte
	LastDataSent       uint32
	LastDataRecv       uint32
	LastAckRecv        uint32
}

// errFallback: the kernel answers EOPNOTSUPP (IPv4) or ENOPROTOOPT (IPv6)
// on a socket that is not, or no longer, MPTCP.
var errFallback = errors.New("not an MPTCP connection (fell back to TCP)")

func mapFallback(err error) error {
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOPROTOOPT) {
		return errFallback
	}
	return err
}

func getsockopt(fd, level, opt int, p unsafe.Pointer, l *uint32) error {
	_, _, e := unix.Syscall6(unix.SYS_GETSOCKOPT, uintptr(fd), uintptr(level), uintptr(opt),
		uintptr(p), uintptr(unsafe.Pointer(l)), 0)
	if e != 0 {
		return e
	}
	return nil
}

// readMPTCPInfo reads MPTCP_INFO.
func readMPTCPInfo(c syscall.Conn) (*mptcpInfo, error) {
	var mi mptcpInfo
	err := withFD(c, func(fd int) error {
		l := uint32(unsafe.Sizeof(mi))
		return getsockopt(fd, unix.SOL_MPTCP, optMPTCPInfo, unsafe.Pointer(&mi), &l)
	})
	if err != nil {
		return nil, mapFallback(err)
	}
	return &mi, nil
}

// subflowInfo mirrors struct mptcp_subflow_info: id, pad, two
// sockaddr_storage (local, remote).
type subflowInfo struct {
	ID     uint32
	_      uint32
	Local  [128]byte
	Remote [128]byte
}

// fullInfo mirrors struct mptcp_full_info; the arrays are user pointers.
type fullInfo struct {
	SizeTCPInfoKernel uint32
	SizeTCPInfoUser   uint32
	SizeSfInfoKernel  uint32
	SizeSfInfoUser    uint32
	NumSubflows       uint32
	SizeArraysUser    uint32
	SubflowInfo       uint64
	TCPInfo           uint64
	MPTCPInfo         mptcpInfo
}

// subflow is one subflow's identity and TCP_INFO.
type subflow struct {
	ID             uint32
	Local, Remote  netip.AddrPort
	Info           unix.TCPInfo
	HaveIdentities bool
}

// maxSubflows bounds the arrays handed to the kernel (MPTCP limits are at
// most 8 subflows, plus the initial one).
const maxSubflows = 16

// readSubflows returns the connection-level MPTCP_INFO and every subflow,
// with MPTCP_FULL_INFO (6.5+) or, failing that, MPTCP_INFO plus
// MPTCP_TCPINFO (5.16+, no subflow ids or addresses).
func readSubflows(c syscall.Conn) (*mptcpInfo, []subflow, error) {
	mi, sfs, err := readFullInfo(c)
	if err == nil || errors.Is(err, errFallback) {
		return mi, sfs, err
	}
	mi, err = readMPTCPInfo(c)
	if err != nil {
		return nil, nil, err
	}
	tis, err := readSubflowTCPInfo(c)
	if err != nil {
		return nil, nil, err
	}
	sfs = make([]subflow, len(tis))
	for i := range tis {
		sfs[i] = subflow{ID: uint32(i + 1), Info: tis[i]}
	}
	return mi, sfs, nil
}

func readFullInfo(c syscall.Conn) (*mptcpInfo, []subflow, error) {
	sfi := make([]subflowInfo, maxSubflows)
	tci := make([]unix.TCPInfo, maxSubflows)
	var pin runtime.Pinner
	pin.Pin(&sfi[0])
	pin.Pin(&tci[0])
	defer pin.Unpin()
	fi := fullInfo{
		SizeTCPInfoUser: uint32(unsafe.Sizeof(unix.TCPInfo{})),
		SizeSfInfoUser:  uint32(unsafe.Sizeof(subflowInfo{})),
		SizeArraysUser:  maxSubflows,
		SubflowInfo:     uint64(uintptr(unsafe.Pointer(&sfi[0]))),
		TCPInfo:         uint64(uintptr(unsafe.Pointer(&tci[0]))),
	}
	err := withFD(c, func(fd int) error {
		l := uint32(unsafe.Sizeof(fi))
		return getsockopt(fd, unix.SOL_MPTCP, optMPTCPFullInfo, unsafe.Pointer(&fi), &l)
	})
	if err != nil {
		return nil, nil, mapFallback(err)
	}
	n := min(int(fi.NumSubflows), maxSubflows)
	out := make([]subflow, n)
	for i := 0; i < n; i++ {
		out[i] = subflow{ID: sfi[i].ID, Local: sockaddrPort(sfi[i].Local), Remote: sockaddrPort(sfi[i].Remote),
			Info: tci[i], HaveIdentities: true}
	}
	mi := fi.MPTCPInfo
	return &mi, out, nil
}

// readSubflowTCPInfo reads MPTCP_TCPINFO: a 16-byte mptcp_subflow_data
// header followed by one tcp_info per subflow.
func readSubflowTCPInfo(c syscall.Conn) ([]unix.TCPInfo, error) {
	const hdr = 16
	elem := int(unsafe.Sizeof(unix.TCPInfo{}))
	buf := make([]byte, hdr+maxSubflows*elem)
	binary.NativeEndian.PutUint32(buf[0:], hdr)
	binary.NativeEndian.PutUint32(buf[12:], uint32(elem))
	l := uint32(len(buf))
	err := withFD(c, func(fd int) error {
		return getsockopt(fd, unix.SOL_MPTCP, optMPTCPTCPInfo, unsafe.Pointer(&buf[0]), &l)
	})
	if err != nil {
		return nil, mapFallback(err)
	}
	num := int(binary.NativeEndian.Uint32(buf[4:]))
	sizeUser := int(binary.NativeEndian.Uint32(buf[12:]))
	if sizeUser == 0 {
		return nil, fmt.Errorf("MPTCP_TCPINFO: kernel reported size 0")
	}
	n := min((int(l)-hdr)/sizeUser, num)
	out := make([]unix.TCPInfo, n)
	for i := 0; i < n; i++ {
		off := hdr + i*sizeUser
		copy(unsafe.Slice((*byte)(unsafe.Pointer(&out[i])), elem), buf[off:off+min(sizeUser, elem)])
	}
	return out, nil
}

// sockaddrPort decodes a sockaddr_in / sockaddr_in6 held in a
// sockaddr_storage.
func sockaddrPort(b [128]byte) netip.AddrPort {
	port := binary.BigEndian.Uint16(b[2:])
	switch binary.NativeEndian.Uint16(b[0:]) {
	case unix.AF_INET:
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte(b[4:8])), port)
	case unix.AF_INET6:
		return netip.AddrPortFrom(netip.AddrFrom16([16]byte(b[8:24])).Unmap(), port)
	}
	return netip.AddrPort{}
}
