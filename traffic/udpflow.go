package traffic

import (
	"context"
	"errors"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/emuctl/emuctl/analysis"
	"github.com/emuctl/emuctl/units"
)

// udpFlow runs one paced UDP flow of one or more streams.
type udpFlow struct {
	lab     string
	f       Flow
	rxAddr  netip.Addr // address of the receiving node
	log     *slog.Logger
	streams []*udpStream
	// offset is this machine's clock minus the sender's (the split
	// engine's receiving end, split.go; 0 when both ends are here): every
	// receive time is moved onto the sender's clock by it.
	offset time.Duration
}

type udpStream struct {
	idx        int
	offset     int64 // ns, udpFlow.offset
	rconn      *net.UDPConn
	sconn      *net.UDPConn
	token      uint32
	sent       atomic.Int64
	sendErrs   atomic.Int64
	rxBytes    atomic.Int64
	rxPkts     atomic.Int64
	lastRecv   atomic.Int64 // unix ns
	maxOWD     atomic.Int64 // ns
	stats      *udpStats
	rxDone     chan struct{}
	start, end time.Time
}

func newUDPFlow(lab string, f Flow, rxAddr netip.Addr, log *slog.Logger) *udpFlow {
	return &udpFlow{lab: lab, f: f, rxAddr: rxAddr, log: log}
}

// prepare opens every receiver and sender socket.
func (u *udpFlow) prepare(ctx context.Context) error {
	// A sender cannot send more than rate/size datagrams per second; twice
	// that bounds the sequence numbers a receiver accepts.
	maxSeq := uint64(float64(u.f.Rate)/float64(8*u.f.Size)*u.f.Duration.Seconds()*2) + 1024
	for i := 0; i < u.f.Parallel; i++ {
		port := 0
		if u.f.Port != 0 {
			port = u.f.Port + i
		}
		rc, err := listenUDP(u.lab, u.f.dataTo(), u.rxAddr, port)
		if err != nil {
			return err
		}
		s := &udpStream{idx: i, rconn: rc, token: rand.Uint32(), rxDone: make(chan struct{}),
			stats: newUDPStats(u.f.keepPackets(), maxSeq)}
		u.streams = append(u.streams, s)
		dst := netip.AddrPortFrom(u.rxAddr, addrPort(rc.LocalAddr()).Port())
		sc, err := dialUDP(u.lab, u.f.dataFrom(), dst)
		if err != nil {
			return err
		}
		s.sconn = sc
	}
	return nil
}

func (u *udpFlow) close() {
	for _, s := range u.streams {
		if s.rconn != nil {
			s.rconn.Close()
		}
		if s.sconn != nil {
			s.sconn.Close()
		}
	}
}

func (u *udpFlow) run(ctx context.Context, t0 time.Time) ([]analysis.Flow, error) {
	start := time.Now()
	end := start.Add(u.f.Duration)
	var senders sync.WaitGroup
	for _, s := range u.streams {
		s.start = start
		go s.receive()
		senders.Add(1)
		go func() { defer senders.Done(); s.send(ctx, start, end, u.f.Rate, u.f.Size) }()
	}
	sampled := make(chan [][]rawSample, 1)
	go func() { sampled <- u.sample() }()
	senders.Wait()
	u.drain(ctx)
	for _, s := range u.streams {
		s.rconn.Close()
	}
	raw := <-sampled
	out := make([]analysis.Flow, len(u.streams))
	for i, s := range u.streams {
		if n := s.sendErrs.Load(); n > 0 {
			u.log.Warn("UDP send errors (datagrams not sent, not counted as sent)", "flow", u.f.Name, "stream", i, "errors", n)
		}
		out[i] = u.flowRecord(s, t0, start, raw[i])
	}
	return out, nil
}

// send paces datagrams at rate: datagram k leaves at start + k·gap; when
// the sender is late it catches up at once, so the mean rate is exact.
func (s *udpStream) send(ctx context.Context, start, end time.Time, rate units.BitRate, size int) {
	defer func() { s.end = time.Now() }()
	buf := make([]byte, size)
	gap := time.Duration(float64(size*8) / float64(rate) * 1e9)
	for seq := uint64(0); ; seq++ {
		next := start.Add(time.Duration(seq) * gap)
		if !next.Before(end) || ctx.Err() != nil {
			return
		}
		if d := time.Until(next); d > 0 {
			time.Sleep(d)
		}
		putUDPHeader(buf, s.token, seq, time.Now().UnixNano())
		if _, err := s.sconn.Write(buf); err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			s.sendErrs.Add(1)
			continue
		}
		s.sent.Add(1)
	}
}

// receive reads until the socket is closed.
func (s *udpStream) receive() {
	defer close(s.rxDone)
	buf := make([]byte, 65536)
	oob := make([]byte, oobSize)
	for {
		n, oobn, _, _, err := s.rconn.ReadMsgUDPAddrPort(buf, oob)
		if err != nil {
			if errors.Is(err, net.ErrClosed) || errors.Is(err, os.ErrDeadlineExceeded) {
				return
			}
			continue
		}
		seq, sent, ok := parseUDPHeader(buf[:n], s.token)
		if !ok {
			continue
		}
		recv := rxTime(oob[:oobn]) - s.offset
		if !s.stats.add(seq, sent, recv, n) {
			continue
		}
		s.rxBytes.Add(int64(n))
		s.rxPkts.Add(1)
		s.lastRecv.Store(recv)
		if owd := recv - sent; owd > s.maxOWD.Load() {
			s.maxOWD.Store(owd)
		}
	}
}

// drain waits after the senders stopped until the receivers have been
// quiet for max(200 ms, 2 × the largest one-way delay seen), at most 5 s.
func (u *udpFlow) drain(ctx context.Context) {
	limit := time.Now().Add(5 * time.Second)
	for time.Now().Before(limit) && ctx.Err() == nil {
		quiet := true
		for _, s := range u.streams {
			wait := max(200*time.Millisecond, 2*time.Duration(s.maxOWD.Load()))
			last := max(s.lastRecv.Load(), s.end.UnixNano()) + int64(u.offset) // on this clock
			if time.Since(time.Unix(0, last)) < wait {
				quiet = false
			}
		}
		if quiet {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sample reads the receivers' counters every interval until they close.
func (u *udpFlow) sample() [][]rawSample {
	out := make([][]rawSample, len(u.streams))
	allDone := make(chan struct{})
	go func() {
		for _, s := range u.streams {
			<-s.rxDone
		}
		close(allDone)
	}()
	tick := time.NewTicker(u.f.Interval)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			now := time.Now().Add(-u.offset)
			for i, s := range u.streams {
				out[i] = append(out[i], rawSample{at: now, rx: s.rxBytes.Load(), pkts: s.rxPkts.Load()})
			}
		case <-allDone:
			for i, s := range u.streams {
				at := time.Now().Add(-u.offset)
				if l := s.lastRecv.Load(); l > 0 {
					at = time.Unix(0, l)
				}
				out[i] = append(out[i], rawSample{at: at, rx: s.rxBytes.Load(), pkts: s.rxPkts.Load()})
			}
			return out
		}
	}
}

func (u *udpFlow) flowRecord(s *udpStream, t0, start time.Time, raw []rawSample) analysis.Flow {
	id, group := streamID(u.f, s.idx)
	end := s.end
	if l := s.lastRecv.Load(); l > 0 && time.Unix(0, l).After(end) {
		end = time.Unix(0, l)
	}
	st := s.stats
	return analysis.Flow{
		ID:            id,
		Group:         group,
		Proto:         UDP,
		From:          u.f.dataFrom(),
		To:            u.f.dataTo(),
		Src:           unmapped(addrPort(s.sconn.LocalAddr())).String(),
		Dst:           netip.AddrPortFrom(u.rxAddr, addrPort(s.rconn.LocalAddr()).Port()).String(),
		StartS:        start.Sub(t0).Seconds(),
		EndS:          end.Sub(t0).Seconds(),
		BytesSent:     s.sent.Load() * int64(u.f.Size),
		BytesReceived: st.bytes,
		Samples:       samples(raw, t0, start, u.f.Interval),
		UDP:           udpResult(st, s.sent.Load(), u.f.Size),
	}
}

// udpResult is a UDP stream's record from its receiver's accounting and
// the datagrams its sender sent.
func udpResult(st *udpStats, sent int64, size int) *analysis.UDPFlow {
	return &analysis.UDPFlow{
		Sent:         sent,
		Received:     st.received,
		Duplicates:   st.duplicates,
		OutOfOrder:   st.outOfOrder,
		PayloadBytes: size,
		Packets:      st.packets,

		JitterRFC3550Us:      st.jitterNs / 1e3,
		JitterMeanAbsDeltaUs: st.meanAbsDeltaNs() / 1e3,
		OWDMinUs:             st.owdMinUs(),
		OWDMeanUs:            st.owdMeanNs() / 1e3,
		OWDMaxUs:             float64(st.owdMax) / 1e3,
	}
}
