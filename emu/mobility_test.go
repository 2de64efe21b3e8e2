package emu_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/emuctl/emuctl/analysis"
	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/internal/testutil"
	"github.com/emuctl/emuctl/topo"
	"github.com/emuctl/emuctl/traffic"
	"github.com/emuctl/emuctl/wifi"
	"github.com/emuctl/emuctl/wifi/mobility"
	"github.com/emuctl/emuctl/wifi/model"
)

// A station walks away from its AP on waypoints while a bulk TCP flow
// runs, on the engine backend: the supervisor places it at ≥ 10 Hz, and
// at every instant sampled its position is the path's, the medium's SNR
// is the model's for that distance (path loss, noise), the station's data
// rate is the ideal rate manager's for that SNR, and both fall as it goes
// (to 65 m, inside the range where the AP detects its preambles);
// the flow's goodput falls with them and never exceeds the PHY rate. The
// instants are the run result's own track (traffic samples the medium).
const mobileLab = `name: twmob
wifi: {backend: engine, medium: {seed: 5}}
nodes:
  ap1: {kind: ap, wifi: {ssid: mob, mode: n, channel: 1}}
  sta1:
    kind: station
    wifi: {ap: ap1}
    mobility: {waypoints: [{t: 0s, pos: [5, 0]}, {t: 1s, pos: [5, 0]}, {t: 13s, pos: [65, 0]}], t0: traffic}
  srv: {}
links:
  - {endpoints: [ap1, srv]}
`

func TestLabMobilityWaypoints(t *testing.T) {
	spec := upLab(t, mobileLab)
	if ms, err := emu.Mobility("twmob"); err != nil || len(ms) != 1 || ms[0].Running {
		t.Fatalf("before traffic: %+v, %v (sta1 waits for t0: traffic)", ms, err)
	}

	// the physics, from the model: log-distance path loss and thermal
	// noise as the file's medium settles them, ns-3's ideal rate manager
	med := wifi.MediumSettings(*spec.WiFiMedium)
	snrAt := func(p [3]float64) float64 {
		loss, err := med.PathLoss.LossDB(math.Hypot(p[0], math.Hypot(p[1], p[2])))
		if err != nil {
			t.Fatal(err)
		}
		return wifi.LabTxPowerDBm - loss - model.NoiseDBm(20, med.NoiseFigureDB)
	}
	rateAt := func(p [3]float64) model.Rate { return wifi.IdealRate("n", model.Band2G4, 20, snrAt(p)) }
	path, err := mobility.New(*spec.Node("sta1").Mobility, nil)
	if err != nil {
		t.Fatal(err)
	}
	// the walk ends where the AP still detects the station's preambles
	// (ns-3's threshold; beyond it the station is cut off)
	if loss, _ := med.PathLoss.LossDB(65); wifi.LabTxPowerDBm-loss < model.DefaultDetectDBm {
		t.Fatalf("at 65 m the AP hears sta1 at %.1f dBm, below the %v dBm preamble detection threshold", wifi.LabTxPowerDBm-loss, model.DefaultDetectDBm)
	}

	r := run(t, "twmob", traffic.Flow{Client: "sta1", Server: "srv", Proto: traffic.TCP, Duration: 13 * time.Second})

	ms, err := emu.Mobility("twmob")
	if err != nil || len(ms) != 1 {
		t.Fatalf("mobility status %+v, %v", ms, err)
	}
	st := ms[0]
	t.Logf("sta1: %s, %d moves at %.1f Hz, longest gap %v, finished %v, at %v", st.Model, st.Moves, st.RateHz, st.MaxGap, st.Finished, st.Pos)
	if st.RateHz < 10 || !st.Finished || st.Pos != [3]float64{65, 0, 0} || st.Error != "" {
		t.Errorf("the supervisor placed sta1 at %.1f Hz (want ≥ 10), finished %v at %v (want its last waypoint, 65,0,0), error %q", st.RateHz, st.Finished, st.Pos, st.Error)
	}

	// the run's result carries the walk (the medium sampled every 250 ms):
	// every place against the path and the model
	if r.WiFi == nil || len(r.WiFi.Track) < 40 {
		t.Fatalf("the result's Wi-Fi track: %+v", r.WiFi)
	}
	tr := r.WiFi.Track
	const speed = 60.0 / 12 // m/s
	var good, rated int
	var maxOff, maxSNR float64
	var first, last analysis.WiFiPlace
	for i, s := range tr {
		tt := r.Start.Add(time.Duration(s.TS * float64(time.Second))).Sub(st.Started)
		if s.Node != "sta1" || i > 0 && (s.TS <= tr[i-1].TS || s.Pos[0] < tr[i-1].Pos[0]) {
			t.Errorf("track[%d] %+v after %+v: want sta1 walking away", i, s, tr[max(0, i-1)])
		}
		if tt < 0 || tt > 13*time.Second {
			continue
		}
		want := path.At(tt)
		// the place was read up to one placement period (50 ms) plus the
		// control socket's round trip after the supervisor set it
		d := math.Hypot(s.Pos[0]-want[0], s.Pos[1]-want[1])
		maxOff, maxSNR = max(maxOff, d), max(maxSNR, math.Abs(s.SNRdB-snrAt(s.Pos)))
		if d > speed*0.25 {
			t.Errorf("at %v sta1 is at %v, the path says %v (%.2f m off)", tt.Round(time.Millisecond), s.Pos, want, d)
		}
		if m := snrAt(s.Pos); math.Abs(s.SNRdB-m) > 0.02 {
			t.Errorf("at %v (%.1f m) the medium's SNR is %.2f dB, the model's %.2f dB", tt.Round(time.Millisecond), s.Pos[0], s.SNRdB, m)
		}
		if s.Rate == "" {
			continue
		}
		rated++
		// the last data frame went out at most ~150 ms before the sample
		back := s.Pos
		back[0] = max(5, back[0]-speed*0.15)
		if s.Rate == rateAt(s.Pos).String() || s.Rate == rateAt(back).String() {
			good++
		} else {
			t.Logf("at %v (%.1f m, %.1f dB) sta1 sent at %s, the model picks %s", tt.Round(time.Millisecond), s.Pos[0], s.SNRdB, s.Rate, rateAt(s.Pos))
		}
		if first.Rate == "" {
			first = s
		}
		last = s
	}
	t.Logf("result track: %d places, at most %.2f m off the path and %.3f dB off the model's SNR; %d with a data rate, %d at the model's rate; first %.2f s %.1f m %.1f dB %s, last %.2f s %.1f m %.1f dB %s",
		len(tr), maxOff, maxSNR, rated, good, first.TS, first.Pos[0], first.SNRdB, first.Rate, last.TS, last.Pos[0], last.SNRdB, last.Rate)
	if rated < 30 || float64(good) < 0.9*float64(rated) {
		t.Errorf("%d of %d places at the model's rate for the SNR (want ≥ 90 %% of ≥ 30)", good, rated)
	}
	if first.SNRdB-last.SNRdB < 30 || rateAt(last.Pos).Mbps() >= rateAt(first.Pos).Mbps()/2 {
		t.Errorf("SNR %.1f → %.1f dB, rate %s → %s: want both to fall as the station walks off", first.SNRdB, last.SNRdB, first.Rate, last.Rate)
	}

	// goodput second by second: below the PHY rate at the best place of
	// that second, and falling from near to far
	f := r.Flows[0]
	perSec := map[int]float64{}
	for _, s := range f.Samples {
		perSec[int(s.TS-f.StartS)] += float64(s.Bytes) * 8
	}
	flowT0 := r.Start.Add(time.Duration(f.StartS * float64(time.Second)))
	for k := 0; k < 13; k++ {
		g, ok := perSec[k]
		if !ok {
			continue
		}
		from := flowT0.Add(time.Duration(k) * time.Second).Sub(st.Started)
		phy := rateAt(path.At(from)).Mbps() * 1e6
		t.Logf("second %2d: sta1 at %5.1f m, model SNR %5.1f dB, %s; goodput %6.2f Mbit/s (%.2f of the PHY rate)",
			k, path.At(from)[0], snrAt(path.At(from)), rateAt(path.At(from)), g/1e6, g/phy)
		if g > phy {
			t.Errorf("second %d: %.2f Mbit/s of goodput above the PHY rate %.2f Mbit/s", k, g/1e6, phy/1e6)
		}
	}
	near := (perSec[1] + perSec[2]) / 2
	far := (perSec[11] + perSec[12]) / 2
	if !(far < 0.6*near) {
		t.Errorf("goodput near the AP %.2f Mbit/s, far %.2f: want it to fall with the rate", near/1e6, far/1e6)
	}
}

// TestLabMobilitySchedule: a schedule starts a station's random walk and
// stops it; the station stays where the walk left it, the medium's
// position is the seeded path's at the stop, and wifi move goes on
// working through the same call.
func TestLabMobilitySchedule(t *testing.T) {
	spec := upLab(t, `name: twmobs
wifi: {backend: engine}
nodes:
  ap1: {kind: ap, wifi: {ssid: mobs, mode: g, channel: 1}}
  sta1: {kind: station, position: [10, 10], mobility: {model: random-walk, bounds: [[0, 0], [20, 20]], speed: [1, 2], interval: 300ms, seed: 4, t0: manual}}
schedules:
  - name: walk
    steps:
      - {at: 500ms, mobility: start, node: sta1}
      - {at: 2500ms, mobility: stop, node: sta1}
`)
	time.Sleep(3500 * time.Millisecond)
	ms, err := emu.Mobility("twmobs")
	if err != nil || len(ms) != 1 {
		t.Fatalf("mobility %+v, %v", ms, err)
	}
	st := ms[0]
	steps, _ := emu.ScheduleLog("twmobs")
	for _, s := range steps {
		t.Logf("step %s: %v late %v %s", s.What, s.Applied.Format("15:04:05.000"), s.Late, s.Error)
		if s.Error != "" {
			t.Errorf("step %s failed: %s", s.What, s.Error)
		}
	}
	t.Logf("sta1: %s, started %v, running %v, %d moves at %.1f Hz (longest gap %v), at %v",
		st.Model, st.Started.Format("15:04:05.000"), st.Running, st.Moves, st.RateHz, st.MaxGap, st.Pos)
	if len(steps) != 2 || st.Running || st.Moves < 30 || st.RateHz < 10 {
		t.Fatalf("after the schedule: %d steps logged, running %v, %d moves at %.1f Hz (want 2 steps, stopped, ≥ 30 moves at ≥ 10 Hz)", len(steps), st.Running, st.Moves, st.RateHz)
	}
	// where the walk stopped: the seed's path at the stop (a placement
	// period's worth of walking either way)
	path, _ := mobility.New(*spec.Node("sta1").Mobility, nil)
	stopAt := steps[1].Applied.Sub(st.Started)
	want := path.At(stopAt)
	med, err := emu.LabMediumStats("twmobs")
	if err != nil {
		t.Fatal(err)
	}
	got := med.Positions["sta1"]
	d := math.Hypot(got[0]-want[0], got[1]-want[1])
	t.Logf("stopped %v into the walk at %.2f,%.2f; the path says %.2f,%.2f (%.2f m apart)", stopAt.Round(time.Millisecond), got[0], got[1], want[0], want[1], d)
	if got != st.Pos || d > 2*0.1 || got[0] < 0 || got[0] > 20 || got[1] < 0 || got[1] > 20 {
		t.Errorf("the medium has sta1 at %v (mobility says %v), the path %v at the stop", got, st.Pos, want)
	}
	if err := emu.SetMediumPosition("twmobs", "sta1", [3]float64{3, 4, 0}); err != nil {
		t.Fatal(err)
	}
	if ms, _ := emu.Mobility("twmobs"); ms[0].Pos != [3]float64{3, 4, 0} {
		t.Errorf("after wifi move to 3,4,0 mobility says sta1 is at %v", ms[0].Pos)
	}
}

// upLab brings up a lab from YAML text, to be taken down when the test
// ends.
func upLab(t *testing.T, src string) *topo.Spec {
	t.Helper()
	testutil.NeedRoot(t)
	spec, err := topo.Load(t.Name()+".yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := emu.Deploy(context.Background(), spec, emu.Options{}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := emu.Down(spec.Name, nil); err != nil {
			t.Error(err)
		}
	})
	return spec
}
