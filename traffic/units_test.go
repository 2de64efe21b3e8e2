package traffic

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/emuctl/emuctl/analysis"
	"github.com/emuctl/emuctl/internal/sockinfo"
	"github.com/emuctl/emuctl/topo"
	"golang.org/x/sys/unix"
)

// TestUDPStats: loss, duplicates, reordering and both jitter definitions
// on a hand-made arrival sequence, against analysis's definitions.
func TestUDPStats(t *testing.T) {
	u := newUDPStats(true, 1000)
	// seq, send ms, receive ms: 2 is lost, 4 arrives after 5, 3 twice
	arr := [][3]int64{{0, 0, 10}, {1, 10, 21}, {3, 30, 40}, {3, 30, 41}, {5, 50, 63}, {4, 40, 64}, {6, 60, 70}}
	var delays []float64
	for _, a := range arr {
		if !u.add(uint64(a[0]), a[1]*1e6, a[2]*1e6, 100) {
			t.Fatal("datagram refused")
		}
		delays = append(delays, float64(a[2]-a[1]))
	}
	if u.received != 7 || u.duplicates != 1 || u.outOfOrder != 1 || u.unique() != 6 || u.bytes != 700 {
		t.Errorf("received %d duplicates %d out of order %d unique %d bytes %d", u.received, u.duplicates, u.outOfOrder, u.unique(), u.bytes)
	}
	if got, want := u.jitterNs/1e6, analysis.JitterRFC3550(delays); math.Abs(got-want) > 1e-9 {
		t.Errorf("RFC 3550 jitter %g ms, analysis says %g", got, want)
	}
	if got, want := u.meanAbsDeltaNs()/1e6, analysis.JitterMeanAbsDelta(delays); math.Abs(got-want) > 1e-9 {
		t.Errorf("mean |Δ| %g ms, analysis says %g", got, want)
	}
	if u.owdMin != 10e6 || u.owdMax != 24e6 || len(u.packets) != 7 || u.packets[5].OWDUs != 24000 {
		t.Errorf("owd min %d max %d, %d records", u.owdMin, u.owdMax, len(u.packets))
	}
	if u.add(5000, 0, 1, 100) {
		t.Error("a sequence number far beyond the sender's was accepted")
	}
	// the header round-trips and rejects strangers
	b := make([]byte, 64)
	putUDPHeader(b, 7, 42, 123456789)
	if s, ts, ok := parseUDPHeader(b, 7); !ok || s != 42 || ts != 123456789 {
		t.Errorf("header: %d %d %v", s, ts, ok)
	}
	if _, _, ok := parseUDPHeader(b, 8); ok {
		t.Error("wrong token accepted")
	}
	if _, _, ok := parseUDPHeader(b[:20], 7); ok {
		t.Error("short datagram accepted")
	}
}

func TestSamplesMergeTail(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	ti := &unix.TCPInfo{Snd_cwnd: 10, Snd_mss: 1448, Rtt: 100, Snd_ssthresh: 0x7fffffff, Pacing_rate: ^uint64(0), Delivery_rate: 1000}
	raw := []rawSample{{at: at(100), rx: 1000, info: ti}, {at: at(200), rx: 3000, info: ti}, {at: at(210), rx: 3500, info: ti}}
	ss := samples(raw, t0, t0, 100*time.Millisecond)
	if len(ss) != 2 || ss[1].Bytes != 2500 || math.Abs(ss[1].TS-0.21) > 1e-9 || math.Abs(ss[1].GoodputBps-2500*8/0.11) > 1e-6 {
		t.Fatalf("samples %+v", ss)
	}
	if ss[0].TCP.SsthreshSegs != 0 || ss[0].TCP.PacingRateBps != 0 || ss[0].TCP.CwndBytes != 14480 || ss[0].TCP.DeliveryRateBps != 8000 {
		t.Errorf("tcp info %+v", ss[0].TCP)
	}
	iv := mergeTail([]analysis.Sample{{TS: 1.2, Bytes: 100}, {TS: 1.4, Bytes: 100}, {TS: 1.41, Bytes: 10}}, 1.0, 0.2)
	if len(iv) != 2 || iv[1].Bytes != 110 || iv[1].TS != 1.41 || math.Abs(iv[1].GoodputBps-110*8/0.21) > 1e-6 {
		t.Errorf("mergeTail %+v", iv)
	}
}

func TestMPTCPLevel(t *testing.T) {
	sf := []sockinfo.Subflow{
		{ID: 1, TCPInfo: unix.TCPInfo{Snd_cwnd: 10, Snd_mss: 1000, Rtt: 500, Total_retrans: 2, Bytes_acked: 100}},
		{ID: 2, TCPInfo: unix.TCPInfo{Snd_cwnd: 20, Snd_mss: 1000, Rtt: 200, Total_retrans: 1, Ca_state: 3, Bytes_acked: 50}},
	}
	got := mptcpLevel(&sockinfo.MPTCPInfo{BytesSent: 160, BytesAcked: 150}, sf)
	if got.CwndSegs != 30 || got.CwndBytes != 30000 || got.SrttUs != 200 || got.Retrans != 3 || got.CAState != 3 || got.BytesAcked != 150 {
		t.Errorf("%+v", got)
	}
}

func TestPath(t *testing.T) {
	s, err := topo.Load("p.yaml", []byte(`
nodes: {h1: {}, h2: {}, h3: {}, s1: {kind: switch}, r1: {kind: router}}
links:
  - endpoints: [h1, s1]
  - endpoints: [h3, s1]
  - endpoints: [s1, r1]
  - endpoints: [r1, h2]
`))
	if err != nil {
		t.Fatal(err)
	}
	hops, nodes, ok := path(s, "h2", "h1")
	if !ok || strings.Join(nodes, ",") != "h2,r1,s1,h1" || len(hops) != 3 || hops[0].aToB || hops[2].link != 0 || hops[2].aToB {
		t.Errorf("path h2 -> h1: %v %v %v", hops, nodes, ok)
	}
	if hopName(s, hops[0]) != "h2:h2-eth0->r1:r1-eth1" {
		t.Errorf("hop name %s", hopName(s, hops[0]))
	}
	if _, _, ok := path(s, "h1", "nowhere"); ok {
		t.Error("path to an unknown node")
	}
}

func TestParseCounters(t *testing.T) {
	out := map[string]int64{}
	parseCounterFile("testdata/netstat", out)
	if out["TcpExtTCPTimeouts"] != 7 || out["MPTcpExtMPJoinSynAckRx"] != 1 || out["TcpRetransSegs"] != 12 || out["IpForwarding"] != 1 {
		t.Errorf("%v", out)
	}
	d := counterDelta(map[string]int64{"a": 1, "b": 5}, map[string]int64{"a": 1, "b": 7, "c": 2})
	if len(d) != 2 || d["b"] != 2 || d["c"] != 2 {
		t.Errorf("delta %v", d)
	}
}

func TestFlowCheck(t *testing.T) {
	ok := Flow{Client: "a", Server: "b"}.withDefaults(0)
	if p := ok.check(); len(p) != 0 || ok.Name != "f1" || ok.Duration != DefaultDuration || ok.Parallel != 1 {
		t.Errorf("%v %+v", p, ok)
	}
	u := Flow{Client: "a", Server: "b", Proto: UDP}.withDefaults(2)
	if u.Rate != DefaultUDPRate || u.Size != DefaultUDPSize || u.Name != "f3" {
		t.Errorf("udp defaults %+v", u)
	}
	bad := Flow{Client: "a", Server: "b", Proto: TCP, Size: 160, Parallel: 999, Port: 70000, Probe: "tcp", Interval: time.Hour}.withDefaults(0)
	if p := bad.check(); len(p) != 5 {
		t.Errorf("want 5 problems, got %d: %v", len(p), p)
	}
	// A paced TCP application: the native engine writes no faster than
	// the rate; iperf3 is not asked to.
	paced := Flow{Client: "a", Server: "b", Proto: MPTCP, Rate: 2_000_000}.withDefaults(0)
	if p := paced.check(); len(p) != 0 {
		t.Errorf("paced MPTCP flow: %v", p)
	}
	paced.Proto, paced.Engine = TCP, EngineIperf3
	if p := paced.check(); len(p) != 1 || !strings.Contains(p[0], "native engine") {
		t.Errorf("paced TCP on iperf3: %v", p)
	}
}
