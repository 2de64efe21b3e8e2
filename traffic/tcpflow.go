package traffic

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"sync"
	"sync/atomic"
	"time"

	"github.com/emuctl/emuctl/analysis"
	"github.com/emuctl/emuctl/internal/sockinfo"
	"github.com/emuctl/emuctl/units"
	"golang.org/x/sys/unix"
)

// blockSize is what each write/read moves, as iperf3's default for TCP.
const blockSize = 128 << 10

// drainTimeout bounds how long a receiver waits for the last bytes after
// the sender stopped.
const drainTimeout = 10 * time.Second

// tcpFlow runs one TCP or MPTCP flow of one or more streams.
type tcpFlow struct {
	lab  string
	f    Flow
	dst  netip.Addr
	log  *slog.Logger
	ln   *net.TCPListener
	port int

	accepted chan *net.TCPConn
	streams  []*tcpStream
}

// tcpStream is one connection: both ends live in this process.
type tcpStream struct {
	idx            int
	client, server *net.TCPConn
	snd, rcv       *net.TCPConn
	cc             string
	mptcp          bool // established as MPTCP on both ends
	rx, tx         atomic.Int64
	rxEnd          atomic.Int64 // unix ns of the last byte received
	wait           writeWait
	sendEnd        atomic.Int64 // unix ns the writer stopped
	rxDone         chan struct{}
	rxErr          error
}

func newTCPFlow(lab string, f Flow, dst netip.Addr, log *slog.Logger) *tcpFlow {
	return &tcpFlow{lab: lab, f: f, dst: dst, log: log}
}

func (t *tcpFlow) prepare(ctx context.Context) error {
	ln, err := listenTCP(t.lab, t.f.Server, t.dst, t.f.Port, t.f.Proto == MPTCP, t.f.Sock)
	if err != nil {
		return err
	}
	t.ln = ln
	t.port = int(addrPort(ln.Addr()).Port())
	t.accepted = make(chan *net.TCPConn, t.f.Parallel+4)
	go func() {
		for {
			c, err := ln.AcceptTCP()
			if err != nil {
				close(t.accepted)
				return
			}
			select {
			case t.accepted <- c:
			default:
				c.Close() // not ours: more connections than streams
			}
		}
	}()
	return nil
}

func (t *tcpFlow) close() {
	if t.ln != nil {
		t.ln.Close()
	}
	for _, s := range t.streams {
		for _, c := range []*net.TCPConn{s.client, s.server} {
			if c != nil {
				c.Close()
			}
		}
	}
	if t.accepted != nil {
		for c := range t.accepted {
			c.Close()
		}
	}
}

// connect dials every stream and pairs it with its accepted end by
// address (strangers connecting to the port are closed).
func (t *tcpFlow) connect(ctx context.Context) error {
	dst := netip.AddrPortFrom(t.dst, uint16(t.port))
	pending := map[netip.AddrPort]*tcpStream{}
	for i := 0; i < t.f.Parallel; i++ {
		c, err := dialTCP(ctx, t.lab, t.f.Client, dst, t.f.Proto == MPTCP, t.f.Sock)
		if err != nil {
			return err
		}
		s := &tcpStream{idx: i, client: c, rxDone: make(chan struct{})}
		t.streams = append(t.streams, s)
		pending[unmapped(addrPort(c.LocalAddr()))] = s
	}
	timeout := time.After(dialTimeout)
	for len(pending) > 0 {
		select {
		case c, ok := <-t.accepted:
			if !ok {
				return errors.New("listener closed before every stream was accepted")
			}
			s := pending[unmapped(addrPort(c.RemoteAddr()))]
			if s == nil {
				c.Close()
				continue
			}
			s.server = c
			delete(pending, unmapped(addrPort(c.RemoteAddr())))
		case <-timeout:
			return fmt.Errorf("node %s did not accept %d of %d connections within %v", t.f.Server, len(pending), t.f.Parallel, dialTimeout)
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	for _, s := range t.streams {
		s.snd, s.rcv = s.client, s.server
		if t.f.Reverse {
			s.snd, s.rcv = s.server, s.client
		}
		if err := t.setup(s); err != nil {
			return err
		}
	}
	return nil
}

// setup applies the connected-socket options on both ends, reads the
// congestion control back from the sender and checks MPTCP.
func (t *tcpFlow) setup(s *tcpStream) error {
	o := t.f.Sock
	if err := sockinfo.WithFD(s.rcv, func(fd int) error { _, err := applyConnected(fd, o); return err }); err != nil {
		return fmt.Errorf("node %s: %w", t.f.dataTo(), err)
	}
	if err := sockinfo.WithFD(s.snd, func(fd int) (err error) { s.cc, err = applyConnected(fd, o); return }); err != nil {
		return fmt.Errorf("node %s: %w", t.f.dataFrom(), err)
	}
	if t.f.Proto == MPTCP {
		a, errA := s.client.MultipathTCP()
		b, errB := s.server.MultipathTCP()
		s.mptcp = a && b && errA == nil && errB == nil
		if !s.mptcp {
			t.log.Warn("MPTCP fell back to TCP", "flow", t.f.Name, "stream", s.idx, "client_mptcp", a, "server_mptcp", b)
		}
	}
	return nil
}

// run connects, moves data for the flow's duration while sampling, and
// returns one analysis.Flow per stream.
func (t *tcpFlow) run(ctx context.Context, t0 time.Time) ([]analysis.Flow, error) {
	if err := t.connect(ctx); err != nil {
		return nil, err
	}
	// The listener stays open until close: MPTCP joins (MP_JOIN SYNs to
	// this port) need it after the first connection is accepted.
	start := time.Now()
	end := start.Add(t.f.Duration)
	var wg sync.WaitGroup
	for _, s := range t.streams {
		wg.Add(2)
		go func() { defer wg.Done(); s.send(start, end, t.f.Rate) }()
		go func() { defer wg.Done(); s.receive(end.Add(drainTimeout), t.f.Sock.QuickAck) }()
	}
	stop := context.AfterFunc(ctx, func() {
		for _, s := range t.streams {
			s.shutdown(s.snd, unix.SHUT_WR)
			s.shutdown(s.rcv, unix.SHUT_RD)
		}
	})
	defer stop()
	raw := t.sample()
	wg.Wait()
	out := make([]analysis.Flow, len(t.streams))
	for i, s := range t.streams {
		if s.rxErr != nil {
			return nil, fmt.Errorf("flow %s stream %d: receive: %w", t.f.Name, i, s.rxErr)
		}
		out[i] = t.flowRecord(s, t0, start, raw[i])
	}
	return out, nil
}

// send writes until end with blocking writes on the socket's own thread,
// as iperf3 does: Go's poller (write, EAGAIN, park, wake) leaves the CPU
// idle between wake-ups and measured ~10 % below iperf3 on a veth pair;
// blocking writes match it. A timer shuts the write side down at end, so
// a write blocked on a slow link returns then; the receiver sees EOF
// after the last byte. With a rate (bit/s) the writer is an application
// that produces no more than rate × elapsed time since start: it writes
// what is due and sleeps until a segment's worth is due again.
func (s *tcpStream) send(start, end time.Time, rate units.BitRate) {
	buf := make([]byte, blockSize)
	rc, err := s.snd.SyscallConn()
	if err != nil {
		s.snd.CloseWrite()
		return
	}
	stop := time.AfterFunc(time.Until(end), func() { s.shutdown(s.snd, unix.SHUT_WR) })
	defer stop.Stop()
	defer func() { s.sendEnd.Store(time.Now().UnixNano()) }()
	// Control keeps the descriptor referenced: Close waits for the loop.
	rc.Control(func(fd uintptr) {
		if unix.SetNonblock(int(fd), false) != nil {
			return
		}
		defer unix.SetNonblock(int(fd), true)
		for time.Now().Before(end) {
			chunk := buf
			if rate > 0 {
				due := int64(float64(rate)/8*time.Since(start).Seconds()) - s.tx.Load()
				if due < paceChunk {
					time.Sleep(paceSleep(rate))
					continue
				}
				chunk = buf[:min(due, int64(len(buf)))]
			}
			s.wait.begin()
			n, err := unix.SendmsgN(int(fd), chunk, nil, nil, unix.MSG_NOSIGNAL)
			s.wait.end()
			if n > 0 {
				s.tx.Add(int64(n))
			}
			if err != nil && err != unix.EINTR {
				return
			}
		}
	})
	s.shutdown(s.snd, unix.SHUT_WR)
}

// writeWait is the time a writer has spent inside its write calls,
// the one in progress included: a blocking write returns when the send
// buffer has taken the data, so this is time waiting for buffer space.
type writeWait struct {
	mu    sync.Mutex
	done  time.Duration
	since time.Time // start of the write in progress (zero: none)
}

func (w *writeWait) begin() {
	w.mu.Lock()
	w.since = time.Now()
	w.mu.Unlock()
}

func (w *writeWait) end() {
	w.mu.Lock()
	w.done += time.Since(w.since)
	w.since = time.Time{}
	w.mu.Unlock()
}

// total is the waiting up to now.
func (w *writeWait) total() time.Duration {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.since.IsZero() {
		return w.done
	}
	return w.done + time.Since(w.since)
}

// paceChunk is the smallest write of a paced TCP application: one
// segment's payload.
const paceChunk = 1448

// paceSleep is how long a paced writer waits for the next segment's
// worth: its transmission time at rate, within 1..10 ms.
func paceSleep(rate units.BitRate) time.Duration {
	d := time.Duration(float64(paceChunk*8) / float64(rate) * float64(time.Second))
	return min(max(d, time.Millisecond), 10*time.Millisecond)
}

// receive reads until EOF with blocking reads, counting bytes. A read
// side shutdown (cancellation, or the drain timeout) ends it.
func (s *tcpStream) receive(deadline time.Time, quick bool) {
	defer close(s.rxDone)
	buf := make([]byte, blockSize)
	rc, err := s.rcv.SyscallConn()
	if err != nil {
		s.rxErr = err
		return
	}
	stop := time.AfterFunc(time.Until(deadline), func() { s.shutdown(s.rcv, unix.SHUT_RD) })
	defer stop.Stop()
	rc.Control(func(fd uintptr) {
		if err := unix.SetNonblock(int(fd), false); err != nil {
			s.rxErr = err
			return
		}
		defer unix.SetNonblock(int(fd), true)
		for {
			n, err := unix.Read(int(fd), buf)
			if n > 0 {
				s.rx.Add(int64(n))
				s.rxEnd.Store(time.Now().UnixNano())
				if quick {
					quickAck(int(fd))
				}
				continue
			}
			if err == unix.EINTR {
				continue
			}
			if err != nil && err != unix.ECONNRESET {
				s.rxErr = err
			}
			return // n == 0: EOF or shut down
		}
	})
}

// shutdown shuts one direction of a connection down; it wakes a blocked
// write (EPIPE) or read (EOF).
func (s *tcpStream) shutdown(c *net.TCPConn, how int) {
	if rc, err := c.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) { unix.Shutdown(int(fd), how) })
	}
}

// streamID names stream i of a flow: the flow's name, with "#i" when the
// flow has parallel streams.
func streamID(f Flow, i int) (id, group string) {
	if f.Parallel == 1 {
		return f.Name, ""
	}
	return fmt.Sprintf("%s#%d", f.Name, i), f.Name
}

func (t *tcpFlow) flowRecord(s *tcpStream, t0, start time.Time, raw []rawSample) analysis.Flow {
	id, group := streamID(t.f, s.idx)
	end := start
	if e := s.rxEnd.Load(); e > 0 {
		end = time.Unix(0, e)
	}
	var sendEnd float64
	if e := s.sendEnd.Load(); e > 0 {
		sendEnd = time.Unix(0, e).Sub(t0).Seconds()
	}
	return analysis.Flow{
		ID:            id,
		Group:         group,
		Proto:         t.f.Proto,
		CC:            s.cc,
		From:          t.f.dataFrom(),
		To:            t.f.dataTo(),
		Src:           unmapped(addrPort(s.snd.LocalAddr())).String(),
		Dst:           unmapped(addrPort(s.rcv.LocalAddr())).String(),
		StartS:        start.Sub(t0).Seconds(),
		EndS:          end.Sub(t0).Seconds(),
		SendEndS:      sendEnd,
		MPTCPFallback: t.f.Proto == MPTCP && !s.mptcp,
		BytesSent:     s.tx.Load(),
		BytesReceived: s.rx.Load(),
		Samples:       samples(raw, t0, start, t.f.Interval),
	}
}
