package traffic

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/netip"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/emuctl/emuctl/analysis"
	"github.com/emuctl/emuctl/emu"
)

// The controller's side of the split engine (split.go): a runner that
// starts a flow's two halves on their machines and joins their records.

// halfStart bounds how long a half may take to start and answer (over
// SSH a session and the state read).
const halfStart = 30 * time.Second

// halfProc is one running half.
type halfProc struct {
	machine string
	cmd     *exec.Cmd
	mu      sync.Mutex
	in      io.WriteCloser
	lines   chan string
	errBuf  strings.Builder
	waited  chan struct{}
	waitErr error
}

// startHalf starts a half of lab on its node's machine with job and waits
// for its "ready" line, returning the ports it names.
func startHalf(lab string, job halfJob) (*halfProc, []int, error) {
	h, line, err := startRoleProc(lab, job.Node, job, "half", lab)
	if err != nil {
		return nil, nil, err
	}
	rest, ok := strings.CutPrefix(line, "ready ")
	if !ok {
		h.close()
		return nil, nil, fmt.Errorf("machine %s: traffic half said %q, not ready", h.machine, line)
	}
	var ports []int
	for p := range strings.SplitSeq(rest, ",") {
		n, err := strconv.Atoi(p)
		if err != nil {
			h.close()
			return nil, nil, fmt.Errorf("machine %s: traffic half's ports %q", h.machine, rest)
		}
		ports = append(ports, n)
	}
	return h, ports, nil
}

// startRoleProc starts the traffic role with args on node's machine,
// sends it job (one JSON line) and returns its first line of output.
func startRoleProc(lab, node string, job any, args ...string) (*halfProc, string, error) {
	cmd, machine, err := emu.MachineCommand(lab, node, append([]string{splitRole}, args...)...)
	if err != nil {
		return nil, "", err
	}
	h := &halfProc{machine: machine, cmd: cmd, lines: make(chan string, 16), waited: make(chan struct{})}
	if h.in, err = cmd.StdinPipe(); err != nil {
		return nil, "", err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, "", err
	}
	cmd.Stderr = &lockedWriter{mu: &h.mu, b: &h.errBuf}
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, "", fmt.Errorf("machine %s: %w", machine, err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 1<<30) // the result is one line
		for sc.Scan() {
			h.lines <- sc.Text()
		}
		close(h.lines)
		h.waitErr = cmd.Wait()
		close(h.waited)
	}()
	b, _ := json.Marshal(job)
	if err := h.say("%s", b); err != nil {
		h.close()
		return nil, "", err
	}
	line, err := h.next(halfStart)
	if err != nil {
		h.close()
		return nil, "", err
	}
	return h, line, nil
}

// lockedWriter is a strings.Builder written under a mutex.
type lockedWriter struct {
	mu *sync.Mutex
	b  *strings.Builder
}

func (w *lockedWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.b.Write(p)
}

func (h *halfProc) say(format string, args ...any) error {
	h.mu.Lock()
	in := h.in
	h.mu.Unlock()
	if in == nil {
		return nil
	}
	if _, err := fmt.Fprintf(in, format+"\n", args...); err != nil {
		return h.fail(err)
	}
	return nil
}

// next is the half's next line (timeout 0: no limit).
func (h *halfProc) next(timeout time.Duration) (string, error) {
	var tc <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		tc = t.C
	}
	select {
	case line, ok := <-h.lines:
		if !ok {
			return "", h.fail(io.ErrUnexpectedEOF)
		}
		return line, nil
	case <-tc:
		return "", fmt.Errorf("machine %s: the traffic half did not answer within %v", h.machine, timeout)
	}
}

// result waits for the half's result (lines before it are skipped).
func (h *halfProc) result() (*halfResult, error) {
	var r halfResult
	if err := h.resultInto(&r); err != nil {
		return nil, err
	}
	return &r, nil
}

// resultInto waits for the role's "result" line and decodes it into v.
func (h *halfProc) resultInto(v any) error {
	for {
		line, err := h.next(0)
		if err != nil {
			return err
		}
		if b, ok := strings.CutPrefix(line, "result "); ok {
			if err := json.Unmarshal([]byte(b), v); err != nil {
				return fmt.Errorf("machine %s: traffic role's result: %w", h.machine, err)
			}
			return nil
		}
	}
}

// fail is err with what the half said on stderr, once it has ended.
func (h *halfProc) fail(err error) error {
	select {
	case <-h.waited:
	case <-time.After(5 * time.Second):
	}
	h.mu.Lock()
	msg := strings.TrimSpace(h.errBuf.String())
	h.mu.Unlock()
	if msg != "" {
		return fmt.Errorf("machine %s: %s", h.machine, msg)
	}
	return fmt.Errorf("machine %s: traffic half: %w", h.machine, err)
}

// close ends the half's input (it stops) and waits for it.
func (h *halfProc) close() {
	h.mu.Lock()
	in := h.in
	h.in = nil
	h.mu.Unlock()
	if in == nil {
		return
	}
	in.Close()
	go func() {
		for range h.lines { // drain, so the reader reaches Wait
		}
	}()
	select {
	case <-h.waited:
	case <-time.After(10 * time.Second):
		h.cmd.Process.Kill()
		<-h.waited
	}
}

// splitFlow is one flow whose ends run as halves on their machines.
type splitFlow struct {
	lab         string
	f           Flow
	dst, rxAddr netip.Addr
	log         *slog.Logger
	offset      time.Duration // the receiving machine's clock minus the sending one's
	lis, dia    *halfProc     // TCP: server, client; UDP: receiver, sender
}

func newSplitFlow(lab string, f Flow, dst, rxAddr netip.Addr, offset time.Duration, log *slog.Logger) *splitFlow {
	return &splitFlow{lab: lab, f: f, dst: dst, rxAddr: rxAddr, offset: offset, log: log}
}

func (s *splitFlow) prepare(ctx context.Context) error {
	f := s.f
	var lis, dia halfJob
	if f.Proto == UDP {
		tokens := newTokens(f.Parallel)
		lis = halfJob{Flow: f, Node: f.dataTo(), Listen: true, Addr: s.rxAddr, Tokens: tokens, Offset: int64(s.offset)}
		dia = halfJob{Flow: f, Node: f.dataFrom(), Send: true, Addr: s.rxAddr, Tokens: tokens}
	} else {
		lis = halfJob{Flow: f, Node: f.Server, Listen: true, Send: f.Reverse, Addr: s.dst}
		dia = halfJob{Flow: f, Node: f.Client, Send: !f.Reverse, Addr: s.dst}
		if f.Reverse {
			dia.Offset = int64(s.offset)
		} else {
			lis.Offset = int64(s.offset)
		}
	}
	var err error
	if s.lis, dia.Ports, err = startHalf(s.lab, lis); err != nil {
		return err
	}
	if f.Proto != UDP && len(dia.Ports) != 1 {
		return fmt.Errorf("machine %s: the server's half named %d ports", s.lis.machine, len(dia.Ports))
	}
	s.dia, _, err = startHalf(s.lab, dia)
	return err
}

func (s *splitFlow) close() {
	for _, h := range []*halfProc{s.dia, s.lis} {
		if h != nil {
			h.close()
		}
	}
}

// sender and receiver are the halves that send and receive the data.
func (s *splitFlow) sender() (snd, rcv *halfProc) {
	if s.f.Proto != UDP && s.f.Reverse {
		return s.lis, s.dia
	}
	return s.dia, s.lis
}

func (s *splitFlow) run(ctx context.Context, t0 time.Time) ([]analysis.Flow, error) {
	snd, rcv := s.sender()
	stop := context.AfterFunc(ctx, func() { s.lis.say("stop"); s.dia.say("stop") })
	defer stop()
	if err := s.dia.say("go"); err != nil {
		return nil, err
	}
	// the sender's start, on its clock, heard here: the flow's place on
	// the run's time line
	var delta time.Duration
	for {
		line, err := snd.next(0)
		if err != nil {
			return nil, err
		}
		if ns, ok := strings.CutPrefix(line, "started "); ok {
			v, err := strconv.ParseInt(ns, 10, 64)
			if err != nil {
				return nil, fmt.Errorf("machine %s: traffic half said %q", snd.machine, line)
			}
			delta = time.Since(time.Unix(0, v))
			break
		}
		if strings.HasPrefix(line, "result ") { // stopped before it started
			return nil, ctx.Err()
		}
	}
	sres, err := snd.result()
	if err != nil {
		return nil, err
	}
	if s.f.Proto == UDP {
		// a receiver already stopped has ended, its result on its way:
		// telling it to drain fails then, and needs not succeed
		rcv.say("drain")
	}
	rres, err := rcv.result()
	if err != nil {
		return nil, err
	}
	if s.f.Proto == UDP {
		return s.udpRecords(sres, rres, t0, delta)
	}
	return s.tcpRecords(sres, rres, t0, delta)
}

// tcpRecords joins the two ends' streams (by the dialer's address), in
// the dialer's order.
func (s *splitFlow) tcpRecords(sres, rres *halfResult, t0 time.Time, delta time.Duration) ([]analysis.Flow, error) {
	dialer := sres
	if s.f.Reverse {
		dialer = rres
	}
	sByKey, rByKey := map[string]*halfStream{}, map[string]*halfStream{}
	for i := range sres.Streams {
		sByKey[sres.Streams[i].Key] = &sres.Streams[i]
	}
	for i := range rres.Streams {
		rByKey[rres.Streams[i].Key] = &rres.Streams[i]
	}
	var out []analysis.Flow
	for i, d := range dialer.Streams {
		sn, rc := sByKey[d.Key], rByKey[d.Key]
		if sn == nil || rc == nil {
			return nil, fmt.Errorf("flow %s stream %d: its two ends did not meet (the server accepted another connection)", s.f.Name, i)
		}
		if rc.Err != "" {
			return nil, fmt.Errorf("flow %s stream %d: receive: %s", s.f.Name, i, rc.Err)
		}
		series := append([][3]int64{{sn.Start, 0, 0}}, rc.Rx...)
		raw := make([]rawSample, len(sn.Samples))
		for j, w := range sn.Samples {
			raw[j] = rawSample{at: time.Unix(0, w.At).Add(delta), rx: interpolate(series, w.At), wrNs: w.WrNs,
				info: w.Info, tf: w.TF, sq: w.SQ, mi: w.MI, sfs: w.SFs}
		}
		start := time.Unix(0, sn.Start).Add(delta)
		end := start
		if rc.RxEnd > 0 {
			end = time.Unix(0, rc.RxEnd).Add(delta)
			// the last reading was taken when the receiver closed: it
			// stands for the last byte, as on one machine
			if n := len(raw); n > 0 && (n == 1 || end.After(raw[n-2].at)) {
				raw[n-1].at, raw[n-1].rx = end, rc.RxBytes
			}
		}
		var sendEnd float64
		if sn.SendEnd > 0 {
			sendEnd = time.Unix(0, sn.SendEnd).Add(delta).Sub(t0).Seconds()
		}
		id, group := streamID(s.f, i)
		mptcp := sn.MPTCP && rc.MPTCP
		if s.f.Proto == MPTCP && !mptcp {
			s.log.Warn("MPTCP fell back to TCP", "flow", s.f.Name, "stream", i, "sender_mptcp", sn.MPTCP, "receiver_mptcp", rc.MPTCP)
		}
		out = append(out, analysis.Flow{
			ID:            id,
			Group:         group,
			Proto:         s.f.Proto,
			CC:            sn.CC,
			From:          s.f.dataFrom(),
			To:            s.f.dataTo(),
			Src:           sn.Local,
			Dst:           rc.Local,
			StartS:        start.Sub(t0).Seconds(),
			EndS:          end.Sub(t0).Seconds(),
			SendEndS:      sendEnd,
			MPTCPFallback: s.f.Proto == MPTCP && !mptcp,
			BytesSent:     sn.Tx,
			BytesReceived: rc.RxBytes,
			Samples:       samples(raw, t0, start, s.f.Interval),
		})
	}
	return out, nil
}

// udpRecords joins the two ends' streams, by index.
func (s *splitFlow) udpRecords(sres, rres *halfResult, t0 time.Time, delta time.Duration) ([]analysis.Flow, error) {
	if len(sres.Streams) != len(rres.Streams) {
		return nil, fmt.Errorf("flow %s: %d streams sent, %d received", s.f.Name, len(sres.Streams), len(rres.Streams))
	}
	var out []analysis.Flow
	for i := range sres.Streams {
		sn, rc := &sres.Streams[i], &rres.Streams[i]
		if sn.SendErrs > 0 {
			s.log.Warn("UDP send errors (datagrams not sent, not counted as sent)", "flow", s.f.Name, "stream", i, "errors", sn.SendErrs)
		}
		raw := make([]rawSample, len(rc.Rx))
		for j, r := range rc.Rx {
			raw[j] = rawSample{at: time.Unix(0, r[0]).Add(delta), rx: r[1], pkts: r[2]}
		}
		start := time.Unix(0, sn.Start).Add(delta)
		end := time.Unix(0, max(sn.SendEnd, rc.RxEnd)).Add(delta)
		u := rc.UDP
		if u == nil {
			u = &analysis.UDPFlow{PayloadBytes: s.f.Size}
		}
		u.Sent = sn.Tx
		for k := range u.Packets { // onto this clock, as the run's start
			u.Packets[k].SentNs += int64(delta)
			u.Packets[k].RecvNs += int64(delta)
		}
		id, group := streamID(s.f, i)
		out = append(out, analysis.Flow{
			ID:            id,
			Group:         group,
			Proto:         UDP,
			From:          s.f.dataFrom(),
			To:            s.f.dataTo(),
			Src:           sn.Local,
			Dst:           rc.Local,
			StartS:        start.Sub(t0).Seconds(),
			EndS:          end.Sub(t0).Seconds(),
			BytesSent:     sn.Tx * int64(s.f.Size),
			BytesReceived: rc.RxBytes,
			Samples:       samples(raw, t0, start, s.f.Interval),
			UDP:           u,
		})
	}
	return out, nil
}

// interpolate is the byte count at time at (ns) from a receiver's counts
// over time (sorted by time): linear between the two around it.
func interpolate(series [][3]int64, at int64) int64 {
	k := sort.Search(len(series), func(i int) bool { return series[i][0] >= at })
	switch {
	case len(series) == 0:
		return 0
	case k == len(series):
		return series[k-1][1]
	case k == 0 || series[k][0] == at:
		return series[k][1]
	}
	a, b := series[k-1], series[k]
	return a[1] + int64(float64(b[1]-a[1])*float64(at-a[0])/float64(b[0]-a[0]))
}

// clockPair is the clock offset between a flow's two machines.
type clockPair struct {
	from, to string // sending and receiving machine
	offset   time.Duration
	atUp     time.Duration
	note     string
}

// measureClocks measures, before a run, the receiving machine's clock
// minus the sending one's for every pair of machines a native flow
// crosses (one pair at a time: each machine answers on one port).
func measureClocks(lab string, st *emu.State, plans []*plan) map[[2]string]*clockPair {
	c := st.Spec.Cluster
	out := map[[2]string]*clockPair{}
	for _, p := range plans {
		if p.f.Engine == EngineIperf3 {
			continue
		}
		from, to := p.f.dataFrom(), p.f.dataTo()
		key := [2]string{c.Nodes[from], c.Nodes[to]}
		if key[0] == key[1] || out[key] != nil {
			continue
		}
		cp := &clockPair{from: key[0], to: key[1], atUp: emu.ClockOffsetAtUp(st, key[0], key[1])}
		off, err := measureClock(lab, from, to, c.Machine(key[1]).Underlay)
		if err != nil {
			cp.offset, cp.note = cp.atUp, fmt.Sprintf("the offset measured at up was applied: measuring it again failed (%v)", err)
		} else {
			cp.offset = off
		}
		out[key] = cp
	}
	return out
}

// measureClock is the clock of to's machine minus from's: a clock
// responder on to's machine, measured from from's.
func measureClock(lab, from, to string, underlay netip.Addr) (time.Duration, error) {
	srv, _, err := emu.MachineCommand(lab, to, splitRole, "clock", "serve")
	if err != nil {
		return 0, err
	}
	in, err := srv.StdinPipe()
	if err != nil {
		return 0, err
	}
	out, err := srv.StdoutPipe()
	if err != nil {
		return 0, err
	}
	var errBuf strings.Builder
	srv.Stderr = &errBuf
	srv.WaitDelay = 5 * time.Second
	if err := srv.Start(); err != nil {
		return 0, err
	}
	defer func() { in.Close(); srv.Wait() }()
	sc := bufio.NewScanner(out)
	if !sc.Scan() || sc.Text() != "ready" {
		return 0, fmt.Errorf("clock responder: %s", strings.TrimSpace(errBuf.String()))
	}
	cmd, _, err := emu.MachineCommand(lab, from, splitRole, "clock", "measure", underlay.String())
	if err != nil {
		return 0, err
	}
	var mErr strings.Builder
	cmd.Stderr = &mErr
	b, err := cmd.Output()
	if err != nil {
		if msg := strings.TrimSpace(mErr.String()); msg != "" {
			return 0, errors.New(msg)
		}
		return 0, err
	}
	ns, err := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
	return time.Duration(ns), err
}

// splitProber is a flow's echo probe on a lab over several machines: the
// prober runs in the client node on its machine (ICMP: the server's
// kernel answers; UDP: an echo half in the server node on its own).
// Round trips are on the prober's one clock.
type splitProber struct {
	lab         string
	f           Flow
	dst         netip.Addr
	id          string
	log         *slog.Logger
	echo, probe *halfProc
}

func (p *splitProber) prepare() error {
	job := halfJob{Flow: p.f, Node: p.f.Client, Probe: "probe", Addr: p.dst, ID: p.id}
	if p.f.Probe == ProbeUDP {
		var err error
		if p.echo, job.Ports, err = startHalf(p.lab, halfJob{Flow: p.f, Node: p.f.Server, Probe: "echo", Addr: p.dst, ID: p.id}); err != nil {
			return err
		}
	}
	var err error
	p.probe, _, err = startHalf(p.lab, job)
	return err
}

func (p *splitProber) close() {
	for _, h := range []*halfProc{p.probe, p.echo} {
		if h != nil {
			h.close()
		}
	}
}

func (p *splitProber) run(ctx context.Context, t0, start, end time.Time) analysis.Probe {
	empty := analysis.Probe{ID: p.id, Kind: p.f.Probe, From: p.f.Client, To: p.f.Server, Flow: p.f.Name}
	stop := context.AfterFunc(ctx, func() { p.probe.say("stop") })
	defer stop()
	if err := p.probe.say("go"); err != nil {
		p.log.Warn("probe did not start", "flow", p.f.Name, "error", err)
		return empty
	}
	var at time.Time // its start, heard here
	for at.IsZero() {
		line, err := p.probe.next(0)
		if err != nil {
			p.log.Warn("probe failed", "flow", p.f.Name, "error", err)
			return empty
		}
		if strings.HasPrefix(line, "started ") {
			at = time.Now()
		}
		if strings.HasPrefix(line, "result ") {
			return empty
		}
	}
	r, err := p.probe.result()
	if err != nil || r.Probe == nil {
		p.log.Warn("probe failed", "flow", p.f.Name, "error", err)
		return empty
	}
	shift := at.Sub(t0).Seconds()
	for i := range r.Probe.Samples {
		r.Probe.Samples[i].TS += shift
	}
	return *r.Probe
}
