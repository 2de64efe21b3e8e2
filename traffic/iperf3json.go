package traffic

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/emuctl/emuctl/analysis"
)

// iperfDoc is the part of iperf3's JSON (3.x) that is converted.
type iperfDoc struct {
	Start struct {
		Connected []struct {
			LocalHost  string `json:"local_host"`
			LocalPort  int    `json:"local_port"`
			RemoteHost string `json:"remote_host"`
			RemotePort int    `json:"remote_port"`
		} `json:"connected"`
		Version       string `json:"version"`
		TCPMssDefault uint32 `json:"tcp_mss_default"`
		TCPMss        uint32 `json:"tcp_mss"`
	} `json:"start"`
	Intervals []struct {
		Streams []iperfInterval `json:"streams"`
	} `json:"intervals"`
	End struct {
		Streams []struct {
			Sender   iperfEnd `json:"sender"`
			Receiver iperfEnd `json:"receiver"`
			UDP      iperfEnd `json:"udp"`
		} `json:"streams"`
		SumSent               iperfEnd `json:"sum_sent"`
		SenderTCPCongestion   string   `json:"sender_tcp_congestion"`
		ReceiverTCPCongestion string   `json:"receiver_tcp_congestion"`
	} `json:"end"`
	Server *iperfDoc `json:"server_output_json"`
	Error  string    `json:"error"`
}

type iperfInterval struct {
	Start, End    float64
	Seconds       float64 `json:"seconds"`
	Bytes         int64   `json:"bytes"`
	BitsPerSecond float64 `json:"bits_per_second"`
	Retransmits   uint32  `json:"retransmits"`
	SndCwnd       uint64  `json:"snd_cwnd"`
	RTT           uint32  `json:"rtt"`
	RTTVar        uint32  `json:"rttvar"`
	Packets       int64   `json:"packets"`
	LostPackets   int64   `json:"lost_packets"`
	JitterMs      float64 `json:"jitter_ms"`
	Sender        bool    `json:"sender"`
	Omitted       bool    `json:"omitted"`
}

type iperfEnd struct {
	Seconds       float64 `json:"seconds"`
	End           float64 `json:"end"`
	Bytes         int64   `json:"bytes"`
	BitsPerSecond float64 `json:"bits_per_second"`
	Retransmits   uint32  `json:"retransmits"`
	MinRTT        uint32  `json:"min_rtt"`
	Packets       int64   `json:"packets"`
	LostPackets   int64   `json:"lost_packets"`
	OutOfOrder    int64   `json:"out_of_order"`
	JitterMs      float64 `json:"jitter_ms"`
	Sender        bool    `json:"sender"`
}

func parseIperf3(b []byte) (*iperfDoc, error) {
	if len(b) == 0 {
		return nil, errors.New("no output")
	}
	var d iperfDoc
	if err := json.Unmarshal(b, &d); err != nil {
		return nil, fmt.Errorf("not iperf3 JSON: %w", err)
	}
	return &d, nil
}

// convertIperf3 turns the client's document (with the server's inside,
// from --get-server-output) into one analysis.Flow per stream. Bytes per
// interval come from the receiving side, TCP numbers from the sending
// side (iperf3 reports cwnd, RTT and retransmissions there only). iperf3's
// clock starts when the test starts, after connection set-up; the test's
// start is placed at the client's exit minus the test length.
func convertIperf3(d *iperfDoc, f Flow, t0, started, exited time.Time) ([]analysis.Flow, error) {
	snd, rcv := d, d.Server
	if f.Reverse {
		snd, rcv = d.Server, d
	}
	if rcv == nil || len(rcv.Intervals) == 0 {
		rcv = nil
	}
	if snd == nil || len(snd.Intervals) == 0 {
		if rcv == nil {
			return nil, errors.New("iperf3 reported no intervals")
		}
		snd = nil
	}
	base := rcv
	if base == nil {
		base = snd
	}
	last := base.Intervals[len(base.Intervals)-1]
	testLen := 0.0
	if len(last.Streams) > 0 {
		testLen = last.Streams[0].End
	}
	testStart := exited.Add(-time.Duration(testLen * float64(time.Second)))
	if testStart.Before(started) {
		testStart = started
	}
	mss := d.Start.TCPMss
	if mss == 0 {
		mss = d.Start.TCPMssDefault
	}
	n := len(d.Start.Connected)
	if n == 0 {
		n = f.Parallel
	}
	var out []analysis.Flow
	for i := 0; i < n; i++ {
		id, group := streamID(f, i)
		fl := analysis.Flow{ID: id, Group: group, Proto: f.Proto, From: f.dataFrom(), To: f.dataTo(),
			StartS: testStart.Sub(t0).Seconds()}
		if i < len(d.Start.Connected) {
			c := d.Start.Connected[i]
			cl := fmt.Sprintf("%s:%d", c.LocalHost, c.LocalPort)
			sv := fmt.Sprintf("%s:%d", c.RemoteHost, c.RemotePort)
			fl.Src, fl.Dst = cl, sv
			if f.Reverse {
				fl.Src, fl.Dst = sv, cl
			}
		}
		if f.Proto != UDP {
			fl.CC = d.End.SenderTCPCongestion // the data sender's, also with -R
		}
		var retrans uint32
		ivs := base.Intervals
		for k := range ivs {
			if i >= len(ivs[k].Streams) {
				break
			}
			r := ivs[k].Streams[i]
			s := analysis.Sample{TS: testStart.Add(time.Duration(r.End * float64(time.Second))).Sub(t0).Seconds(),
				Bytes: r.Bytes, GoodputBps: r.BitsPerSecond}
			if f.Proto == UDP && rcv != nil {
				s.Packets = r.Packets - r.LostPackets
			}
			if snd != nil && f.Proto != UDP && k < len(snd.Intervals) && i < len(snd.Intervals[k].Streams) {
				si := snd.Intervals[k].Streams[i]
				retrans += si.Retransmits
				ti := analysis.TCPInfo{CwndBytes: si.SndCwnd, SrttUs: si.RTT, RttvarUs: si.RTTVar, Retrans: retrans, MSS: mss}
				if mss > 0 {
					ti.CwndSegs = uint32(si.SndCwnd / uint64(mss))
				}
				s.TCP = &ti
			}
			fl.Samples = append(fl.Samples, s)
			fl.EndS = s.TS
		}
		fl.Samples = mergeTail(fl.Samples, fl.StartS, f.Interval.Seconds())
		if i < len(d.End.Streams) {
			e := d.End.Streams[i]
			fl.BytesSent, fl.BytesReceived = e.Sender.Bytes, e.Receiver.Bytes
			if f.Proto == UDP {
				fl.UDP = iperfUDP(d, f, i)
				fl.BytesSent = fl.UDP.Sent * int64(f.Size)
				fl.BytesReceived = fl.UDP.Received * int64(f.Size)
			}
		}
		out = append(out, fl)
	}
	return out, nil
}

// iperfUDP takes sent from the sender's end summary and received, loss,
// reordering and jitter from the receiver's (iperf3's receiver "packets"
// is the highest sequence seen; received = packets − lost).
func iperfUDP(d *iperfDoc, f Flow, i int) *analysis.UDPFlow {
	snd, rcv := d, d.Server
	if f.Reverse {
		snd, rcv = d.Server, d
	}
	u := &analysis.UDPFlow{PayloadBytes: f.Size}
	if snd != nil && i < len(snd.End.Streams) {
		u.Sent = snd.End.Streams[i].UDP.Packets
	}
	if rcv != nil && i < len(rcv.End.Streams) {
		r := rcv.End.Streams[i].UDP
		u.Received = r.Packets - r.LostPackets
		u.OutOfOrder = r.OutOfOrder
		u.JitterRFC3550Us = r.JitterMs * 1e3
	}
	if u.Sent == 0 && d.End.SumSent.Packets > 0 && f.Parallel == 1 {
		u.Sent = d.End.SumSent.Packets
	}
	return u
}

// mergeTail folds a last sample shorter than half an interval (iperf3's
// receiver reports the drain after the sender stopped as one more tiny
// interval) into the one before, so no goodput has a tiny divisor.
func mergeTail(ss []analysis.Sample, startS, interval float64) []analysis.Sample {
	n := len(ss)
	if n < 2 || ss[n-1].TS-ss[n-2].TS >= interval/2 {
		return ss
	}
	m := ss[n-2]
	m.TS, m.Bytes, m.Packets = ss[n-1].TS, m.Bytes+ss[n-1].Bytes, m.Packets+ss[n-1].Packets
	from := startS
	if n >= 3 {
		from = ss[n-3].TS
	}
	if m.TS > from {
		m.GoodputBps = float64(m.Bytes) * 8 / (m.TS - from)
	}
	return append(ss[:n-2], m)
}
