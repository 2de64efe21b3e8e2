package suite

import (
	"strings"
	"testing"
	"time"

	"github.com/emuctl/emuctl/analysis"
)

// mptcpRun makes a run whose MPTCP flow "bulk" has a fast subflow busy
// a share fastBusy of each 100 ms (idle the rest while the writer waits
// on the connection's full buffer) and a slow one always busy — or,
// as a backup, never.
func mptcpRun(t *testing.T, sc *Scenario, rep int, fastBusy float64, backup bool) *RunRecord {
	t.Helper()
	f := analysis.Flow{ID: "bulk", Proto: "mptcp", CC: "cubic", From: "cli", To: "srv", StartS: 0, EndS: 4}
	buf := &analysis.SendBuffer{SizeBytes: 247808, QueuedBytes: 220000, WmemQueuedBytes: 230000}
	var fast, slow analysis.TCPInfo
	for _, ti := range []*analysis.TCPInfo{&fast, &slow} {
		ti.MSS, ti.CwndSegs, ti.InFlightSegs, ti.NotsentBytes = 1448, 20, 20, 30000
	}
	for i := 1; i <= 40; i++ {
		fast.BusyUs += uint64(fastBusy * 1e5)
		fb, sb := int64(fastBusy*9.4e6/80), int64(1.88e6/80)
		if backup {
			sb = 0
		} else {
			slow.BusyUs += 1e5
		}
		f.Samples = append(f.Samples, analysis.Sample{TS: float64(i) / 10, Bytes: fb + sb, GoodputBps: float64(fb+sb) * 80,
			TCP: &analysis.TCPInfo{SrttUs: 26000, CwndSegs: 40}, SendBuffer: buf, WriteWaitUs: uint64(i) * 1e5,
			Subflows: []analysis.SubflowSample{
				{ID: "1", Src: "10.1.0.1:40000", Dst: "10.1.0.2:5201", Bytes: fb, TCP: fast},
				{ID: "2", Src: "10.2.0.1:40001", Dst: "10.2.0.2:5201", Bytes: sb, TCP: slow},
			}})
	}
	res := &analysis.Result{Version: 1, Start: time.Unix(1e9, 0), DurationS: 4, Flows: []analysis.Flow{f}, Conditions: map[string]string{}}
	rd := newRunData(res, 1, nil, cpuLoad{Max: 0.3, Peak: 0.4, OK: true})
	return &RunRecord{ID: runID(sc, rep, 1), Scenario: sc.Name, Labels: sc.Labels, Rep: rep, Attempt: 1, data: rd}
}

func TestLimitedMetricsAndTable(t *testing.T) {
	p := tinyPlan(t)
	sc := p.Scenarios[0]
	runs := []*RunRecord{mptcpRun(t, sc, 1, 0.6, false), mptcpRun(t, sc, 2, 0.7, false), mptcpRun(t, sc, 3, 0.65, false),
		mptcpRun(t, p.Scenarios[1], 1, 1, true)}
	rd := runs[0].data
	for name, want := range map[string]float64{"busy_fast": 0.6, "limited_sndbuf_fast": 0.4} {
		v, err := rd.metric(name, "bulk")
		if err != nil || v.Num < want-1e-6 || v.Num > want+1e-6 {
			t.Errorf("%s[bulk] = %v, %v; want %g", name, v.Num, err, want)
		}
	}
	net, _ := rd.metric("limited_net", "")
	sndbuf, _ := rd.metric("limited_sndbuf", "bulk")
	app, _ := rd.metric("limited_app", "bulk")
	if net.Num < 0.6 || sndbuf.Num < 0.25 || net.Num+sndbuf.Num+app.Num < 0.999 {
		t.Errorf("connection: network %.3f, send buffer %.3f, application %.3f", net.Num, sndbuf.Num, app.Num)
	}
	if _, err := rd.metric("limited_rwnd", "nosuch"); err == nil {
		t.Error("an unknown flow gave a value")
	}
	m := standardMetrics(rd)
	if _, ok := m["limited_sndbuf_fast[bulk]"]; !ok || m["busy"] <= 0 {
		t.Errorf("standard metrics lack the diagnosis: %v", m)
	}

	o := &Outcome{Runs: runs}
	var b strings.Builder
	limitedTable(&b, o, p)
	got := b.String()
	t.Log("\n" + got)
	for _, want := range []string{
		"## What limited the flows (medians over valid runs)",
		"| scenario | flow | goodput (Mbit/s) | network | receive window | send buffer | application | busy | limited by |",
		"| " + sc.Name + " | bulk ↳ 10.1.0.1 → 10.1.0.2 | 6.11 | 65 % | 0 % | 35 % | 0 % | 65 % | network |",
		"| " + sc.Name + " | bulk ↳ 10.2.0.1 → 10.2.0.2 | 1.88 | 100 % | 0 % | 0 % | 0 % | 100 % | network |",
		"| " + p.Scenarios[1].Name + " | bulk | 9.40 | 100 % | 0 % | 0 % | 0 % | 100 % | network |",
		"| " + p.Scenarios[1].Name + " | bulk ↳ 10.2.0.1 → 10.2.0.2 | 0.00 | — | — | — | — | 0 % | carried no data (backup, or unused) |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q", want)
		}
	}
	// The connection's row comes first, then the fast subflow.
	if i, j := strings.Index(got, "| bulk |"), strings.Index(got, "bulk ↳ 10.1.0.1"); i < 0 || j < i {
		t.Errorf("row order: connection at %d, fast subflow at %d", i, j)
	}
	// Runs without the diagnosis (a UDP flow, older results): no table.
	b.Reset()
	limitedTable(&b, &Outcome{Runs: []*RunRecord{fakeRun(t, sc, 1, 19, "reno")}}, p)
	if b.Len() != 0 {
		t.Errorf("table without any diagnosis:\n%s", b.String())
	}
}
