//go:build linux

package tc

import (
	"math"
	"testing"
	"time"

	"github.com/emuctl/emuctl/units"
)

// attrMap parses attributes into type → payload (last wins).
func attrMap(t *testing.T, b []byte) map[uint16][]byte {
	t.Helper()
	as, err := parseAttrs(b)
	if err != nil {
		t.Fatal(err)
	}
	m := map[uint16][]byte{}
	for _, a := range as {
		m[a.typ] = a.data
	}
	return m
}

func TestQdiscMsgHeader(t *testing.T) {
	q := Qdisc{Kind: "pfifo", Handle: 2 << 16, Parent: 1<<16 | 1, FIFO: &FIFOOpts{Limit: 20}}
	b, err := qdiscMsg(42, q)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < sizeofTcmsg || b[0] != 0 || ne.Uint32(b[4:]) != 42 || ne.Uint32(b[8:]) != 0x20000 || ne.Uint32(b[12:]) != 0x10001 {
		t.Fatalf("tcmsg % x", b[:sizeofTcmsg])
	}
	m := attrMap(t, b[sizeofTcmsg:])
	if string(m[tcaKind]) != "pfifo\x00" {
		t.Errorf("TCA_KIND %q", m[tcaKind])
	}
	if len(m[tcaOptions]) != 4 || ne.Uint32(m[tcaOptions]) != 20 {
		t.Errorf("pfifo options % x, want limit 20", m[tcaOptions])
	}
}

func TestNetemEncoding(t *testing.T) {
	n := &NetemOpts{
		Latency: 10 * time.Millisecond, Jitter: 2 * time.Millisecond, Dist: DistNormal,
		Limit: 1234, Loss: 1, Duplicate: 0.5, Corrupt: 0.1, Rate: 5_000_000_000, Seed: 99,
	}
	opts := netemOptions(n)
	// struct tc_netem_qopt: latency and jitter in 64 ns ticks
	wantQopt := []uint32{10_000_000 / 64, 1234, 42949673 /* 1% of 2^32-1 */, 0, 21474836, 2_000_000 / 64}
	for i, w := range wantQopt {
		if got := ne.Uint32(opts[4*i:]); got != w {
			t.Errorf("qopt field %d = %d, want %d", i, got, w)
		}
	}
	m := attrMap(t, opts[sizeofNetemQopt:])
	u64 := func(typ uint16) uint64 {
		if len(m[typ]) != 8 {
			t.Fatalf("attribute %d: % x", typ, m[typ])
		}
		return ne.Uint64(m[typ])
	}
	if got := u64(netemLatency64); got != 10_000_000 {
		t.Errorf("LATENCY64 %d ns", got)
	}
	if got := u64(netemJitter64); got != 2_000_000 {
		t.Errorf("JITTER64 %d ns", got)
	}
	if got := u64(netemRate64); got != 5_000_000_000 {
		t.Errorf("RATE64 %d B/s", got)
	}
	if got := ne.Uint32(m[netemRate]); got != math.MaxUint32 {
		t.Errorf("RATE.rate %d, want 2^32-1 with RATE64 present", got)
	}
	if got := u64(netemPRNGSeed); got != 99 {
		t.Errorf("PRNG_SEED %d", got)
	}
	if got := ne.Uint32(m[netemCorrupt]); got != pctToU32(0.1) {
		t.Errorf("CORRUPT %d", got)
	}
	if len(m[netemDelayDist]) != 2*distSize {
		t.Errorf("DELAY_DIST %d bytes, want %d", len(m[netemDelayDist]), 2*distSize)
	}
	for _, typ := range []uint16{netemCorr, netemReorder, netemECN} {
		if _, ok := m[typ]; !ok {
			t.Errorf("attribute %d missing: a change would keep a stale value", typ)
		}
	}
	if _, ok := m[netemLoss]; ok {
		t.Error("LOSS (model) present without a Gilbert-Elliott model")
	}

	// 32-bit rate: no RATE64; GE model encoded in kernel terms.
	n = &NetemOpts{Rate: 1_250_000, Limit: 100, GE: &units.GilbertElliott{P: 1, R: 25, BadLoss: 70, GoodLoss: 0.5}, Loss: 3}
	opts = netemOptions(n)
	if ne.Uint32(opts[8:]) != 0 {
		t.Error("Bernoulli loss sent together with a GE model")
	}
	m = attrMap(t, opts[sizeofNetemQopt:])
	if _, ok := m[netemRate64]; ok {
		t.Error("RATE64 for a 32-bit rate")
	}
	if got := ne.Uint32(m[netemRate]); got != 1_250_000 {
		t.Errorf("RATE %d", got)
	}
	if _, ok := m[netemDelayDist]; ok {
		t.Error("DELAY_DIST without jitter")
	}
	ge := attrMap(t, m[netemLoss])[netemLossGE]
	want := []uint32{pctToU32(1), pctToU32(25), pctToU32(30) /* h = 1-(1-h) */, pctToU32(0.5)}
	for i, w := range want {
		if got := ne.Uint32(ge[4*i:]); got != w {
			t.Errorf("gemodel field %d = %d, want %d", i, got, w)
		}
	}
}

func TestTBFEncoding(t *testing.T) {
	opts, err := tbfOptions(&TBFOpts{Rate: 5_000_000_000, Burst: 500_000, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	m := attrMap(t, opts)
	q := m[tbfParms]
	if len(q) != sizeofTbfQopt {
		t.Fatalf("TBF_PARMS %d bytes", len(q))
	}
	if q[1] != linklayerEthernet || ne.Uint32(q[8:]) != math.MaxUint32 {
		t.Errorf("ratespec % x: want linklayer ethernet, rate 2^32-1", q[:12])
	}
	if ne.Uint32(q[24:]) != 100 {
		t.Errorf("limit %d", ne.Uint32(q[24:]))
	}
	// buffer: 500000 B at 5e9 B/s = 100 µs = 1562 ticks of 64 ns
	if got := ne.Uint32(q[28:]); got != 1562 {
		t.Errorf("buffer %d ticks, want 1562", got)
	}
	if ne.Uint64(m[tbfRate64]) != 5_000_000_000 || ne.Uint32(m[tbfBurst]) != 500_000 {
		t.Errorf("RATE64 %d BURST %d", ne.Uint64(m[tbfRate64]), ne.Uint32(m[tbfBurst]))
	}
	if _, err := tbfOptions(&TBFOpts{Rate: 0, Burst: 1}); err == nil {
		t.Error("tbf without rate encoded")
	}
}

// TestRoundTrip decodes what the encoder produced, as ReadBack does with
// the kernel's dump (whose layout is the same for these fields).
func TestRoundTrip(t *testing.T) {
	p, err := PlanKernel(Dir{Rate: 40e9, Delay: 3 * time.Millisecond, Jitter: time.Millisecond, Loss: 2, Corrupt: 1}, 1500)
	if err != nil {
		t.Fatal(err)
	}
	p.SetSeed(7)
	for _, q := range p.Qdiscs {
		b, _ := qdiscMsg(3, q)
		idx, got, err := parseQdisc(b)
		if err != nil || idx != 3 || got.Kind != q.Kind || got.Handle != q.Handle || got.Parent != q.Parent {
			t.Fatalf("parse %s: %v %d %+v", q.Kind, err, idx, got)
		}
		w, g := *q.Netem, *got.Netem
		w.Dist = "" // not dumped by the kernel
		if math.Abs(float64(g.Loss-w.Loss)) > 1e-6 || math.Abs(float64(g.Corrupt-w.Corrupt)) > 1e-6 {
			t.Errorf("percentages %v/%v, want %v/%v", g.Loss, g.Corrupt, w.Loss, w.Corrupt)
		}
		g.Loss, g.Corrupt, w.Loss, w.Corrupt = 0, 0, 0, 0
		if g != w {
			t.Errorf("round trip:\n got %+v\nwant %+v", g, w)
		}
	}
	b, _ := qdiscMsg(3, Qdisc{Kind: "tbf", Handle: 1 << 16, Parent: handleRoot, TBF: &TBFOpts{Rate: 1_250_000, Burst: 1518, Limit: 20}})
	_, got, _ := parseQdisc(b)
	if got.TBF == nil || got.TBF.Rate != 1_250_000 || got.TBF.Limit != 20 || math.Abs(float64(got.TBF.Burst)-1518) > 1 {
		t.Errorf("tbf round trip %+v", got.TBF)
	}
}

func TestStatsDecoding(t *testing.T) {
	var st attrBuf
	basic := make([]byte, 16)
	ne.PutUint64(basic, 123456)
	ne.PutUint32(basic[8:], 789)
	st.put(tcaStatsBasic, basic)
	st.put(tcaStatsQueue, u32b(3, 4542, 17, 0, 5))
	s := parseStats("pfifo", st)
	if *s != (QdiscStats{Bytes: 123456, Packets: 789, QLen: 3, Backlog: 4542, Drops: 17, Overlimits: 5}) {
		t.Errorf("stats %+v", *s)
	}
}

// checkEncodes: every planned qdisc has an rtnetlink encoding.
func checkEncodes(t *testing.T, i int, q Qdisc) {
	t.Helper()
	if _, err := qdiscMsg(7, q); err != nil {
		t.Errorf("qdisc %d does not encode: %v", i, err)
	}
}
