package kernellab

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/traffic"
)

// TestLabWiFiRoaming: roaming on the hwsim backend, where wpa_supplicant
// roams as on hardware. Two APs of one network (SSID campus, channels 1
// and 6, bridged to one switch) 80 m apart; a station walks from 10 m of
// ap1 to 10 m of ap2 under a UDP flow from a server behind the switch.
// wpa_supplicant (bgscan simple:2:-70:30: a scan every 2 s below −70 dBm)
// finds ap2 and reassociates; the medium sees the station's data go to
// ap2's BSSID and records the handover (the SNRs then, and the gap in the
// station's data as its time off the air); wpa_supplicant's BSSID is
// ap2's; and the flow's datagrams reach the station through ap2 after it
// (the switch learned where it is from the layer-2 update mac80211 sends
// when hostapd adds the station).
func TestLabWiFiRoaming(t *testing.T) {
	roamWalk(t, "campus", "campus", "campus")
}

// TestLabWiFiRoamingNetworks: as TestLabWiFiRoaming, with two networks
// (ap1's SSID campus-a, ap2's campus-b, both WPA2) and a station of both
// (ssid: [campus-a, campus-b]), as in Mininet-WiFi's handover example:
// wpa_supplicant holds one network block each and, as ap1 fades, picks
// ap2's network by signal and associates there; the wired side learns
// where the station is as within one network.
func TestLabWiFiRoamingNetworks(t *testing.T) {
	roamWalk(t, "[campus-a, campus-b]", "campus-a, security: wpa2, passphrase: roaming-both", "campus-b, security: wpa2, passphrase: roaming-both")
}

// roamWalk walks sta1 (its ssid: staSSID) from ap1 (SSID ap1SSID) to ap2
// (ap2SSID, with more keys after it) under a downlink UDP flow.
func roamWalk(t *testing.T, staSSID, ap1SSID, ap2SSID string) {
	upHwsimLab(t, fmt.Sprintf(`name: eklroam
wifi: {medium: true}
nodes:
  s1: {kind: switch}
  ap1: {kind: ap, wifi: {ssid: %s, mode: g, channel: 1}}
  ap2: {kind: ap, position: [80, 0], wifi: {ssid: %s, mode: g, channel: 6}}
  sta1:
    kind: station
    wifi: {ssid: %s}
    mobility: {waypoints: [{t: 0s, pos: [10, 0]}, {t: 2s, pos: [10, 0]}, {t: 22s, pos: [70, 0]}], t0: traffic}
  srv: {}
links:
  - {endpoints: [ap1, s1]}
  - {endpoints: [ap2, s1]}
  - {endpoints: [srv, s1]}
`, ap1SSID, ap2SSID, staSSID))
	st, err := emu.ReadState("eklroam")
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range emu.WiFiStatus(st) {
		if w.Node == "sta1" {
			t.Logf("before: sta1 %s, BSSID %s, on %s of %v", w.State, w.BSSID, w.AP, w.Network)
			if w.AP != "ap1" || len(w.Network) != 2 {
				t.Fatalf("at 10 m of ap1 and 70 m of ap2 wpa_supplicant chose %q (network %v)", w.AP, w.Network)
			}
		}
	}
	// the medium knows each AP's range on hwsim too (the distance at which
	// its BSS's lowest rate's SNR threshold is reached: emuctl ui's map)
	if ms, err := emu.LabMediumStats("eklroam"); err != nil || ms.Ranges["ap1"] < 50 || ms.Ranges["ap1"] != ms.Ranges["ap2"] {
		t.Errorf("the APs' ranges on hwsim: %v (%v)", ms.Ranges, err)
	} else {
		t.Logf("ranges: %v m", ms.Ranges)
	}
	res, err := traffic.Run(context.Background(), "eklroam", []traffic.Flow{{Name: "u", Client: "sta1", Server: "srv", Reverse: true, Proto: traffic.UDP,
		Rate: 1_000_000, Size: 1000, Duration: 25 * time.Second, Interval: 500 * time.Millisecond}}, traffic.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st, _ = emu.ReadState("eklroam")
	var hs int
	for _, w := range emu.WiFiStatus(st) {
		if w.Node != "sta1" {
			continue
		}
		t.Logf("after: sta1 %s, BSSID %s, on %s", w.State, w.BSSID, w.AP)
		for _, h := range w.Handovers {
			t.Logf("handover %s: %s → %s, SNR %.1f → %.1f dB, off the air (the gap in its data) %v", h.Time.Format("15:04:05.000"), h.From, h.To, h.FromSNRdB, h.ToSNRdB, h.OffAir)
		}
		hs = len(w.Handovers)
		if w.AP != "ap2" || hs == 0 || w.Handovers[0].From != "ap1" || w.Handovers[0].To != "ap2" {
			t.Errorf("at 10 m of ap2 sta1 is on %q after %d handover(s): want it to have roamed from ap1 to ap2", w.AP, hs)
		}
	}
	if res.WiFi != nil {
		for _, h := range res.WiFi.Handovers {
			t.Logf("in the run's result: %.2f s %s → %s, off the air %.1f ms", h.TS, h.From, h.To, h.OffAirMs)
		}
	}
	// the datagrams reach the station through ap2 at the end of the walk
	f := res.Flows[0]
	var last float64
	for _, s := range f.Samples {
		if s.TS-f.StartS > 22 && s.TS-f.StartS <= 25 { // received in the flow's last 3 s
			last += float64(s.Bytes) * 8
		}
	}
	t.Logf("goodput in the last 3 s (sta1 at 70 m, 10 m from ap2): %.2f Mbit/s of 1 offered", last/3e6)
	if last/3e6 < 0.5 {
		t.Errorf("after the handover the server's datagrams reach sta1 at %.2f Mbit/s of 1: want ≥ 0.5 (the wired side learned where it is)", last/3e6)
	}
}

// TestLabWiFiRoamingWalk: on hwsim, a station walks at 1.5 m/s from 10 m
// of ap1 to 10 m of ap2 and back (40 s each way) under a CUBIC download
// from a server behind the switch. wpa_supplicant hands over once per
// pass — ap1 → ap2 on the way out, ap2 → ap1 on the way back, no
// ping-pong — and the medium reports each handover's time off the air as
// measured (the gap in the station's data); the download goes on after
// each. (Goodput against the 802.11 model is the engine's test: the
// emulated VM carries a few Mbit/s at best.)
func TestLabWiFiRoamingWalk(t *testing.T) {
	upHwsimLab(t, `name: eklwalk
wifi: {medium: true}
nodes:
  s1: {kind: switch}
  ap1: {kind: ap, wifi: {ssid: campus, mode: g, channel: 1}}
  ap2: {kind: ap, position: [80, 0], wifi: {ssid: campus, mode: g, channel: 6}}
  sta1:
    kind: station
    wifi: {ssid: campus}
    mobility: {waypoints: [{t: 0s, pos: [10, 0]}, {t: 1s, pos: [10, 0]}, {t: 41s, pos: [70, 0]}, {t: 42s, pos: [70, 0]}, {t: 82s, pos: [10, 0]}], t0: traffic}
  srv: {}
links:
  - {endpoints: [ap1, s1]}
  - {endpoints: [ap2, s1]}
  - {endpoints: [srv, s1]}
`)
	res, err := traffic.Run(context.Background(), "eklwalk", []traffic.Flow{{Name: "dl", Client: "sta1", Server: "srv", Reverse: true, Proto: traffic.TCP,
		Sock: traffic.SockOpts{CC: "cubic"}, Duration: 84 * time.Second, Interval: time.Second}}, traffic.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.WiFi == nil {
		t.Fatal("no Wi-Fi in the result")
	}
	hs := res.WiFi.Handovers
	for _, h := range hs {
		t.Logf("handover at %.2f s: %s → %s, off the air %.1f ms", h.TS-res.Flows[0].StartS, h.From, h.To, h.OffAirMs)
	}
	if len(hs) != 2 || hs[0].From != "ap1" || hs[0].To != "ap2" || hs[1].From != "ap2" || hs[1].To != "ap1" {
		t.Fatalf("handovers %d: want ap1 → ap2 on the way out and ap2 → ap1 on the way back, no more", len(hs))
	}
	f := res.Flows[0]
	after := func(from, to float64) float64 {
		var b float64
		for _, s := range f.Samples {
			if s.TS-f.StartS > from && s.TS-f.StartS <= to {
				b += float64(s.Bytes) * 8
			}
		}
		return b / (to - from)
	}
	out, back := hs[0].TS-f.StartS, hs[1].TS-f.StartS
	g1, g2 := after(out+2, min(out+12, back)), after(back+2, back+12)
	t.Logf("goodput in the 10 s after each handover (from 2 s after): %.2f and %.2f Mbit/s", g1/1e6, g2/1e6)
	if g1 <= 0 || g2 <= 0 {
		t.Errorf("the download stopped after a handover: %.2f and %.2f Mbit/s", g1/1e6, g2/1e6)
	}
}
