package model

import (
	"math"
	"testing"
	"time"
)

// TestSimulateMediumMatchesSimulate: with every radio hearing every other
// at a good SNR, saturated stations through the medium deliver what the
// shared-channel simulation does (UDP and TCP at 802.11a 54 Mbit/s, 1 and
// 5 stations; 802.11n MCS 7 with A-MPDU).
func TestSimulateMediumMatchesSimulate(t *testing.T) {
	good := func(int, int) Link { return Link{RxDBm: -40, SNRdB: 54, OK: true} }
	for _, c := range []struct {
		name     string
		mode     Mode
		rate     Rate
		n        int
		proto    string
		ampdu    bool
		qos      bool
		collTol  float64
		mpduWant float64
	}{
		{"a-udp-54", ModeA, ofdm(54000), 1, "udp", false, false, 0, 1},
		{"a-udp-54-n5", ModeA, ofdm(54000), 5, "udp", false, false, 0.03, 1},
		{"a-tcp-54", ModeA, ofdm(54000), 1, "tcp", false, false, 0.03, 1},
		{"n-udp-mcs7-ampdu", ModeN, Rate{Class: HT, MCS: 7, WidthMHz: 20, GI: 800 * time.Nanosecond}, 1, "udp", true, true, 0, 28},
	} {
		mac := DefaultMAC(c.mode, Band5G, c.qos)
		mac.RetryLimit = 7
		s := Scenario{Mode: c.mode, MAC: mac, Rate: c.rate, Stations: c.n, AC: BE, Proto: c.proto, Payload: 1472, AckEvery: 2,
			AMPDU: c.ampdu, Duration: 5 * time.Second, Seed: 2}
		if c.proto == "tcp" {
			s.Payload = 1448
		}
		sim, err := Simulate(s)
		if err != nil {
			t.Fatal(err)
		}
		med, err := SimulateMedium(s, good, MediumConfig{})
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: medium %.2f Mbit/s (collision p %.3f, %.1f MPDUs/PPDU), simulation %.2f (%.3f, %.1f)", c.name,
			med.GoodputMbps, med.CollisionP, med.MPDUsPerPPDU, sim.GoodputMbps, sim.CollisionP, sim.MPDUsPerPPDU)
		if r := med.GoodputMbps / sim.GoodputMbps; math.Abs(r-1) > 0.03 {
			t.Errorf("%s: medium/simulation %.3f outside ±3 %%", c.name, r)
		}
		if math.Abs(med.CollisionP-sim.CollisionP) > c.collTol+0.005 {
			t.Errorf("%s: collision p %.3f vs %.3f", c.name, med.CollisionP, sim.CollisionP)
		}
		if math.Abs(med.MPDUsPerPPDU-c.mpduWant) > 0.5 {
			t.Errorf("%s: %.2f MPDUs per PPDU, want %.0f", c.name, med.MPDUsPerPPDU, c.mpduWant)
		}
		if len(med.Nodes) != c.n+1 {
			t.Errorf("%s: %d nodes", c.name, len(med.Nodes))
		}
	}
	if _, err := SimulateMedium(Scenario{Mode: ModeN, MAC: DefaultMAC(ModeN, Band5G, true), Rate: Rate{Class: HT, MCS: 7, WidthMHz: 20, GI: 800 * time.Nanosecond},
		Stations: 1, Proto: "udp", Payload: 1472, AMPDU: true, Window: 32, Duration: time.Second}, good, MediumConfig{}); err == nil {
		t.Error("a Block Ack window of 32 accepted")
	}
}
