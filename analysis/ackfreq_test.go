package analysis

import (
	"bytes"
	"net/netip"
	"testing"

	"github.com/emuctl/emuctl/capture/packet"
	"github.com/emuctl/emuctl/capture/pcapng"
	"github.com/emuctl/emuctl/capture/synth"
)

func TestACKFrequencySynthetic(t *testing.T) {
	for _, l := range []int{1, 2, 3} {
		var buf bytes.Buffer
		want, err := synth.Bulk{Conns: 3, DataPackets: 1001, L: l, IntervalNs: 1e6}.Write(&buf)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := ACKFrequency(&buf)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Packets != want.Packets || rep.TCPPackets != want.Packets || len(rep.Conns) != 3 {
			t.Fatalf("L=%d: %+v", l, rep)
		}
		for _, c := range rep.Conns {
			if c.DataPackets != want.DataPackets || c.PureACKs != want.PureACKs || c.DataSegments != want.DataPackets ||
				c.MSS != 1448 || c.Receiver != "10.0.0.2:5201" || c.DataBytes != 1448*want.DataPackets {
				t.Fatalf("L=%d: %+v, want %+v", l, c, want)
			}
			if !near(c.ACKsPerData, float64(want.PureACKs)/float64(want.DataPackets), 1e-12) {
				t.Fatalf("L=%d: ACKs/data %g", l, c.ACKsPerData)
			}
			// 1000 ms between first and last data packet → ≈ 1000/L ACKs/s.
			if !near(c.ACKRateHz, float64(want.PureACKs)/c.DurationS, 1e-9) || c.DurationS < 1.0 || c.DurationS > 1.01 {
				t.Fatalf("L=%d: rate %g over %g s", l, c.ACKRateHz, c.DurationS)
			}
		}
	}
}

// TestACKFrequencyGSO: a capture of GSO super-packets counts MSS-sized
// segments from the SYN's MSS; FIN/RST and window-less cases are not pure
// ACKs.
func TestACKFrequencyGSO(t *testing.T) {
	a, b := netip.MustParseAddrPort("10.0.0.1:1000"), netip.MustParseAddrPort("10.0.0.2:80")
	frames := [][]byte{
		packet.TCPFrame(a, b, packet.FlagSYN, 0, 0, packet.SYNOptions(1460), 0),
		packet.TCPFrame(b, a, packet.FlagSYN|packet.FlagACK, 0, 1, packet.SYNOptions(1460), 0),
		packet.TCPFrame(a, b, packet.FlagACK, 1, 1, packet.TimestampOption, 0),      // sender's ACK: not counted
		packet.TCPFrame(a, b, packet.FlagACK, 1, 1, packet.TimestampOption, 4*1448), // 4 segments
		packet.TCPFrame(b, a, packet.FlagACK, 1, 1, packet.TimestampOption, 0),      // pure ACK
		packet.TCPFrame(a, b, packet.FlagACK, 1, 1, packet.TimestampOption, 1000),   // 1 segment
		packet.TCPFrame(b, a, packet.FlagACK, 1, 1, packet.TimestampOption, 0),      // pure ACK
		packet.TCPFrame(b, a, packet.FlagACK, 1, 1, packet.TimestampOption, 50),     // receiver data
		packet.TCPFrame(b, a, packet.FlagACK|packet.FlagFIN, 1, 1, nil, 0),          // FIN: not pure
		packet.TCPFrame(b, a, packet.FlagRST, 1, 1, nil, 0),                         // RST: not pure
	}
	var buf bytes.Buffer
	w, _ := pcapng.NewWriter(&buf, "")
	w.AddInterface(pcapng.Interface{LinkType: 1})
	for i, f := range frames {
		w.WritePacket(0, int64(i)*1e8, f, len(f), 0)
	}
	w.Flush()
	rep, err := ACKFrequency(&buf)
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Conns[0]
	if c.Sender != "10.0.0.1:1000" || c.DataPackets != 2 || c.DataSegments != 5 || c.PureACKs != 2 || c.ReceiverDataPackets != 1 || c.MSS != 1448 {
		t.Fatalf("%+v", c)
	}
	if !near(c.ACKsPerSegment, 0.4, 1e-12) || !near(c.DurationS, 0.9, 1e-9) {
		t.Fatalf("%+v", c)
	}
}

// BenchmarkACKFrequency measures the whole pipeline (pcapng read, decode,
// per-connection accounting) on a 1.2 M-packet in-memory capture taken
// with a 128-byte snap length (as long runs should be). The bar is
// ≥ 1 M packets/s; scripts/ackbench measures a file on disk against tshark.
func BenchmarkACKFrequency(b *testing.B) {
	var buf bytes.Buffer
	want, err := synth.Bulk{Conns: 4, DataPackets: 200000, L: 2, Snaplen: 128}.Write(&buf)
	if err != nil {
		b.Fatal(err)
	}
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		rep, err := ACKFrequency(bytes.NewReader(data))
		if err != nil || rep.Packets != want.Packets {
			b.Fatalf("%v %d", err, rep.Packets)
		}
	}
	b.ReportMetric(float64(want.Packets)*float64(b.N)/b.Elapsed().Seconds()/1e6, "Mpkt/s")
}
