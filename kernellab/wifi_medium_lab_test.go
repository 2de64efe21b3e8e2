package kernellab

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/topo"
	"github.com/emuctl/emuctl/wifi"
	"github.com/emuctl/emuctl/wifi/model"
	"github.com/vishvananda/netns"
)

// mediumLab: an 802.11g access point bridged to a wired server, two
// stations, every data frame at a fixed 6 Mbit/s (rates the emulated VM
// can carry), served by emuctl's medium.
const mediumLab = `name: eklmed
wifi: {medium: {ampdu: false}}
nodes:
  ap1: {kind: ap, wifi: {ssid: med, mode: g, channel: 1, rate: 6mbit}}
  sta1: {kind: station, position: [3, 0, 0], wifi: {ap: ap1, rate: 6mbit}}
  sta2: {kind: station, position: [0, 3, 0], wifi: {ap: ap1, rate: 6mbit}}
  srv: {}
links:
  - {endpoints: [ap1, srv]}
`

// udpFlows sends 1472-byte datagrams from each sender to the server at
// offered bit/s each for dur and returns each flow's goodput after warm.
func udpFlows(t *testing.T, lab string, from []string, to string, offered float64, dur, warm time.Duration) []float64 {
	t.Helper()
	dst, _ := emu.PrimaryAddr(mustNode(t, lab, to))
	var conns []*net.UDPConn
	for range from {
		var c *net.UDPConn
		if err := emu.InNode(lab, to, func() (err error) {
			c, err = net.ListenUDP("udp", &net.UDPAddr{IP: net.IP(dst.AsSlice())})
			return
		}); err != nil {
			t.Fatal(err)
		}
		c.SetReadBuffer(4 << 20)
		conns = append(conns, c)
	}
	got := make([]float64, len(from))
	var wg sync.WaitGroup
	start := time.Now()
	for i, c := range conns {
		wg.Add(2)
		go func(i int, c *net.UDPConn) { // receiver
			defer wg.Done()
			buf := make([]byte, 2048)
			var bytes int
			for {
				c.SetReadDeadline(start.Add(dur + time.Second))
				n, err := c.Read(buf)
				if err != nil {
					break
				}
				if el := time.Since(start); el > warm && el <= dur {
					bytes += n
				}
			}
			got[i] = float64(bytes) * 8 / (dur - warm).Seconds()
		}(i, c)
		go func(i int, addr *net.UDPAddr) { // paced sender
			defer wg.Done()
			var s *net.UDPConn
			if err := emu.InNode(lab, from[i], func() (err error) { s, err = net.DialUDP("udp", nil, addr); return }); err != nil {
				t.Error(err)
				return
			}
			defer s.Close()
			// Every 2 ms, send what is due by then (Go's timers do not
			// sleep less than a millisecond).
			payload := make([]byte, 1472)
			perSec := offered / (1472 * 8)
			sent := 0.0
			for el := time.Since(start); el < dur; el = time.Since(start) {
				for due := el.Seconds() * perSec; sent < due; sent++ {
					s.Write(payload)
				}
				time.Sleep(2 * time.Millisecond)
			}
		}(i, c.LocalAddr().(*net.UDPAddr))
	}
	wg.Wait()
	for _, c := range conns {
		c.Close()
	}
	return got
}

func mustNode(t *testing.T, lab, name string) *topo.Node {
	st, err := emu.ReadState(lab)
	if err != nil {
		t.Fatal(err)
	}
	return st.Spec.Node(name)
}

// modelGoodput is the pure model's saturation goodput for the lab's hop.
func modelGoodput(t *testing.T, stations int, proto string, ackEvery int) float64 {
	sc := model.Scenario{Mode: model.ModeG, MAC: model.DefaultMAC(model.ModeG, model.Band2G4, true),
		Rate: model.Rate{Class: model.OFDM, Kbps: 6000}, Stations: stations, Proto: proto,
		Payload: map[string]int{"udp": 1472, "tcp": 1448}[proto], AckEvery: ackEvery, Duration: 20 * time.Second, Seed: 1}
	r, err := model.Simulate(sc)
	if err != nil {
		t.Fatal(err)
	}
	return r.GoodputMbps * 1e6
}

// TestLabWiFiMedium runs a lab on emuctl's medium (issue #14, validation
// 3): UDP goodput within ±5 % of the pure model for the same settings
// (less the airtime the AP's beacons take, read from the medium); two
// saturated stations share the airtime fairly and together get less than
// one alone (collisions); a second medium in the lab's namespace is
// refused; down leaves nothing.
func TestLabWiFiMedium(t *testing.T) {
	requireHwsim(t)
	requireTools(t, "hostapd", "hostapd")
	requireTools(t, "wpasupplicant", "wpa_supplicant")
	spec, err := topo.Load("medium.yaml", []byte(mediumLab))
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	upWiFi(t, spec)
	t.Logf("up on the medium, associated: %v", time.Since(t0).Round(time.Millisecond))
	ms, err := emu.LabMediumStats("eklmed")
	if err != nil {
		t.Fatal(err)
	}
	if ms.FramesIn == 0 || ms.Deliveries == 0 {
		t.Fatalf("the medium saw no frames: %+v", ms)
	}
	t.Logf("medium after association: %d frames in, %d deliveries, %d statuses, %d kernel error replies, late mean %.0f µs max %.0f µs",
		ms.FramesIn, ms.Deliveries, ms.Statuses, ms.NLErrors, ms.LateMeanUs, ms.LateMaxUs)

	// The kernel refuses a second medium for the lab's radios.
	h, err := netns.GetFromPath(filepath.Join(emu.NetnsDir, "eklmed._w"))
	if err != nil {
		t.Fatal(err)
	}
	hw, err := wifi.DialHwsim(int(h))
	h.Close()
	if err != nil {
		t.Fatal(err)
	}
	if s, err := hw.RegisterMedium(); !errors.Is(err, wifi.ErrMediumBusy) {
		t.Errorf("second medium: %v, want ErrMediumBusy", err)
		if s != nil {
			s.Close()
		}
	}
	hw.Close()

	// One station, UDP offered at 1.3 × the model's capacity.
	want1 := modelGoodput(t, 1, "udp", 0)
	before, _ := emu.LabMediumStats("eklmed")
	g := udpFlows(t, "eklmed", []string{"sta1"}, "srv", 1.3*want1, 10*time.Second, 3*time.Second)
	after, _ := emu.LabMediumStats("eklmed")
	apAir := (after.Radios["ap1"].Airtime - before.Radios["ap1"].Airtime).Seconds() / (after.Uptime - before.Uptime).Seconds()
	exp := want1 * (1 - apAir)
	t.Logf("UDP sta1 → srv: %.2f Mbit/s; model %.2f Mbit/s, the AP's own airtime (beacons) %.1f %% → %.2f; ratio %.3f; medium late mean %.0f µs max %.0f µs",
		g[0]/1e6, want1/1e6, 100*apAir, exp/1e6, g[0]/exp, after.LateMeanUs, after.LateMaxUs)
	st1 := after.Radios["sta1"]
	t.Logf("sta1 radio: %+v", st1)
	if math.Abs(g[0]/exp-1) > 0.05 {
		t.Errorf("UDP goodput %.2f Mbit/s is not within ±5 %% of the model's %.2f", g[0]/1e6, exp/1e6)
	}
	if g[0] > 6e6 {
		t.Errorf("%.1f Mbit/s over a 6 Mbit/s PHY: frames are not paying airtime", g[0]/1e6)
	}

	// Two saturated stations: fair shares, and less together than one
	// alone (collisions and the doubled backoff).
	want2 := modelGoodput(t, 2, "udp", 0)
	g2 := udpFlows(t, "eklmed", []string{"sta1", "sta2"}, "srv", 1.3*want1, 10*time.Second, 3*time.Second)
	sum := g2[0] + g2[1]
	jain := sum * sum / (2 * (g2[0]*g2[0] + g2[1]*g2[1]))
	end, _ := emu.LabMediumStats("eklmed")
	t.Logf("UDP sta1 + sta2: %.2f + %.2f = %.2f Mbit/s (model %.2f), Jain %.3f; collisions sta1 %d sta2 %d",
		g2[0]/1e6, g2[1]/1e6, sum/1e6, want2/1e6, jain, end.Radios["sta1"].Collisions, end.Radios["sta2"].Collisions)
	if jain < 0.95 {
		t.Errorf("Jain's index %.3f < 0.95", jain)
	}
	if sum >= g[0]*1.02 {
		t.Errorf("two stations together %.2f Mbit/s ≥ one alone %.2f", sum/1e6, g[0]/1e6)
	}
	if end.Radios["sta1"].Collisions == 0 || end.Radios["sta2"].Collisions == 0 {
		t.Errorf("two saturated stations never collided: %+v", end.Radios)
	}

	// TCP (CUBIC, Linux's delayed ACKs) through the medium, against the
	// model's TCP with one ACK per two segments.
	dst, _ := emu.PrimaryAddr(spec.Node("srv"))
	wantT := modelGoodput(t, 1, "tcp", 2)
	tb, _ := emu.LabMediumStats("eklmed")
	gt := tcpFlow(t, "eklmed", "sta1", "srv", dst, "cubic", 10*time.Second, 3*time.Second, nil)
	ta, _ := emu.LabMediumStats("eklmed")
	t.Logf("TCP sta1 → srv: %.2f Mbit/s; model (ACK every 2) %.2f, ratio %.3f; frames sta1 %d, ap1 %d (data per ACK %.2f); medium late mean %.0f µs",
		gt/1e6, wantT/1e6, gt/wantT, ta.Radios["sta1"].Frames-tb.Radios["sta1"].Frames, ta.Radios["ap1"].Frames-tb.Radios["ap1"].Frames,
		float64(ta.Radios["sta1"].Frames-tb.Radios["sta1"].Frames)/float64(max(1, ta.Radios["ap1"].Frames-tb.Radios["ap1"].Frames)), ta.LateMeanUs)
	// TCP's sender waits for the driver to free each frame (TSQ), that is
	// for the medium's TX status: a medium running late holds TCP below
	// the channel's capacity, so the comparison is judged only on a run
	// whose medium kept time (the emulated VM rarely does: the run is then
	// invalid for TCP, like a suite run that lacked CPU). UDP above does
	// not depend on it.
	if gt > wantT*1.05 {
		t.Errorf("TCP goodput %.2f Mbit/s above the model's %.2f", gt/1e6, wantT/1e6)
	}
	if late := ta.LateMeanUs; late <= 500 {
		if gt < wantT*0.95 {
			t.Errorf("TCP goodput %.2f Mbit/s, model %.2f (want within ±5 %% on a medium on time: late mean %.0f µs)", gt/1e6, wantT/1e6, late)
		}
	} else {
		t.Logf("TCP vs model NOT JUDGED (invalid run): the medium ran %.1f ms late on average, which throttles TCP through TSQ; needs a medium on time (≤ 0.5 ms), i.e. a VM with CPU to spare or bare metal", late/1000)
	}
	_ = context.Background
}

// TestLabWiFiMediumMinstrel: an 802.11n lab on the medium without fixed
// rates. mac80211's rate control (minstrel_ht) picks the rates from the
// medium's truthful statuses; the medium refuses Block Ack agreements
// (with one, minstrel_ht ignores hwsim's statuses and never leaves the
// lowest rate), so data goes at HT rates and a 6 Mbit/s UDP flow is
// carried in full — at 1 Mbit/s DSSS it could not be.
func TestLabWiFiMediumMinstrel(t *testing.T) {
	requireHwsim(t)
	requireTools(t, "hostapd", "hostapd")
	requireTools(t, "wpasupplicant", "wpa_supplicant")
	spec, err := topo.Load("minstrel.yaml", []byte(`name: eklmin
wifi: {medium: true}
nodes:
  ap1: {kind: ap, wifi: {ssid: minstrel, mode: n, channel: 1}}
  sta1: {kind: station, position: [5, 0, 0], wifi: {ap: ap1}}
  srv: {}
links:
  - {endpoints: [ap1, srv]}
`))
	if err != nil {
		t.Fatal(err)
	}
	upWiFi(t, spec)
	g := udpFlows(t, "eklmin", []string{"sta1"}, "srv", 6e6, 10*time.Second, 4*time.Second)
	ms, err := emu.LabMediumStats("eklmin")
	if err != nil {
		t.Fatal(err)
	}
	st := ms.Radios["sta1"]
	t.Logf("UDP 6 Mbit/s offered: %.2f Mbit/s received; sta1 last data rate %s, %d frames, %d retries; ADDBA requests refused %d; late mean %.0f µs",
		g[0]/1e6, st.LastDataRate, st.Frames, st.Retries, ms.ADDBADropped, ms.LateMeanUs)
	if g[0] < 0.9*6e6 {
		t.Errorf("a 6 Mbit/s flow got %.2f Mbit/s: rate control did not leave the lowest rates", g[0]/1e6)
	}
	if !strings.HasPrefix(st.LastDataRate, "HT") {
		t.Errorf("sta1's last data rate %q, want an HT MCS", st.LastDataRate)
	}
	dst, _ := emu.PrimaryAddr(spec.Node("srv"))
	gt := tcpFlow(t, "eklmin", "sta1", "srv", dst, "cubic", 8*time.Second, 3*time.Second, nil)
	t.Logf("TCP sta1 → srv: %.2f Mbit/s", gt/1e6)
	if gt < 2e6 {
		t.Errorf("TCP %.2f Mbit/s over an HT hop on the medium", gt/1e6)
	}
}

// TestLabWiFiMediumRange (issue #14, validation 3): a station moved on the
// medium while the lab runs. Farther away minstrel_ht, which sees every
// attempt the medium reports, falls back to slower rates and the flow
// still gets through; out of range the station loses its association
// (mac80211 detects the beacon loss); brought back, wpa_supplicant
// associates again.
func TestLabWiFiMediumRange(t *testing.T) {
	requireHwsim(t)
	requireTools(t, "hostapd", "hostapd")
	requireTools(t, "wpasupplicant", "wpa_supplicant")
	spec, err := topo.Load("range.yaml", []byte(`name: eklrng
wifi: {medium: true}
nodes:
  ap1: {kind: ap, wifi: {ssid: range, mode: n, channel: 1}}
  sta1: {kind: station, position: [5, 0, 0], wifi: {ap: ap1}}
  srv: {}
links:
  - {endpoints: [ap1, srv]}
`))
	if err != nil {
		t.Fatal(err)
	}
	upWiFi(t, spec)
	rate := func() (string, float64) {
		ms, err := emu.LabMediumStats("eklrng")
		if err != nil {
			t.Fatal(err)
		}
		r := ms.Radios["sta1"].LastDataRate
		var mbps float64
		if i := strings.LastIndex(r, "("); i >= 0 {
			fmt.Sscanf(r[i+1:], "%f", &mbps)
		}
		return r, mbps
	}
	state := func() string {
		st, err := emu.ReadState("eklrng")
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range emu.WiFiStatus(st) {
			if w.Node == "sta1" {
				return w.State
			}
		}
		return ""
	}
	near := udpFlows(t, "eklrng", []string{"sta1"}, "srv", 3e6, 8*time.Second, 3*time.Second)
	nearRate, nearMbps := rate()
	t.Logf("at 5 m: %.2f Mbit/s of 3 offered, data at %s", near[0]/1e6, nearRate)

	// 50 m: about 16 dB, where HT MCS 15 fails and MCS 2-4 get through
	if err := emu.SetMediumPosition("eklrng", "sta1", [3]float64{50, 0, 0}); err != nil {
		t.Fatal(err)
	}
	far := udpFlows(t, "eklrng", []string{"sta1"}, "srv", 3e6, 12*time.Second, 6*time.Second)
	farRate, farMbps := rate()
	ms, _ := emu.LabMediumStats("eklrng")
	var snr float64
	for _, l := range ms.Links {
		if l.From == "sta1" && l.To == "ap1" {
			snr = l.SNRdB
		}
	}
	t.Logf("at 50 m (SNR %.1f dB): %.2f Mbit/s, data at %s; sta1 %+v", snr, far[0]/1e6, farRate, ms.Radios["sta1"])
	if farMbps >= nearMbps || farMbps == 0 {
		t.Errorf("minstrel kept %s at 50 m (was %s at 5 m): no fallback", farRate, nearRate)
	}
	// the emulated VM carries a few Mbit/s at best: judged against what
	// it carried near the AP
	if far[0] < 0.8*near[0] {
		t.Errorf("at 50 m the flow got %.2f Mbit/s (%.2f at 5 m): the fallback rate should carry it", far[0]/1e6, near[0]/1e6)
	}

	if err := emu.SetMediumPosition("eklrng", "sta1", [3]float64{5000, 0, 0}); err != nil {
		t.Fatal(err)
	}
	t0 := time.Now()
	for state() == "COMPLETED" {
		if time.Since(t0) > 60*time.Second {
			t.Fatalf("5 km from its AP sta1 is still associated after %v", time.Since(t0).Round(time.Second))
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("5 km away: association lost after %v (state %s)", time.Since(t0).Round(100*time.Millisecond), state())
	if err := emu.SetMediumPosition("eklrng", "sta1", [3]float64{5, 0, 0}); err != nil {
		t.Fatal(err)
	}
	t0 = time.Now()
	for state() != "COMPLETED" {
		if time.Since(t0) > 90*time.Second {
			t.Fatalf("back at 5 m sta1 did not associate again within %v (state %s)", time.Since(t0).Round(time.Second), state())
		}
		time.Sleep(200 * time.Millisecond)
	}
	t.Logf("back at 5 m: associated again after %v", time.Since(t0).Round(100*time.Millisecond))
}
