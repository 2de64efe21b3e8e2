package emu

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"time"

	"github.com/emuctl/emuctl/tc"
	"github.com/emuctl/emuctl/topo"
	"golang.org/x/sys/unix"
)

// Verify on a lab over several machines: each direction is measured by
// two workers — the sender's, on the machine of the link's sending end,
// and the receiver's, on the machine of its receiving end (the same
// machine for a link inside one) — with the probes and the judgement of
// a lab on one machine (verify.go). The controller paces the phases: the
// receiver collects, the sender sends a phase, the receiver waits out the
// quiet period and returns the phase's arrivals. Across a cut the two
// clocks differ, and drift apart after up (a free-running quartz by tens
// of µs a second): before each direction across a cut the sending worker
// measures the offset again (receiver's clock minus sender's), against a
// clock responder its receiving peer runs for the measurement
// (cluster_clock.go), and each arrival's time is moved onto the sender's
// clock by it. The result records the offset applied and the one
// measured at up (State.Underlay; their difference is the drift since);
// should the new measurement fail, the offset from up is applied and the
// result says why. The delay is the whole link's, underlay included —
// what a user configured.

// verifyJob is what both workers of one direction are given (the first
// line of their stdin).
type verifyJob struct {
	Run   uint32        `json:"run"`
	Quiet time.Duration `json:"quiet_ns"`
	Want  tc.Dir        `json:"want"`
	Opt   VerifyOptions `json:"opt"`
	// Clock asks the receiver to answer clock requests while it runs
	// (a direction across machines).
	Clock bool `json:"clock,omitempty"`
}

// clusterVerify is Verify on the controller of a lab over several
// machines.
func clusterVerify(ctx context.Context, st *State, opt VerifyOptions) ([]DirResult, error) {
	planned, _ := planLinks(st.Spec, tc.Caps{})
	var out []DirResult
	for i, l := range st.Spec.Links {
		ls, ok := findLinkState(st.Links, i) // changed with link set
		if !ok {
			ls, ok = findLinkState(planned, i) // as up planned it
		}
		if !ok {
			if !opt.All {
				continue
			}
			ls = LinkState{Index: i, Name: l.A.String() + " <-> " + l.B.String()}
		}
		backend := "machine " + st.Spec.Cluster.Nodes[l.A.Node]
		if cut := st.Spec.Cluster.CutOf(i); cut != nil {
			backend = fmt.Sprintf("vxlan %d: %s <-> %s", cut.VNI, cut.A, cut.B)
		}
		var err error
		if out, err = verifyDirs(ctx, out, i, l, ls, backend, func(from, to topo.Endpoint, want tc.Dir, r *DirResult) error {
			return clusterMeasureDir(ctx, st, from, to, want, opt, r)
		}); err != nil {
			return out, err
		}
	}
	return out, nil
}

// clockOffset is the receiving machine's clock minus the sending one's,
// as measured at up (0 on one machine, or when not measured).
func clockOffsetOf(st *State, from, to string) time.Duration {
	if from == to {
		return 0
	}
	for _, u := range st.Underlay {
		if u.From == from && u.To == to {
			return u.Offset
		}
	}
	return 0
}

// clusterMeasureDir measures one direction with a sending and a
// receiving worker.
func clusterMeasureDir(ctx context.Context, st *State, from, to topo.Endpoint, want tc.Dir, opt VerifyOptions, r *DirResult) error {
	c := st.Spec.Cluster
	mFrom, mTo := c.Nodes[from.Node], c.Nodes[to.Node]
	job := verifyJob{Run: uint32(time.Now().UnixNano()), Quiet: verifyQuiet(want), Want: want, Opt: opt, Clock: mFrom != mTo}
	runtime.LockOSThread() // Pdeathsig follows the forking thread (runWorker)
	defer runtime.UnlockOSThread()
	rx, err := startVerifyWorker(st, to, "rx", job)
	if err != nil {
		return err
	}
	defer rx.close()
	tx, err := startVerifyWorker(st, from, "tx", job)
	if err != nil {
		return err
	}
	defer tx.close()
	offset := clockOffsetOf(st, mFrom, mTo)
	r.ClockOffset = offset
	if job.Clock {
		r.ClockOffsetUp = offset
		if now, rtt, err := clockNow(tx, rx, c.Machine(mTo)); err != nil {
			r.ClockNote = fmt.Sprintf("the offset measured at up was applied: measuring it again failed (%v)", err)
			r.ClockRTT = upClockRTT(st, mFrom, mTo)
		} else {
			offset, r.ClockOffset, r.ClockRTT = now, now, rtt
		}
	}
	return judgeDir(func(kind byte) ([]arrival, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if err := rx.say("collect %c", kind); err != nil {
			return nil, err
		}
		if err := tx.say("send %c", kind); err != nil {
			return nil, err
		}
		if _, err := tx.read(); err != nil {
			return nil, err
		}
		if err := rx.say("end"); err != nil {
			return nil, err
		}
		line, err := rx.read()
		if err != nil {
			return nil, err
		}
		var raw [][4]int64
		if err := json.Unmarshal([]byte(line), &raw); err != nil {
			return nil, fmt.Errorf("machine %s: arrivals: %w", mTo, err)
		}
		out := make([]arrival, len(raw))
		for i, a := range raw {
			out[i] = arrival{kind: kind, run: job.Run, seq: uint32(a[0]), sent: time.Unix(0, a[1]), at: time.Unix(0, a[2]).Add(-offset), size: int(a[3])}
		}
		return out, nil
	}, want, opt, r)
}

// upClockRTT is the round trip of the clock exchange at up between two
// machines (0 when not measured).
func upClockRTT(st *State, from, to string) time.Duration {
	for _, u := range st.Underlay {
		if u.From == from && u.To == to {
			return u.ClockRTT
		}
	}
	return 0
}

// clockNow is the receiving machine's clock minus the sending one's now,
// and the round trip of the exchange it came from:
// the sending worker measures it against the receiving worker's clock
// responder (answering on to's underlay address).
func clockNow(tx, rx *verifyWorker, to *topo.Machine) (offset, rtt time.Duration, err error) {
	if rx.ready != "ready clock" {
		return 0, 0, fmt.Errorf("machine %s answered no clock requests: %s", rx.machine, strings.TrimSpace(strings.TrimPrefix(rx.ready, "ready")))
	}
	if err := tx.say("clock %s", to.Underlay); err != nil {
		return 0, 0, err
	}
	line, err := tx.read()
	if err != nil {
		return 0, 0, err
	}
	if msg, ok := strings.CutPrefix(line, "error "); ok {
		return 0, 0, errors.New(msg)
	}
	var off, r int64
	if _, err := fmt.Sscan(line, &off, &r); err != nil {
		return 0, 0, fmt.Errorf("machine %s: clock reply %q: %w", tx.machine, line, err)
	}
	return time.Duration(off), time.Duration(r), nil
}

// verifyWorker is one running worker of a direction's measurement.
type verifyWorker struct {
	machine string
	cmd     *exec.Cmd
	in      io.WriteCloser
	out     *bufio.Scanner
	errBuf  strings.Builder
	ready   string // its first line: "ready", "ready clock" or "ready noclock: why"
}

func startVerifyWorker(st *State, ep topo.Endpoint, role string, job verifyJob) (*verifyWorker, error) {
	m := st.Spec.Cluster.Machine(st.Spec.Cluster.Nodes[ep.Node])
	if m == nil {
		return nil, fmt.Errorf("node %s is on no machine", ep.Node)
	}
	cmd, err := workerCommand(context.Background(), st.Lab, *m, "verify", st.Lab, ep.Node, ep.Iface, role)
	if err != nil {
		return nil, err
	}
	w := &verifyWorker{machine: m.Name, cmd: cmd}
	if w.in, err = cmd.StdinPipe(); err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stderr = &w.errBuf
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("machine %s: %w", m.Name, err)
	}
	w.out = bufio.NewScanner(stdout)
	w.out.Buffer(make([]byte, 64<<10), 64<<20) // a phase's arrivals are one line
	b, _ := json.Marshal(job)
	if _, err := fmt.Fprintf(w.in, "%s\n", b); err != nil {
		w.close()
		return nil, w.fail(err)
	}
	if w.ready, err = w.read(); err != nil { // "ready": its probe socket is open
		w.close()
		return nil, err
	}
	return w, nil
}

func (w *verifyWorker) say(format string, args ...any) error {
	if _, err := fmt.Fprintf(w.in, format+"\n", args...); err != nil {
		return w.fail(err)
	}
	return nil
}

// read returns the worker's next line of output.
func (w *verifyWorker) read() (string, error) {
	if w.out.Scan() {
		return w.out.Text(), nil
	}
	err := w.out.Err()
	if err == nil {
		err = io.ErrUnexpectedEOF
	}
	return "", w.fail(err)
}

// fail is err with what the worker said, once it has ended.
func (w *verifyWorker) fail(err error) error {
	w.close()
	if msg := strings.TrimSpace(w.errBuf.String()); msg != "" {
		return fmt.Errorf("machine %s: %s", w.machine, msg)
	}
	return fmt.Errorf("machine %s: verify worker: %w", w.machine, err)
}

func (w *verifyWorker) close() {
	if w.in != nil {
		w.in.Close()
		w.in = nil
		w.cmd.Wait()
	}
}

// workerVerify is one end of a direction's measurement on this machine:
// role tx sends each phase it is told to ("send K", answering "sent") and
// measures the clock offset to a machine when asked ("clock ADDR",
// answering "OFFSET_NS" or "error WHY"); role rx collects
// ("collect K" … "end": it waits out the quiet period, then prints the
// phase's arrivals as one JSON line of [seq, sent ns, at ns, size]) and,
// for a job with Clock, answers clock requests while it runs. Both read
// their job first and answer "ready" ("ready clock" when the receiver's
// clock responder runs, "ready noclock: WHY" when it could not start).
func workerVerify(lab, node, iface, role string) error {
	if role != "tx" && role != "rx" {
		return fmt.Errorf("verify: role %q (valid: tx, rx)", role)
	}
	in := bufio.NewScanner(os.Stdin)
	if !in.Scan() {
		return errors.New("verify: no job on stdin")
	}
	var job verifyJob
	if err := json.Unmarshal(in.Bytes(), &job); err != nil {
		return fmt.Errorf("verify: job: %w", err)
	}
	st, err := ReadState(lab)
	if err != nil {
		return err
	}
	if st.Spec.Node(node) == nil || !st.Spec.Here(node) {
		return fmt.Errorf("lab %s has no node %s on this machine", lab, node)
	}
	p, err := openProbe(st, topo.Endpoint{Node: node, Iface: iface})
	if err != nil {
		return err
	}
	defer unix.Close(p.fd)
	switch {
	case role == "rx" && job.Clock:
		resp, err := startClockResponder()
		if err != nil {
			fmt.Printf("ready noclock: %v\n", err)
			break
		}
		defer resp.stop()
		fmt.Println("ready clock")
	default:
		fmt.Println("ready")
	}
	var stop chan struct{}
	var got chan []arrival
	for in.Scan() {
		cmd, arg, _ := strings.Cut(in.Text(), " ")
		switch {
		case role == "tx" && cmd == "clock":
			peer, err := netip.ParseAddr(arg)
			if err != nil {
				fmt.Printf("error %v\n", err)
				continue
			}
			if off, rtt, err := clockOffset(peer, clockProbes); err != nil {
				fmt.Printf("error %v\n", err)
			} else {
				fmt.Printf("%d %d\n", int64(off), int64(rtt))
			}
		case role == "tx" && cmd == "send" && len(arg) == 1:
			sendPhase(p, arg[0], job.Run, job.Want, job.Opt)
			fmt.Println("sent")
		case role == "rx" && cmd == "collect" && len(arg) == 1 && stop == nil:
			stop, got = make(chan struct{}), make(chan []arrival, 1)
			kind, st := arg[0], stop
			go func() {
				var out []arrival
				for _, a := range p.collect(st, job.Quiet) {
					if a.kind == kind && a.run == job.Run {
						out = append(out, a)
					}
				}
				got <- out
			}()
		case role == "rx" && cmd == "end" && stop != nil:
			close(stop)
			as := <-got
			stop = nil
			raw := make([][4]int64, len(as))
			for i, a := range as {
				raw[i] = [4]int64{int64(a.seq), a.sent.UnixNano(), a.at.UnixNano(), int64(a.size)}
			}
			b, _ := json.Marshal(raw)
			fmt.Printf("%s\n", b)
		default:
			return fmt.Errorf("verify %s: unexpected %q", role, in.Text())
		}
	}
	return in.Err()
}
