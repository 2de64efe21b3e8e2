package packet

import (
	"encoding/binary"
	"net/netip"
)

// TCPFrame builds an Ethernet/IPv4/TCP frame from src to dst (IPv4 only)
// with the given flags, sequence numbers, TCP options (padded to 4 bytes)
// and payloadLen zero bytes of payload. Checksums are left 0. It exists
// for tests, benchmarks and synthetic captures.
func TCPFrame(src, dst netip.AddrPort, flags uint8, seq, ack uint32, opts []byte, payloadLen int) []byte {
	optLen := (len(opts) + 3) &^ 3
	tcpLen := 20 + optLen
	ipLen := 20 + tcpLen + payloadLen
	b := make([]byte, 14+ipLen)
	copy(b[0:6], []byte{2, 0, 0, 0, 0, 2})
	copy(b[6:12], []byte{2, 0, 0, 0, 0, 1})
	binary.BigEndian.PutUint16(b[12:], 0x0800)
	ip := b[14:]
	ip[0] = 0x45
	binary.BigEndian.PutUint16(ip[2:], uint16(ipLen))
	ip[6] = 0x40 // DF
	ip[8] = 64
	ip[9] = ProtoTCP
	s4, d4 := src.Addr().As4(), dst.Addr().As4()
	copy(ip[12:16], s4[:])
	copy(ip[16:20], d4[:])
	t := ip[20:]
	binary.BigEndian.PutUint16(t, src.Port())
	binary.BigEndian.PutUint16(t[2:], dst.Port())
	binary.BigEndian.PutUint32(t[4:], seq)
	binary.BigEndian.PutUint32(t[8:], ack)
	t[12] = byte(tcpLen/4) << 4
	t[13] = flags
	binary.BigEndian.PutUint16(t[14:], 65535)
	copy(t[20:], opts)
	for i := len(opts); i < optLen; i++ {
		t[20+i] = 1 // NOP padding
	}
	return b
}

// SYNOptions are the options of a Linux SYN: MSS, SACK permitted,
// timestamps, window scale.
func SYNOptions(mss uint16) []byte {
	return []byte{2, 4, byte(mss >> 8), byte(mss), 4, 2, 8, 10, 0, 0, 0, 1, 0, 0, 0, 0, 1, 3, 3, 7}
}

// TimestampOption is the 12-byte NOP, NOP, timestamp option block that
// Linux puts on every segment once timestamps are negotiated.
var TimestampOption = []byte{1, 1, 8, 10, 0, 0, 0, 2, 0, 0, 0, 1}
