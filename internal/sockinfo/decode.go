package sockinfo

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"unsafe"

	"golang.org/x/sys/unix"
)

// MPTCPInfo mirrors struct mptcp_info (96 bytes on 6.10+; older kernels
// fill a prefix: bytes_* from 6.5, subflows_total 6.8, last_* 6.10).
type MPTCPInfo struct {
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

// Subflow is one subflow of an MPTCP connection.
type Subflow struct {
	// ID is the kernel's subflow id when HaveIdentities is set, else the
	// subflow's position in the kernel's list plus one.
	ID uint32
	// Local and Remote are the subflow's addresses (zero without
	// HaveIdentities).
	Local, Remote netip.AddrPort
	// TCPInfo is the subflow's tcp_info; fields the kernel does not
	// have are zero.
	TCPInfo unix.TCPInfo
	// Flags are tcp_info's bit fields (app-limited, window scales).
	Flags TCPFlags
	// HaveIdentities is true when ID, Local and Remote come from the
	// kernel (MPTCP_FULL_INFO), false when only tcp_info was available
	// (MPTCP_TCPINFO, kernels before 6.5).
	HaveIdentities bool
}

// subflowInfo mirrors struct mptcp_subflow_info: id, pad, two
// sockaddr_storage (local, remote).
type subflowInfo struct {
	ID     uint32
	_      uint32
	Local  [128]byte
	Remote [128]byte
}

// fullInfo mirrors struct mptcp_full_info; the two arrays are user
// pointers. The kernel sets the *Kernel sizes to its own and lowers the
// *User sizes to min(ours, its), the stride it wrote the arrays at.
type fullInfo struct {
	SizeTCPInfoKernel uint32
	SizeTCPInfoUser   uint32
	SizeSfInfoKernel  uint32
	SizeSfInfoUser    uint32
	NumSubflows       uint32 // all the subflows, even those the arrays had no room for
	SizeArraysUser    uint32
	SubflowInfo       uint64
	TCPInfo           uint64
	Info              MPTCPInfo
}

const (
	sizeofInfo        = int(unsafe.Sizeof(MPTCPInfo{}))
	sizeofSubflowInfo = int(unsafe.Sizeof(subflowInfo{}))
	sizeofTCPInfo     = int(unsafe.Sizeof(unix.TCPInfo{}))
	// subflowDataLen is the size of struct mptcp_subflow_data, the
	// header of an MPTCP_TCPINFO answer: size_subflow_data,
	// num_subflows, size_kernel, size_user (u32 each).
	subflowDataLen = 16
)

// bytesOf is the memory of *p as a byte slice.
func bytesOf[T any](p *T) []byte {
	return unsafe.Slice((*byte)(unsafe.Pointer(p)), unsafe.Sizeof(*p))
}

// decodeInfo decodes a struct mptcp_info of any kernel's size: a shorter
// one leaves the later fields zero, a longer one's tail is ignored.
func decodeInfo(b []byte) MPTCPInfo {
	var mi MPTCPInfo
	copy(bytesOf(&mi), b)
	return mi
}

// decodeTCPInfo decodes a struct tcp_info of any kernel's size.
func decodeTCPInfo(b []byte) unix.TCPInfo {
	var ti unix.TCPInfo
	copy(bytesOf(&ti), b)
	return ti
}

// decodeSubflowData decodes an MPTCP_TCPINFO answer b (as long as the
// kernel said): the mptcp_subflow_data header, then one tcp_info per
// subflow at the stride size_user that the kernel reports. The subflows
// have no identities: ID is the position plus one.
func decodeSubflowData(b []byte) ([]Subflow, error) {
	if len(b) < subflowDataLen {
		return nil, fmt.Errorf("MPTCP_TCPINFO: short answer (%d bytes)", len(b))
	}
	num := int(binary.NativeEndian.Uint32(b[4:]))
	sizeUser := int(binary.NativeEndian.Uint32(b[12:]))
	if sizeUser == 0 {
		return nil, fmt.Errorf("MPTCP_TCPINFO: kernel reported size 0")
	}
	n := min((len(b)-subflowDataLen)/sizeUser, num)
	out := make([]Subflow, n)
	for i := range out {
		ti := b[subflowDataLen+i*sizeUser : subflowDataLen+(i+1)*sizeUser]
		out[i] = Subflow{ID: uint32(i + 1), TCPInfo: decodeTCPInfo(ti), Flags: decodeTCPFlags(ti)}
	}
	return out, nil
}

// subflows decodes the arrays that an MPTCP_FULL_INFO call with header
// fi filled: min(num_subflows, size_arrays_user) elements (no more than
// the buffers hold), at the strides the kernel reported in fi.
func (fi *fullInfo) subflows(sfBuf, tcBuf []byte) []Subflow {
	n := min(int(fi.NumSubflows), int(fi.SizeArraysUser))
	sfStride, tcStride := int(fi.SizeSfInfoUser), int(fi.SizeTCPInfoUser)
	if sfStride > 0 {
		n = min(n, len(sfBuf)/sfStride)
	}
	if tcStride > 0 {
		n = min(n, len(tcBuf)/tcStride)
	}
	out := make([]Subflow, max(n, 0))
	for i := range out {
		sf := &out[i]
		sf.ID = uint32(i + 1)
		if sfStride > 0 {
			var si subflowInfo
			copy(bytesOf(&si), sfBuf[i*sfStride:(i+1)*sfStride])
			sf.ID, sf.Local, sf.Remote = si.ID, sockaddr(si.Local), sockaddr(si.Remote)
			sf.HaveIdentities = true
		}
		if tcStride > 0 {
			ti := tcBuf[i*tcStride : (i+1)*tcStride]
			sf.TCPInfo, sf.Flags = decodeTCPInfo(ti), decodeTCPFlags(ti)
		}
	}
	return out
}

// sockaddr decodes a sockaddr_in or sockaddr_in6 held in a
// sockaddr_storage; other families give the zero AddrPort.
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

// sizeofSubflowAddrs is struct mptcp_subflow_addrs: two sockaddr_storage
// (local, remote).
const sizeofSubflowAddrs = 256

// decodeSubflowAddrs decodes an MPTCP_SUBFLOW_ADDRS answer b: the
// mptcp_subflow_data header, then one local/remote pair per subflow at
// the stride size_user, in the kernel's subflow order (as MPTCP_TCPINFO).
func decodeSubflowAddrs(b []byte) ([][2]netip.AddrPort, error) {
	if len(b) < subflowDataLen {
		return nil, fmt.Errorf("MPTCP_SUBFLOW_ADDRS: short answer (%d bytes)", len(b))
	}
	num := int(binary.NativeEndian.Uint32(b[4:]))
	sizeUser := int(binary.NativeEndian.Uint32(b[12:]))
	if sizeUser < sizeofSubflowAddrs {
		return nil, fmt.Errorf("MPTCP_SUBFLOW_ADDRS: kernel reported element size %d", sizeUser)
	}
	n := min((len(b)-subflowDataLen)/sizeUser, num)
	out := make([][2]netip.AddrPort, n)
	for i := range out {
		off := subflowDataLen + i*sizeUser
		out[i] = [2]netip.AddrPort{sockaddr([128]byte(b[off : off+128])), sockaddr([128]byte(b[off+128 : off+256]))}
	}
	return out, nil
}
