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

// MediumRadio is one radio the medium serves.
type MediumRadio struct {
	Node string `json:"node"`
	// Perm is the radio's permanent address (HWSIM_ATTR_PERM_ADDR at
	// creation): the transmitter and receiver address of its frames.
	Perm [6]byte `json:"perm"`
	// Addrs are its interfaces' MAC addresses, when known in advance.
	Addrs [][6]byte `json:"addrs,omitempty"`
	// Pos is the node's position in metres.
	Pos [3]float64 `json:"pos"`
	// TxPowerDBm is its transmit power.
	TxPowerDBm float64 `json:"txpower_dbm"`
	// Fixed replaces the driver's rate chain with one rate (nil: the
	// driver's rate control, minstrel, chooses and sees every attempt).
	Fixed *model.Rate `json:"fixed,omitempty"`
}

// MediumConfig is what the medium of one lab models.
type MediumConfig struct {
	Radios        []MediumRadio  `json:"radios"`
	PathLoss      model.PathLoss `json:"path_loss"`
	NoiseFigureDB float64        `json:"noise_figure_db"`
	// SNR and Loss override a pair of nodes (both directions): a fixed
	// SNR in dB, or extra loss in dB on top of the path loss.
	SNR   map[[2]string]float64 `json:"-"`
	Loss  map[[2]string]float64 `json:"-"`
	AMPDU bool                  `json:"ampdu"`
	// RetryLimit caps a fixed rate's attempts (the driver's chain
	// otherwise).
	RetryLimit int    `json:"retry_limit"`
	Seed       uint64 `json:"seed"`
}

// Link is what tx's frames look like at rx.
func (c *MediumConfig) Link(tx, rx int) model.Link {
	a, b := c.Radios[tx], c.Radios[rx]
	noise := model.NoiseDBm(20, c.NoiseFigureDB)
	if v, ok := pairLookup(c.SNR, a.Node, b.Node); ok {
		return model.Link{RxDBm: noise + v, SNRdB: v, OK: true}
	}
	d := math.Sqrt(sq(a.Pos[0]-b.Pos[0]) + sq(a.Pos[1]-b.Pos[1]) + sq(a.Pos[2]-b.Pos[2]))
	loss, _ := c.PathLoss.LossDB(d)
	if v, ok := pairLookup(c.Loss, a.Node, b.Node); ok {
		loss += v
	}
	rx_ := a.TxPowerDBm - loss
	return model.Link{RxDBm: rx_, SNRdB: rx_ - noise, OK: rx_ >= model.DefaultRxSensitivity}
}

func sq(x float64) float64 { return x * x }

func pairLookup(m map[[2]string]float64, a, b string) (float64, bool) {
	if v, ok := m[[2]string{a, b}]; ok {
		return v, true
	}
	v, ok := m[[2]string{b, a}]
	return v, ok
}

// MediumStats is a snapshot of a running medium.
type MediumStats struct {
	Radios map[string]model.RadioStats `json:"radios"` // by node
	// Frames from the kernel, deliveries and statuses sent, error
	// replies (deliveries the kernel refused), unknown transmitters.
	FramesIn   uint64 `json:"frames_in"`
	Deliveries uint64 `json:"deliveries"`
	Statuses   uint64 `json:"statuses"`
	NLErrors   uint64 `json:"nl_errors"`
	Unknown    uint64 `json:"unknown_transmitters"`
	// NoRate counts frames whose retry chain named no rate the model
	// knows (sent at the band's lowest rate instead).
	NoRate uint64 `json:"no_rate"`
	// ADDBADropped counts Block Ack agreement requests not delivered.
	ADDBADropped uint64 `json:"addba_dropped"`
	// LateMeanUs / LateMaxUs: how late the medium acted on its events
	// (real time behind medium time).
	LateMeanUs float64       `json:"late_mean_us"`
	LateMaxUs  float64       `json:"late_max_us"`
	Uptime     time.Duration `json:"uptime_ns"`
}

// MediumServer runs a lab's medium: the kernel's frames in, the model's
// receptions and statuses out, in real time.
type MediumServer struct {
	cfg   MediumConfig
	sock  *MediumSocket
	m     *model.Medium
	perm  map[[6]byte]int
	band  map[int]model.Band // radio → band of its last frame
	start time.Time

	mu      sync.Mutex
	stats   MediumStats
	lateSum float64
	lateN   uint64
	efd     int
	chains  map[uint64]chain // medium cookie → the kernel frame's chain
	cookie  uint64
}

// NewMediumServer prepares a medium on a registered socket.
func NewMediumServer(sock *MediumSocket, cfg MediumConfig) (*MediumServer, error) {
	efd, err := unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK)
	if err != nil {
		return nil, err
	}
	s := &MediumServer{cfg: cfg, sock: sock, perm: map[[6]byte]int{}, band: map[int]model.Band{}, efd: efd, chains: map[uint64]chain{}}
	s.m = model.NewMedium(model.MediumConfig{
		MAC:   func(b model.Band) model.MAC { return model.DefaultMAC(model.ModeN, b, true) },
		Link:  cfg.Link,
		AMPDU: cfg.AMPDU,
		Seed:  cfg.Seed,
	})
	for i, r := range cfg.Radios {
		s.perm[r.Perm] = i
		s.m.AddRadio(i, 0)
		s.m.LearnAddr(r.Perm, i)
		for _, a := range r.Addrs {
			s.m.LearnAddr(a, i)
		}
	}
	s.stats.Radios = map[string]model.RadioStats{}
	return s, nil
}

// Stats returns a snapshot.
func (s *MediumServer) Stats() MediumStats {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.stats
	st.Radios = map[string]model.RadioStats{}
	// The scheduler changes the model only under mu.
	for i, r := range s.cfg.Radios {
		if rs, ok := s.m.Stats(i); ok {
			st.Radios[r.Node] = rs
		}
	}
	if s.lateN > 0 {
		st.LateMeanUs = s.lateSum / float64(s.lateN)
	}
	st.Uptime = time.Since(s.start)
	return st
}

// Run serves until ctx ends or the socket fails; the medium's failure is
// the lab's (the kernel would silently fall back to instant delivery).
func (s *MediumServer) Run(ctx context.Context) error {
	s.start = time.Now()
	errc := make(chan error, 1)
	go func() { errc <- s.schedule(ctx) }()
	var err error
	select {
	case <-ctx.Done():
		s.wake()
		err = <-errc
	case err = <-errc:
	}
	unix.Close(s.efd)
	if errors.Is(err, context.Canceled) {
		err = nil
	}
	return err
}

func (s *MediumServer) wake() {
	var one [8]byte
	one[0] = 1
	unix.Write(s.efd, one[:])
}

// schedule is the medium: one locked OS thread with 1 ns timer slack that
// polls the hwsim socket itself and sleeps in ppoll (not Go's netpoller,
// which rounds sub-millisecond timeouts up to 1 ms and wakes goroutines
// late on a busy host) until the next event or a frame.
func (s *MediumServer) schedule(ctx context.Context) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0)
	var bt Batch
	var in []*HwFrame
	var addrs []*HwAddr
	var sendErr error
	emit := func(now time.Duration) func(any) {
		return func(ev any) {
			switch v := ev.(type) {
			case model.Reception:
				s.late(now - v.At)
				rx := s.cfg.Radios[v.To].Perm
				b := s.band[v.Frame.Radio]
				if err := s.sock.Deliver(&bt, rx, v.Frame.Data, RxRateIndex(v.Rate, b), int(math.Round(v.SignalDBm)), v.Frame.Freq); err != nil {
					sendErr = err
				}
				s.stats.Deliveries++
			case model.Status:
				s.late(now - v.At)
				hf := v.Frame.Cookie
				orig := s.chains[hf]
				delete(s.chains, hf)
				var rates [4]HwRate
				for i := range rates {
					rates[i] = HwRate{Idx: -1}
					if v.Counts[i] > 0 {
						rates[i] = HwRate{Idx: orig.rates[i].Idx, Count: uint8(min(v.Counts[i], 255))}
					}
				}
				if orig.fixed {
					n := v.Counts[0] + v.Counts[1] + v.Counts[2] + v.Counts[3]
					rates = [4]HwRate{{Idx: orig.rates[0].Idx, Count: uint8(min(n, 255))}, {Idx: -1}, {Idx: -1}, {Idx: -1}}
				}
				flags := orig.flags &^ hwsimTxStatAck
				if v.Acked {
					flags |= hwsimTxStatAck
				}
				tx := s.cfg.Radios[v.Frame.Radio].Perm
				if err := s.sock.TxInfo(&bt, tx, flags, orig.cookie, int(math.Round(v.AckSignalDBm)), rates); err != nil {
					sendErr = err
				}
				s.stats.Statuses++
			}
		}
	}
	sockFd := s.sock.Fd()
	for {
		if ctx.Err() != nil {
			return nil
		}
		in, addrs = in[:0], addrs[:0]
		for {
			msgs, nerr, more, err := s.sock.TryReceive(sockFd)
			if err != nil {
				return fmt.Errorf("wifi medium: %w", err)
			}
			s.mu.Lock()
			s.stats.NLErrors += uint64(nerr)
			s.mu.Unlock()
			for _, v := range msgs {
				switch x := v.(type) {
				case *HwFrame:
					in = append(in, x)
				case *HwAddr:
					addrs = append(addrs, x)
				}
			}
			if !more {
				break
			}
		}
		now := time.Since(s.start)
		s.mu.Lock()
		for _, a := range addrs {
			if i, ok := s.perm[a.Radio]; ok && a.Add {
				s.m.LearnAddr(a.Addr, i)
			}
		}
		s.m.Advance(now, emit(now))
		for _, f := range in {
			s.stats.FramesIn++
			if isADDBARequest(f.Data) {
				// No Block Ack agreement is ever made: with one, mac80211
				// marks every data frame as part of an A-MPDU and its
				// rate control (minstrel_ht) ignores statuses that lack
				// A-MPDU lengths, which hwsim cannot convey — rates then
				// never climb from the lowest. The request is reported
				// sent and not delivered (the originator times out and
				// sends frames singly); the medium still aggregates
				// queued frames for airtime (MediumConfig.AMPDU).
				s.stats.ADDBADropped++
				rates := [4]HwRate{{Idx: f.Rates[0].Idx, Count: 1}, {Idx: -1}, {Idx: -1}, {Idx: -1}}
				if err := s.sock.TxInfo(&bt, f.Transmitter, f.Flags|hwsimTxStatAck, f.Cookie, -50, rates); err != nil {
					sendErr = err
				}
				continue
			}
			s.submit(now, f)
		}
		s.m.Advance(now, emit(now))
		s.mu.Unlock()
		if err := s.sock.Flush(&bt); err != nil {
			return err
		}
		if sendErr != nil {
			return sendErr
		}
		// Sleep until the next event or a frame.
		timeout := -1 * time.Nanosecond
		if next, ok := s.m.Next(); ok {
			timeout = max(0, next-time.Since(s.start))
		}
		var ts *unix.Timespec
		if timeout >= 0 {
			t := unix.NsecToTimespec(int64(timeout))
			ts = &t
		}
		fds := []unix.PollFd{{Fd: int32(s.efd), Events: unix.POLLIN}, {Fd: int32(sockFd), Events: unix.POLLIN}}
		if _, err := unix.Ppoll(fds, ts, nil); err != nil && err != unix.EINTR {
			return fmt.Errorf("wifi medium: ppoll: %w", err)
		}
		if fds[1].Revents&(unix.POLLERR|unix.POLLHUP) != 0 && fds[1].Revents&unix.POLLIN == 0 {
			return errors.New("wifi medium: the hwsim socket failed")
		}
		if fds[0].Revents&unix.POLLIN != 0 {
			var b [8]byte
			unix.Read(s.efd, b[:])
		}
	}
}

type chain struct {
	rates  [4]HwRate
	flags  uint32
	cookie uint64
	fixed  bool
}

func (s *MediumServer) late(d time.Duration) {
	us := float64(d) / 1e3
	s.lateSum += us
	s.lateN++
	s.stats.LateMaxUs = max(s.stats.LateMaxUs, us)
}

// submit turns a kernel frame into a medium frame (called with mu held).
func (s *MediumServer) submit(now time.Duration, f *HwFrame) {
	i, ok := s.perm[f.Transmitter]
	if !ok {
		// A radio emuctl did not announce (should not happen: one lab,
		// one netgroup). Give it an identity so its frames still cost
		// airtime.
		i = len(s.cfg.Radios)
		s.cfg.Radios = append(s.cfg.Radios, MediumRadio{Node: fmt.Sprintf("radio-%x", f.Transmitter), Perm: f.Transmitter, TxPowerDBm: model.DefaultTxPowerDBm})
		s.perm[f.Transmitter] = i
		s.m.AddRadio(i, 0)
		s.m.LearnAddr(f.Transmitter, i)
		s.stats.Unknown++
	}
	b := bandOfFreq(f.Freq)
	s.band[i] = b
	mf := &model.MediumFrame{Radio: i, Cookie: s.nextCookie(f), Freq: f.Freq, Data: f.Data, NoAck: f.Flags&hwsimTxCtlNoAck != 0}
	c := chain{rates: f.Rates, flags: f.Flags, cookie: f.Cookie}
	// A fixed rate applies to unicast data frames, as `iw set bitrates`
	// does; management and group frames keep the driver's rates.
	unicastData := len(f.Data) >= 10 && (f.Data[0]>>2)&3 == 2 && f.Data[4]&1 == 0
	if fx := s.cfg.Radios[i].Fixed; fx != nil && unicastData {
		lim := s.cfg.RetryLimit
		if lim <= 0 {
			lim = 11
		}
		mf.Rates[0] = model.TxRate{Rate: *fx, Count: lim}
		c.fixed = true
	} else {
		k := 0
		for _, r := range f.Rates {
			if x, ok := RateOf(r, b); ok {
				mf.Rates[k] = model.TxRate{Rate: x, Count: int(r.Count)}
				c.rates[k] = r
				k++
			}
		}
		if k == 0 { // no usable rate: the band's lowest
			s.stats.NoRate++
			if s.stats.NoRate <= 5 {
				fmt.Printf("wifi medium: frame from %s with no known rate: %+v\n", s.cfg.Radios[i].Node, f.Rates)
			}
			low := model.Rate{Class: model.OFDM, Kbps: 6000}
			if b == model.Band2G4 {
				low = model.Rate{Class: model.DSSS, Kbps: 1000}
			}
			mf.Rates[0] = model.TxRate{Rate: low, Count: 1}
			c.rates[0] = HwRate{Idx: 0, Count: 1}
		}
	}
	s.chains[mf.Cookie] = c
	if err := s.m.Submit(now, mf); err != nil {
		delete(s.chains, mf.Cookie)
		s.stats.NLErrors++
	}
}

func (s *MediumServer) nextCookie(*HwFrame) uint64 {
	s.cookie++
	return s.cookie
}

func bandOfFreq(freq int) model.Band {
	switch {
	case freq < 3000:
		return model.Band2G4
	case freq > 5935:
		return model.Band6G
	}
	return model.Band5G
}

// isADDBARequest reports whether an MPDU is an ADDBA Request (action
// frame, category Block Ack 3, action 0).
func isADDBARequest(d []byte) bool {
	return len(d) >= 26 && d[0] == 0xd0 && d[24] == 3 && d[25] == 0
}
