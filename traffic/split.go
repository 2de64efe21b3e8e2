package traffic

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/netip"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/emuctl/emuctl/analysis"
	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/internal/sockinfo"
	"golang.org/x/sys/unix"
)

// The split engine runs the native engine on a lab over several machines,
// where no one process can enter every node: each flow's two ends run as
// two halves, each in this binary's traffic role on the machine of its
// node (emu.MachineCommand), and the controller joins their records.
//
//   - TCP and MPTCP: the server's half listens, the client's dials on
//     "go"; the sending half (the client's, or the server's with Reverse)
//     writes and samples its sockets' TCP_INFO as the engine on one
//     machine does, and after its last write waits for the receiver to
//     close (the receiver closes at end of stream): its last sample
//     follows the last byte. The receiving half counts bytes and keeps
//     them every fifth of an interval; the controller interpolates them at
//     the sender's sample times (goodput per interval, as on one machine).
//   - UDP: the receiving half binds every stream's port, the sending half
//     paces datagrams on "go" and the controller tells the receiver to
//     drain when the sender is done; the receiving half keeps the
//     accounting (loss, duplicates, reordering, jitter, one-way delays).
//
// One clock per flow: a receiving half on another machine moves every
// time it takes onto the sender's clock by the offset between the two
// machines, measured by the controller just before the run (the sending
// machine against a clock responder on the receiving one; emu's clock
// exchange) or, when that fails, the one measured at up; the result's
// conditions record both. The flow's place on the run's time line is the
// moment the controller hears the sender start (its control channel's
// latency: microseconds on local machines, milliseconds over SSH).

// splitRole is the role (a first argument this package's init serves).
const splitRole = "__emuctl_traffic"

func init() {
	if len(os.Args) >= 2 && os.Args[1] == splitRole {
		os.Exit(splitMain(os.Args[2:]))
	}
}

// __emuctl_traffic half <lab>             one end of a flow: the job on stdin
// __emuctl_traffic snapshot <lab>         nodes' snapshots (split_snapshot.go)
// __emuctl_traffic queues <lab>           links' queues watched (split_queues.go)
// __emuctl_traffic clock serve            answer clock requests until stdin closes
// __emuctl_traffic clock measure ADDR     the clock at ADDR minus this machine's, ns
func splitMain(args []string) int {
	var err error
	switch {
	case len(args) == 2 && args[0] == "half":
		err = runHalf(args[1], os.Stdin, os.Stdout)
	case len(args) == 2 && args[0] == "snapshot":
		err = snapshotHere(args[1], os.Stdin, os.Stdout)
	case len(args) == 2 && args[0] == "queues":
		err = queuesHere(args[1], os.Stdin, os.Stdout)
	case len(args) == 2 && args[0] == "clock" && args[1] == "serve":
		var stop func()
		if stop, err = emu.ServeClock(); err == nil {
			fmt.Println("ready")
			io.Copy(io.Discard, os.Stdin)
			stop()
		}
	case len(args) == 3 && args[0] == "clock" && args[1] == "measure":
		var peer netip.Addr
		if peer, err = netip.ParseAddr(args[2]); err == nil {
			var off time.Duration
			if off, err = emu.MeasureClock(peer); err == nil {
				fmt.Println(int64(off))
			}
		}
	default:
		fmt.Fprintln(os.Stderr, "usage: "+splitRole+" half <lab> | snapshot <lab> | queues <lab> | clock serve | clock measure ADDR")
		return 2
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// halfJob is one end of a flow (the first line of the half's stdin).
type halfJob struct {
	Flow Flow   `json:"flow"` // with its defaults
	Node string `json:"node"` // this end's node
	// Listen: TCP, this end is the server (it listens); UDP, this end
	// receives (it binds the ports).
	Listen bool `json:"listen"`
	// Send: this end sends the data.
	Send bool `json:"send"`
	// Addr is the server's address (TCP), the receiver's (UDP).
	Addr netip.Addr `json:"addr"`
	// Ports are the listening end's ports, for the other end.
	Ports []int `json:"ports,omitempty"`
	// Tokens are the UDP streams' tokens (both ends).
	Tokens []uint32 `json:"tokens,omitempty"`
	// Offset is a receiving end's clock minus the sender's, ns.
	Offset int64 `json:"offset_ns,omitempty"`
	// Probe is a flow's echo probe instead of one of its ends: "probe"
	// (the prober, in the client node) or "echo" (the UDP echo socket
	// the prober's requests go to, in the server node); ID is its id.
	Probe string `json:"probe,omitempty"`
	ID    string `json:"id,omitempty"`
}

// halfResult is what a half prints at its end ("result " + JSON).
type halfResult struct {
	Streams []halfStream `json:"streams"`
	// Probe is a prober's samples, times relative to its "started".
	Probe *analysis.Probe `json:"probe,omitempty"`
}

// halfStream is one stream seen from one end. Every time is on the
// sender's clock, Unix ns.
type halfStream struct {
	// Key pairs the two ends of a TCP stream: the dialer's address:port.
	Key   string `json:"key"`
	Local string `json:"local"` // this end's address:port
	CC    string `json:"cc,omitempty"`
	MPTCP bool   `json:"mptcp,omitempty"`
	// The sender's: data start, the end of its writes, bytes (TCP) or
	// datagrams (UDP) sent, UDP send errors, TCP_INFO samples.
	Start    int64        `json:"start_ns,omitempty"`
	SendEnd  int64        `json:"send_end_ns,omitempty"`
	Tx       int64        `json:"tx,omitempty"`
	SendErrs int64        `json:"send_errors,omitempty"`
	Samples  []wireSample `json:"samples,omitempty"`
	// The receiver's: bytes received, the last byte's time, the byte
	// (and datagram) counts over time, UDP's accounting.
	RxBytes int64             `json:"rx_bytes,omitempty"`
	RxEnd   int64             `json:"rx_end_ns,omitempty"`
	Rx      [][3]int64        `json:"rx,omitempty"` // at ns, bytes, datagrams
	UDP     *analysis.UDPFlow `json:"udp,omitempty"`
	Err     string            `json:"error,omitempty"`
}

// wireSample is a rawSample on the wire (the sender's readings).
type wireSample struct {
	At   int64               `json:"at"`
	WrNs int64               `json:"wr_ns,omitempty"`
	Info *unix.TCPInfo       `json:"info,omitempty"`
	TF   sockinfo.TCPFlags   `json:"tf"`
	SQ   *sockinfo.SendQueue `json:"sq,omitempty"`
	MI   *sockinfo.MPTCPInfo `json:"mi,omitempty"`
	SFs  []sockinfo.Subflow  `json:"sfs,omitempty"`
}

func toWire(raw []rawSample) []wireSample {
	out := make([]wireSample, len(raw))
	for i, r := range raw {
		out[i] = wireSample{At: r.at.UnixNano(), WrNs: r.wrNs, Info: r.info, TF: r.tf, SQ: r.sq, MI: r.mi, SFs: r.sfs}
	}
	return out
}

// halfIO is a half's control channel: lines from the controller ("go",
// "drain", "stop"; end of input is "stop") and lines to it.
type halfIO struct {
	mu    sync.Mutex
	out   io.Writer
	goCh  chan struct{}
	drain chan struct{}
	stop  chan struct{}
}

func (h *halfIO) say(format string, args ...any) {
	h.mu.Lock()
	defer h.mu.Unlock()
	fmt.Fprintf(h.out, format+"\n", args...)
}

func (h *halfIO) read(in *bufio.Scanner) {
	var once [3]sync.Once
	defer once[2].Do(func() { close(h.stop) })
	for in.Scan() {
		switch in.Text() {
		case "go":
			once[0].Do(func() { close(h.goCh) })
		case "drain":
			once[1].Do(func() { close(h.drain) })
		case "stop":
			return
		}
	}
}

// roleJob reads a role's job (the first line of in, JSON) into job, and
// the lab's state on this machine.
func roleJob(role, lab string, in *bufio.Scanner, job any) (*emu.State, error) {
	if !in.Scan() {
		return nil, fmt.Errorf("traffic %s: no job on stdin", role)
	}
	if err := json.Unmarshal(in.Bytes(), job); err != nil {
		return nil, fmt.Errorf("traffic %s: job: %w", role, err)
	}
	return emu.ReadState(lab)
}

// runHalf runs one end of a flow of lab on this machine.
func runHalf(lab string, stdin io.Reader, stdout io.Writer) error {
	in := bufio.NewScanner(stdin)
	var job halfJob
	st, err := roleJob("half", lab, in, &job)
	if err != nil {
		return err
	}
	if st.Spec.Node(job.Node) == nil || !st.Spec.Here(job.Node) {
		return fmt.Errorf("lab %s has no node %s on this machine", lab, job.Node)
	}
	h := &halfIO{out: stdout, goCh: make(chan struct{}), drain: make(chan struct{}), stop: make(chan struct{})}
	var res *halfResult
	switch {
	case job.Probe != "":
		res, err = probeHalf(lab, job, h, in)
	case job.Flow.Proto == UDP:
		res, err = udpHalf(lab, job, h, in)
	default:
		res, err = tcpHalf(lab, job, h, in)
	}
	if err != nil {
		return err
	}
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	h.say("result %s", b)
	return nil
}

// tcpHalf is one end of a TCP or MPTCP flow.
func tcpHalf(lab string, job halfJob, h *halfIO, in *bufio.Scanner) (*halfResult, error) {
	f := job.Flow
	mptcp := f.Proto == MPTCP
	t := &tcpFlow{lab: lab, f: f}
	var conns []*net.TCPConn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	if job.Listen {
		ln, err := listenTCP(lab, job.Node, job.Addr, f.Port, mptcp, f.Sock)
		if err != nil {
			return nil, err
		}
		defer ln.Close() // MPTCP joins need it until the end
		h.say("ready %d", addrPort(ln.Addr()).Port())
		go h.read(in)
		accepted := make(chan *net.TCPConn)
		go func() {
			for {
				c, err := ln.AcceptTCP()
				if err != nil {
					close(accepted)
					return
				}
				accepted <- c
			}
		}()
		for len(conns) < f.Parallel {
			select {
			case c, ok := <-accepted:
				if !ok {
					return nil, errors.New("listener closed before every stream was accepted")
				}
				conns = append(conns, c)
			case <-h.stop:
				return &halfResult{}, nil
			}
		}
	} else {
		if len(job.Ports) != 1 {
			return nil, errors.New("traffic half: the server's port is missing")
		}
		h.say("ready 0")
		go h.read(in)
		select {
		case <-h.goCh:
		case <-h.stop:
			return &halfResult{}, nil
		}
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		go func() {
			select {
			case <-h.stop:
				cancel()
			case <-ctx.Done():
			}
		}()
		dst := netip.AddrPortFrom(job.Addr, uint16(job.Ports[0]))
		for range f.Parallel {
			c, err := dialTCP(ctx, lab, job.Node, dst, mptcp, f.Sock)
			if err != nil {
				return nil, err
			}
			conns = append(conns, c)
		}
	}
	res := &halfResult{}
	for i, c := range conns {
		s := &tcpStream{idx: i, rxDone: make(chan struct{})}
		key := unmapped(addrPort(c.LocalAddr()))
		if job.Listen {
			key = unmapped(addrPort(c.RemoteAddr()))
		}
		hs := halfStream{Key: key.String(), Local: unmapped(addrPort(c.LocalAddr())).String()}
		if err := sockinfo.WithFD(c, func(fd int) (err error) { hs.CC, err = applyConnected(fd, f.Sock); return }); err != nil {
			return nil, fmt.Errorf("node %s: %w", job.Node, err)
		}
		if !job.Send {
			hs.CC = ""
		}
		if mptcp {
			ok, err := c.MultipathTCP()
			hs.MPTCP = ok && err == nil
			s.mptcp = hs.MPTCP
		}
		if job.Send {
			s.snd, s.cc = c, hs.CC
		} else {
			s.rcv = c
		}
		t.streams = append(t.streams, s)
		res.Streams = append(res.Streams, hs)
	}
	stopped := context.AfterFunc(stopContext(h), func() {
		for _, s := range t.streams {
			if s.snd != nil {
				s.shutdown(s.snd, unix.SHUT_WR)
				s.shutdown(s.snd, unix.SHUT_RD)
			}
			if s.rcv != nil {
				s.shutdown(s.rcv, unix.SHUT_RD)
			}
		}
	})
	defer stopped()
	start := time.Now()
	end := start.Add(f.Duration)
	if job.Send {
		h.say("started %d", start.UnixNano())
		for _, s := range t.streams {
			go func() {
				defer close(s.rxDone)
				s.send(start, end, f.Rate)
				// the receiver closes after the last byte: wait for that
				s.snd.SetReadDeadline(end.Add(drainTimeout))
				io.Copy(io.Discard, s.snd)
			}()
		}
		raw := t.sample()
		for i, s := range t.streams {
			hs := &res.Streams[i]
			hs.Start, hs.SendEnd, hs.Tx = start.UnixNano(), s.sendEnd.Load(), s.tx.Load()
			hs.Samples = toWire(raw[i])
		}
		return res, nil
	}
	off := time.Duration(job.Offset)
	for _, s := range t.streams {
		go func() {
			s.receive(end.Add(drainTimeout), f.Sock.QuickAck)
			s.rcv.Close() // the sender waits for this: end of stream
		}()
	}
	series := rxSeries(t.streams, f.Interval, off)
	for i, s := range t.streams {
		hs := &res.Streams[i]
		hs.RxBytes, hs.Rx = s.rx.Load(), series[i]
		if e := s.rxEnd.Load(); e > 0 {
			hs.RxEnd = e - int64(off)
		}
		if s.rxErr != nil {
			hs.Err = s.rxErr.Error()
		}
	}
	return res, nil
}

// stopContext is a context cancelled when the controller says stop.
func stopContext(h *halfIO) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-h.stop; cancel() }()
	return ctx
}

// rxStep is how often a receiving half keeps its byte counts: a fifth of
// the flow's interval, at least 2 ms.
func rxStep(interval time.Duration) time.Duration {
	return max(interval/5, 2*time.Millisecond)
}

// rxSeries keeps every receiving stream's byte count every rxStep until
// all are done, then their last byte's; times on the sender's clock.
func rxSeries(streams []*tcpStream, interval, off time.Duration) [][][3]int64 {
	out := make([][][3]int64, len(streams))
	allDone := make(chan struct{})
	go func() {
		for _, s := range streams {
			<-s.rxDone
		}
		close(allDone)
	}()
	tick := time.NewTicker(rxStep(interval))
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			at := time.Now().Add(-off).UnixNano()
			for i, s := range streams {
				out[i] = append(out[i], [3]int64{at, s.rx.Load(), 0})
			}
		case <-allDone:
			for i, s := range streams {
				at := time.Now().UnixNano()
				if e := s.rxEnd.Load(); e > 0 {
					at = e
				}
				out[i] = append(out[i], [3]int64{at - int64(off), s.rx.Load(), 0})
			}
			return out
		}
	}
}

// udpHalf is one end of a UDP flow.
func udpHalf(lab string, job halfJob, h *halfIO, in *bufio.Scanner) (*halfResult, error) {
	f := job.Flow
	if len(job.Tokens) != f.Parallel {
		return nil, errors.New("traffic half: the streams' tokens are missing")
	}
	u := &udpFlow{lab: lab, f: f, rxAddr: job.Addr, offset: time.Duration(job.Offset)}
	defer u.close()
	res := &halfResult{}
	if job.Listen { // the receiver
		maxSeq := uint64(float64(f.Rate)/float64(8*f.Size)*f.Duration.Seconds()*2) + 1024
		var ports []string
		for i := range f.Parallel {
			port := 0
			if f.Port != 0 {
				port = f.Port + i
			}
			rc, err := listenUDP(lab, job.Node, job.Addr, port)
			if err != nil {
				return nil, err
			}
			s := &udpStream{idx: i, offset: job.Offset, rconn: rc, token: job.Tokens[i], rxDone: make(chan struct{}),
				stats: newUDPStats(f.keepPackets(), maxSeq)}
			u.streams = append(u.streams, s)
			p := addrPort(rc.LocalAddr()).Port()
			ports = append(ports, strconv.Itoa(int(p)))
			res.Streams = append(res.Streams, halfStream{Key: strconv.Itoa(i), Local: netip.AddrPortFrom(job.Addr, p).String()})
		}
		h.say("ready %s", strings.Join(ports, ","))
		go h.read(in)
		for _, s := range u.streams {
			go s.receive()
		}
		sampled := make(chan [][]rawSample, 1)
		go func() { sampled <- u.sample() }()
		select {
		case <-h.drain:
			now := time.Now().Add(-u.offset)
			for _, s := range u.streams {
				s.end = now
			}
			ctx, cancel := context.WithCancel(context.Background())
			stop := context.AfterFunc(stopContext(h), cancel)
			u.drain(ctx)
			stop()
			cancel()
		case <-h.stop:
		}
		for _, s := range u.streams {
			s.rconn.Close()
		}
		raw := <-sampled
		for i, s := range u.streams {
			hs := &res.Streams[i]
			for _, r := range raw[i] {
				hs.Rx = append(hs.Rx, [3]int64{r.at.UnixNano(), r.rx, r.pkts})
			}
			hs.RxBytes, hs.RxEnd = s.stats.bytes, s.lastRecv.Load()
			hs.UDP = udpResult(s.stats, 0, f.Size)
		}
		return res, nil
	}
	if len(job.Ports) != f.Parallel {
		return nil, errors.New("traffic half: the receiver's ports are missing")
	}
	for i := range f.Parallel {
		sc, err := dialUDP(lab, job.Node, netip.AddrPortFrom(job.Addr, uint16(job.Ports[i])))
		if err != nil {
			return nil, err
		}
		u.streams = append(u.streams, &udpStream{idx: i, sconn: sc, token: job.Tokens[i]})
		res.Streams = append(res.Streams, halfStream{Key: strconv.Itoa(i), Local: unmapped(addrPort(sc.LocalAddr())).String()})
	}
	h.say("ready 0")
	go h.read(in)
	select {
	case <-h.goCh:
	case <-h.stop:
		return res, nil
	}
	ctx := stopContext(h)
	start := time.Now()
	end := start.Add(f.Duration)
	h.say("started %d", start.UnixNano())
	var wg sync.WaitGroup
	for _, s := range u.streams {
		wg.Add(1)
		go func() { defer wg.Done(); s.send(ctx, start, end, f.Rate, f.Size) }()
	}
	wg.Wait()
	for i, s := range u.streams {
		hs := &res.Streams[i]
		hs.Start, hs.SendEnd, hs.Tx, hs.SendErrs = start.UnixNano(), s.end.UnixNano(), s.sent.Load(), s.sendErrs.Load()
	}
	return res, nil
}

// newTokens are random stream tokens for a UDP flow's two halves.
func newTokens(n int) []uint32 {
	out := make([]uint32, n)
	for i := range out {
		out[i] = rand.Uint32()
	}
	return out
}

// probeHalf is a flow's echo probe on this machine: the echo socket in
// the server node (a UDP probe's), or the prober in the client node,
// which starts on "go" and probes for the flow's duration.
func probeHalf(lab string, job halfJob, h *halfIO, in *bufio.Scanner) (*halfResult, error) {
	f := job.Flow
	if job.Probe == "echo" {
		c, err := listenUDP(lab, job.Node, job.Addr, 0)
		if err != nil {
			return nil, err
		}
		defer c.Close()
		go echoLoop(c)
		h.say("ready %d", addrPort(c.LocalAddr()).Port())
		h.read(in) // until stop
		return &halfResult{}, nil
	}
	p := newProber(lab, f, job.Addr, job.ID)
	if f.Probe == ProbeUDP {
		if len(job.Ports) != 1 {
			return nil, errors.New("traffic half: the echo socket's port is missing")
		}
		var err error
		if p.cl, err = dialUDP(lab, job.Node, netip.AddrPortFrom(job.Addr, uint16(job.Ports[0]))); err != nil {
			return nil, err
		}
		sockinfo.WithFD(p.cl, func(fd int) error {
			return unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
		})
	} else if err := p.prepare(); err != nil {
		return nil, err
	}
	defer p.close()
	h.say("ready 0")
	go h.read(in)
	select {
	case <-h.goCh:
	case <-h.stop:
		return &halfResult{}, nil
	}
	start := time.Now()
	h.say("started %d", start.UnixNano())
	pr := p.run(stopContext(h), start, start, start.Add(f.Duration))
	return &halfResult{Probe: &pr}, nil
}
