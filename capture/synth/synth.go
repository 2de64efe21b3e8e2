// Package synth writes synthetic pcapng captures of bulk TCP transfers
// whose ACK counts are known exactly. Tests and the ACK-frequency
// benchmark use it; it needs no network.
package synth

import (
	"encoding/binary"
	"fmt"
	"io"
	"net/netip"

	"github.com/emuctl/emuctl/capture/packet"
	"github.com/emuctl/emuctl/capture/pcapng"
)

// Bulk describes the synthetic capture.
type Bulk struct {
	// Conns is the number of concurrent connections (default 1).
	Conns int
	// DataPackets is the number of full-sized data packets per
	// connection.
	DataPackets int
	// L is the receiver's ACK ratio: one pure ACK every L data packets
	// (default 2, Linux's delayed ACK).
	L int
	// MSS is the payload per data packet (default 1448).
	MSS int
	// IntervalNs is the time between data packets (default 240 µs ≈
	// 48 Mbit/s of 1448-byte payloads).
	IntervalNs int64
	// StartNs is the time of the first packet (Unix ns).
	StartNs int64
	// Snaplen truncates the stored packets as a capture with that snap
	// length would (0 = whole packets).
	Snaplen int
}

// Counts are the exact numbers a correct analysis must find per
// connection.
type Counts struct {
	Packets     int64 // all packets written
	DataPackets int64 // per connection
	PureACKs    int64 // receiver's, per connection
}

// Write writes the capture: per connection a handshake (SYN, SYN-ACK,
// ACK), DataPackets data packets from client to server interleaved across
// connections, a pure ACK after every L-th data packet, and a final ACK
// if the count is not a multiple of L.
func (b Bulk) Write(w io.Writer) (Counts, error) {
	if b.Conns <= 0 {
		b.Conns = 1
	}
	if b.L <= 0 {
		b.L = 2
	}
	if b.MSS <= 0 {
		b.MSS = 1448
	}
	if b.IntervalNs <= 0 {
		b.IntervalNs = 240_000
	}
	pw, err := pcapng.NewWriter(w, "emuctl synth")
	if err != nil {
		return Counts{}, err
	}
	snap := uint32(65535)
	if b.Snaplen > 0 {
		snap = uint32(b.Snaplen)
	}
	if _, err := pw.AddInterface(pcapng.Interface{LinkType: pcapng.LinkTypeEthernet, SnapLen: snap, Name: "synth0"}); err != nil {
		return Counts{}, err
	}
	var c Counts
	ts := b.StartNs
	emit := func(frame []byte) error {
		c.Packets++
		ts += 1000
		data := frame
		if b.Snaplen > 0 && len(data) > b.Snaplen {
			data = data[:b.Snaplen]
		}
		return pw.WritePacket(0, ts, data, len(frame), 0)
	}
	cli := make([]netip.AddrPort, b.Conns)
	srv := make([]netip.AddrPort, b.Conns)
	for i := range cli {
		cli[i] = netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 0, 1}), uint16(40000+i))
		srv[i] = netip.AddrPortFrom(netip.AddrFrom4([4]byte{10, 0, 0, 2}), 5201)
		syn := packet.SYNOptions(uint16(b.MSS + 12))
		for _, f := range [][]byte{
			packet.TCPFrame(cli[i], srv[i], packet.FlagSYN, 0, 0, syn, 0),
			packet.TCPFrame(srv[i], cli[i], packet.FlagSYN|packet.FlagACK, 0, 1, syn, 0),
			packet.TCPFrame(cli[i], srv[i], packet.FlagACK, 1, 1, packet.TimestampOption, 0),
		} {
			if err := emit(f); err != nil {
				return c, err
			}
		}
	}
	// One template per connection; only sequence numbers change.
	data := make([][]byte, b.Conns)
	ack := make([][]byte, b.Conns)
	for i := range data {
		data[i] = packet.TCPFrame(cli[i], srv[i], packet.FlagACK|packet.FlagPSH, 1, 1, packet.TimestampOption, b.MSS)
		ack[i] = packet.TCPFrame(srv[i], cli[i], packet.FlagACK, 1, 1, packet.TimestampOption, 0)
	}
	for n := 1; n <= b.DataPackets; n++ {
		ts += b.IntervalNs
		for i := range data {
			// Real sequence and acknowledgment numbers, so tools that
			// track TCP streams (tshark) see a clean transfer.
			binary.BigEndian.PutUint32(data[i][38:], uint32(1+(n-1)*b.MSS))
			if err := emit(data[i]); err != nil {
				return c, err
			}
			if n%b.L == 0 || n == b.DataPackets {
				binary.BigEndian.PutUint32(ack[i][42:], uint32(1+n*b.MSS))
				if err := emit(ack[i]); err != nil {
					return c, err
				}
			}
		}
	}
	c.DataPackets = int64(b.DataPackets)
	c.PureACKs = int64((b.DataPackets + b.L - 1) / b.L)
	if err := pw.Flush(); err != nil {
		return c, fmt.Errorf("synth: %w", err)
	}
	return c, nil
}
