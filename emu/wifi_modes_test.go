package emu_test

import (
	"math"
	"testing"
	"time"

	"github.com/emuctl/emuctl/internal/testutil"
	"github.com/emuctl/emuctl/traffic"
	"github.com/emuctl/emuctl/units"
	"github.com/emuctl/emuctl/wifi/model"
)

// TestWiFiEngineModesAB: 802.11a (5 GHz OFDM at 54 Mbit/s) and 802.11b
// (2.4 GHz CCK at 11 Mbit/s, long and short preamble) on the engine
// backend, one station sending UDP to a server behind its AP: goodput
// within ±5 % of the model's simulation of the same channel (wifi/model,
// which make validate-wifi holds to ns-3), and every delivered datagram
// one PPDU of the mode's airtime — 802.11b's 192 µs long preamble, 96 µs
// short, 8/11 µs per byte at 11 Mbit/s — as the medium's airtime counter
// says.
func TestWiFiEngineModesAB(t *testing.T) {
	testutil.NeedRoot(t)
	for _, c := range []struct {
		name, ap string
		mode     model.Mode
		band     model.Band
		rate     model.Rate
	}{
		{"a-54", "{ssid: a, mode: a, channel: 36, rate: 54mbit}", model.ModeA, model.Band5G, model.Rate{Class: model.OFDM, Kbps: 54000}},
		{"b-11-long", "{ssid: b, mode: b, channel: 1, rate: 11mbit}", model.ModeB, model.Band2G4, model.Rate{Class: model.DSSS, Kbps: 11000}},
		{"b-11-short", "{ssid: b, mode: b, channel: 1, rate: 11mbit, preamble: short}", model.ModeB, model.Band2G4, model.Rate{Class: model.DSSS, Kbps: 11000, ShortPreamble: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			name := "twm" + c.name[:1] + c.name[len(c.name)-1:]
			upLab(t, `name: `+name+`
wifi: {backend: engine, medium: {retry_limit: 7, seed: 3}}
nodes:
  ap1: {kind: ap, wifi: `+c.ap+`}
  sta1: {kind: station, position: [5, 0, 0], wifi: {ap: ap1}}
  srv: {}
links:
  - {endpoints: [ap1, srv]}
`)
			// the model: the same channel, saturated, no errors (5 m)
			mac := model.DefaultMAC(c.mode, c.band, false)
			mac.RetryLimit = 7
			sc := model.Scenario{Mode: c.mode, MAC: mac, Rate: c.rate, Stations: 1, Proto: "udp", Payload: 1472, Duration: 20 * time.Second, Seed: 1}
			near := func(int, int) model.Link { return model.Link{RxDBm: -47.7, SNRdB: 46.3, OK: true} }
			m, err := model.SimulateMedium(sc, near, model.MediumConfig{})
			if err != nil {
				t.Fatal(err)
			}
			offered := units.BitRate(1.3 * c.rate.Mbps() * 1e6)
			r := run(t, name, traffic.Flow{Client: "sta1", Server: "srv", Proto: traffic.UDP, Rate: offered})
			within(t, c.name+" UDP sta1 → srv", steady(r, 0), m.GoodputMbps*1e6, 0.05)
			var sta1 *struct {
				share    float64
				attempts uint64
				rate     string
			}
			for _, x := range r.WiFi.Radios {
				if x.Node == "sta1" {
					sta1 = &struct {
						share    float64
						attempts uint64
						rate     string
					}{x.AirtimeShare, x.Attempts, x.Rate}
				}
			}
			// one PPDU per datagram: 1472 + 8 + 20 bytes of IP, LLC/SNAP
			// 8, a 24-byte non-QoS header, FCS 4
			ppdu := model.TxTime(c.rate, 1500+8+24+4, c.band)
			want := float64(sta1.attempts) * ppdu.Seconds() / r.WiFi.DurationS
			t.Logf("%s: sta1 sent %d PPDUs of %v at %s: airtime share %.3f, from its PPDUs %.3f", c.name, sta1.attempts, ppdu, sta1.rate, sta1.share, want)
			if math.Abs(sta1.share/want-1) > 0.01 {
				t.Errorf("airtime share %.3f, want %.3f", sta1.share, want)
			}
			if c.mode == model.ModeB {
				pre := map[bool]time.Duration{false: 192 * time.Microsecond, true: 96 * time.Microsecond}[c.rate.ShortPreamble]
				if want := pre + time.Duration(math.Ceil(8*1536/11.0))*time.Microsecond; ppdu != want {
					t.Errorf("an 11 Mbit/s PPDU of 1536 bytes: %v, want %v", ppdu, want)
				}
			}
		})
	}
}
