package kernellab

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/topo"
	"github.com/emuctl/emuctl/traffic"
	"github.com/emuctl/emuctl/wifi"
	"github.com/emuctl/emuctl/wifi/mobility"
	"github.com/emuctl/emuctl/wifi/model"
)

// TestLabWiFiMobility: mobility on the hwsim backend — a station walks
// from 5 m to 55 m of its AP on waypoints while a UDP flow runs; the
// supervisor places its radio on the medium at ≥ 10 Hz, the run's track
// has it where the path says with the model's SNR, and minstrel_ht, which
// sees every attempt the medium reports, uses slower rates far away than
// near.
func TestLabWiFiMobility(t *testing.T) {
	spec := upHwsimLab(t, `name: eklmob
wifi: {medium: true}
nodes:
  ap1: {kind: ap, wifi: {ssid: mob, mode: n, channel: 1}}
  sta1:
    kind: station
    wifi: {ap: ap1}
    mobility: {waypoints: [{t: 0s, pos: [5, 0]}, {t: 2s, pos: [5, 0]}, {t: 12s, pos: [55, 0]}], t0: traffic}
  srv: {}
links:
  - {endpoints: [ap1, srv]}
`)
	res, err := traffic.Run(context.Background(), "eklmob", []traffic.Flow{{Name: "u", Client: "sta1", Server: "srv", Proto: traffic.UDP,
		Rate: 3_000_000, Size: 1472, Duration: 13 * time.Second, Interval: 500 * time.Millisecond}}, traffic.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ms, err := emu.Mobility("eklmob")
	if err != nil || len(ms) != 1 {
		t.Fatalf("mobility %+v, %v", ms, err)
	}
	st := ms[0]
	t.Logf("sta1: %s, %d moves at %.1f Hz, longest gap %v, finished %v at %v", st.Model, st.Moves, st.RateHz, st.MaxGap, st.Finished, st.Pos)
	if st.RateHz < 10 || !st.Finished || st.Pos != [3]float64{55, 0, 0} {
		t.Errorf("the supervisor placed sta1 at %.1f Hz (want ≥ 10), finished %v at %v (want 55,0,0)", st.RateHz, st.Finished, st.Pos)
	}
	med := wifi.MediumSettings(*spec.WiFiMedium)
	snrAt := func(p [3]float64) float64 {
		loss, _ := med.PathLoss.LossDB(math.Hypot(p[0], math.Hypot(p[1], p[2])))
		return wifi.LabTxPowerDBm - loss - model.NoiseDBm(20, med.NoiseFigureDB)
	}
	path, _ := mobility.New(*spec.Node("sta1").Mobility, nil)
	mbps := func(r string) float64 {
		var x float64
		if i := strings.LastIndex(r, "("); i >= 0 {
			fmt.Sscanf(r[i+1:], "%f", &x)
		}
		return x
	}
	if res.WiFi == nil || len(res.WiFi.Track) < 20 {
		t.Fatalf("the run's track: %+v", res.WiFi)
	}
	var maxOff, maxSNR, nearMbps, farMbps float64
	for _, p := range res.WiFi.Track {
		tt := res.Start.Add(time.Duration(p.TS * float64(time.Second))).Sub(st.Started)
		if tt < 0 || tt > 12*time.Second {
			continue
		}
		w := path.At(tt)
		maxOff = max(maxOff, math.Hypot(p.Pos[0]-w[0], p.Pos[1]-w[1]))
		maxSNR = max(maxSNR, math.Abs(p.SNRdB-snrAt(p.Pos)))
		// minstrel probes and climbs first: judge the best rate it used
		// within 25 m against the best past 45 m
		switch {
		case p.Pos[0] <= 25:
			nearMbps = max(nearMbps, mbps(p.Rate))
		case p.Pos[0] >= 45:
			farMbps = max(farMbps, mbps(p.Rate))
		}
		t.Logf("%5.2f s: %5.1f m, SNR %5.1f dB (model %5.1f), %s", tt.Seconds(), p.Pos[0], p.SNRdB, snrAt(p.Pos), p.Rate)
	}
	t.Logf("track: at most %.2f m off the path, %.3f dB off the model's SNR; data at best %.1f Mbit/s within 25 m, %.1f past 45 m; UDP %.2f Mbit/s of 3",
		maxOff, maxSNR, nearMbps, farMbps, res.Summary[0].GoodputBps/1e6)
	// the emulated VM is slow: a placement may be read up to half a second late
	if maxOff > 5*0.5 || maxSNR > 0.02 {
		t.Errorf("track off the path by %.2f m (want ≤ 2.5) or off the model's SNR by %.3f dB (want ≤ 0.02)", maxOff, maxSNR)
	}
	if farMbps == 0 || farMbps >= nearMbps {
		t.Errorf("minstrel's best rate %.1f Mbit/s within 25 m, %.1f past 45 m: want it to step down", nearMbps, farMbps)
	}
}

// upHwsimLab brings up a Wi-Fi lab from YAML text on hwsim (hostapd and
// wpa_supplicant), taken down when the test ends.
func upHwsimLab(t *testing.T, src string) *topo.Spec {
	t.Helper()
	requireHwsim(t)
	requireTools(t, "hostapd", "hostapd")
	requireTools(t, "wpasupplicant", "wpa_supplicant")
	spec, err := topo.Load(t.Name()+".yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	upWiFi(t, spec)
	return spec
}
