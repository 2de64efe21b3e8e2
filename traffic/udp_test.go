package traffic

import (
	"math"
	"testing"
	"time"
)

func TestUDPUnshaped(t *testing.T) {
	needRoot(t)
	lab := gen(t, "single,2", "ttrudp", "")
	const rate, size, dur = 10_000_000, 1000, 2 * time.Second
	r := run(t, lab, Flow{Client: "h1", Server: "h2", Proto: UDP, Rate: rate, Size: size, Duration: dur})
	f := r.Flows[0]
	u := f.UDP
	if u == nil {
		t.Fatal("no UDP record")
	}
	want := float64(rate) / 8 / size * dur.Seconds()
	if math.Abs(float64(u.Sent)-want) > want*0.01+2 {
		t.Errorf("sent %d datagrams, want %.0f (rate %d bit/s, %d bytes, %v)", u.Sent, want, rate, size, dur)
	}
	if u.Received != u.Sent || u.Duplicates != 0 || u.OutOfOrder != 0 {
		t.Errorf("unshaped link: sent %d, received %d, duplicates %d, out of order %d", u.Sent, u.Received, u.Duplicates, u.OutOfOrder)
	}
	if int64(len(u.Packets)) != u.Received {
		t.Errorf("%d packet records for %d datagrams", len(u.Packets), u.Received)
	}
	if u.OWDMeanUs <= 0 || u.OWDMeanUs > 2000 || u.OWDMinUs <= 0 || u.OWDMinUs > u.OWDMeanUs || u.OWDMaxUs < u.OWDMeanUs {
		t.Errorf("one-way delay min/mean/max %.1f/%.1f/%.1f µs: want small and positive on a veth pair", u.OWDMinUs, u.OWDMeanUs, u.OWDMaxUs)
	}
	if u.JitterRFC3550Us < 0 || u.JitterRFC3550Us > 1000 || u.JitterMeanAbsDeltaUs > 1000 {
		t.Errorf("jitter %.1f µs (RFC 3550), %.1f µs (mean |Δ|): want small", u.JitterRFC3550Us, u.JitterMeanAbsDeltaUs)
	}
	s := r.Summary[0]
	if s.UDPLoss == nil || *s.UDPLoss != 0 {
		t.Errorf("summary: loss %v", s.UDPLoss)
	}
	if g := goodputOf(r, "f1"); math.Abs(g-rate) > rate*0.02 {
		t.Errorf("goodput %.0f bit/s, want %d", g, rate)
	}
	var pk int64
	for _, s := range f.Samples {
		pk += s.Packets
	}
	if pk != u.Received {
		t.Errorf("samples count %d datagrams, receiver %d", pk, u.Received)
	}
}

func TestUDPReverseParallel(t *testing.T) {
	needRoot(t)
	lab := gen(t, "single,2", "ttrudpr", "")
	f := false
	r := run(t, lab, Flow{Client: "h1", Server: "h2", Proto: UDP, Rate: 1_000_000, Size: 160, Duration: time.Second,
		Reverse: true, Parallel: 2, KeepPackets: &f})
	if len(r.Flows) != 2 {
		t.Fatalf("%d flows", len(r.Flows))
	}
	for _, fl := range r.Flows {
		if fl.From != "h2" || fl.To != "h1" || fl.UDP.Received != fl.UDP.Sent || fl.UDP.Sent == 0 || len(fl.UDP.Packets) != 0 {
			t.Errorf("%s: %s -> %s sent %d received %d, %d packet records", fl.ID, fl.From, fl.To, fl.UDP.Sent, fl.UDP.Received, len(fl.UDP.Packets))
		}
		if fl.UDP.OWDMeanUs <= 0 || fl.UDP.JitterRFC3550Us <= 0 {
			t.Errorf("%s: receiver figures missing without packet records: %+v", fl.ID, fl.UDP)
		}
	}
}

func TestProbes(t *testing.T) {
	needRoot(t)
	lab := gen(t, "single,2", "ttrprobe", "")
	for _, kind := range []string{ProbeICMP, ProbeUDP} {
		r := run(t, lab, Flow{Client: "h1", Server: "h2", Duration: time.Second, Probe: kind, ProbeRate: 50})
		if len(r.Probes) != 1 {
			t.Fatalf("%s: %d probes", kind, len(r.Probes))
		}
		p := r.Probes[0]
		if p.Kind != kind || p.From != "h1" || p.To != "h2" || p.Flow != "f1" {
			t.Errorf("probe %+v", p)
		}
		if n := len(p.Samples); n < 45 || n > 51 {
			t.Errorf("%s: %d probes in 1 s at 50 Hz", kind, n)
		}
		for i, s := range p.Samples {
			if s.Lost || s.RTTUs <= 0 || s.RTTUs > 100_000 {
				t.Errorf("%s probe %d: lost %v rtt %.1f µs", kind, i, s.Lost, s.RTTUs)
			}
			if i > 0 && s.TS <= p.Samples[i-1].TS {
				t.Errorf("%s probe %d: not in send order", kind, i)
			}
		}
	}
}
