package kernellab

import (
	"context"
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/topo"
	"github.com/emuctl/emuctl/wifi"
	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// The multi-link tier (`make test-mlo`): an AP MLD and a station MLD
// associating through emuctl, carrying TCP over both links, losing a link
// at run time, and coming up and down 20 times. It needs what no Debian
// release ships together: an 802.11be hostapd ≥ 2.12 (EMUCTL_HOSTAPD,
// supplied by the user) and wpa_supplicant ≥ 2.11 (EMUCTL_WPA_SUPPLICANT;
// `scripts/kernel-lab setup` unpacks Debian sid's). Without them these
// tests skip, also in the lab, saying exactly what is missing: the tier
// is opt-in, not a lab feature.

// requireMLO skips outside the lab, fails in the lab without hwsim's
// multi-link radios, and skips (naming what is missing) without the
// daemons.
func requireMLO(t *testing.T) wifi.Tools {
	t.Helper()
	leaks0 := map[string]bool{}
	for _, l := range emu.Leaks() {
		leaks0[l] = true // on a busy host the VM sees its labs' files (read-only root)
	}
	newLeaks = func() []string {
		var out []string
		for _, l := range emu.Leaks() {
			// this tier's labs only: the VM's root is the host's, live
			if !leaks0[l] && strings.Contains(l, "ekl") {
				out = append(out, l)
			}
		}
		return out
	}
	requireHwsim(t)
	err := wifi.ProbeHwsimMLO()
	Require(t, "mac80211_hwsim multi-link radios", err == nil, errString(err))
	tools := wifi.ProbeTools()
	var missing []string
	if !tools.Hostapd.MLO {
		missing = append(missing, fmt.Sprintf("%s=<%s> (found: %s)", wifi.EnvHostapd, wifi.MLOHostapd, describeTool(tools.Hostapd)))
	}
	if !tools.WpaSupplicant.MLO {
		missing = append(missing, fmt.Sprintf("%s=<wpa_supplicant ≥ 2.11; `scripts/kernel-lab setup` unpacks Debian sid's: scripts/kernel-lab userland> (found: %s)", wifi.EnvWpaSupplicant, describeTool(tools.WpaSupplicant)))
	}
	if len(missing) > 0 {
		t.Skipf("multi-link tier: needs %s; run it with `make test-mlo EMUCTL_HOSTAPD=...`", strings.Join(missing, " and "))
	}
	t.Logf("hostapd %s (%s), wpa_supplicant %s (%s), kernel %s", tools.Hostapd.Version, tools.Hostapd.Path, tools.WpaSupplicant.Version, tools.WpaSupplicant.Path, os.Getenv("EMUCTL_KERNEL_LAB_KERNEL"))
	return tools
}

// newLeaks is emu.Leaks less what was there when the test started.
var newLeaks func() []string

func describeTool(x wifi.Tool) string {
	switch {
	case x.Path == "":
		return "none: " + errString(x.Err)
	case x.MLD && !x.MLO:
		return fmt.Sprintf("%s v%s, multi-link code but < 2.12", x.Path, x.Version)
	}
	return fmt.Sprintf("%s v%s without multi-link", x.Path, x.Version)
}

// mloSpec is a lab: a wired server, an AP MLD bridged to it with the
// given links, and one station MLD.
func mloSpec(t *testing.T, name, links string) *topo.Spec {
	t.Helper()
	spec, err := topo.Load(name+".yaml", []byte(fmt.Sprintf(`name: %s
nodes:
  srv: {}
  ap1:
    kind: ap
    wifi:
      mode: be
      security: wpa3
      passphrase: "multi link secret"
      links: %s
  sta1: {kind: station, wifi: {mlo: true}}
links:
  - {endpoints: [srv, ap1]}
`, name, links)))
	if err != nil {
		t.Fatal(err)
	}
	return spec
}

// mldOf returns the MLD view of a node from WiFiStatus.
func mldOf(t *testing.T, st *emu.State, node string) *emu.MLDStatus {
	t.Helper()
	for _, s := range emu.WiFiStatus(st) {
		if s.Node == node {
			if s.MLD == nil {
				t.Fatalf("%s: no MLD in its status: %+v", node, s)
			}
			return s.MLD
		}
	}
	t.Fatalf("%s: no Wi-Fi status", node)
	return nil
}

// checkBothLinks requires the AP MLD and the station MLD to have every
// link up, the station's link BSSIDs being the AP's link addresses.
func checkBothLinks(t *testing.T, st *emu.State, want int) {
	t.Helper()
	ap, sta := mldOf(t, st, "ap1"), mldOf(t, st, "sta1")
	for _, who := range []struct {
		name string
		m    *emu.MLDStatus
	}{{"ap1", ap}, {"sta1", sta}} {
		for _, l := range who.m.Links {
			t.Logf("%s MLD %s link %d: %d MHz %s bssid %s addr %s state %s stations %d", who.name, who.m.Addr, l.ID, l.FreqMHz, l.Width, l.BSSID, l.Addr, l.State, l.Stations)
		}
		if len(who.m.Links) != want {
			t.Fatalf("%s: %d links, want %d", who.name, len(who.m.Links), want)
		}
	}
	if sta.APAddr != ap.Addr {
		t.Errorf("station's AP MLD %s, AP's MLD address %s", sta.APAddr, ap.Addr)
	}
	for i := range ap.Links {
		a, s := ap.Links[i], sta.Links[i]
		if a.State != "up" || s.State != "up" || a.BSSID == "" || !strings.EqualFold(a.BSSID, s.BSSID) || a.FreqMHz != s.FreqMHz || a.Stations != 1 {
			t.Errorf("link %d: AP %+v, station %+v: want both up, the same BSSID and frequency, one station", i, a, s)
		}
	}
}

// airCount counts 802.11 data frames on hwsim's monitor interface hwsim0
// (every frame any radio sends, after mac80211_hwsim chose the link and
// rewrote the addresses), per frequency and direction: mac80211 debugfs,
// which hostap's tests read for per-link state, is not built into
// Debian's kernels, and nl80211's station counters are the MLD's sum.
type airCount struct {
	fd   int
	mu   sync.Mutex
	up   map[int]int // to-DS data frames (station → AP) per MHz
	down map[int]int // from-DS data frames (AP → station) per MHz
	done chan struct{}
}

func startAirCount(t *testing.T) *airCount {
	t.Helper()
	mon, err := netlink.LinkByName("hwsim0")
	if err != nil {
		t.Fatalf("hwsim's monitor interface: %v", err)
	}
	if err := netlink.LinkSetUp(mon); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, int(htons(unix.ETH_P_ALL)))
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(unix.ETH_P_ALL), Ifindex: mon.Attrs().Index}); err != nil {
		unix.Close(fd)
		t.Fatal(err)
	}
	unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, 8<<20)
	tv := unix.NsecToTimeval((200 * time.Millisecond).Nanoseconds())
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	a := &airCount{fd: fd, up: map[int]int{}, down: map[int]int{}, done: make(chan struct{})}
	go a.run()
	t.Cleanup(func() { a.stop(); netlink.LinkSetDown(mon) })
	return a
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

func (a *airCount) run() {
	defer close(a.done)
	buf := make([]byte, 1<<16)
	for {
		n, _, err := unix.Recvfrom(a.fd, buf, 0)
		if err != nil {
			if err == unix.EAGAIN || err == unix.EINTR {
				continue
			}
			return // closed
		}
		freq, fc0, fc1, ok := radiotapData(buf[:n])
		if !ok || fc0&0x0c != 0x08 || fc0&0x40 != 0 { // data with payload (not null)
			continue
		}
		a.mu.Lock()
		switch fc1 & 3 {
		case 1:
			a.up[freq]++
		case 2:
			a.down[freq]++
		}
		a.mu.Unlock()
	}
}

// radiotapData returns the channel frequency of a radiotap-framed 802.11
// frame and its frame control bytes.
func radiotapData(b []byte) (freq int, fc0, fc1 byte, ok bool) {
	if len(b) < 8 {
		return
	}
	hlen := int(binary.LittleEndian.Uint16(b[2:]))
	present := binary.LittleEndian.Uint32(b[4:])
	off := 8
	for p := present; p&(1<<31) != 0 && off+4 <= len(b); off += 4 {
		p = binary.LittleEndian.Uint32(b[off:])
	}
	if present&1 != 0 { // TSFT, 8-aligned
		off = (off+7)&^7 + 8
	}
	if present&2 != 0 { // flags
		off++
	}
	if present&4 != 0 { // rate
		off++
	}
	if present&8 == 0 || hlen+2 > len(b) {
		return
	}
	off = (off + 1) &^ 1
	if off+2 > hlen {
		return
	}
	return int(binary.LittleEndian.Uint16(b[off:])), b[hlen], b[hlen+1], true
}

func (a *airCount) snapshot() (up, down map[int]int) {
	a.mu.Lock()
	defer a.mu.Unlock()
	up, down = map[int]int{}, map[int]int{}
	for k, v := range a.up {
		up[k] = v
	}
	for k, v := range a.down {
		down[k] = v
	}
	return
}

func (a *airCount) stop() {
	select {
	case <-a.done:
		return
	default:
	}
	unix.Close(a.fd)
	<-a.done
}

func diff(after, before map[int]int) map[int]int {
	out := map[int]int{}
	for k, v := range after {
		if d := v - before[k]; d > 0 {
			out[k] = d
		}
	}
	return out
}

func fmtCounts(m map[int]int) string {
	var ks []int
	for k := range m {
		ks = append(ks, k)
	}
	sort.Ints(ks)
	var parts []string
	for _, k := range ks {
		parts = append(parts, fmt.Sprintf("%d MHz: %d", k, m[k]))
	}
	return strings.Join(parts, ", ")
}

// TestLabMLOAssociate: an AP MLD and a station MLD on 2.4 + 5 GHz, on two
// 2.4 GHz channels (1 and 6) and on 5 + 6 GHz: up associates both links
// (SAE, PMF required), ls/inspect data show the MLD and each link, TCP
// from the station through the AP to a wired server uses both links
// (data frames per frequency, both directions, from hwsim's monitor), and
// down leaves nothing.
func TestLabMLOAssociate(t *testing.T) {
	requireMLO(t)
	for _, c := range []struct {
		name, links string
		freqs       [2]int
		optional    string // why a failure here is a finding, not a failure
	}{
		{"2.4+5", "[{band: 2.4, channel: 1}, {band: 5, channel: 36}]", [2]int{2412, 5180}, ""},
		{"2.4+2.4", "[{band: 2.4, channel: 1}, {band: 2.4, channel: 6}]", [2]int{2412, 2437}, ""},
		// 6 GHz: Debian's wireless-regdb lets no AP start there in US
		// (PASSIVE-SCAN), so up gives this AP, which names no country,
		// the first fallback that allows both channels (CA)
		{"5+6", "[{band: 5, channel: 36}, {band: 6, channel: 5}]", [2]int{5180, 5975}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			spec := mloSpec(t, "eklmlo", c.links)
			t0 := time.Now()
			st, err := emu.Deploy(context.Background(), spec, emu.Options{})
			if err != nil {
				if c.optional != "" {
					t.Logf("%s: up failed (%s):\n%v", c.name, c.optional, err)
					if l := newLeaks(); len(l) > 0 {
						t.Errorf("failed up left: %v", l)
					}
					t.Skipf("%s not reachable here: %s", c.name, c.optional)
				}
				t.Fatal(err)
			}
			up := time.Since(t0)
			t.Cleanup(func() {
				if err := emu.Down(spec.Name, nil); err != nil {
					t.Error(err)
				}
				if l := newLeaks(); len(l) > 0 {
					t.Errorf("down left: %v", l)
				}
			})
			t.Logf("%s: up with both links associated in %v (regulatory country %s)", c.name, up.Round(time.Millisecond), st.Spec.Node("ap1").AP.Country)
			checkBothLinks(t, st, 2)
			for i, m := range mldOf(t, st, "ap1").Links {
				if m.FreqMHz != c.freqs[i] {
					t.Errorf("link %d on %d MHz, want %d", i, m.FreqMHz, c.freqs[i])
				}
			}
			for _, r := range emu.PingAll(context.Background(), st, 3, 3*time.Second) {
				if !r.OK {
					t.Errorf("ping %s -> %s failed", r.From, r.To)
				}
			}
			air := startFrameCount(t, st)
			dst, _ := emu.PrimaryAddr(spec.Node("srv"))
			for _, dir := range [][2]string{{"sta1", "srv"}, {"srv", "sta1"}} {
				to, _ := emu.PrimaryAddr(spec.Node(dir[1]))
				_ = dst
				up0, down0 := air.snapshot()
				g := tcpFlow(t, spec.Name, dir[0], dir[1], to, "cubic", 5*time.Second, time.Second, nil)
				up1, down1 := air.snapshot()
				du, dd := diff(up1, up0), diff(down1, down0)
				t.Logf("TCP %s -> %s over the AP MLD: %.1f Mbit/s; data frames station→AP {%s}, AP→station {%s}", dir[0], dir[1], g/1e6, fmtCounts(du), fmtCounts(dd))
				if g < 1e6 {
					t.Errorf("TCP %s -> %s: %.2f Mbit/s", dir[0], dir[1], g/1e6)
				}
				for _, m := range []map[int]int{du, dd} {
					for _, f := range c.freqs {
						if m[f] < 50 {
							t.Errorf("TCP %s -> %s: %d data frames on %d MHz (link not used): {%s}", dir[0], dir[1], m[f], f, fmtCounts(m))
						}
					}
				}
			}
		})
	}
}

// TestLabMLOLinkDown: TCP runs from the station MLD to the wired server;
// link 1 is taken down (emuctl wifi link-down: multi-link
// reconfiguration); the flow goes on over link 0 alone, without a stall.
func TestLabMLOLinkDown(t *testing.T) {
	tools := requireMLO(t)
	if !tools.Hostapd.LinkRemove {
		t.Skipf("taking a link down needs hostapd's LINK_REMOVE (CONFIG_TESTING_OPTIONS); %s has none", tools.Hostapd.Path)
	}
	spec := mloSpec(t, "ekllink", "[{band: 2.4, channel: 1}, {band: 5, channel: 36}]")
	st := upWiFi(t, spec)
	checkBothLinks(t, st, 2)
	air := startFrameCount(t, st)
	dst, _ := emu.PrimaryAddr(spec.Node("srv"))

	var ln net.Listener
	if err := emu.InNode(spec.Name, "srv", func() (err error) { ln, err = net.Listen("tcp", net.JoinHostPort(dst.String(), "0")); return }); err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	var conn net.Conn
	if err := emu.InNode(spec.Name, "sta1", func() (err error) { conn, err = net.Dial("tcp", ln.Addr().String()); return }); err != nil {
		t.Fatal(err)
	}
	srv, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	var got atomic.Int64
	go func() {
		buf := make([]byte, 1<<16)
		for {
			n, err := srv.Read(buf)
			got.Add(int64(n))
			if err != nil {
				return
			}
		}
	}()
	stop := make(chan struct{})
	go func() {
		buf := make([]byte, 1<<16)
		for {
			select {
			case <-stop:
				return
			default:
			}
			if _, err := conn.Write(buf); err != nil {
				return
			}
		}
	}()
	defer func() { close(stop); conn.Close(); srv.Close() }()
	// per-500 ms samples of delivered bytes
	var samples []int64
	sample := func(d time.Duration) {
		for end := time.Now().Add(d); time.Now().Before(end); {
			b := got.Load()
			time.Sleep(500 * time.Millisecond)
			samples = append(samples, got.Load()-b)
		}
	}
	sample(3 * time.Second)
	up0, down0 := air.snapshot()
	before := len(samples)
	// the link the station did not associate on (removing the association
	// link makes hostapd 2.12 free the whole station: see the README)
	down, keep, freqs := 1, 0, [2]int{2412, 5180}
	for _, l := range mldOf(t, st, "sta1").Links {
		if l.Assoc && l.ID == 1 {
			down, keep = 0, 1
		}
	}
	if _, err := emu.WiFiLinkDown(st, "ap1", keep); err == nil || !strings.Contains(err.Error(), "associated on") {
		t.Errorf("taking the association link down: %v, want a refusal", err)
	}
	took, err := emu.WiFiLinkDown(st, "ap1", down)
	if err != nil {
		t.Fatal(err)
	}
	during := len(samples)
	t.Logf("link %d (%d MHz, not the association link) removed from the AP and the station after %v (announced for 5 beacons)", down, freqs[down], took.Round(time.Millisecond))
	upR, downR := air.snapshot()
	sample(5 * time.Second)
	up1, down1 := air.snapshot()
	t.Logf("data frames before the removal: up {%s} down {%s}", fmtCounts(up0), fmtCounts(down0))
	t.Logf("data frames after it (5 s): up {%s} down {%s}", fmtCounts(diff(up1, upR)), fmtCounts(diff(down1, downR)))
	ms := func(s []int64) string {
		var p []string
		for _, b := range s {
			p = append(p, fmt.Sprintf("%.1f", float64(b)*8/0.5/1e6))
		}
		return strings.Join(p, " ")
	}
	t.Logf("goodput per 500 ms (Mbit/s): before [%s] after [%s]", ms(samples[:before]), ms(samples[during:]))
	after := samples[during:]
	for i, b := range after {
		if b == 0 {
			t.Errorf("no data delivered in the %d. 500 ms after the removal: the flow stalled", i+1)
		}
	}
	if d := diff(up1, upR)[freqs[down]] + diff(down1, downR)[freqs[down]]; d > 0 {
		t.Errorf("%d data frames on the removed link's %d MHz after its removal", d, freqs[down])
	}
	if diff(up1, upR)[freqs[keep]] < 50 || diff(down1, downR)[freqs[keep]] < 50 {
		t.Errorf("too few frames on link %d after the removal", keep)
	}
	m := mldOf(t, st, "sta1")
	if len(m.Links) != 2 || m.Links[keep].State != "up" || m.Links[down].State != "absent" {
		t.Errorf("station's links after the removal: %+v (want link %d up, link %d absent)", m.Links, keep, down)
	}
}

// TestLabMLOCycles: 20 up/down cycles of a two-link lab (2.4 GHz channels
// 1 and 6); every up must associate the station on both links (up itself
// refuses a single-link association), every down leave nothing.
func TestLabMLOCycles(t *testing.T) {
	requireMLO(t)
	const cycles = 20
	var ups []time.Duration
	for i := 0; i < cycles; i++ {
		spec := mloSpec(t, "eklcyc", "[{band: 2.4, channel: 1}, {band: 2.4, channel: 6}]")
		t0 := time.Now()
		st, err := emu.Deploy(context.Background(), spec, emu.Options{})
		if err != nil {
			t.Fatalf("cycle %d: %v", i+1, err)
		}
		ups = append(ups, time.Since(t0))
		m := mldOf(t, st, "sta1")
		links := 0
		for _, l := range m.Links {
			if l.State == "up" && l.BSSID != "" {
				links++
			}
		}
		if links != 2 {
			t.Errorf("cycle %d: station on %d links: %+v", i+1, links, m.Links)
		}
		if err := emu.Down(spec.Name, nil); err != nil {
			t.Fatalf("cycle %d: down: %v", i+1, err)
		}
		if l := newLeaks(); len(l) > 0 {
			t.Fatalf("cycle %d: down left %v", i+1, l)
		}
	}
	sort.Slice(ups, func(i, j int) bool { return ups[i] < ups[j] })
	t.Logf("%d cycles, each associated on both links; up (radios, hostapd, association of both links) min %v median %v max %v",
		cycles, ups[0].Round(time.Millisecond), ups[len(ups)/2].Round(time.Millisecond), ups[len(ups)-1].Round(time.Millisecond))
}
