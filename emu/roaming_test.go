package emu_test

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/internal/testutil"
	"github.com/emuctl/emuctl/traffic"
	"github.com/emuctl/emuctl/wifi"
	"github.com/emuctl/emuctl/wifi/mobility"
	"github.com/emuctl/emuctl/wifi/model"
)

// A station of a network of two access points 80 m apart (one SSID, both
// bridged to one switch, channels 1 and 6) walks from ap1 to ap2 and back
// under a CUBIC download from a server behind the switch, on the engine
// backend, at roamSpeed (the waypoints' times follow from it).
const roamLab = `name: twroam
wifi: {backend: engine, medium: {seed: 5}}
nodes:
  s1: {kind: switch}
  ap1: {kind: ap, wifi: {ssid: net, mode: n, channel: 1}}
  ap2: {kind: ap, position: [80, 0], wifi: {ssid: net, mode: n, channel: 6}}
  sta1:
    kind: station
    wifi: {ssid: net}
    mobility: {waypoints: [{t: 0s, pos: [10, 0]}, {t: 1s, pos: [10, 0]}, {t: %[1]gs, pos: [70, 0]}, {t: %[2]gs, pos: [70, 0]}, {t: %[3]gs, pos: [10, 0]}], t0: traffic}
  srv: {}
links:
  - {endpoints: [ap1, s1]}
  - {endpoints: [ap2, s1]}
  - {endpoints: [srv, s1]}
`

// TestLabRoaming: the station starts on the AP it hears best, hands over
// once per pass — out at the first place where ap2 is heard 3 dB better
// (log-distance, exponent 3: x ≥ 44.4 m), back where ap1 is (x ≤ 35.6 m),
// never in between (no ping-pong) — each time off the air for at most
// the exchange's airtime plus 50 ms, and the download goes on through the
// new AP: the switch learned where the station is (the layer-2 update),
// so the frames no longer go to the AP it left. Goodput second by second
// stays below the PHY rate the medium picks for the SNR at the AP the
// station is on, and within 10 % of the 802.11 model's TCP goodput at
// that rate in every second the rate held, no handover was near and the
// machine did not hold the test off the CPU (a stall over 20 ms).
func TestLabRoaming(t *testing.T) {
	v := roamSpeed()
	walk := 60 / v // seconds from 10 m to 70 m
	secs := int(math.Ceil(2 + 2*walk))
	t.Logf("walking at %g m/s: %g s each way, %d s in all", v, walk, secs)
	spec := upLab(t, fmt.Sprintf(roamLab, 1+walk, 2+walk, 2+2*walk))
	ws := emu.WiFiStatus(mustState(t, "twroam"))
	for _, w := range ws {
		if w.Node == "sta1" && (w.AP != "ap1" || len(w.Network) != 2) {
			t.Fatalf("at 10 m of ap1 and 70 m of ap2 the station starts on %s (network %v)", w.AP, w.Network)
		}
	}
	med := wifi.MediumSettings(*spec.WiFiMedium)
	snrAt := func(d float64) float64 {
		loss, _ := med.PathLoss.LossDB(d)
		return wifi.LabTxPowerDBm - loss - model.NoiseDBm(20, med.NoiseFigureDB)
	}
	offAir := wifi.OffAirTime("n", 2412, false, 0)

	// a second in which the machine held this process off the CPU (stalls
	// over 5 ms taking more than 2 % of it) is not judged against the
	// model (the medium and the flow share the host)
	watch := testutil.WatchStalls()
	r := run(t, "twroam", traffic.Flow{Client: "sta1", Server: "srv", Reverse: true, Proto: traffic.TCP, Duration: time.Duration(secs) * time.Second})
	stalls := watch.StopOver5()
	ms, err := emu.Mobility("twroam")
	if err != nil || len(ms) != 1 {
		t.Fatalf("mobility %+v, %v", ms, err)
	}
	path, err := mobility.New(*spec.Node("sta1").Mobility, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r.WiFi == nil {
		t.Fatal("no Wi-Fi in the result")
	}
	hs := r.WiFi.Handovers
	for _, h := range hs {
		at := r.Start.Add(time.Duration(h.TS * float64(time.Second))).Sub(ms[0].Started)
		x := path.At(at)[0]
		t.Logf("handover at %.2f s (%.1f m on the path): %s → %s, SNR %.2f → %.2f dB (model at %.1f m: %.2f / %.2f dB), off the air %.2f ms (configured %v), %d held, %d dropped",
			h.TS, x, h.From, h.To, h.FromSNRdB, h.ToSNRdB, x, snrAt(math.Abs(x-map[string]float64{"ap1": 0, "ap2": 80}[h.From])),
			snrAt(math.Abs(x-map[string]float64{"ap1": 0, "ap2": 80}[h.To])), h.OffAirMs, offAir, h.Held, h.Dropped)
		gain := h.ToSNRdB - h.FromSNRdB
		// placed at 20 Hz at 10 m/s: 0.5 m per step, ≤ 0.4 dB past the
		// threshold (less when slower)
		if gain < 3 || gain > 3.5 {
			t.Errorf("%s → %s with %.2f dB of gain: want the first place past the 3 dB hysteresis", h.From, h.To, gain)
		}
		if !h.Done || h.OffAirMs > float64(offAir)/1e6+50 || h.OffAirMs < float64(offAir)/1e6 {
			t.Errorf("off the air %.2f ms (done %v), want %.2f ms to +50 ms", h.OffAirMs, h.Done, float64(offAir)/1e6)
		}
	}
	if len(hs) != 2 || hs[0].From != "ap1" || hs[0].To != "ap2" || hs[1].From != "ap2" || hs[1].To != "ap1" {
		t.Fatalf("handovers %+v: want ap1 → ap2 on the way out and ap2 → ap1 on the way back", hs)
	}

	// goodput second by second, at the AP the station was on
	f := r.Flows[0]
	perSec := map[int]float64{}
	for _, s := range f.Samples {
		perSec[int(s.TS-f.StartS)] += float64(s.Bytes) * 8
	}
	flowT0 := r.Start.Add(time.Duration(f.StartS * float64(time.Second)))
	hsAt := []float64{hs[0].TS - f.StartS, hs[1].TS - f.StartS}
	judged := 0
	for k := 0; k < secs; k++ {
		g := perSec[k]
		x := path.At(flowT0.Add(time.Duration(k) * time.Second).Sub(ms[0].Started))[0]
		ap := 0.0
		if float64(k) >= hsAt[0] && float64(k+1) <= hsAt[1] {
			ap = 80
		}
		// the best place of the second, at the AP the station was on
		best := math.Abs(x - ap)
		for _, dt := range []float64{0.25, 0.5, 0.75, 1} {
			xx := path.At(flowT0.Add(time.Duration((float64(k) + dt) * float64(time.Second))).Sub(ms[0].Started))[0]
			best = min(best, math.Abs(xx-ap))
		}
		rate := wifi.IdealRate("n", model.Band2G4, 20, snrAt(max(best, 1)))
		phy := rate.Mbps() * 1e6
		// the 802.11 model's goodput where the rate held all second and
		// no handover was near (one second after each)
		worst := math.Abs(x - ap)
		for _, dt := range []float64{0.25, 0.5, 0.75, 1} {
			xx := path.At(flowT0.Add(time.Duration((float64(k) + dt) * float64(time.Second))).Sub(ms[0].Started))[0]
			worst = max(worst, math.Abs(xx-ap))
		}
		steady := k >= 1 && wifi.IdealRate("n", model.Band2G4, 20, snrAt(worst)) == rate
		for _, h := range hsAt {
			steady = steady && (float64(k+1) <= h || float64(k) >= h+1)
		}
		note := ""
		// as a whole run is judged (HostLoad.Starved): stalls over 5 ms
		// taking more than 2 % of the second
		if st := testutil.During(stalls, flowT0.Add(time.Duration(k)*time.Second), flowT0.Add(time.Duration(k+1)*time.Second)); steady && testutil.Lost(st) > 20*time.Millisecond {
			steady = false
			note = fmt.Sprintf(", not judged: the machine held the test off the CPU for %v (%d stalls over 5 ms)", testutil.Lost(st).Round(time.Millisecond), len(st))
		}
		if steady {
			judged++
			a, err := model.Predict(model.Scenario{Mode: model.ModeN, MAC: model.DefaultMAC(model.ModeN, model.Band2G4, true), Rate: rate,
				Stations: 1, AC: model.BE, Proto: "tcp", Payload: 1448, AckEvery: 2, AMPDU: true})
			if err != nil {
				t.Fatal(err)
			}
			note = fmt.Sprintf(", the model's %.2f Mbit/s at %s (%.3f)", a.GoodputMbps, rate, g/1e6/a.GoodputMbps)
			if math.Abs(g/1e6/a.GoodputMbps-1) > 0.10 {
				t.Errorf("second %d at %s: goodput %.2f Mbit/s, the 802.11 model's %.2f (want within 10 %%)", k, rate, g/1e6, a.GoodputMbps)
			}
		}
		t.Logf("second %2d: %.1f m, %.1f m from its AP; goodput %6.2f Mbit/s, PHY rate at the best place %.1f Mbit/s%s", k, x, math.Abs(x-ap), g/1e6, phy/1e6, note)
		if g > phy {
			t.Errorf("second %d: goodput %.2f Mbit/s above the PHY rate %.2f", k, g/1e6, phy/1e6)
		}
	}
	t.Logf("%d seconds judged against the 802.11 model", judged)
	// the download goes on through ap2 after the first handover (the
	// switch sends the station's frames there) and through ap1 after the
	// second
	after1 := perSec[int(hsAt[0])+2] + perSec[int(hsAt[0])+3]
	after2 := perSec[int(hsAt[1])+2] + perSec[int(hsAt[1])+3]
	if after1 < 2*5e6 || after2 < 2*5e6 {
		t.Errorf("goodput 2-4 s after the handovers: %.2f and %.2f Mbit/s, want ≥ 5 (the new AP carries the download)", after1/2e6, after2/2e6)
	}
	if judged == 0 {
		t.Skip("no second whose rate held had the CPU: the goodput was not judged against the 802.11 model")
	}
}

func mustState(t *testing.T, lab string) *emu.State {
	t.Helper()
	st, err := emu.ReadState(lab)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// roamSpeed is TestLabRoaming's walking speed in m/s: 10 by default (the
// test's time in CI), or EMUCTL_ROAM_SPEED (e.g. 1.5, a person's walk).
func roamSpeed() float64 {
	if v, err := strconv.ParseFloat(os.Getenv("EMUCTL_ROAM_SPEED"), 64); err == nil && v > 0 && v <= 30 {
		return v
	}
	return 10
}
