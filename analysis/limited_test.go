package analysis

import (
	"math"
	"strings"
	"testing"
)

// iv is one synthetic sampling interval of a socket: how many µs of it
// the kernel counted busy, receive-window- and send-buffer-limited;
// whether the socket was short of data at its end (cwnd not full,
// nothing unsent) or marked app-limited; the µs the writer waited in
// its writes; and the send buffer at its end.
type iv struct {
	busy, rwnd, sndbuf uint64
	short, app         bool
	wait               uint64
	buf                *SendBuffer
}

const ivUs = 100_000 // 100 ms intervals

// info is the socket's tcp_info at the end of interval x, with cum's
// cumulative times: cwnd 10 segments, full unless x is short.
func info(cum TCPInfo, x iv) TCPInfo {
	cum.MSS, cum.CwndSegs, cum.InFlightSegs, cum.NotsentBytes = 1448, 10, 10, 20000
	if x.short {
		cum.InFlightSegs, cum.NotsentBytes = 4, 0
	}
	cum.AppLimited = x.app
	return cum
}

// tcpFlow builds a TCP flow from intervals, starting at t = 0 with the
// kernel's counters at zero.
func tcpFlow(ivs ...iv) *Flow {
	f := &Flow{ID: "f", Proto: "tcp", StartS: 0, EndS: float64(len(ivs)) * ivUs / 1e6}
	var cum TCPInfo
	var wait uint64
	for i, x := range ivs {
		cum.BusyUs += x.busy
		cum.RwndLimitedUs += x.rwnd
		cum.SndbufLimitedUs += x.sndbuf
		wait += x.wait
		ti := info(cum, x)
		f.Samples = append(f.Samples, Sample{TS: float64(i+1) * ivUs / 1e6, TCP: &ti, SendBuffer: x.buf, WriteWaitUs: wait})
	}
	return f
}

func repeat(n int, x iv) []iv {
	out := make([]iv, n)
	for i := range out {
		out[i] = x
	}
	return out
}

func limNear(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func checkLimits(t *testing.T, name string, got Limits, net, rwnd, sndbuf, app, busy float64) {
	t.Helper()
	if !limNear(got.Network, net) || !limNear(got.Rwnd, rwnd) || !limNear(got.Sndbuf, sndbuf) || !limNear(got.App, app) || !limNear(got.Busy, busy) {
		t.Errorf("%s: network %.4f rwnd %.4f sndbuf %.4f app %.4f busy %.4f; want %.4f %.4f %.4f %.4f %.4f",
			name, got.Network, got.Rwnd, got.Sndbuf, got.App, got.Busy, net, rwnd, sndbuf, app, busy)
	}
	if s := got.Network + got.Rwnd + got.Sndbuf + got.App; got.SpanS > 0 && !limNear(s, 1) {
		t.Errorf("%s: shares add up to %.6f", name, s)
	}
}

var (
	fullBuf  = &SendBuffer{SizeBytes: 16384, QueuedBytes: 111496, WmemQueuedBytes: 150000}
	emptyBuf = &SendBuffer{SizeBytes: 156672, QueuedBytes: 51782, WmemQueuedBytes: 60000}
)

func TestLimitedTCP(t *testing.T) {
	cases := []struct {
		name                         string
		f                            *Flow
		net, rwnd, sndbuf, app, busy float64
		dominant                     string
	}{
		{"bulk over a shaped link: always busy, never short of data",
			tcpFlow(repeat(10, iv{busy: ivUs, wait: ivUs, buf: &SendBuffer{SizeBytes: 645120, QueuedBytes: 538656}})...),
			1, 0, 0, 0, 1, LimitNetwork},
		{"tiny receive buffer: the kernel's rwnd-limited time",
			tcpFlow(repeat(10, iv{busy: ivUs, rwnd: 80_000, wait: ivUs, buf: emptyBuf})...),
			0.2, 0.8, 0, 0, 1, LimitRwnd},
		{"tiny send buffer: sndbuf-limited time, and busy time short of data while the writer waited",
			tcpFlow(append(repeat(7, iv{busy: ivUs, sndbuf: 20_000, short: true, wait: ivUs, buf: fullBuf}),
				repeat(3, iv{busy: ivUs, sndbuf: 20_000, wait: ivUs, buf: fullBuf})...)...),
			0.3 * 0.8, 0, 0.2 + 0.7*0.8, 0, 1, LimitSndbuf},
		{"paced application: app-limited busy time and idle time, the writer seldom waiting",
			tcpFlow(repeat(10, iv{busy: 30_000, app: true, wait: 2000, buf: emptyBuf})...),
			0, 0, 0.02, 0.98, 0.3, LimitApp},
		{"writer waiting 60 % of the time while short of data: that share",
			tcpFlow(repeat(10, iv{busy: 60_000, short: true, wait: 60_000})...),
			0, 0, 0.6, 0.4, 0.6, LimitSndbuf},
		{"writer's waits not recorded: idle with a full buffer is the buffer's doing",
			tcpFlow(repeat(10, iv{busy: 60_000, buf: fullBuf})...),
			0.6, 0, 0.4, 0, 0.6, LimitNetwork},
		{"writer's waits not recorded, buffer far from full: the application",
			tcpFlow(repeat(10, iv{busy: 60_000, buf: emptyBuf})...),
			0.6, 0, 0, 0.4, 0.6, LimitNetwork},
		{"nothing but the kernel's times: idle time is the application's",
			tcpFlow(repeat(10, iv{busy: 60_000})...),
			0.6, 0, 0, 0.4, 0.6, LimitNetwork},
		{"busy a tick longer than the interval (jiffies): capped",
			tcpFlow(repeat(10, iv{busy: ivUs + 4000, rwnd: 52_000})...),
			0.5, 0.5, 0, 0, 1, LimitNetwork},
	}
	for _, c := range cases {
		l, ok := Limited(c.f, WholeRun(c.f))
		if !ok {
			t.Errorf("%s: not ok", c.name)
			continue
		}
		checkLimits(t, c.name, l.Limits, c.net, c.rwnd, c.sndbuf, c.app, c.busy)
		if d := l.Dominant(); d != c.dominant {
			t.Errorf("%s: dominant %q, want %q", c.name, d, c.dominant)
		}
		if !limNear(l.SpanS, 1) || len(l.Subflows) != 0 {
			t.Errorf("%s: span %.3f s, %d subflows", c.name, l.SpanS, len(l.Subflows))
		}
	}
}

func TestLimitedWindow(t *testing.T) {
	// Five network-limited intervals, then five idle ones (the writer
	// stopped): the window picks which count, straddling intervals in
	// proportion.
	f := tcpFlow(append(repeat(5, iv{busy: ivUs}), repeat(5, iv{short: true})...)...)
	l, _ := Limited(f, Window{0, 0.5})
	checkLimits(t, "first half", l.Limits, 1, 0, 0, 0, 1)
	l, _ = Limited(f, Window{0.45, 0.6})
	checkLimits(t, "straddling", l.Limits, 1.0/3, 0, 0, 2.0/3, 1.0/3)
	if !limNear(l.SpanS, 0.15) {
		t.Errorf("span %.4f s, want 0.15", l.SpanS)
	}
	if _, ok := Limited(f, Window{2, 3}); ok {
		t.Error("a window after the flow is ok")
	}
	// The writer stopped at 0.5 s: the drain after it is left out.
	f.SendEndS = 0.5
	l, _ = Limited(f, Window{0, 1})
	checkLimits(t, "until the writer stopped", l.Limits, 1, 0, 0, 0, 1)
	if _, ok := Limited(f, Window{0.6, 1}); ok {
		t.Error("a window after the writer stopped is ok")
	}
	f.SendEndS = 0
	// Counters that go backwards (another socket under the same key) skip
	// that interval.
	g := tcpFlow(repeat(4, iv{busy: ivUs})...)
	g.Samples[2].TCP.BusyUs = 1
	l, _ = Limited(g, WholeRun(g))
	if !limNear(l.SpanS, 0.3) || !limNear(l.Network, 1) {
		t.Errorf("backwards counters: span %.3f network %.3f", l.SpanS, l.Network)
	}
	// Nothing to judge: no busy times (older result, iperf3), UDP.
	old := &Flow{ID: "o", Proto: "tcp", EndS: 1, Samples: []Sample{{TS: 0.5, TCP: &TCPInfo{CwndSegs: 10}}, {TS: 1, TCP: &TCPInfo{CwndSegs: 10}}}}
	if _, ok := Limited(old, WholeRun(old)); ok {
		t.Error("a result without busy times is ok")
	}
	udp := tcpFlow(iv{busy: ivUs})
	udp.Proto = "udp"
	if _, ok := Limited(udp, WholeRun(udp)); ok {
		t.Error("UDP is ok")
	}
}

// mptcpFlow builds an MPTCP flow: per interval, each subflow's
// interval and bytes (by ID), the connection's send buffer and the
// writer's waiting (µs per interval).
func mptcpFlow(n int, sf map[string]iv, bytes map[string]int64, buf *SendBuffer, wait uint64) *Flow {
	f := &Flow{ID: "m", Proto: "mptcp", EndS: float64(n) * ivUs / 1e6}
	cum := map[string]TCPInfo{}
	for i := 0; i < n; i++ {
		s := Sample{TS: float64(i+1) * ivUs / 1e6, SendBuffer: buf, TCP: &TCPInfo{}, WriteWaitUs: uint64(i+1) * wait}
		for _, id := range []string{"1", "2"} {
			x, ok := sf[id]
			if !ok {
				continue
			}
			c := cum[id]
			c.BusyUs += x.busy
			c.RwndLimitedUs += x.rwnd
			c.SndbufLimitedUs += x.sndbuf
			cum[id] = c
			s.Subflows = append(s.Subflows, SubflowSample{ID: id, Src: "10.1.0.1:1", Dst: "10.1.0.2:2", Bytes: bytes[id], TCP: info(c, x)})
		}
		f.Samples = append(f.Samples, s)
	}
	return f
}

func TestLimitedMPTCP(t *testing.T) {
	// asym-mptcp's default run: the fast subflow idles 40 % of the time
	// while the bulk writer waits on the connection's buffer, full of
	// data sent and not DATA_ACKed; the slow one is always busy. Bytes
	// per interval: fast 9.4 Mbit/s × 60 ms busy, slow 1.88 Mbit/s ×
	// 100 ms.
	full := &SendBuffer{SizeBytes: 247808, QueuedBytes: 220000, UnsentBytes: 0, WmemQueuedBytes: 230000}
	sfs := map[string]iv{"1": {busy: 60_000}, "2": {busy: ivUs}}
	bytes := map[string]int64{"1": 70500, "2": 23500}
	f := mptcpFlow(10, sfs, bytes, full, ivUs)
	l, ok := Limited(f, WholeRun(f))
	if !ok || len(l.Subflows) != 2 {
		t.Fatalf("ok %v, %d subflows", ok, len(l.Subflows))
	}
	checkLimits(t, "fast subflow", l.Subflows[0].Limits, 0.6, 0, 0.4, 0, 0.6)
	checkLimits(t, "slow subflow", l.Subflows[1].Limits, 1, 0, 0, 0, 1)
	if fs := l.Fastest(); fs == nil || fs.ID != "1" || !limNear(fs.GoodputBps, 70500*8/0.1) {
		t.Errorf("fastest %+v", fs)
	}
	// Weights: bytes per busy second, 70500/0.06 and 23500/0.1.
	wf, ws := 70500/0.06, 23500/0.1
	checkLimits(t, "connection", l.Limits, (wf*0.6+ws)/(wf+ws), 0, wf*0.4/(wf+ws), 0, (wf*0.6+ws)/(wf+ws))
	if l.Dominant() != LimitNetwork || l.Sndbuf < 0.3 {
		t.Errorf("connection %v: want network first, send buffer about a third", l.Limits)
	}
	// Busy time short of data (cwnd not full, nothing unsent on the
	// subflow) counts with the idle time.
	l, _ = Limited(mptcpFlow(10, map[string]iv{"1": {busy: 60_000, short: true}, "2": {busy: ivUs}}, bytes, full, ivUs), Window{0, 1})
	checkLimits(t, "fast subflow short of data", l.Subflows[0].Limits, 0, 0, 1, 0, 0.6)

	// The same idle time with the buffer full of data not handed to any
	// subflow: the data-level receive window, not the buffer.
	blocked := &SendBuffer{SizeBytes: 247808, QueuedBytes: 240000, UnsentBytes: 200000, WmemQueuedBytes: 250000}
	l, _ = Limited(mptcpFlow(10, sfs, bytes, blocked, ivUs), Window{0, 1})
	checkLimits(t, "fast subflow, data unsent", l.Subflows[0].Limits, 0.6, 0.4, 0, 0, 0.6)

	// A paced application (its waits not recorded, the buffer nearly
	// empty): both subflows idle half the time for want of data.
	paced := &SendBuffer{SizeBytes: 247808, QueuedBytes: 8000, WmemQueuedBytes: 12000}
	l, _ = Limited(mptcpFlow(10, map[string]iv{"1": {busy: 50_000}, "2": {busy: 50_000}}, bytes, paced, 0), Window{0, 1})
	checkLimits(t, "paced connection", l.Limits, 0.5, 0, 0, 0.5, 0.5)

	// A backup subflow that carries nothing has no say in the
	// connection's shares, but is listed.
	l, _ = Limited(mptcpFlow(10, map[string]iv{"1": {busy: ivUs}, "2": {}}, map[string]int64{"1": 117500}, full, ivUs), Window{0, 1})
	checkLimits(t, "with an idle backup", l.Limits, 1, 0, 0, 0, 1)
	if sf := l.Subflows[1]; !sf.Idle || sf.Limits != (Limits{SpanS: sf.SpanS}) || !limNear(sf.SpanS, 1) {
		t.Errorf("the backup subflow: %+v, want idle with no shares", sf)
	}
	if fs := l.Fastest(); fs == nil || fs.ID != "1" {
		t.Errorf("fastest %+v", fs)
	}

	// A subflow that joins later is judged from its second sample on.
	late := mptcpFlow(10, sfs, bytes, full, ivUs)
	for i := 0; i < 4; i++ {
		late.Samples[i].Subflows = late.Samples[i].Subflows[:1]
	}
	l, _ = Limited(late, Window{0, 1})
	if !limNear(l.Subflows[1].SpanS, 0.5) || !limNear(l.Subflows[0].SpanS, 1) {
		t.Errorf("spans %.2f (from the start) and %.2f (joined at 0.4 s, first judged 0.5 s)", l.Subflows[0].SpanS, l.Subflows[1].SpanS)
	}
}

func TestLimitsString(t *testing.T) {
	l := Limits{Network: 0.55, Sndbuf: 0.41, App: 0.04, Rwnd: 0.004}
	if got, want := l.String(), "network 55 %, send buffer 41 %, application 4 %"; got != want {
		t.Errorf("String() = %q, want %q", got, want)
	}
	if (Limits{}).String() != "-" {
		t.Errorf("zero limits: %q", (Limits{}).String())
	}
	if d := (Limits{Rwnd: 0.5, Sndbuf: 0.5}).Dominant(); d != LimitRwnd {
		t.Errorf("tie: dominant %q, want the receive window (listed first)", d)
	}
}

func TestFlowTableLimited(t *testing.T) {
	f := tcpFlow(append(repeat(7, iv{busy: ivUs, short: true, wait: ivUs, buf: fullBuf}), repeat(3, iv{busy: ivUs})...)...)
	r := &Result{Version: 1, Flows: []Flow{*f}}
	var b strings.Builder
	if err := FlowTable("flows", []string{"r1"}, []RunSummary{r.Summarise(Options{WarmupS: -1})}).Markdown(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"busy", "limited: send buffer", "limited by", "| send buffer |"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("flow table lacks %q:\n%s", want, b.String())
		}
	}
	// Without the diagnosis the columns are left out.
	b.Reset()
	old := Flow{ID: "o", Proto: "tcp", EndS: 1, Samples: []Sample{{TS: 1, Bytes: 1000, TCP: &TCPInfo{CwndSegs: 10}}}}
	FlowTable("flows", []string{"r1"}, []RunSummary{(&Result{Version: 1, Flows: []Flow{old}}).Summarise(Options{WarmupS: -1})}).Markdown(&b)
	if strings.Contains(b.String(), "limited") || strings.Contains(b.String(), "busy") {
		t.Errorf("flow table without busy times has limited-by columns:\n%s", b.String())
	}
}
