package emu

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"net"
	"sort"
	"sync"
	"time"

	"github.com/emuctl/emuctl/internal/sockinfo"
	"github.com/emuctl/emuctl/tc"
	"github.com/emuctl/emuctl/topo"
	"github.com/emuctl/emuctl/units"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// verify measures links with raw Ethernet probe frames sent on one end's
// interface and captured on the other's (AF_PACKET on both, inside the
// nodes' namespaces). Every node shares one clock, so delay is measured
// one-way and exactly, and the probe crosses exactly the link under test —
// whatever the node kinds — because the frames carry a local experimental
// EtherType to the link-local group 01:80:C2:00:00:0E, which bridges never
// forward and hosts drop.
const probeEtherType = 0x88B5

var probeDst = net.HardwareAddr{0x01, 0x80, 0xc2, 0x00, 0x00, 0x0e}

// DirResult is the verification of one direction of one link.
type DirResult struct {
	Link      int           `json:"link"`
	Name      string        `json:"name"`
	Dir       string        `json:"dir"` // "a->b" or "b->a"
	Backend   string        `json:"backend"`
	WantDelay time.Duration `json:"want_delay"`
	MinDelay  time.Duration `json:"min_delay"`  // smallest one-way delay seen
	MeanDelay time.Duration `json:"mean_delay"` // mean one-way delay
	Jitter    time.Duration `json:"jitter"`     // stddev of the one-way delay
	WantRate  units.BitRate `json:"want_rate_bps"`
	Rate      units.BitRate `json:"rate_bps"` // arrival rate of back-to-back full frames (wire bytes)
	WantLoss  units.Percent `json:"want_loss_pct"`
	Loss      units.Percent `json:"loss_pct"`
	LossSent  int           `json:"loss_probes"`
	// ClockOffset is, for a direction across two machines, the receiving
	// machine's clock minus the sending one's that the one-way delays
	// were corrected by: measured just before the direction's phases.
	// ClockOffsetUp is the one measured at up (ClockOffset minus it is
	// the clocks' drift since); ClockNote says why the offset from up
	// was applied instead, when measuring it again failed.
	ClockOffset   time.Duration `json:"clock_offset_ns,omitempty"`
	ClockOffsetUp time.Duration `json:"clock_offset_up_ns,omitempty"`
	ClockNote     string        `json:"clock_note,omitempty"`
	// ClockRTT is the round trip of the clock exchange ClockOffset came
	// from: the offset is known to ± half of it, and so is every one-way
	// delay measured across the two machines (the delay floor's slack
	// widens to it).
	ClockRTT time.Duration `json:"clock_rtt_ns,omitempty"`
	Problems []string      `json:"problems,omitempty"`
}

// OK reports whether the direction met its configuration.
func (r DirResult) OK() bool { return len(r.Problems) == 0 }

// VerifyOptions tune Verify.
type VerifyOptions struct {
	All          bool          // also check unshaped links (delay floor only)
	RateDuration time.Duration // back-to-back burst length (default 1 s)
	LossProbes   int           // loss probes per direction (default 3000)
	Tolerance    float64       // relative tolerance for rate and delay (default 0.05)
}

// Verify measures every shaped link of a running lab (both directions):
// one-way delay, rate, loss, and compares each with the configuration.
func Verify(ctx context.Context, lab string, opt VerifyOptions) ([]DirResult, error) {
	if opt.RateDuration <= 0 {
		opt.RateDuration = time.Second
	}
	if opt.LossProbes <= 0 {
		opt.LossProbes = 3000
	}
	if opt.Tolerance <= 0 {
		opt.Tolerance = 0.05
	}
	st, err := ReadState(lab)
	if err != nil {
		return nil, err
	}
	if isController(st) {
		return clusterVerify(ctx, st, opt) // by workers on the links' machines (cluster_verify.go)
	}
	shaped := map[int]LinkState{}
	for _, ls := range st.Links {
		shaped[ls.Index] = ls
	}
	var out []DirResult
	for i, l := range st.Spec.Links {
		if !kindOf(st.Spec, st.Links, i).verifiable() {
			continue
		}
		ls, ok := shaped[i]
		if !ok {
			if !opt.All {
				continue
			}
			ls = LinkState{Index: i, Name: l.A.String() + " <-> " + l.B.String(), Backend: "none"}
		}
		var err error
		if out, err = verifyDirs(ctx, out, i, l, ls, ls.Backend, func(from, to topo.Endpoint, want tc.Dir, r *DirResult) error {
			return measureDir(st, from, to, want, opt, r)
		}); err != nil {
			return out, err
		}
	}
	return out, nil
}

// verifyDirs measures both directions of link i (its parameters in force
// ls) with measure and appends their results to out.
func verifyDirs(ctx context.Context, out []DirResult, i int, l topo.Link, ls LinkState, backend string,
	measure func(from, to topo.Endpoint, want tc.Dir, r *DirResult) error) ([]DirResult, error) {
	for _, dir := range []struct {
		name     string
		from, to topo.Endpoint
		want     tc.Dir
	}{{"a->b", l.A, l.B, ls.AtoB}, {"b->a", l.B, l.A, ls.BtoA}} {
		if ctx.Err() != nil {
			return out, ctx.Err()
		}
		r := DirResult{Link: i, Name: ls.Name, Dir: dir.name, Backend: backend,
			WantDelay: dir.want.Delay, WantRate: dir.want.Rate, WantLoss: effectiveLoss(dir.want)}
		if err := measure(dir.from, dir.to, dir.want, &r); err != nil {
			r.Problems = append(r.Problems, "measurement failed: "+err.Error())
		}
		out = append(out, r)
	}
	return out, nil
}

// effectiveLoss is the long-run loss percentage a Dir produces.
func effectiveLoss(d tc.Dir) units.Percent {
	if d.GE != nil {
		// stationary probability of the bad state: p / (p + r)
		p, r := d.GE.P.Prob(), d.GE.R.Prob()
		if p+r == 0 {
			return d.GE.GoodLoss
		}
		pb := p / (p + r)
		return units.Percent(100 * (pb*d.GE.BadLoss.Prob() + (1-pb)*d.GE.GoodLoss.Prob()))
	}
	return d.Loss
}

type probeSock struct {
	fd    int
	ifidx int
	mac   net.HardwareAddr
}

func openProbe(st *State, ep topo.Endpoint) (*probeSock, error) {
	path, name := EndpointNetns(st, ep.Node, ep.Iface) // an ovs switch's port is in the root namespace
	h, err := netns.GetFromPath(path)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	var ps probeSock
	err = do(h, func() error {
		ifc, err := net.InterfaceByName(name)
		if err != nil {
			return err
		}
		ps.ifidx, ps.mac = ifc.Index, ifc.HardwareAddr
		fd, err := unix.Socket(unix.AF_PACKET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, int(htons(probeEtherType)))
		if err != nil {
			return err
		}
		ps.fd = fd
		if err := unix.Bind(fd, &unix.SockaddrLinklayer{Protocol: htons(probeEtherType), Ifindex: ifc.Index}); err != nil {
			unix.Close(fd)
			return err
		}
		// room for 0.8 s of the loss phase's small frames: a receiver
		// descheduled for a few ms on a busy machine must not drop probes
		// the link delivered (net.core.rmem_max would cap SO_RCVBUF at
		// 208 KB, about 17 ms of them)
		if err := unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, 8<<20); err != nil {
			unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_RCVBUF, 8<<20)
		}
		unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
		// only what arrives, not what this socket's interface sends
		unix.SetsockoptInt(fd, unix.SOL_PACKET, unix.PACKET_IGNORE_OUTGOING, 1)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ep, err)
	}
	return &ps, nil
}

func htons(v uint16) uint16 { return v<<8 | v>>8 }

// frame builds a probe: header, kind, run id, sequence, send time.
func (p *probeSock) frame(size int, kind byte, run uint32, seq uint32) []byte {
	b := make([]byte, max(size, 64))
	copy(b[0:6], probeDst)
	copy(b[6:12], p.mac)
	binary.BigEndian.PutUint16(b[12:14], probeEtherType)
	b[14] = kind
	binary.BigEndian.PutUint32(b[15:19], run)
	binary.BigEndian.PutUint32(b[19:23], seq)
	return b
}

func (p *probeSock) send(b []byte) error {
	binary.BigEndian.PutUint64(b[23:31], uint64(time.Now().UnixNano()))
	return unix.Sendto(p.fd, b, 0, &unix.SockaddrLinklayer{Ifindex: p.ifidx, Protocol: htons(probeEtherType)})
}

type arrival struct {
	kind     byte
	run, seq uint32
	sent     time.Time
	at       time.Time
	size     int
}

// drops returns (and resets) the frames the socket dropped for lack of
// receive buffer.
func (p *probeSock) drops() uint32 {
	st, err := unix.GetsockoptTpacketStats(p.fd, unix.SOL_PACKET, unix.PACKET_STATISTICS)
	if err != nil {
		return 0
	}
	return st.Drops
}

// collect reads probe frames until stop is closed and a quiet period ends.
func (p *probeSock) collect(stop <-chan struct{}, quiet time.Duration) []arrival {
	var out []arrival
	buf := make([]byte, 2048)
	oob := make([]byte, 128)
	tv := unix.NsecToTimeval((20 * time.Millisecond).Nanoseconds())
	unix.SetsockoptTimeval(p.fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
	stopped := false
	var lastSeen time.Time
	for {
		n, oobn, _, _, err := unix.Recvmsg(p.fd, buf, oob, 0)
		if err != nil {
			if !stopped {
				select {
				case <-stop:
					stopped, lastSeen = true, time.Now()
				default:
				}
			}
			if stopped && time.Since(lastSeen) > quiet {
				return out
			}
			continue
		}
		at := time.Now()
		if ns, ok := sockinfo.RxTime(oob[:oobn]); ok {
			at = time.Unix(0, ns)
		}
		if n < 31 {
			continue
		}
		out = append(out, arrival{kind: buf[14], run: binary.BigEndian.Uint32(buf[15:19]), seq: binary.BigEndian.Uint32(buf[19:23]),
			sent: time.Unix(0, int64(binary.BigEndian.Uint64(buf[23:31]))), at: at, size: n})
		if stopped {
			lastSeen = time.Now()
		}
	}
}

func measureDir(st *State, from, to topo.Endpoint, want tc.Dir, opt VerifyOptions, r *DirResult) error {
	tx, err := openProbe(st, from)
	if err != nil {
		return err
	}
	defer unix.Close(tx.fd)
	rx, err := openProbe(st, to)
	if err != nil {
		return err
	}
	defer unix.Close(rx.fd)
	run := uint32(time.Now().UnixNano())
	quiet := verifyQuiet(want)
	return judgeDir(func(kind byte) ([]arrival, error) {
		got := probeRun(tx, rx, quiet, func() { sendPhase(tx, kind, run, want, opt) }, kind, run)
		if n := rx.drops(); n > 0 {
			return nil, fmt.Errorf("the probe receiver on %s dropped %d frames (the machine did not run it in time): not measured, run verify again", to, n)
		}
		return got, nil
	}, want, opt, r)
}

// verifyQuiet is how long a receiver waits, once the sender is done, for
// the last probes of a phase.
func verifyQuiet(want tc.Dir) time.Duration {
	return 2*want.Delay + 2*want.Jitter + 200*time.Millisecond
}

// Verify's phases, in order: the probe kinds.
const (
	phaseDelay = 'd'
	phaseRate  = 'r'
	phaseLoss  = 'l'
)

// sendPhase sends one phase's probes on tx.
func sendPhase(tx *probeSock, kind byte, run uint32, want tc.Dir, opt VerifyOptions) {
	switch kind {
	case phaseDelay:
		// 50 small frames, 10 ms apart
		for i := 0; i < 50; i++ {
			tx.send(tx.frame(64, phaseDelay, run, uint32(i)))
			time.Sleep(10 * time.Millisecond)
		}
	case phaseRate:
		// full frames offered at 1.5 x the rate for RateDuration (enough
		// to keep the link's queue from ever running empty, without
		// flooding the machine)
		b := tx.frame(rateFrameLen, phaseRate, run, 0)
		perMs := 1.5 * float64(want.Rate) / 8 / rateFrameLen / 1000
		start := time.Now()
		sent := 0
		for i := uint32(0); time.Since(start) < opt.RateDuration; {
			due := int(perMs*float64(time.Since(start).Milliseconds()+1)) + 1
			for ; sent < due; sent++ {
				binary.BigEndian.PutUint32(b[19:23], i)
				tx.send(b)
				i++
			}
			time.Sleep(200 * time.Microsecond)
		}
	case phaseLoss:
		// small frames in bursts of at most a quarter of the queue, paced
		// at half the rate and never catching up after a late wake-up, so
		// the queue never overflows and only the loss model drops them
		burst := 16
		if want.Rate > 0 {
			q := want.QueuePackets
			if q == 0 && want.QueueBytes > 0 {
				q = int(want.QueueBytes / 64)
			}
			if q == 0 {
				q = tc.DefaultQueuePackets(want, 1500)
			}
			burst = max(1, min(16, q/4))
		}
		pps := 20000.0
		if want.Rate > 0 {
			pps = math.Min(pps, 0.5*float64(want.Rate)/(64*8))
		}
		n := opt.LossProbes
		gap := time.Duration(float64(burst) * float64(time.Second) / pps)
		for i := 0; i < n; {
			t0 := time.Now()
			for k := 0; k < burst && i < n; k, i = k+1, i+1 {
				tx.send(tx.frame(64, phaseLoss, run, uint32(i)))
			}
			if d := gap - time.Since(t0); d > 0 {
				time.Sleep(d)
			}
		}
	}
}

const rateFrameLen = 1514

// judgeDir runs the three phases (phase sends one and returns its
// arrivals in arrival order, their times on the sender's clock) and
// judges what arrived against want.
func judgeDir(phase func(kind byte) ([]arrival, error), want tc.Dir, opt VerifyOptions, r *DirResult) error {
	// 1. delay
	delays, err := phase(phaseDelay)
	if err != nil {
		return err
	}
	var owd []float64
	for _, a := range delays {
		owd = append(owd, float64(a.at.Sub(a.sent)))
	}
	if len(owd) == 0 {
		return errors.New("no delay probe arrived")
	}
	sort.Float64s(owd)
	mean, sd := meanSD(owd)
	r.MinDelay, r.MeanDelay, r.Jitter = time.Duration(owd[0]), time.Duration(mean), time.Duration(sd)
	serial := time.Duration(0)
	if want.Rate > 0 {
		serial = time.Duration(float64(64*8) / float64(want.Rate) * 1e9)
	}
	floor := want.Delay - want.Jitter + serial
	if want.JitterDist == tc.DistNormal || want.JitterDist == tc.DistPareto {
		floor = 0
	}
	// timestamps' slack; across two clocks, the offset's own uncertainty
	slack := max(200*time.Microsecond, r.ClockRTT/2)
	if d := r.MinDelay - max(floor, 0); d < -slack {
		r.Problems = append(r.Problems, fmt.Sprintf("delay %v below the configured %v", r.MinDelay, want.Delay))
	}
	if want.Jitter == 0 {
		if over := r.MinDelay - (want.Delay + serial); over > time.Duration(opt.Tolerance*float64(want.Delay))+500*time.Microsecond {
			r.Problems = append(r.Problems, fmt.Sprintf("delay floor %v exceeds the configured %v by %v", r.MinDelay, want.Delay, over))
		}
	}

	// 2. rate: the arrival rate measured after the first 20 %
	if want.Rate > 0 {
		burst, err := phase(phaseRate)
		if err != nil {
			return err
		}
		if len(burst) > 20 {
			burst = burst[len(burst)/5:]
			first, last := burst[0].at, burst[len(burst)-1].at
			var bytes int
			for _, a := range burst[1:] {
				bytes += a.size
			}
			if el := last.Sub(first).Seconds(); el > 0 {
				r.Rate = units.BitRate(float64(bytes) * 8 / el)
			}
		}
		if e := relErr(float64(r.Rate), float64(want.Rate)); math.Abs(e) > opt.Tolerance {
			r.Problems = append(r.Problems, fmt.Sprintf("rate %s is %+.1f%% off the configured %s", r.Rate.TC(), 100*e, want.Rate.TC()))
		}
	}

	// 3. loss
	got, err := phase(phaseLoss)
	if err != nil {
		return err
	}
	n := opt.LossProbes
	seen := map[uint32]bool{}
	for _, a := range got {
		seen[a.seq] = true
	}
	r.LossSent = n
	r.Loss = units.Percent(100 * float64(n-min(len(seen), n)) / float64(n))
	p := r.WantLoss.Prob()
	sigma := math.Sqrt(math.Max(p*(1-p), 1.0/float64(n)) / float64(n))
	if math.Abs(r.Loss.Prob()-p) > 3*sigma+0.5/float64(n) {
		r.Problems = append(r.Problems, fmt.Sprintf("loss %.2f%% is outside 3σ (±%.2f%%) of the configured %.2f%%", float64(r.Loss), 300*sigma, float64(r.WantLoss)))
	}
	return nil
}

// probeRun collects on rx while send runs on tx, and returns the arrivals
// of this run and kind in arrival order.
func probeRun(tx, rx *probeSock, quiet time.Duration, send func(), kind byte, run uint32) []arrival {
	stop := make(chan struct{})
	var got []arrival
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		got = rx.collect(stop, quiet)
	}()
	time.Sleep(5 * time.Millisecond)
	send()
	close(stop)
	wg.Wait()
	var out []arrival
	for _, a := range got {
		if a.kind == kind && a.run == run {
			out = append(out, a)
		}
	}
	return out
}

func meanSD(xs []float64) (float64, float64) {
	var s float64
	for _, x := range xs {
		s += x
	}
	m := s / float64(len(xs))
	var v float64
	for _, x := range xs {
		v += (x - m) * (x - m)
	}
	if len(xs) > 1 {
		v /= float64(len(xs) - 1)
	}
	return m, math.Sqrt(v)
}

func relErr(got, want float64) float64 {
	if want == 0 {
		return 0
	}
	return (got - want) / want
}
