package model

import (
	"math"
	"testing"
	"time"
)

const us = time.Microsecond

func ofdm(k int) Rate { return Rate{Class: OFDM, Kbps: k} }

func ht(mcs, width int, gi time.Duration) Rate {
	return Rate{Class: HT, MCS: mcs, WidthMHz: width, GI: gi}
}

// TestTxTime checks airtimes against the 802.11 TXTIME formulas worked by
// hand (IEEE 802.11-2016 17.4.3, 19.4.3, 21.4.3; 16.3.4 for DSSS).
func TestTxTime(t *testing.T) {
	lgi, sgi := 800*time.Nanosecond, 400*time.Nanosecond
	cases := []struct {
		name string
		r    Rate
		psdu int
		band Band
		want time.Duration
	}{
		{"11a 54 1538 B", ofdm(54000), 1538, Band5G, 252 * us},          // 20 + 4·⌈12326/216⌉
		{"11a 6 1538 B", ofdm(6000), 1538, Band5G, 2076 * us},           // 20 + 4·⌈12326/24⌉ = 20 + 4·514
		{"11a ACK at 24", ofdm(24000), 14, Band5G, 28 * us},             // 20 + 4·⌈134/96⌉
		{"11a ACK at 6", ofdm(6000), 14, Band5G, 44 * us},               // 20 + 4·⌈134/24⌉
		{"11a BA at 24", ofdm(24000), 32, Band5G, 32 * us},              // 20 + 4·⌈278/96⌉
		{"11g 54 1538 B (+6 µs)", ofdm(54000), 1538, Band2G4, 258 * us}, // signal extension
		{"11b 11 long", Rate{Class: DSSS, Kbps: 11000}, 1538, Band2G4, (192 + 1119) * us},
		{"11b 1 ACK", Rate{Class: DSSS, Kbps: 1000}, 14, Band2G4, (192 + 112) * us},
		{"11b 2 short", Rate{Class: DSSS, Kbps: 2000, ShortPreamble: true}, 14, Band2G4, (96 + 56) * us},
		{"HT MCS7 20 LGI", ht(7, 20, lgi), 1538, Band5G, 228 * us},                                              // 36 + 4·⌈12326/260⌉
		{"HT MCS7 20 SGI", ht(7, 20, sgi), 1538, Band5G, 212 * us},                                              // 36 + 4·⌈48·3.6/4⌉
		{"HT MCS15 40 LGI", ht(15, 40, lgi), 1538, Band5G, 88 * us},                                             // 32 + 2·4 (two HT-LTFs) + 4·⌈12326/1080⌉
		{"VHT MCS9 80 1SS LGI", Rate{Class: VHT, MCS: 9, NSS: 1, WidthMHz: 80, GI: lgi}, 1542, Band5G, 72 * us}, // 36 + 4 (one VHT-LTF) + 4·⌈12358/1560⌉
		{"HE MCS11 20 1SS GI0.8", Rate{Class: HE, MCS: 11, NSS: 1, WidthMHz: 20, GI: lgi}, 1542, Band5G,
			36*us + 7200*time.Nanosecond + 7*13600*time.Nanosecond}, // ⌈12352/1950⌉ = 7 symbols of 13.6 µs
	}
	for _, c := range cases {
		if got := TxTime(c.r, c.psdu, c.band); got != c.want {
			t.Errorf("%s: TxTime = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestRates(t *testing.T) {
	lgi, sgi := 800*time.Nanosecond, 400*time.Nanosecond
	cases := []struct {
		r    Rate
		want float64
	}{
		{ht(7, 20, lgi), 65}, {ht(7, 20, sgi), 72.2}, {ht(7, 40, lgi), 135}, {ht(15, 40, sgi), 300},
		{Rate{Class: VHT, MCS: 9, NSS: 1, WidthMHz: 80, GI: lgi}, 390},
		{Rate{Class: VHT, MCS: 9, NSS: 2, WidthMHz: 80, GI: sgi}, 866.7},
		{Rate{Class: HE, MCS: 11, NSS: 1, WidthMHz: 20, GI: lgi}, 143.4},
		{Rate{Class: HE, MCS: 11, NSS: 2, WidthMHz: 80, GI: lgi}, 1201},
		{Rate{Class: HE, MCS: 0, NSS: 1, WidthMHz: 20, GI: 3200 * time.Nanosecond}, 7.3},
	}
	for _, c := range cases {
		if err := c.r.Validate(); err != nil {
			t.Fatalf("%v: %v", c.r, err)
		}
		if got := c.r.Mbps(); math.Abs(got-c.want) > 0.06 {
			t.Errorf("%v: %.2f Mbit/s, want %.1f", c.r, got, c.want)
		}
	}
	if err := (Rate{Class: VHT, MCS: 9, NSS: 1, WidthMHz: 20, GI: lgi}).Validate(); err == nil {
		t.Error("VHT MCS 9 at 20 MHz with one stream must not exist")
	}
}

func TestControlRate(t *testing.T) {
	basic5 := []int{6000, 12000, 24000}
	cck := []int{1000, 2000, 5500, 11000}
	cases := []struct {
		data  Rate
		basic []int
		want  int
	}{
		{ofdm(54000), basic5, 24000}, {ofdm(18000), basic5, 12000}, {ofdm(9000), basic5, 6000},
		{ofdm(54000), cck, 24000}, // no OFDM basic rate: the mandatory 24
		{ht(7, 20, 800*time.Nanosecond), basic5, 24000}, {ht(2, 20, 800*time.Nanosecond), basic5, 12000},
		{Rate{Class: DSSS, Kbps: 11000}, []int{1000, 2000}, 2000},
	}
	for _, c := range cases {
		if got := ControlRate(c.data, c.basic); got.Kbps != c.want {
			t.Errorf("ACK for %v with basic %v: %v, want %d kbit/s", c.data, c.basic, got, c.want)
		}
	}
}

// docMAC is the reference's "WMM BE, AIFS 43 µs" setting at 5 GHz with
// 1538-byte MPDUs, or its "DIFS 34 µs" variant.
func docScenario(proto string, k int, difs bool) Scenario {
	mac := DefaultMAC(ModeA, Band5G, true)
	if difs {
		mac.Param[BE] = EDCA{AIFSN: 2, CWMin: 15, CWMax: 1023}
	}
	return Scenario{Mode: ModeA, MAC: mac, Rate: ofdm(54000), Stations: 1, Proto: proto, Payload: map[string]int{"udp": 1472, "tcp": 1448}[proto], AckEvery: k}
}

// TestPredictDoc compares the analytic model with the design reference's
// worked numbers (research/wifi-medium.md §5, computed there by hand).
func TestPredictDoc(t *testing.T) {
	cases := []struct {
		proto string
		k     int
		difs  bool
		want  float64
	}{
		{"udp", 0, true, 29.6}, {"tcp", 1, true, 20.0}, {"tcp", 2, true, 23.7}, {"tcp", 8, true, 27.6}, {"tcp", 64, true, 28.9},
		{"udp", 0, false, 29.0}, {"tcp", 1, false, 19.4}, {"tcp", 2, false, 23.1}, {"tcp", 8, false, 26.9}, {"tcp", 64, false, 28.3},
	}
	for _, c := range cases {
		s := docScenario(c.proto, c.k, c.difs)
		a, err := Predict(s)
		if err != nil {
			t.Fatal(err)
		}
		if math.Abs(a.GoodputMbps-c.want) > 0.06 {
			t.Errorf("%s K=%d difs=%v: %.2f Mbit/s, want %.1f", c.proto, c.k, c.difs, a.GoodputMbps, c.want)
		}
	}
	if ds := docScenario("udp", 0, true); ds.exchange(1, 1538).Total() != 397500*time.Nanosecond {
		t.Errorf("data exchange %v, want 397.5 µs", ds.exchange(1, 1538).Total())
	}
}

// TestAMPDULimits: HT MCS 7 at 20 MHz fits 28 MPDUs of 1538 B in
// aPPDUMaxTime (5.484 ms), 42 would fit the 65 535-byte limit.
func TestAMPDULimits(t *testing.T) {
	r := ht(7, 20, 800*time.Nanosecond)
	if n := MaxMPDUsPerAMPDU(r, 1538, Band5G, 64); n != 28 {
		t.Errorf("MCS7 20 MHz: %d MPDUs, want 28", n)
	}
	r40 := ht(15, 40, 400*time.Nanosecond)
	if n := MaxMPDUsPerAMPDU(r40, 1538, Band5G, 64); n != 42 {
		t.Errorf("MCS15 40 MHz SGI: %d MPDUs, want 42 (65 535-byte limit)", n)
	}
	if n := MaxMPDUsPerAMPDU(Rate{Class: VHT, MCS: 9, NSS: 2, WidthMHz: 80, GI: 400 * time.Nanosecond}, 1538, Band5G, 64); n != 64 {
		t.Errorf("VHT80 MCS9 2SS: %d MPDUs, want 64 (the Block Ack window)", n)
	}
}
