package traffic

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/emuctl/emuctl/analysis"
	"github.com/emuctl/emuctl/emu"
)

// iperf3Flow runs the installed iperf3 inside the nodes (server in the
// server node, client in the client node, through emu.Command) and
// converts its JSON. Both processes are stopped by pid; they also die with
// emuctl (parent-death signal), so none is left behind.
type iperf3Flow struct {
	lab     string
	f       Flow
	dst     netip.Addr
	log     *slog.Logger
	port    int
	release func()
	// remote: the lab is spread over several machines (iperf3_cluster.go):
	// both ends run on their nodes' machines, through the workers' exec
	remote bool

	server         *exec.Cmd
	srvOut, srvErr bytes.Buffer
	srvDone        chan error // receives the server's exit once; put back after reading
}

func newIperf3Flow(lab string, f Flow, dst netip.Addr, log *slog.Logger) *iperf3Flow {
	return &iperf3Flow{lab: lab, f: f, dst: dst, log: log}
}

// iperf3Start bounds how long the server may take to listen.
const iperf3Start = 3 * time.Second

func (p *iperf3Flow) prepare(ctx context.Context) error {
	if p.f.Sock.QuickAck {
		return errors.New("the iperf3 engine has no quick-ACK option; use the native engine")
	}
	if p.f.Sock.SndBuf != 0 && p.f.Sock.RcvBuf != 0 && p.f.Sock.SndBuf != p.f.Sock.RcvBuf {
		return errors.New("iperf3 sets one window size (-w) for both buffers; give equal --sndbuf and --rcvbuf")
	}
	var err error
	if p.remote {
		p.port, p.release, err = reserveRemotePort(p.lab, p.f.Server, p.f.Port)
	} else {
		p.port, p.release, err = reservePort(p.lab, p.f.Server, p.dst, p.f.Port)
	}
	if err != nil {
		return err
	}
	args := []string{"iperf3", "-s", "-1", "-J", "-p", strconv.Itoa(p.port), "-i", secs(p.f.Interval)}
	if p.server, err = p.start(p.f.Server, args, &p.srvOut, &p.srvErr); err != nil {
		return err
	}
	p.srvDone = make(chan error, 1)
	go func() { p.srvDone <- p.server.Wait() }()
	wait := iperf3Start
	if p.remote {
		wait = iperf3RemoteStart
	}
	deadline := time.Now().Add(wait)
	for {
		var up bool
		if p.remote {
			up = remoteListening(p.lab, p.f.Server, p.port)
		} else {
			inNode(p.lab, p.f.Server, func() error { up = listening(p.port); return nil })
		}
		if up {
			return nil
		}
		select {
		case err := <-p.srvDone:
			p.srvDone <- err
			return fmt.Errorf("node %s: iperf3 server exited: %v: %s", p.f.Server, err, lastLine(p.srvOut.String()+p.srvErr.String()))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("node %s: iperf3 server did not listen on port %d within %v", p.f.Server, p.port, wait)
		}
	}
}

// start runs argv inside a node; the process gets SIGKILL if emuctl dies.
func (p *iperf3Flow) start(node string, argv []string, out, errb *bytes.Buffer) (*exec.Cmd, error) {
	cmd, err := emu.Command(p.lab, node, argv)
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = out, errb
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("node %s: start %s: %w", node, argv[0], err)
	}
	p.log.Debug("started", "node", node, "pid", cmd.Process.Pid, "argv", strings.Join(argv, " "))
	return cmd, nil
}

// startClient starts iperf3's client in the client node and returns how
// to interrupt it: SIGINT to the process, or on a lab over several
// machines the end of its input, which its machine's worker turns into
// SIGINT (over SSH no signal reaches the far side; emu.CommandInterruptible).
func (p *iperf3Flow) startClient(out, errb *bytes.Buffer) (*exec.Cmd, func(), error) {
	if !p.remote {
		c, err := p.start(p.f.Client, p.clientArgs(), out, errb)
		if err != nil {
			return nil, nil, err
		}
		return c, func() { c.Process.Signal(syscall.SIGINT) }, nil
	}
	argv := p.clientArgs()
	cmd, interruptible, err := emu.CommandInterruptible(p.lab, p.f.Client, argv)
	if err != nil {
		return nil, nil, err
	}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, nil, err
	}
	cmd.Stdout, cmd.Stderr = out, errb
	cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	if err := cmd.Start(); err != nil {
		return nil, nil, fmt.Errorf("node %s: start %s: %w", p.f.Client, argv[0], err)
	}
	p.log.Debug("started", "node", p.f.Client, "pid", cmd.Process.Pid, "argv", strings.Join(argv, " "))
	if !interruptible {
		return cmd, func() { cmd.Process.Signal(syscall.SIGINT) }, nil
	}
	return cmd, func() { in.Close() }, nil
}

func (p *iperf3Flow) clientArgs() []string {
	f := p.f
	a := []string{"iperf3", "-c", p.dst.String(), "-p", strconv.Itoa(p.port), "-J", "--get-server-output",
		"-t", secs(f.Duration), "-i", secs(f.Interval)}
	if f.Reverse {
		a = append(a, "-R")
	}
	if f.Parallel > 1 {
		a = append(a, "-P", strconv.Itoa(f.Parallel))
	}
	if f.Proto == UDP {
		a = append(a, "-u", "-b", strconv.FormatUint(uint64(f.Rate), 10), "-l", strconv.Itoa(f.Size))
	} else {
		if f.Sock.CC != "" {
			a = append(a, "-C", f.Sock.CC)
		}
		if f.Sock.NoDelay {
			a = append(a, "-N")
		}
	}
	if w := max(f.Sock.SndBuf, f.Sock.RcvBuf); w > 0 {
		a = append(a, "-w", strconv.FormatInt(int64(w), 10))
	}
	if p.dst.Is6() {
		a = append(a, "-6")
	}
	return a
}

func (p *iperf3Flow) run(ctx context.Context, t0 time.Time) ([]analysis.Flow, error) {
	var out, errb bytes.Buffer
	started := time.Now()
	c, interrupt, err := p.startClient(&out, &errb)
	if err != nil {
		return nil, err
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	var werr error
	select {
	case werr = <-done:
	case <-ctx.Done():
		// iperf3 prints its JSON so far on SIGINT.
		interrupt()
		select {
		case werr = <-done:
		case <-time.After(2 * time.Second):
			c.Process.Kill()
			werr = <-done
		}
	}
	exited := time.Now()
	res, perr := parseIperf3(out.Bytes())
	if perr != nil {
		if werr != nil {
			return nil, fmt.Errorf("node %s: iperf3 client: %v: %s", p.f.Client, werr, lastLine(errb.String()))
		}
		return nil, fmt.Errorf("node %s: iperf3 client output: %w", p.f.Client, perr)
	}
	if res.Error != "" && len(res.Intervals) == 0 {
		return nil, fmt.Errorf("node %s: iperf3: %s", p.f.Client, res.Error)
	}
	return convertIperf3(res, p.f, t0, started, exited)
}

func (p *iperf3Flow) close() {
	if p.srvDone != nil {
		select {
		case err := <-p.srvDone:
			p.srvDone <- err
		default:
			p.server.Process.Kill() // not reaped yet, so the pid is still ours
			select {
			case err := <-p.srvDone:
				p.srvDone <- err
			case <-time.After(5 * time.Second):
				p.log.Warn("iperf3 server did not exit after SIGKILL", "pid", p.server.Process.Pid)
			}
		}
	}
	if p.release != nil {
		p.release()
		p.release = nil
	}
}

// secs renders a duration as iperf3 wants it: seconds, fractional.
func secs(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) }

func lastLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	return s
}
