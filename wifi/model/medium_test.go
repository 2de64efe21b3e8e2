package model

import (
	"math"
	"testing"
	"time"
)

func addr(i int) [6]byte { return [6]byte{0x02, 0, 0, 0, 0, byte(i + 1)} }

// qosData builds a QoS data MPDU (no FCS) from radio tx to radio rx
// carrying an IP packet of ipLen bytes.
func qosData(tx, rx, ipLen int) []byte {
	b := make([]byte, 26+LLCBytes+ipLen)
	b[0], b[1] = 0x88, 0x01 // QoS data, to DS
	a1, a2 := addr(rx), addr(tx)
	copy(b[4:], a1[:])
	copy(b[10:], a2[:])
	copy(b[16:], a1[:])
	return b
}

func broadcast(tx int) []byte {
	b := make([]byte, 24+LLCBytes+100)
	b[0], b[1] = 0x08, 0x02 // data, from DS
	for i := 4; i < 10; i++ {
		b[i] = 0xff
	}
	a2 := addr(tx)
	copy(b[10:], a2[:])
	return b
}

// harness drives a medium with saturated senders: each keeps inFlight
// frames submitted, topping up as statuses come back.
type harness struct {
	t       *testing.T
	m       *Medium
	rate    Rate
	rx      map[int]int // radio → MPDUs received
	rxBytes map[int]int
	status  []Status
	sent    map[int]int
}

func newHarness(t *testing.T, radios int, rate Rate, link func(tx, rx int) Link) *harness {
	m := NewMedium(MediumConfig{MAC: func(b Band) MAC { return DefaultMAC(ModeA, b, true) }, Link: link, Seed: 7})
	for i := 0; i < radios; i++ {
		m.AddRadio(i, 5180)
		m.LearnAddr(addr(i), i)
	}
	return &harness{t: t, m: m, rate: rate, rx: map[int]int{}, rxBytes: map[int]int{}, sent: map[int]int{}}
}

func (h *harness) submit(now time.Duration, tx int, data []byte, chain [4]TxRate) {
	if err := h.m.Submit(now, &MediumFrame{Radio: tx, Freq: 5180, Data: data, Rates: chain}); err != nil {
		h.t.Fatal(err)
	}
	h.sent[tx]++
}

func chain(r Rate, n int) [4]TxRate { return [4]TxRate{{Rate: r, Count: n}} }

// run advances to end, keeping each sender's queue topped up to inFlight.
func (h *harness) run(end time.Duration, senders []int, dst int, inFlight int) {
	pending := map[int]int{}
	top := func(now time.Duration) {
		for _, s := range senders {
			for pending[s] < inFlight {
				h.submit(now, s, qosData(s, dst, 1500), chain(h.rate, 7))
				pending[s]++
			}
		}
	}
	top(0)
	for {
		at, ok := h.m.Next()
		if !ok || at > end {
			break
		}
		h.m.Advance(at, func(ev any) {
			switch v := ev.(type) {
			case Reception:
				h.rx[v.To]++
				h.rxBytes[v.Frame.Radio] += 1500 - 28 // UDP payload of the IP packet
			case Status:
				h.status = append(h.status, v)
				pending[v.Frame.Radio]--
			}
		})
		top(at)
	}
}

func perfect(int, int) Link { return Link{RxDBm: -50, SNRdB: 44, OK: true} }

// TestMediumMatchesSimulate: one saturated station through the
// event-driven medium delivers what the saturated simulation predicts for
// 802.11a 54 Mbit/s UDP (28.97 Mbit/s analytic).
func TestMediumMatchesSimulate(t *testing.T) {
	for _, n := range []int{1, 2, 5} {
		h := newHarness(t, n+1, ofdm(54000), perfect)
		senders := []int{}
		for i := 1; i <= n; i++ {
			senders = append(senders, i)
		}
		end := 5 * time.Second
		h.run(end, senders, 0, 8)
		var sum float64
		for _, s := range senders {
			sum += float64(h.rxBytes[s]) * 8 / end.Seconds() / 1e6
		}
		sc := docScenario("udp", 0, false)
		sc.Stations, sc.Duration, sc.Seed, sc.MAC.RetryLimit = n, end, 3, 7
		sim, _ := Simulate(sc)
		ratio := sum / sim.GoodputMbps
		t.Logf("n=%d: medium %.2f Mbit/s, simulation %.2f Mbit/s, ratio %.3f", n, sum, sim.GoodputMbps, ratio)
		if math.Abs(ratio-1) > 0.03 {
			t.Errorf("n=%d: medium/simulation %.3f outside ±3 %%", n, ratio)
		}
	}
}

// TestMediumTiming: a frame that finds the medium idle for longer than
// AIFS goes at once (802.11 immediate access) and is received one PPDU
// later, its status SIFS + ACK after that; a frame from another radio
// submitted during that exchange defers, backs off, and goes AIFS + k
// slots after the ACK.
func TestMediumTiming(t *testing.T) {
	h := newHarness(t, 3, ofdm(54000), perfect)
	t0 := 10 * time.Millisecond
	h.m.Advance(t0, nil)
	h.submit(t0, 1, qosData(1, 0, 1500), chain(ofdm(54000), 7))
	t1 := t0 + 100*us
	var got []any
	collect := func(until time.Duration) {
		for {
			at, ok := h.m.Next()
			if !ok || at > until {
				return
			}
			h.m.Advance(at, func(ev any) { got = append(got, ev) })
		}
	}
	collect(t1)
	h.m.Advance(t1, nil)
	h.submit(t1, 2, qosData(2, 0, 1500), chain(ofdm(54000), 7))
	collect(time.Hour)
	if len(got) != 4 {
		t.Fatalf("events %v", got)
	}
	rx, st := got[0].(Reception), got[1].(Status)
	if want := t0 + 252*us; rx.At != want || rx.To != 0 || rx.Frame.Radio != 1 {
		t.Errorf("received at %v by %d, want %v by 0", rx.At, rx.To, want)
	}
	ackEnd := t0 + 252*us + 16*us + 28*us
	if st.At != ackEnd || !st.Acked || st.Counts[0] != 1 {
		t.Errorf("status %+v, want acked after one attempt at %v", st, ackEnd)
	}
	rx2 := got[2].(Reception)
	k := (rx2.At - 252*us - ackEnd - 43*us) / (9 * us)
	if rx2.Frame.Radio != 2 || rx2.At != ackEnd+43*us+k*9*us+252*us || k < 0 || k > 15 {
		t.Errorf("deferred frame received at %v: want ACK end %v + AIFS + k·9 µs (0 ≤ k ≤ 15) + PPDU", rx2.At, ackEnd)
	}
}

// TestMediumLossyLink: at an SNR where 54 Mbit/s loses about half its
// frames, every status's attempt counts add up to the chain, failures end
// the chain, and delivered + failed = submitted.
func TestMediumLossyLink(t *testing.T) {
	snr := snrForPER(ofdm(54000), 1538, 0.5)
	lossy := func(int, int) Link { return Link{RxDBm: -80, SNRdB: snr, OK: true} }
	h := newHarness(t, 2, ofdm(54000), lossy)
	h.run(2*time.Second, []int{1}, 0, 4)
	acked, failed, attempts := 0, 0, 0
	for _, s := range h.status {
		n := s.Counts[0] + s.Counts[1] + s.Counts[2] + s.Counts[3]
		attempts += n
		if s.Acked {
			acked++
		} else {
			failed++
			if n != 7 {
				t.Fatalf("failed frame after %d attempts, chain has 7", n)
			}
		}
	}
	st, _ := h.m.Stats(1)
	per := 1 - float64(acked)/float64(attempts)
	t.Logf("PER(1538 B) 0.5 at %.2f dB: %d acked, %d failed, %d attempts, measured attempt loss %.3f, stats %+v", snr, acked, failed, attempts, per, st)
	if math.Abs(per-0.5) > 0.05 {
		t.Errorf("attempt loss %.3f, want 0.5 ± 0.05", per)
	}
	if h.rx[0] != acked {
		t.Errorf("received %d, acked %d", h.rx[0], acked)
	}
}

func TestMediumBroadcastAndQueue(t *testing.T) {
	h := newHarness(t, 4, ofdm(6000), perfect)
	h.submit(0, 0, broadcast(0), chain(ofdm(6000), 3))
	for {
		at, ok := h.m.Next()
		if !ok {
			break
		}
		h.m.Advance(at, func(ev any) {
			switch v := ev.(type) {
			case Reception:
				h.rx[v.To]++
			case Status:
				h.status = append(h.status, v)
			}
		})
	}
	if h.rx[1] != 1 || h.rx[2] != 1 || h.rx[3] != 1 || h.rx[0] != 0 || len(h.status) != 1 || h.status[0].Counts[0] != 1 {
		t.Errorf("broadcast: receptions %v statuses %+v", h.rx, h.status)
	}
	// A full queue tail-drops: acked, not delivered.
	h2 := newHarness(t, 2, ofdm(6000), perfect)
	for i := 0; i < 130; i++ {
		h2.submit(0, 1, qosData(1, 0, 1500), chain(ofdm(6000), 7))
	}
	drops := 0
	h2.m.Advance(0, func(ev any) {
		if s, ok := ev.(Status); ok && s.Dropped && s.Acked {
			drops++
		}
	})
	if st, _ := h2.m.Stats(1); drops != 2 || st.Dropped != 2 {
		t.Errorf("130 frames into a 128-frame queue: %d drop statuses, stats %+v", drops, st)
	}
}

// BenchmarkMedium: CPU per delivered frame of the pure medium (schedule,
// contention, airtime, errors, A-MPDU) for one saturated station at
// 802.11ac VHT80 MCS 7, 2 streams, short GI (650 Mbit/s PHY), with
// A-MPDU — the rate the frame-source benchmark asks for. It
// reports ns/frame and the simulated frames per CPU second.
func BenchmarkMedium(b *testing.B) {
	rate := Rate{Class: VHT, MCS: 7, NSS: 2, WidthMHz: 80, GI: 400 * time.Nanosecond}
	m := NewMedium(MediumConfig{MAC: func(bd Band) MAC { return DefaultMAC(ModeAC, bd, true) }, AMPDU: true, Seed: 1})
	m.AddRadio(0, 5180)
	m.AddRadio(1, 5180)
	m.LearnAddr(addr(0), 0)
	m.LearnAddr(addr(1), 1)
	data := qosData(1, 0, 1500)
	pending := 0
	delivered := 0
	now := time.Duration(0)
	emit := func(ev any) {
		switch ev.(type) {
		case Reception:
			delivered++
		case Status:
			pending--
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	for delivered < b.N {
		for pending < 96 {
			if err := m.Submit(now, &MediumFrame{Radio: 1, Freq: 5180, Data: data, Rates: [4]TxRate{{Rate: rate, Count: 7}}}); err != nil {
				b.Fatal(err)
			}
			pending++
		}
		at, ok := m.Next()
		if !ok {
			b.Fatal("no event")
		}
		now = at
		m.Advance(at, emit)
	}
	b.StopTimer()
	secs := now.Seconds()
	b.ReportMetric(float64(delivered)*1500*8/secs/1e6, "sim-Mbit/s")
	b.ReportMetric(float64(delivered)/b.Elapsed().Seconds(), "frames/cpu-s")
}

// TestMediumAirEvents: with ReportAir on, every PPDU is reported at its
// start with its airtime, the MPDUs' outcomes and the acknowledgement; a
// frame whose body is kept outside Data (Extra) costs the same airtime as
// one that carries it.
func TestMediumAirEvents(t *testing.T) {
	h := newHarness(t, 2, ofdm(54000), perfect)
	h.m.ReportAir(true)
	full := qosData(1, 0, 1500)
	hdr := full[:26]
	h.m.Submit(0, &MediumFrame{Radio: 1, Freq: 5180, Data: hdr, Extra: len(full) - 26, Rates: chain(ofdm(54000), 7), Ref: "mine"})
	var airs []Air
	var rx []Reception
	for {
		at, ok := h.m.Next()
		if !ok {
			break
		}
		h.m.Advance(at, func(ev any) {
			switch v := ev.(type) {
			case Air:
				airs = append(airs, v)
			case Reception:
				rx = append(rx, v)
			}
		})
	}
	if len(airs) != 1 || len(rx) != 1 {
		t.Fatalf("air events %+v, receptions %+v", airs, rx)
	}
	a := airs[0]
	if a.Dur != 252*us || a.Radio != 1 || len(a.OK) != 1 || !a.OK[0] || a.Collided || a.BlockAck {
		t.Errorf("air event %+v: want a 252 µs PPDU from radio 1, received", a)
	}
	if a.RespFrom != 0 || a.RespAt != a.At+a.Dur+16*us || a.RespDur != 28*us || a.RespRate.Kbps != 24000 {
		t.Errorf("acknowledgement %+v: want radio 0's ACK at 24 Mbit/s, 16 µs after the PPDU, 28 µs long", a)
	}
	if rx[0].Frame.Ref != "mine" || rx[0].Frame.Len() != len(full)+FCSBytes {
		t.Errorf("reception carries ref %v and length %d", rx[0].Frame.Ref, rx[0].Frame.Len())
	}
	// Off again: no events.
	h.m.ReportAir(false)
	h.m.Submit(time.Second, &MediumFrame{Radio: 1, Freq: 5180, Data: full, Rates: chain(ofdm(54000), 7)})
	h.m.Advance(2*time.Second, func(ev any) {
		if _, ok := ev.(Air); ok {
			t.Error("air event while ReportAir is off")
		}
	})
}
