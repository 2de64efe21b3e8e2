package netcfg

import (
	"encoding/binary"
	"errors"
	"net/netip"
	"runtime"
	"unsafe"

	"golang.org/x/sys/unix"
)

// MPTCP socket options at level SOL_MPTCP (include/uapi/linux/mptcp.h);
// x/sys/unix has only SOL_MPTCP itself.
const (
	mptcpInfoOpt     = 1 // struct mptcp_info (5.16+)
	mptcpFullInfoOpt = 4 // struct mptcp_full_info (6.5+)
)

// mptcpInfo mirrors struct mptcp_info (96 bytes on 6.10+; older kernels
// fill a prefix).
type mptcpInfo struct {
	Subflows           uint8 // additional subflows: the initial one is not counted
	AddAddrSignal      uint8
	AddAddrAccepted    uint8
	SubflowsMax        uint8
	AddAddrSignalMax   uint8
	AddAddrAcceptedMax uint8
	_                  [2]byte
	Flags              uint32 // 1: fell back to TCP, 2: remote key received
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

// subflowInfo mirrors struct mptcp_subflow_info: id, then two
// sockaddr_storage (local, remote).
type subflowInfo struct {
	ID     uint32
	_      uint32
	Local  [128]byte
	Remote [128]byte
}

// fullInfo mirrors struct mptcp_full_info; the two arrays are user
// pointers.
type fullInfo struct {
	SizeTCPInfoKernel uint32
	SizeTCPInfoUser   uint32
	SizeSfInfoKernel  uint32
	SizeSfInfoUser    uint32
	NumSubflows       uint32
	SizeArraysUser    uint32
	SubflowInfo       uint64
	TCPInfo           uint64
	Info              mptcpInfo
}

// errFallback: the socket is not (or no longer) MPTCP.
var errFallback = errors.New("the connection fell back to plain TCP")

func getsockopt(fd, level, opt int, p unsafe.Pointer, l *uint32) error {
	_, _, e := unix.Syscall6(unix.SYS_GETSOCKOPT, uintptr(fd), uintptr(level), uintptr(opt), uintptr(p), uintptr(unsafe.Pointer(l)), 0)
	if e != 0 {
		return e
	}
	return nil
}

// readFullInfo reads MPTCP_FULL_INFO: the connection's mptcp_info and, per
// subflow, its id, addresses and tcp_info.
func readFullInfo(fd, max int) (*mptcpInfo, []subflowInfo, []unix.TCPInfo, error) {
	sfi := make([]subflowInfo, max)
	tci := make([]unix.TCPInfo, max)
	var pin runtime.Pinner
	pin.Pin(&sfi[0])
	pin.Pin(&tci[0])
	defer pin.Unpin()
	fi := fullInfo{
		SizeTCPInfoUser: uint32(unsafe.Sizeof(unix.TCPInfo{})),
		SizeSfInfoUser:  uint32(unsafe.Sizeof(subflowInfo{})),
		SizeArraysUser:  uint32(max),
		SubflowInfo:     uint64(uintptr(unsafe.Pointer(&sfi[0]))),
		TCPInfo:         uint64(uintptr(unsafe.Pointer(&tci[0]))),
	}
	l := uint32(unsafe.Sizeof(fi))
	err := getsockopt(fd, unix.SOL_MPTCP, mptcpFullInfoOpt, unsafe.Pointer(&fi), &l)
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOPROTOOPT) {
		return nil, nil, nil, errFallback
	}
	if err != nil {
		return nil, nil, nil, err
	}
	n := min(int(fi.NumSubflows), max)
	return &fi.Info, sfi[:n], tci[:n], nil
}

// sockaddr decodes a sockaddr_in or sockaddr_in6 held in 128 bytes.
func sockaddr(b [128]byte) netip.AddrPort {
	port := binary.BigEndian.Uint16(b[2:])
	switch binary.NativeEndian.Uint16(b[0:]) {
	case unix.AF_INET:
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte(b[4:8])), port)
	case unix.AF_INET6:
		return netip.AddrPortFrom(netip.AddrFrom16([16]byte(b[8:24])).Unmap(), port)
	}
	return netip.AddrPort{}
}
