package kernellab

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"maps"
	"math"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emuctl/emuctl/capture/pcapng"
	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/topo"
	"github.com/emuctl/emuctl/wifi"
	"github.com/emuctl/emuctl/wifi/model"
)

// Multi-link on emuctl's medium: each link of an MLD on its own channel
// timeline (airtime, contention, capacity per link). The radios have one
// channel each (a radio with more makes the kernel refuse every medium),
// and mac80211_hwsim tells the medium on which link's channel each frame
// goes (HWSIM_ATTR_FREQ).

// mloMediumSpec: a wired server, an AP MLD with the given links, a
// station MLD; unicast data at a fixed 6 Mbit/s (what the emulated VM can
// carry on two links), no aggregation.
func mloMediumSpec(t *testing.T, name, links string) *topo.Spec {
	t.Helper()
	spec, err := topo.Load(name+".yaml", []byte(fmt.Sprintf(`name: %s
wifi: {medium: {ampdu: false}}
nodes:
  srv: {}
  ap1:
    kind: ap
    wifi:
      mode: be
      security: wpa3
      passphrase: "multi link secret"
      rate: 6mbit
      links: %s
  sta1: {kind: station, wifi: {mlo: true, rate: 6mbit}}
links:
  - {endpoints: [srv, ap1]}
`, name, links)))
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

// linkCapacity is the model's saturation goodput (bit/s of application
// payload) of one station sending proto to its AP on one link: the
// medium's MAC on that band (wifi.NewMediumServer's), 6 Mbit/s, WPA3's
// CCMP overhead carried.
func linkCapacity(t *testing.T, freq int, proto string, ackEvery int) float64 {
	t.Helper()
	band := model.Band5G
	if freq < 3000 {
		band = model.Band2G4
	}
	payload := map[string]int{"udp": 1472, "tcp": 1448}[proto]
	sc := model.Scenario{Mode: model.ModeN, MAC: model.DefaultMAC(model.ModeN, band, true), Rate: model.Rate{Class: model.OFDM, Kbps: 6000},
		Stations: 1, Proto: proto, Payload: payload + 16, AckEvery: ackEvery, Duration: 20 * time.Second, Seed: 1}
	sc.MAC.RetryLimit = 11
	r, err := model.Simulate(sc)
	if err != nil {
		t.Fatal(err)
	}
	return r.GoodputMbps * 1e6 * float64(payload) / float64(payload+16)
}

// linkDelta is a node's per-link counters over an interval.
func linkDelta(after, before *wifi.MediumStats, node string) map[int]model.RadioStats {
	out := map[int]model.RadioStats{}
	for f, a := range after.PerLink[node] {
		b := before.PerLink[node][f]
		out[f] = model.RadioStats{Frames: a.Frames - b.Frames, Delivered: a.Delivered - b.Delivered, Airtime: a.Airtime - b.Airtime,
			Retries: a.Retries - b.Retries, Collisions: a.Collisions - b.Collisions, TxBytes: a.TxBytes - b.TxBytes}
	}
	return out
}

func fmtLinks(m map[int]model.RadioStats, span time.Duration) string {
	var fs []int
	for f := range m {
		fs = append(fs, f)
	}
	sort.Ints(fs)
	var p []string
	for _, f := range fs {
		p = append(p, fmt.Sprintf("%d MHz: %d frames, %d delivered, airtime %.1f %%", f, m[f].Frames, m[f].Delivered, 100*m[f].Airtime.Seconds()/span.Seconds()))
	}
	return strings.Join(p, "; ")
}

// TestLabMLOMedium: an AP MLD and a station MLD on emuctl's medium, on
// 2.4 + 5 GHz and on 2.4 GHz channels 1 + 6. The medium registers (the
// radios have one channel each), serves both links, and keeps one
// timeline per channel. Saturating UDP from the station never gets more
// than the two links' capacity from the model (mac80211_hwsim alternates
// the frames between the links: twice the slower one), and gets it
// (± 5 %, each link saturated) when the medium kept time; per-link frame
// counts from the medium's own counters agree with its capture (by
// radiotap frequency; not hwsim0, see startFrameCount); TCP is measured
// the same way (frames reordered by the two links' timelines are put
// back in order by the receiver's reorder buffer, medium_reorder.go).
// With one link taken down (multi-link reconfiguration), the flow gets
// that one link's capacity and nothing goes on the other. In the emulated
// VM the medium runs milliseconds late at these rates: the capacities
// are then logged, not judged (keptTimeUs), the bounds still are.
func TestLabMLOMedium(t *testing.T) {
	tools := requireMLO(t)
	for _, c := range []struct {
		name, links string
		freqs       [2]int
	}{
		{"2.4+5", "[{band: 2.4, channel: 1}, {band: 5, channel: 36}]", [2]int{2412, 5180}},
		{"2.4+2.4", "[{band: 2.4, channel: 1}, {band: 2.4, channel: 6}]", [2]int{2412, 2437}},
	} {
		t.Run(c.name, func(t *testing.T) {
			spec := mloMediumSpec(t, "eklmlm", c.links)
			t0 := time.Now()
			st := upWiFi(t, spec)
			t.Logf("%s: up on the medium, both links associated, in %v", c.name, time.Since(t0).Round(time.Millisecond))
			checkBothLinks(t, st, 2)
			ms, err := emu.LabMediumStats(spec.Name)
			if err != nil {
				t.Fatal(err)
			}
			for _, n := range []string{"ap1", "sta1"} {
				if len(ms.PerLink[n]) < 2 {
					t.Fatalf("%s: the medium has %d links for its radio (%v), want both", n, len(ms.PerLink[n]), ms.PerLink[n])
				}
			}
			t.Logf("medium after association: %d frames in, %d deliveries, %d kernel error replies, %d frames without a rate, late mean %.0f µs",
				ms.FramesIn, ms.Deliveries, ms.NLErrors, ms.NoRate, ms.LateMeanUs)

			capU := map[int]float64{}
			for _, f := range c.freqs {
				capU[f] = linkCapacity(t, f, "udp", 0)
			}
			// UDP up, offered at 1.15 × both links' capacity; no capture
			// meanwhile (in the emulated VM its CPU would come out of the
			// medium's)
			offered := 1.15 * (capU[c.freqs[0]] + capU[c.freqs[1]])
			b0 := mustStats(t, spec.Name)
			g := udpFlows(t, spec.Name, []string{"sta1"}, "srv", offered, 12*time.Second, 3*time.Second)[0]
			b1 := mustStats(t, spec.Name)
			span := b1.Uptime - b0.Uptime
			sta, ap := linkDelta(b1, b0, "sta1"), linkDelta(b1, b0, "ap1")
			// each link's capacity less the AP's own airtime on it
			// (beacons), the sum of the two, and what hwsim's alternation
			// allows: twice the slower link
			exp := map[int]float64{}
			for _, f := range c.freqs {
				exp[f] = capU[f] * (1 - ap[f].Airtime.Seconds()/span.Seconds())
			}
			sum := exp[c.freqs[0]] + exp[c.freqs[1]]
			rr := 2 * math.Min(exp[c.freqs[0]], exp[c.freqs[1]])
			one := math.Max(exp[c.freqs[0]], exp[c.freqs[1]])
			late := lateOver(b0, b1)
			t.Logf("UDP sta1 → srv over both links: %.2f Mbit/s; model per link %.2f + %.2f Mbit/s (less the AP's beacons: %.2f + %.2f) = %.2f, alternation bound %.2f; ratio %.3f; medium late mean %.0f µs over the run (max %.0f µs since up)",
				g/1e6, capU[c.freqs[0]]/1e6, capU[c.freqs[1]]/1e6, exp[c.freqs[0]]/1e6, exp[c.freqs[1]]/1e6, sum/1e6, rr/1e6, g/rr, late, b1.LateMaxUs)
			t.Logf("medium, station: %s; reorder buffer held %d frames", fmtLinks(sta, span), b1.Reordered-b0.Reordered)
			t.Logf("medium, AP: %s", fmtLinks(ap, span))
			// physics, always: no more than the two links can carry
			if g > rr*1.05 {
				t.Errorf("UDP over two links %.2f Mbit/s: above their capacity %.2f", g/1e6, rr/1e6)
			}
			var air float64
			for _, f := range c.freqs {
				if sta[f].Delivered == 0 {
					t.Errorf("%d MHz: no frame of the station's delivered on this link", f)
				}
				air += sta[f].Airtime.Seconds() / span.Seconds()
			}
			t.Logf("the station's airtime on the two links together: %.0f %% of the time (one shared channel timeline could give at most 100 %%)", 100*air)
			// at capacity only where the medium kept time: in the
			// emulated VM its CPU, not the channel, is the limit
			if late <= keptTimeUs {
				if math.Abs(g/rr-1) > 0.05 {
					t.Errorf("UDP over two links %.2f Mbit/s, want the two links' capacity %.2f ± 5 %%", g/1e6, rr/1e6)
				}
				for _, f := range c.freqs {
					if u := sta[f].Airtime.Seconds() / span.Seconds(); u < 0.7 {
						t.Errorf("%d MHz: the station's airtime on the link %.2f: the link was not saturated", f, u)
					}
				}
			} else {
				t.Logf("capacity not judged: the medium ran %.1f ms late on average (> %.1f ms), the machine could not carry the traffic on time", late/1e3, keptTimeUs/1e3)
				if g > one*1.05 || air > 1.05 {
					t.Logf("yet more than one link could carry: %.2f Mbit/s against one link's %.2f, airtime %.0f %%", g/1e6, one/1e6, 100*air)
				}
			}

			// Per-link counts: the medium's own against its capture (by
			// radiotap frequency), at a rate the machine carries.
			counter := startFrameCount(t, st)
			// the saturating run's backlog drains (up to the queue's 128
			// frames) and the capture attaches before the window opens:
			// the first try counted 38 backlog frames delivered before
			// the capture had them (379 against 341)
			time.Sleep(2 * time.Second)
			c0 := mustStats(t, spec.Name)
			up0, _ := counter.snapshot()
			udpFlows(t, spec.Name, []string{"sta1"}, "srv", 2e6, 4*time.Second, 0)
			c1 := mustStats(t, spec.Name)
			up1, _ := counter.snapshot()
			cs, capt := linkDelta(c1, c0, "sta1"), diff(up1, up0)
			t.Logf("2 Mbit/s of UDP: the medium delivered from the station %s; its capture, data frames station → AP received: {%s}", fmtLinks(cs, c1.Uptime-c0.Uptime), fmtCounts(capt))
			for _, f := range c.freqs {
				m, k := float64(cs[f].Delivered), float64(capt[f])
				if m == 0 || math.Abs(k/m-1) > 0.02 {
					t.Errorf("%d MHz: the medium counted %.0f frames from the station delivered, the capture %.0f data frames received (want within 2 %%)", f, m, k)
				}
			}

			// TCP (CUBIC) up over both links, against the model's TCP
			// with an ACK every two segments on each link.
			capT := linkCapacity(t, c.freqs[0], "tcp", 2) + linkCapacity(t, c.freqs[1], "tcp", 2)
			dst, _ := emu.PrimaryAddr(spec.Node("srv"))
			t0s := mustStats(t, spec.Name)
			gt := tcpFlow(t, spec.Name, "sta1", "srv", dst, "cubic", 12*time.Second, 3*time.Second, nil)
			t1s := mustStats(t, spec.Name)
			lt := lateOver(t0s, t1s)
			t.Logf("TCP sta1 → srv over both links: %.2f Mbit/s; model (ACK every 2) %.2f Mbit/s summed over the links, ratio %.3f; medium late mean %.0f µs; reorder buffer held %d frames; station %s",
				gt/1e6, capT/1e6, gt/capT, lt, t1s.Reordered-t0s.Reordered, fmtLinks(linkDelta(t1s, t0s, "sta1"), t1s.Uptime-t0s.Uptime))
			if gt > capT*1.05 {
				t.Errorf("TCP %.2f Mbit/s above the two links' capacity %.2f", gt/1e6, capT/1e6)
			}
			if lt <= keptTimeUs && gt < capT/2*1.1 {
				t.Errorf("TCP %.2f Mbit/s: not more than one link's capacity (%.2f)", gt/1e6, capT/2/1e6)
			}

			// One link down: the flow gets the remaining link's capacity,
			// and nothing more goes on the removed one.
			if !tools.Hostapd.LinkRemove {
				t.Logf("link removal not tried: hostapd without LINK_REMOVE")
				return
			}
			down, keep := 1, 0
			for _, l := range mldOf(t, st, "sta1").Links {
				if l.Assoc && l.ID == 1 {
					down, keep = 0, 1
				}
			}
			took, err := emu.WiFiLinkDown(st, "ap1", down)
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("link %d (%d MHz) taken down in %v", down, c.freqs[down], took.Round(time.Millisecond))
			d0 := mustStats(t, spec.Name)
			g1 := udpFlows(t, spec.Name, []string{"sta1"}, "srv", offered, 12*time.Second, 3*time.Second)[0]
			d1 := mustStats(t, spec.Name)
			sd, ad := linkDelta(d1, d0, "sta1"), linkDelta(d1, d0, "ap1")
			dspan := d1.Uptime - d0.Uptime
			one1 := capU[c.freqs[keep]] * (1 - ad[c.freqs[keep]].Airtime.Seconds()/dspan.Seconds())
			dl := lateOver(d0, d1)
			t.Logf("UDP with link %d only: %.2f Mbit/s; model for that link %.2f Mbit/s, ratio %.3f; medium late mean %.0f µs; station %s", keep, g1/1e6, one1/1e6, g1/one1, dl, fmtLinks(sd, dspan))
			if g1 > one1*1.05 || (dl <= keptTimeUs && math.Abs(g1/one1-1) > 0.05) {
				t.Errorf("UDP over one link %.2f Mbit/s, want its capacity %.2f ± 5 %%", g1/1e6, one1/1e6)
			}
			if n := sd[c.freqs[down]].Frames; n > 0 {
				t.Errorf("%d frames from the station on the removed link's %d MHz", n, c.freqs[down])
			}
		})
	}
}

// keptTimeUs: a medium whose mean lateness over a run stays within this
// kept time; capacities are judged only then (the emulated VM's CPU
// cannot keep a multi-link medium on time at these rates).
const keptTimeUs = 1000

// lateOver is the medium's mean lateness (µs) between two snapshots.
func lateOver(a, b *wifi.MediumStats) float64 {
	if b.LateEvents <= a.LateEvents {
		return 0
	}
	return (b.LateSumUs - a.LateSumUs) / float64(b.LateEvents-a.LateEvents)
}

func mustStats(t *testing.T, lab string) *wifi.MediumStats {
	t.Helper()
	ms, err := emu.LabMediumStats(lab)
	if err != nil {
		t.Fatal(err)
	}
	return ms
}

// frameCounter counts 802.11 data frames per frequency and direction.
type frameCounter interface {
	snapshot() (up, down map[int]int)
}

// startFrameCount counts the lab's data frames on the air: from the
// medium's own capture when the lab has one, else from hwsim's monitor
// interface hwsim0. Never hwsim0 beside a medium serving multi-link
// radios: mac80211_hwsim reports an acknowledged transmission to hwsim0
// with the radio's channel (mac80211_hwsim_monitor_ack(data2->channel,
// ...) in hwsim_tx_info_frame_received_nl), which is NULL for a radio with
// channel contexts (every multi-link radio) — a kernel NULL dereference
// (measured on Debian's 6.12: panic at the first acknowledged frame once
// hwsim0 was up).
func startFrameCount(t *testing.T, st *emu.State) frameCounter {
	t.Helper()
	if st.Medium == nil {
		return startAirCount(t)
	}
	return startMediumCount(t, st.Lab)
}

// mediumCount counts the data frames the medium's capture records as
// received (radiotap channel frequency; frames flagged bad-FCS, those
// the receiver did not get, left out), per direction.
type mediumCount struct {
	mu       sync.Mutex
	up, down map[int]int
}

func startMediumCount(t *testing.T, lab string) *mediumCount {
	t.Helper()
	c := &mediumCount{up: map[int]int{}, down: map[int]int{}}
	ctx, cancel := context.WithCancel(context.Background())
	pr, pw := io.Pipe()
	capDone := make(chan error, 1)
	go func() {
		err := emu.CaptureMedium(ctx, lab, pw, 64)
		pw.CloseWithError(err)
		capDone <- err
	}()
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		r, err := pcapng.NewReader(pr)
		if err != nil {
			return
		}
		for {
			b, _, err := r.Next()
			if err != nil {
				io.Copy(io.Discard, pr)
				return
			}
			freq, flags, fc0, fc1, ok := radiotapFrame(b)
			if !ok || flags&0x40 != 0 || fc0&0x0c != 0x08 || fc0&0x40 != 0 {
				continue // not received, or not data with a payload
			}
			c.mu.Lock()
			switch fc1 & 3 {
			case 1:
				c.up[freq]++
			case 2:
				c.down[freq]++
			}
			c.mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		cancel()
		if err := <-capDone; err != nil {
			t.Logf("medium capture: %v", err)
		}
		<-readDone
	})
	return c
}

func (c *mediumCount) snapshot() (up, down map[int]int) {
	time.Sleep(300 * time.Millisecond) // what the medium wrote by now
	c.mu.Lock()
	defer c.mu.Unlock()
	return maps.Clone(c.up), maps.Clone(c.down)
}

// radiotapFrame is radiotapData with the radiotap flags byte (bad FCS:
// 0x40).
func radiotapFrame(b []byte) (freq int, flags, fc0, fc1 byte, ok bool) {
	if len(b) < 8 {
		return
	}
	present := binary.LittleEndian.Uint32(b[4:])
	off := 8
	for p := present; p&(1<<31) != 0 && off+4 <= len(b); off += 4 {
		p = binary.LittleEndian.Uint32(b[off:])
	}
	if present&1 != 0 {
		off = (off+7)&^7 + 8
	}
	if present&2 != 0 && off < len(b) {
		flags = b[off]
	}
	freq, fc0, fc1, ok = radiotapData(b)
	return
}
