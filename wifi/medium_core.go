package wifi

import (
	"context"
	"errors"
	"fmt"
	"math"
	"runtime"
	"sync"
	"time"

	"github.com/emuctl/emuctl/wifi/model"
	"golang.org/x/sys/unix"
)

// What both media share (the hwsim medium, medium_run.go, and the engine
// medium over veth pairs, ether.go): the model under a lock, the radios'
// links (cached, changed at run time), counters, lateness, the wake-up
// eventfd and the real-time wait.

// mediumCore is the part of a running medium that does not depend on how
// frames come in and go out.
type mediumCore struct {
	cfg   MediumConfig
	m     *model.Medium
	start time.Time
	efd   int

	mu      sync.Mutex // guards everything below and the model
	stats   MediumStats
	lateSum float64
	lateN   uint64
	links   [][]model.Link // links[tx][rx], nil entries: not computed yet
	tap     *airTap        // a capture of the medium, when one runs
	// next, when set, is an event of the medium's own beside the model's
	// (a station back on the air after a handover): wait wakes for it
	next func() (time.Duration, bool)
}

func newCore(cfg MediumConfig, mc model.MediumConfig) (*mediumCore, error) {
	efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return nil, err
	}
	c := &mediumCore{cfg: cfg, efd: efd}
	mc.Link = c.link
	if mc.QueueLimit == 0 {
		mc.QueueLimit = cfg.QueueLimit
	}
	c.m = model.NewMedium(mc)
	c.stats.Radios = map[string]model.RadioStats{}
	return c, nil
}

// link is what tx's frames look like at rx (called by the model, under mu).
func (c *mediumCore) link(tx, rx int) model.Link {
	if tx >= len(c.links) {
		c.links = append(c.links, make([][]model.Link, tx+1-len(c.links))...)
	}
	row := c.links[tx]
	if rx >= len(row) {
		row = append(row, make([]model.Link, rx+1-len(row))...)
		for i := range row {
			row[i] = model.Link{RxDBm: math.NaN()}
		}
		c.links[tx] = row
	}
	if math.IsNaN(row[rx].RxDBm) {
		row[rx] = c.cfg.Link(tx, rx)
	}
	return row[rx]
}

// Stats returns a snapshot of the medium's counters.
func (c *mediumCore) Stats() MediumStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	st := c.stats
	st.Radios = map[string]model.RadioStats{}
	st.PerLink = nil
	for i, r := range c.cfg.Radios {
		if r.Gone {
			continue
		}
		if rs, ok := c.m.Stats(i); ok {
			st.Radios[r.Node] = rs
		}
		if ls := c.m.LinkStats(i); ls != nil {
			if st.PerLink == nil {
				st.PerLink = map[string]map[int]model.RadioStats{}
			}
			st.PerLink[r.Node] = ls
		}
	}
	if c.lateN > 0 {
		st.LateMeanUs = c.lateSum / float64(c.lateN)
		st.LateSumUs, st.LateEvents = c.lateSum, uint64(c.lateN)
	}
	if !c.start.IsZero() {
		st.Uptime = time.Since(c.start)
	}
	st.Positions = map[string][3]float64{}
	st.Ranges = nil
	for i, r := range c.cfg.Radios {
		if r.Gone {
			continue
		}
		st.Positions[r.Node] = r.Pos
		if d, ok := c.cfg.RangeM(i); ok {
			if st.Ranges == nil {
				st.Ranges = map[string]float64{}
			}
			st.Ranges[r.Node] = d
		}
	}
	st.Links = nil
	for tx := range c.cfg.Radios {
		for rx := range c.cfg.Radios {
			if tx == rx || c.cfg.Radios[tx].Gone || c.cfg.Radios[rx].Gone {
				continue
			}
			l := c.link(tx, rx)
			st.Links = append(st.Links, LinkInfo{From: c.cfg.Radios[tx].Node, To: c.cfg.Radios[rx].Node, RxDBm: round2(l.RxDBm), SNRdB: round2(l.SNRdB), Detect: l.OK})
		}
	}
	return st
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }

// late records how far behind its event time the medium acted (under mu).
func (c *mediumCore) late(d time.Duration) {
	us := float64(d) / 1e3
	c.lateSum += us
	c.lateN++
	c.stats.LateMaxUs = max(c.stats.LateMaxUs, us)
}

func (c *mediumCore) wake() {
	var one [8]byte
	one[0] = 1
	unix.Write(c.efd, one[:])
}

func (c *mediumCore) radioIndex(node string) (int, bool) {
	for i, r := range c.cfg.Radios {
		if r.Node == node && !r.Gone {
			return i, true
		}
	}
	return 0, false
}

// SetPosition moves a node's radio (metres); frames from now on see the
// new path loss.
func (c *mediumCore) SetPosition(node string, pos [3]float64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	i, ok := c.radioIndex(node)
	if !ok {
		return fmt.Errorf("the medium has no radio of node %q", node)
	}
	c.cfg.Radios[i].Pos = pos
	c.links = nil
	return nil
}

// SetPair fixes the SNR between two nodes (snr non-nil), adds loss to
// their path (loss non-nil), or with both nil removes their override.
func (c *mediumCore) SetPair(a, b string, snr, loss *float64) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, n := range []string{a, b} {
		if _, ok := c.radioIndex(n); !ok {
			return fmt.Errorf("the medium has no radio of node %q", n)
		}
	}
	if c.cfg.SNR == nil {
		c.cfg.SNR = map[[2]string]float64{}
	}
	if c.cfg.Loss == nil {
		c.cfg.Loss = map[[2]string]float64{}
	}
	for _, k := range [][2]string{{a, b}, {b, a}} {
		delete(c.cfg.SNR, k)
		delete(c.cfg.Loss, k)
	}
	if snr != nil {
		c.cfg.SNR[[2]string{a, b}] = *snr
	}
	if loss != nil {
		c.cfg.Loss[[2]string{a, b}] = *loss
	}
	c.links = nil
	return nil
}

// Config returns the medium's configuration in force (positions and
// overrides changed at run time included).
func (c *mediumCore) Config() MediumConfig {
	c.mu.Lock()
	defer c.mu.Unlock()
	cfg := c.cfg
	cfg.Radios = append([]MediumRadio(nil), c.cfg.Radios...)
	return cfg
}

// run starts the clock and runs schedule (the medium's thread) until ctx
// ends (it is woken to return) or schedule fails; then release closes what
// the medium owns. A cancelled context is a clean stop.
func (c *mediumCore) run(ctx context.Context, schedule func(context.Context) error, release func()) error {
	c.start = time.Now()
	errc := make(chan error, 1)
	go func() { errc <- schedule(ctx) }()
	var err error
	select {
	case <-ctx.Done():
		c.wake()
		err = <-errc
	case err = <-errc:
	}
	release()
	unix.Close(c.efd)
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

// realtime prepares the calling goroutine's OS thread for the medium:
// locked, with 1 ns timer slack (the default 50 µs would blur airtime).
func realtime() {
	runtime.LockOSThread()
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
}

// wait sleeps in ppoll until the model's next event, a frame on fd, or a
// wake-up (not Go's netpoller, which rounds sub-millisecond timeouts up to
// 1 ms and wakes goroutines late on a busy host).
func (c *mediumCore) wait(fd int) error {
	timeout := -1 * time.Nanosecond
	c.mu.Lock()
	next, ok := c.m.Next()
	if c.next != nil {
		if t, ok2 := c.next(); ok2 && (!ok || t < next) {
			next, ok = t, true
		}
	}
	c.mu.Unlock()
	if ok {
		timeout = max(0, next-time.Since(c.start))
	}
	var ts *unix.Timespec
	if timeout >= 0 {
		t := unix.NsecToTimespec(int64(timeout))
		ts = &t
	}
	fds := []unix.PollFd{{Fd: int32(c.efd), Events: unix.POLLIN}, {Fd: int32(fd), Events: unix.POLLIN}}
	if _, err := unix.Ppoll(fds, ts, nil); err != nil && err != unix.EINTR {
		return fmt.Errorf("wifi medium: ppoll: %w", err)
	}
	if fds[1].Revents&(unix.POLLERR|unix.POLLHUP) != 0 && fds[1].Revents&unix.POLLIN == 0 {
		return errors.New("wifi medium: its socket failed")
	}
	if fds[0].Revents&unix.POLLIN != 0 {
		var b [8]byte
		unix.Read(c.efd, b[:])
	}
	return nil
}
