package pcapng

import "errors"

// Block types and option codes used here (pcapng §4).
const (
	blockSHB = 0x0A0D0D0A // section header
	blockIDB = 0x00000001 // interface description
	blockPB  = 0x00000002 // obsolete packet block
	blockSPB = 0x00000003 // simple packet
	blockEPB = 0x00000006 // enhanced packet

	byteOrderMagic = 0x1A2B3C4D

	optEnd       = 0
	optComment   = 1
	shbUserAppl  = 4
	ifName       = 2
	ifDescr      = 3
	ifTsresol    = 9
	ifTsoffset   = 14
	epbFlags     = 2
	maxBlockSize = 64 << 20 // refuse absurd blocks from corrupt files
)

// Link types (LINKTYPE_* values from tcpdump.org).
const (
	LinkTypeNull     = 0
	LinkTypeEthernet = 1
	LinkTypeRaw      = 101 // raw IPv4/IPv6
	LinkTypeLinuxSLL = 113
	LinkTypeIPv4     = 228
	LinkTypeIPv6     = 229
	LinkTypeSLL2     = 276
	// LinkTypeRadiotap is 802.11 frames behind a radiotap header
	// (LINKTYPE_IEEE802_11_RADIOTAP): a monitor-mode Wi-Fi capture.
	LinkTypeRadiotap = 127
)

// Direction flags of an enhanced packet block (epb_flags bits 0-1).
const (
	FlagInbound  uint32 = 1
	FlagOutbound uint32 = 2
)

// ErrFormat marks input that is neither pcapng nor pcap, or is corrupt.
var ErrFormat = errors.New("not a valid pcapng or pcap file")

// Interface describes one capture interface (an IDB).
type Interface struct {
	// LinkType is the LINKTYPE_* of the packets (1 = Ethernet).
	LinkType uint16
	// SnapLen is the maximum bytes captured per packet (0 = unlimited).
	SnapLen uint32
	// Name is the interface name, e.g. "h1-eth0" (optional).
	Name string
	// Description is a longer, human-readable description of the
	// interface (if_description, optional).
	Description string
	// unitsPerSec is the timestamp resolution (default 10^6).
	unitsPerSec uint64
	// offsetS is if_tsoffset in seconds.
	offsetS int64
}

// CaptureInfo describes one packet.
type CaptureInfo struct {
	// TimestampNs is the capture time in Unix nanoseconds.
	TimestampNs int64
	// CaptureLength is len(data); Length the packet's length on the wire.
	CaptureLength int
	Length        int
	// Interface indexes Reader.Interfaces().
	Interface int
	// Flags are the epb_flags (direction in bits 0-1), 0 when absent.
	Flags uint32
}
