package analysis

import (
	"errors"
	"io"
	"net/netip"
	"os"
	"sort"

	"github.com/emuctl/emuctl/capture/packet"
	"github.com/emuctl/emuctl/capture/pcapng"
)

// ACKConn is the ACK accounting of one TCP connection in a capture. The
// data sender is the endpoint that sent more payload bytes; the receiver
// is the other one.
type ACKConn struct {
	// Sender and Receiver are "ip:port".
	Sender   string `json:"sender"`
	Receiver string `json:"receiver"`
	// DataPackets are the sender's packets carrying payload; DataBytes
	// their payload bytes (retransmissions included).
	DataPackets int64 `json:"data_packets"`
	DataBytes   int64 `json:"data_bytes"`
	// DataSegments estimates MSS-sized segments, Σ⌈payload/MSS⌉, which
	// differs from DataPackets when the capture saw GSO/GRO super-packets.
	// MSS is the payload per full segment from the SYN options (0 when
	// the handshake was not captured; segments then equal packets).
	DataSegments int64 `json:"data_segments"`
	MSS          int   `json:"mss,omitempty"`
	// PureACKs are the receiver's packets with ACK set, no payload and no
	// SYN/FIN/RST (window updates and duplicate ACKs included).
	PureACKs int64 `json:"pure_acks"`
	// ReceiverDataPackets are the receiver's packets carrying payload
	// (their piggybacked ACKs are not counted as pure ACKs).
	ReceiverDataPackets int64 `json:"receiver_data_packets,omitempty"`
	// FirstS and LastS bound the connection's packets, seconds since the
	// first packet of the capture; DurationS = LastS − FirstS.
	FirstS    float64 `json:"first_s"`
	LastS     float64 `json:"last_s"`
	DurationS float64 `json:"duration_s"`
	// ACKRateHz = PureACKs / DurationS; ACKsPerData = PureACKs /
	// DataPackets; ACKsPerSegment = PureACKs / DataSegments;
	// DataRateBps = DataBytes × 8 / DurationS (retransmissions included).
	ACKRateHz      float64 `json:"ack_rate_hz"`
	ACKsPerData    float64 `json:"acks_per_data"`
	ACKsPerSegment float64 `json:"acks_per_segment"`
	DataRateBps    float64 `json:"data_rate_bps"`
}

// ACKReport is the ACK accounting of a whole capture.
type ACKReport struct {
	// Packets is every packet read; TCPPackets those decoded as TCP.
	Packets    int64 `json:"packets"`
	TCPPackets int64 `json:"tcp_packets"`
	// DurationS spans the first to the last packet of the capture.
	DurationS float64 `json:"duration_s"`
	// Conns are the TCP connections that carried data, most bytes first.
	Conns []ACKConn `json:"conns"`
}

// connKey identifies a connection independent of direction: A < B.
type connKey struct{ a, b netip.AddrPort }

type dirStats struct {
	dataPkts, dataBytes, segs, pureACKs int64
	synMSS                              uint16 // MSS this side advertised
	synTS                               bool   // this side's SYN carried timestamps
	sawSYN                              bool
}

type connState struct {
	d           [2]dirStats // 0: a→b, 1: b→a
	first, last int64
}

// effMSS is the payload per full segment sent in direction dir: the MSS
// the other side advertised, less 12 bytes when both SYNs carried
// timestamps.
func (c *connState) effMSS(dir int) int {
	o := &c.d[1-dir]
	if !o.sawSYN || o.synMSS == 0 {
		return 0
	}
	m := int(o.synMSS)
	if c.d[dir].sawSYN && c.d[dir].synTS && o.synTS {
		m -= 12
	}
	return m
}

// ACKFrequencyFile runs ACKFrequency on a pcapng or pcap file.
func ACKFrequencyFile(path string) (*ACKReport, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ACKFrequency(f)
}

// ACKFrequency reads a pcapng or pcap capture and counts, per TCP
// connection, the receiver's pure ACKs against the sender's data packets.
func ACKFrequency(r io.Reader) (*ACKReport, error) {
	pr, err := pcapng.NewReader(r)
	if err != nil {
		return nil, err
	}
	rep := &ACKReport{}
	conns := map[connKey]*connState{}
	var lastKey connKey
	var last *connState
	var first, end int64
	var in packet.Info
	for {
		data, ci, err := pr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if rep.Packets == 0 {
			first = ci.TimestampNs
		}
		end = ci.TimestampNs
		rep.Packets++
		if !packet.Decode(pr.LinkType(ci.Interface), data, ci.Length, &in) || in.Proto != packet.ProtoTCP || !in.Transport {
			continue
		}
		rep.TCPPackets++
		src, dst := netip.AddrPortFrom(in.Src, in.SrcPort), netip.AddrPortFrom(in.Dst, in.DstPort)
		k, dir := connKey{src, dst}, 0
		if dst.Compare(src) < 0 {
			k, dir = connKey{dst, src}, 1
		}
		c := last
		if c == nil || k != lastKey {
			c = conns[k]
			if c == nil {
				c = &connState{first: ci.TimestampNs}
				conns[k] = c
			}
			lastKey, last = k, c
		}
		c.last = ci.TimestampNs
		ds := &c.d[dir]
		switch {
		case in.Flags&packet.FlagSYN != 0:
			ds.sawSYN = true
			ds.synMSS, _ = packet.TCPOptionMSS(in.Options)
			ds.synTS = packet.TCPOptionTimestamps(in.Options)
		case in.Payload > 0:
			ds.dataPkts++
			ds.dataBytes += int64(in.Payload)
			if m := c.effMSS(dir); m > 0 {
				ds.segs += int64((in.Payload + m - 1) / m)
			} else {
				ds.segs++
			}
		case in.Flags&(packet.FlagACK|packet.FlagFIN|packet.FlagRST) == packet.FlagACK:
			ds.pureACKs++
		}
	}
	if rep.Packets > 0 {
		rep.DurationS = float64(end-first) / 1e9
	}
	for k, c := range conns {
		s := 0 // data sender direction
		if c.d[1].dataBytes > c.d[0].dataBytes {
			s = 1
		}
		if c.d[s].dataPkts == 0 {
			continue
		}
		ends := [2]netip.AddrPort{k.a, k.b}
		ac := ACKConn{
			Sender: ends[s].String(), Receiver: ends[1-s].String(),
			DataPackets: c.d[s].dataPkts, DataBytes: c.d[s].dataBytes, DataSegments: c.d[s].segs,
			MSS:      c.effMSS(s),
			PureACKs: c.d[1-s].pureACKs, ReceiverDataPackets: c.d[1-s].dataPkts,
			FirstS: float64(c.first-first) / 1e9, LastS: float64(c.last-first) / 1e9,
		}
		ac.finish()
		rep.Conns = append(rep.Conns, ac)
	}
	sort.Slice(rep.Conns, func(i, j int) bool {
		a, b := rep.Conns[i], rep.Conns[j]
		if a.DataBytes != b.DataBytes {
			return a.DataBytes > b.DataBytes
		}
		return a.Sender+a.Receiver < b.Sender+b.Receiver
	})
	return rep, nil
}

func (ac *ACKConn) finish() {
	ac.DurationS = ac.LastS - ac.FirstS
	if ac.DurationS > 0 {
		ac.ACKRateHz = float64(ac.PureACKs) / ac.DurationS
		ac.DataRateBps = float64(ac.DataBytes) * 8 / ac.DurationS
	}
	if ac.DataPackets > 0 {
		ac.ACKsPerData = float64(ac.PureACKs) / float64(ac.DataPackets)
	}
	if ac.DataSegments > 0 {
		ac.ACKsPerSegment = float64(ac.PureACKs) / float64(ac.DataSegments)
	}
}
