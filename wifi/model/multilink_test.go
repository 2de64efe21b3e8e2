package model

import (
	"math"
	"testing"
	"time"
)

// Multi-link radios (802.11be MLDs): one radio id, a link on each channel
// it uses, each with its own channel access. mac80211_hwsim sends an MLD's
// frames on one link at a time, naming the channel; the medium must give
// every channel its own timeline and deliver a frame only on its channel.

// mloLab is an AP MLD (radio 0) and a station MLD (radio 1) with links on
// 2412 and 5180 MHz, link addresses per channel as mac80211 uses them.
type mloLab struct {
	t     *testing.T
	m     *Medium
	freqs []int
	// delivered MPDUs per receiver and channel, and group copies
	rx    map[[2]int]int
	group map[int]int
}

var mloFreqs = []int{2412, 5180}

// linkAddr is radio r's address on link k (as hwsim rewrites A1/A2).
func linkAddr(r, k int) [6]byte { return [6]byte{0x02, 0x4c, 0, byte(k), 0, byte(r + 1)} }

func newMLOLab(t *testing.T, extra ...int) *mloLab {
	m := NewMedium(MediumConfig{MAC: func(b Band) MAC { return DefaultMAC(ModeN, b, true) }, Link: perfect, Seed: 11})
	for r := 0; r < 2; r++ {
		m.AddMultiLinkRadio(r)
		for k := range mloFreqs {
			m.LearnAddr(linkAddr(r, k), r)
		}
	}
	// single-channel radios (legacy stations) on the given channels
	for i, f := range extra {
		m.AddRadio(2+i, f)
		m.LearnAddr(addr(2+i), 2+i)
	}
	return &mloLab{t: t, m: m, freqs: mloFreqs, rx: map[[2]int]int{}, group: map[int]int{}}
}

// data is a QoS data MPDU from radio tx to radio rx on link k (to-DS).
func mloData(tx, rx, k int) []byte {
	b := qosData(0, 0, 1500)
	a1, a2 := linkAddr(rx, k), linkAddr(tx, k)
	copy(b[4:], a1[:])
	copy(b[10:], a2[:])
	copy(b[16:], a1[:])
	return b
}

// saturate keeps every flow's queue full for dur and returns the station
// MLD's (radio 1's) MPDUs delivered per channel. A flow is {radio, link
// k, receiver} for the MLDs, {radio, MHz, receiver} for single-channel
// radios.
func (l *mloLab) saturate(dur time.Duration, rate Rate, flows [][3]int) map[int]int {
	pending := map[[2]int]int{}
	got := map[int]int{}
	top := func(now time.Duration) {
		for _, f := range flows {
			key := [2]int{f[0], f[1]}
			for pending[key] < 16 {
				var data []byte
				freq := 0
				if f[0] < 2 { // an MLD: link k's channel and addresses
					data, freq = mloData(f[0], f[2], f[1]), l.freqs[f[1]]
				} else {
					data, freq = qosData(f[0], f[2], 1500), f[1]
					copy(data[4:], []byte{0x02, 0x4c, 0, 0, 0, byte(f[2] + 1)}) // to the MLD's link 0
				}
				if err := l.m.Submit(now, &MediumFrame{Radio: f[0], Freq: freq, Data: data, Rates: chain(rate, 7), Ref: key}); err != nil {
					l.t.Fatal(err)
				}
				pending[key]++
			}
		}
	}
	start := l.m.now
	top(start)
	for {
		at, ok := l.m.Next()
		if !ok || at > start+dur {
			break
		}
		l.m.Advance(at, func(ev any) {
			switch v := ev.(type) {
			case Reception:
				if v.Frame.NoAck {
					l.group[v.To]++
					return
				}
				if v.Frame.Radio == 1 {
					got[v.Frame.Freq]++
				}
				l.rx[[2]int{v.To, v.Frame.Freq}]++
			case Status:
				if key, ok := v.Frame.Ref.([2]int); ok {
					pending[key]--
				}
			}
		})
		top(at)
	}
	return got
}

// TestMediumMultiLinkCapacity: a station MLD saturating both links of an
// AP MLD gets each link's full capacity at once — the two channels have
// their own timelines (their sum), not one shared one — and each link
// alone gets what a single-channel radio gets on that channel.
func TestMediumMultiLinkCapacity(t *testing.T) {
	rate := ofdm(24000)
	dur := 3 * time.Second
	alone := map[int]float64{}
	for k, f := range mloFreqs {
		l := newMLOLab(t)
		alone[f] = float64(l.saturate(dur, rate, [][3]int{{1, k, 0}})[f])
	}
	l := newMLOLab(t)
	both := l.saturate(dur, rate, [][3]int{{1, 0, 0}, {1, 1, 0}})
	// one single-channel radio per band, for the capacity a lone radio
	// gets on each channel
	single := map[int]float64{}
	for _, f := range mloFreqs {
		m := NewMedium(MediumConfig{MAC: func(b Band) MAC { return DefaultMAC(ModeN, b, true) }, Link: perfect, Seed: 11})
		m.AddRadio(0, f)
		m.AddRadio(1, f)
		m.LearnAddr(addr(0), 0)
		pending, n := 0, 0
		for now := time.Duration(0); ; {
			for ; pending < 16; pending++ {
				m.Submit(now, &MediumFrame{Radio: 1, Freq: f, Data: qosData(1, 0, 1500), Rates: chain(rate, 7)})
			}
			at, ok := m.Next()
			if !ok || at > dur {
				break
			}
			now = at
			m.Advance(at, func(ev any) {
				switch ev.(type) {
				case Reception:
					n++
				case Status:
					pending--
				}
			})
		}
		single[f] = float64(n)
	}
	var sum, sumAlone float64
	for _, f := range mloFreqs {
		sum += float64(both[f])
		sumAlone += alone[f]
		mbps := float64(both[f]) * 1472 * 8 / dur.Seconds() / 1e6
		t.Logf("%d MHz: both links busy %d MPDUs (%.2f Mbit/s of UDP), that link alone %.0f, a single-channel radio %.0f", f, both[f], mbps, alone[f], single[f])
		if r := float64(both[f]) / single[f]; math.Abs(r-1) > 0.02 {
			t.Errorf("%d MHz: the link carried %.3f × a single-channel radio's capacity with the other link busy, want 1 ± 2 %%", f, r)
		}
		if r := alone[f] / single[f]; math.Abs(r-1) > 0.02 {
			t.Errorf("%d MHz: a link alone carried %.3f × a single-channel radio's capacity", f, r)
		}
	}
	if r := sum / sumAlone; math.Abs(r-1) > 0.02 {
		t.Errorf("both links together %.0f MPDUs, the links alone %.0f: ratio %.3f, want the sum", sum, sumAlone, r)
	}
	st, _ := l.m.Stats(1)
	ls := l.m.LinkStats(1)
	if len(ls) != 2 || st.Frames != ls[2412].Frames+ls[5180].Frames || st.Airtime != ls[2412].Airtime+ls[5180].Airtime {
		t.Errorf("the station MLD's counters %+v are not its links' sum %+v", st, ls)
	}
	if st.LastDataRate == "" {
		t.Errorf("no data rate in the MLD's counters: %+v", st)
	}
	if l.m.LinkStats(0) == nil || l.m.LinkStats(5) != nil {
		t.Errorf("LinkStats: AP MLD %v, unknown radio %v", l.m.LinkStats(0), l.m.LinkStats(5))
	}
}

// TestMediumMultiLinkChannels: contention stays on its channel (a legacy
// station saturating 2412 MHz halves the MLD's 2412 link and leaves its
// 5180 link alone); a unicast frame goes only to the receiver's link on
// its channel; a group frame reaches each other radio once — a multi-link
// radio through its link on that channel — and never its sender's other
// links.
func TestMediumMultiLinkChannels(t *testing.T) {
	rate := ofdm(24000)
	dur := 3 * time.Second
	l := newMLOLab(t)
	free := l.saturate(dur, rate, [][3]int{{1, 0, 0}, {1, 1, 0}})
	l2 := newMLOLab(t, 2412)
	busy := l2.saturate(dur, rate, [][3]int{{1, 0, 0}, {1, 1, 0}, {2, 2412, 0}})
	legacy := l2.rx[[2]int{0, 2412}] - busy[2412]
	t.Logf("MLD link 2412: %d alone on its channel, %d beside a saturated legacy station (which got %d); link 5180: %d, %d",
		free[2412], busy[2412], legacy, free[5180], busy[5180])
	if r := float64(busy[5180]) / float64(free[5180]); math.Abs(r-1) > 0.02 {
		t.Errorf("the 5180 MHz link carried %.3f × its capacity while only 2412 MHz was busy", r)
	}
	if r := float64(busy[2412]) / float64(free[2412]); r > 0.6 || r < 0.4 {
		t.Errorf("the 2412 MHz link carried %.3f × its capacity beside a saturated station on its channel, want about half", r)
	}
	if l.rx[[2]int{1, 2412}] != 0 || l.rx[[2]int{1, 5180}] != 0 {
		t.Errorf("the sender received its own frames: %v", l.rx)
	}

	// A group frame from the AP MLD's 2412 MHz link: the station MLD gets
	// one copy (on 2412), a legacy radio on 2437 one by the SNR alone, a
	// legacy radio on 2412 one; the AP's 5180 link none.
	l3 := newMLOLab(t, 2437, 2412)
	l3.saturate(time.Millisecond, rate, nil) // links exist only once used:
	for k := range mloFreqs {                // let both MLDs use both
		l3.saturate(20*time.Millisecond, rate, [][3]int{{1, k, 0}, {0, k, 1}})
	}
	bc := broadcast(0)
	a2 := linkAddr(0, 0)
	copy(bc[10:], a2[:])
	now := l3.m.now
	if err := l3.m.Submit(now, &MediumFrame{Radio: 0, Freq: 2412, Data: bc, Rates: chain(ofdm(6000), 1)}); err != nil {
		t.Fatal(err)
	}
	l3.saturate(50*time.Millisecond, rate, nil)
	t.Logf("group frame copies by receiver: %v", l3.group)
	if l3.group[1] != 1 || l3.group[2] != 1 || l3.group[3] != 1 || l3.group[0] != 0 {
		t.Errorf("group frame copies %v: want one each for radios 1, 2 and 3, none for the sender", l3.group)
	}
	if err := l3.m.Submit(now, &MediumFrame{Radio: 0, Data: bc, Rates: chain(ofdm(6000), 1)}); err == nil {
		t.Error("a multi-link radio's frame without a channel was accepted")
	}
}
