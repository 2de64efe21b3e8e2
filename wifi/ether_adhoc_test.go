package wifi

import (
	"testing"
	"time"

	"github.com/emuctl/emuctl/wifi/model"
)

// detectRangeM is where a radio sending at txDBm is heard at the
// preamble detection threshold (model.DefaultDetectDBm) under pl: beyond
// it no frame of its is detected at all.
func detectRangeM(t testing.TB, pl model.PathLoss, txDBm float64) float64 {
	d, ok := pl.DistanceAt(txDBm - model.DefaultDetectDBm)
	if !ok {
		t.Fatalf("%+v: no distance for a %.1f dB budget", pl, txDBm-model.DefaultDetectDBm)
	}
	return d
}

var (
	ibssA, ibssB, ibssC = [6]byte{0x02, 0, 0, 0, 1, 1}, [6]byte{0x02, 0, 0, 0, 1, 2}, [6]byte{0x02, 0, 0, 0, 1, 3}
	infraSta, infraAP   = [6]byte{0x02, 0, 0, 0, 2, 1}, [6]byte{0x02, 0, 0, 0, 2, 2}
)

// adhocChain is an ad hoc network a - b - c on 802.11g channel 1 with
// the ends out of each other's range (b at 0.6, c at 1.2 detection
// ranges from a), ideal rates, and an access point with a station on the
// same channel beside a (ports 11-15), for the engine medium without a
// socket.
func adhocChain(t *testing.T) (*EtherMedium, float64) {
	pl := model.DefaultPathLoss(2412)
	pl.FreqMHz = 5180 // as MediumSettings gives it: logdistance at ns-3's reference
	d := detectRangeM(t, pl, 20)
	g := func(node string, mac [6]byte, x float64) MediumRadio {
		return MediumRadio{Node: node, MAC: mac, AP: -1, Adhoc: 1, Mode: "g", FreqMHz: 2412, WidthMHz: 20, TxPowerDBm: 20, Pos: [3]float64{x, 0, 0}}
	}
	cfg := MediumConfig{Radios: []MediumRadio{
		g("a", ibssA, 0), g("b", ibssB, 0.6*d), g("c", ibssC, 1.2*d),
		{Node: "sta", MAC: infraSta, AP: 4, Mode: "g", FreqMHz: 2412, WidthMHz: 20, TxPowerDBm: 20, Pos: [3]float64{0, 2, 0}},
		{Node: "ap", MAC: infraAP, AP: -1, Mode: "g", FreqMHz: 2412, WidthMHz: 20, TxPowerDBm: 20, Pos: [3]float64{0, 4, 0}}},
		PathLoss: pl, NoiseFigureDB: 7, RetryLimit: 7}
	s, err := newEtherMedium(cfg, []int{11, 12, 13, 14, 15})
	if err != nil {
		t.Fatal(err)
	}
	s.sock = &etherSock{fd: -1}
	return s, d
}

// TestEtherMediumAdhoc: a member's unicast reaches the member it
// addresses in range (IBSS framing: neither to nor from a DS, the
// network's BSSID as the third address; acknowledged), and never one out
// of range (its retry chain fails; nobody relays); its broadcast reaches
// every member in range once and no radio of the infrastructure BSS on
// the same channel, whose frames in turn no member takes.
func TestEtherMediumAdhoc(t *testing.T) {
	s, d := adhocChain(t)
	t.Logf("detection range %.1f m: a-b %.1f m, b-c %.1f m, a-c %.1f m; SNR a-b %.1f dB, a-c %.1f dB",
		d, 0.6*d, 0.6*d, 1.2*d, s.link(0, 1).SNRdB, s.link(0, 2).SNRdB)
	s.m.ReportAir(true)
	var mpdu []byte
	air := func(a model.Air) {
		if mpdu == nil {
			mpdu = s.MPDU(a.Frames[0])
		}
	}
	delivered := func() map[int]int {
		out := map[int]int{}
		for _, to := range s.sock.to {
			out[to]++
		}
		s.sock.out, s.sock.to = s.sock.out[:0], s.sock.to[:0]
		return out
	}
	now := time.Duration(0)

	// a -> b, in range
	s.submit(now, 0, ethFrame(ibssB, ibssA))
	now = drain(s, now, air)
	if got := delivered(); len(got) != 1 || got[12] != 1 {
		t.Fatalf("a -> b delivered to ports %v, want b's (12) once", got)
	}
	if mpdu[0] != 0x08 || mpdu[1]&0x03 != 0 || [6]byte(mpdu[4:10]) != ibssB || [6]byte(mpdu[10:16]) != ibssA || [6]byte(mpdu[16:22]) != AdhocBSSID(1) {
		t.Errorf("a's frame on the air: % x, want IBSS data (no DS bits) to b from a in BSSID %x", mpdu[:22], AdhocBSSID(1))
	}
	if st, _ := s.m.Stats(0); st.Failed != 0 {
		t.Errorf("a's frame to b in range failed: %+v", st)
	}

	// a -> c, out of range: tried and lost, nothing relays
	s.submit(now, 0, ethFrame(ibssC, ibssA))
	now = drain(s, now, nil)
	if got := delivered(); len(got) != 0 {
		t.Errorf("a -> c (out of range) delivered to ports %v, want none", got)
	}
	if st, _ := s.m.Stats(0); st.Failed != 1 || st.Retries < 6 {
		t.Errorf("a's frame to c out of range: %+v, want its whole retry chain (7 attempts) failed", st)
	}

	// a's broadcast: b only (c out of range, the BSS not a's network)
	bc := [6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	s.submit(now, 0, ethFrame(bc, ibssA))
	now = drain(s, now, nil)
	if got := delivered(); len(got) != 1 || got[12] != 1 {
		t.Errorf("a's broadcast delivered to ports %v, want b's (12) once", got)
	}
	// b's broadcast: a and c
	s.submit(now, 1, ethFrame(bc, ibssB))
	now = drain(s, now, nil)
	if got := delivered(); len(got) != 2 || got[11] != 1 || got[13] != 1 {
		t.Errorf("b's broadcast delivered to ports %v, want a's (11) and c's (13) once each", got)
	}
	// the AP's broadcast and the station's frame stay in their BSS
	s.submit(now, 4, ethFrame(bc, infraAP))
	now = drain(s, now, nil)
	if got := delivered(); len(got) != 1 || got[14] != 1 {
		t.Errorf("the AP's broadcast delivered to ports %v, want its station's (14) only", got)
	}
	s.submit(now, 3, ethFrame(bc, infraSta))
	drain(s, now, nil)
	if got := delivered(); len(got) != 1 || got[15] != 1 {
		t.Errorf("the station's broadcast (to its AP, relayed) delivered to ports %v, want the AP's (15) only", got)
	}

	// a frame for no member of the network is dropped at the sender
	before := s.stats.NoStation
	s.submit(now, 0, ethFrame(infraSta, ibssA))
	if s.stats.NoStation != before+1 {
		t.Errorf("a's frame to a radio of another BSS: NoStation %d, want %d", s.stats.NoStation, before+1)
	}
}
