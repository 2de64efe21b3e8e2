package engine

import (
	"errors"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/emuctl/emuctl/tc"
	"golang.org/x/sys/unix"
)

const (
	rxBatch = 16 // frames per recvmmsg (16 × 64 KB buffers)
	txBatch = 64 // frames per sendmmsg
	// lineCapBytes bounds what one direction may hold in its delay line
	// (a safety net for unshaped links under a flood; the bottleneck queue
	// is the queue stage's business).
	lineCapBytes = 256 << 20
)

// direction is one way through the engine, run by one goroutine locked
// to its OS thread: it polls its ingress socket with a timeout that ends
// at the next frame's transmit time (ppoll, nanosecond resolution, timer
// slack 1 ns), receives frames in batches, runs them through the pipeline
// and transmits each one when due. No Go timer (1 ms granularity) and no
// netpoller hand-off (a futex wake per frame) is involved.
type direction struct {
	e    *Engine
	name string
	in   *pktSock
	out  *pktSock
	mtu  int

	wakeFd  int       // eventfd: readable = parameters changed, recompute the sleep
	origins uint32    // numbers the GSO frames cut by this direction
	pending []*packet // due frames the egress socket had no room for

	mu        sync.Mutex // guards everything below (shared with Update/Stats)
	cfg       tc.Dir
	pl        *pipeline
	line      line
	lineBytes int64
	c         dirCounters
	recvDrops uint64
	late      lateness
	rxWait    lateness // how long frames sat in the kernel before the engine read them
	clock     int64    // the latest arrival, or instant a discipline ran to: arrivals never go before it
}

type dirCounters struct {
	inPkts, inBytes, lossDrops, queueDrops, dups uint64
	outPkts, outBytes, sendErrs, truncated       atomic.Uint64
}

// lateness tracks how long after their due time frames were handed to the
// kernel: the engine's own timing error.
type lateness struct {
	n        uint64
	sum, max int64
}

func (l *lateness) add(ns int64) {
	l.n++
	l.sum += ns
	l.max = max(l.max, ns)
}

func newDirection(e *Engine, name string, in, out *pktSock, cfg tc.Dir, mtu int, seed, stream uint64) *direction {
	d := &direction{e: e, name: name, in: in, out: out, mtu: mtu, cfg: cfg, wakeFd: -1}
	d.pl = newPipeline(cfg, mtu, newRand(seed, stream))
	d.line = newLine(cfg.Reorder, nil)
	return d
}

// reconfigure applies cfg; it reports whether queued frames were re-timed
// (then the loop must be woken).
func (d *direction) reconfigure(cfg tc.Dir) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	moved := d.pl.retime(d.e.now(), cfg)
	if moved {
		d.reorderLine()
	}
	if cfg.Reorder != d.cfg.Reorder {
		d.line = newLine(cfg.Reorder, d.line)
	}
	d.cfg = cfg
	d.pl.reconfigure(cfg, d.mtu, d.e.now(), func(p *packet, end int64) {
		due, _ := d.pl.delay.admit(p, end)
		d.toLine(p, due)
	})
	d.releaseDropped()
	return moved
}

// dropAfter counts and releases a packet dropped after the queue (a
// traced direction's loss stage in mahimahi's order).
func (d *direction) dropAfter(p *packet, v verdict) {
	if v == dropLoss {
		d.c.lossDrops += uint64(p.segs)
	} else {
		d.c.queueDrops += uint64(p.segs)
	}
	p.release()
}

// reorderLine restores the line's order after queued packets moved
// (a rate change): without Reorder no frame may overtake the one before
// it, so each due time is at least its predecessor's; a heap is rebuilt.
func (d *direction) reorderLine() {
	if fl, ok := d.line.(*fifoLine); ok {
		var prev int64
		for i := 0; i < fl.n; i++ {
			p := fl.ring[(fl.head+i)%len(fl.ring)]
			p.due = max(p.due, prev)
			prev = p.due
		}
		if fl.n > 0 {
			d.pl.delay.last = prev
		}
		return
	}
	d.line = newLine(true, d.line)
}

// toLine puts a packet on the delay line, due at due.
func (d *direction) toLine(p *packet, due int64) {
	p.due = due
	d.line.push(p)
	d.lineBytes += int64(len(p.buf))
}

// advance runs the queue discipline's dequeues due by now (d.mu held).
func (d *direction) advance(now int64) {
	if d.pl.aqmOn || d.pl.traceOn {
		// a discipline or trace decided everything up to now: later
		// arrivals cannot go before it
		d.clock = max(d.clock, now)
		d.pl.advance(now, d.toLine, d.dropAfter)
		d.releaseDropped()
	}
}

// releaseDropped returns the packets the discipline dropped to the pool.
func (d *direction) releaseDropped() {
	a := d.pl.aqm
	for i, p := range a.dropped {
		p.release()
		a.dropped[i] = nil
	}
	a.dropped = a.dropped[:0]
	tr := d.pl.trace
	for i, p := range tr.dropped {
		p.release()
		tr.dropped[i] = nil
	}
	tr.dropped = tr.dropped[:0]
}

func (d *direction) config() tc.Dir {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.cfg
}

func (d *direction) stats(open bool) DirStats {
	var drops uint64
	if open {
		drops = d.in.drops()
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.recvDrops += drops
	return DirStats{
		InPackets: d.c.inPkts, InBytes: d.c.inBytes,
		OutPackets: d.c.outPkts.Load(), OutBytes: d.c.outBytes.Load(),
		LossDrops:  d.c.lossDrops,
		Duplicated: d.c.dups, Corrupted: d.pl.corrupt.n,
		SendErrors: d.c.sendErrs.Load(), RecvDrops: d.recvDrops + d.c.truncated.Load(),
		Backlog:  d.line.len() + len(d.pending) + d.pl.held(),
		QueueLen: d.pl.queueLen(d.e.now()), QueuePeak: d.pl.queuePeak(),
		LateMax: time.Duration(d.late.max), LateMean: time.Duration(d.late.sum / int64(max(1, d.late.n))),
		RxWaitMax: time.Duration(d.rxWait.max), RxWaitMean: time.Duration(d.rxWait.sum / int64(max(1, d.rxWait.n))),
		Discipline: d.cfg.AQM.Name(),
		QueueDrops: d.c.queueDrops + d.pl.aqm.limitDrops + d.pl.trace.headDrops, AQMDrops: d.pl.aqm.aqmDrops, Marks: d.pl.aqm.marks,
		Sojourn:   d.pl.sojourn.summary(),
		TraceOpps: d.pl.trace.offered(d.e.now()),
	}
}

// maxRxAge bounds how far back a frame's kernel timestamp may move its
// arrival: the wake-up latency of the engine's thread (0.05-0.3 ms on a
// busy or virtual machine) and a short stall (the frames that piled up
// meanwhile keep their own arrival times, so the queue sees them spaced
// as they came, not as one burst that overflows it) — up to 20 ms, the
// longest stall the fidelity checks accept in a valid run. A frame whose
// transmit time passed meanwhile leaves at once.
const maxRxAge = 20_000_000

// arrival is the engine-clock instant a frame arrived: when the kernel
// stamped it (stamp, CLOCK_REALTIME ns; 0 = no stamp), never after now,
// the instant it was read (real: the same instant on CLOCK_REALTIME).
// schedule takes it back at most maxRxAge.
func arrival(now, real, stamp int64) int64 {
	if stamp == 0 {
		return now
	}
	return now - max(0, real-stamp)
}

// spinWindow is how long before a frame's transmit time the direction stops
// sleeping and polls instead (ns).
const spinWindow = 250_000

// loop runs the direction until the engine's stop eventfd becomes
// readable or a socket fails. It sleeps until the earlier of the next
// frame's transmit time (less spinWindow, then polls) and the queue
// discipline's next dequeue (no spin: a late dequeue is computed at its
// exact time, only its frame's transmission could be late).
func (d *direction) loop(stopFd int) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	_ = unix.Prctl(unix.PR_SET_TIMERSLACK, 1, 0, 0, 0) // wake on time, not up to 50 µs late
	defer unix.Prctl(unix.PR_SET_TIMERSLACK, 0, 0, 0, 0)

	rx := newRecvBatch(rxBatch)
	bufs := make([][]byte, rxBatch)
	for i := range bufs {
		bufs[i] = make([]byte, bufClasses[len(bufClasses)-1])
		rx.set(i, bufs[i])
	}
	tx := newMmsgBatch(txBatch)
	batch := make([]*packet, 0, txBatch)
	var pkts []*packet
	fds := []unix.PollFd{{Fd: int32(d.in.fd), Events: unix.POLLIN}, {Fd: int32(stopFd), Events: unix.POLLIN}, {Fd: int32(d.out.fd)}, {Fd: int32(d.wakeFd), Events: unix.POLLIN}}
	var wakeBuf [8]byte
	rxMore := false
	for {
		next, deq := d.transmit(tx, batch)
		if !rxMore {
			var ts *unix.Timespec
			if len(d.pending) > 0 {
				fds[2].Events = unix.POLLOUT // egress socket full: wait for room
			} else if fds[2].Events = 0; next != math.MaxInt64 || deq != math.MaxInt64 {
				// Sleep until spinWindow before the frame is due, then poll
				// without sleeping: a woken thread runs 0.1-0.3 ms late on a
				// busy or virtual machine, which would show in every delay.
				now := d.e.now()
				wait := next - now
				if wait > spinWindow {
					wait -= spinWindow
				} else {
					wait = 0
				}
				wait = min(wait, deq-now)
				t := unix.NsecToTimespec(max(0, wait))
				ts = &t
			}
			fds[0].Revents, fds[1].Revents, fds[2].Revents, fds[3].Revents = 0, 0, 0, 0
			if _, err := unix.Ppoll(fds, ts, nil); err != nil && err != unix.EINTR {
				return err
			}
			if fds[1].Revents != 0 {
				return nil
			}
			if fds[3].Revents != 0 {
				_, _ = unix.Read(d.wakeFd, wakeBuf[:])
			}
			if (fds[0].Revents|fds[2].Revents)&unix.POLLNVAL != 0 {
				return errors.New("socket closed under the engine")
			}
			if fds[0].Revents&(unix.POLLIN|unix.POLLERR) == 0 {
				continue
			}
		}
		n, err := d.in.recv(rx)
		if err != nil {
			switch err {
			case unix.ENETDOWN, unix.ENXIO, unix.ENOBUFS:
				rxMore = false
				continue // the interface went down (and may come back)
			}
			return err
		}
		rxMore = n == rxBatch
		pkts = pkts[:0]
		perPacket, join := d.mode()
		wall := time.Now()
		now, real := int64(wall.Sub(d.e.epoch)), wall.UnixNano()
		for i := 0; i < n; i++ {
			if rx.msgs[i].Hdr.Flags&unix.MSG_TRUNC != 0 {
				d.c.truncated.Add(1)
				continue
			}
			from := len(pkts)
			pkts = d.unpack(pkts, bufs[i][:rx.msgs[i].Len], perPacket, join)
			at := arrival(now, real, rx.stamp(i))
			for _, p := range pkts[from:] {
				p.in, p.seen = at, now
			}
		}
		d.schedule(pkts)
	}
}

// transmit runs the queue discipline's due dequeues, sends every frame
// that is due and returns the due time of the next one and of the next
// dequeue (MaxInt64 if none). Frames the egress socket has no room for
// wait in d.pending, in order.
func (d *direction) transmit(tx *mmsgBatch, batch []*packet) (int64, int64) {
	for {
		batch = batch[:0]
		if len(d.pending) > 0 {
			batch = append(batch, d.pending...)
			d.pending = d.pending[:0]
		}
		d.mu.Lock()
		now := d.e.now()
		d.advance(now)
		deq := d.pl.next()
		for len(batch) < cap(batch) {
			p := d.line.peek()
			if p == nil || p.due > now {
				break
			}
			batch = append(batch, d.line.pop())
			d.lineBytes -= int64(len(p.buf))
			d.late.add(now - max(p.due, p.seen))
		}
		next := int64(math.MaxInt64)
		if h := d.line.peek(); h != nil {
			next = h.due
		}
		join := !d.pl.shaped(d.cfg)
		d.mu.Unlock()
		if len(batch) == 0 {
			return next, deq
		}
		if join {
			batch = coalesce(batch)
		}
		sent := d.out.send(tx, batch)
		d.account(batch[:sent])
		if sent < len(batch) {
			d.pending = append(d.pending, batch[sent:]...)
			return next, deq
		}
		if next > now && deq > now {
			return next, deq
		}
	}
}

func (d *direction) account(sent []*packet) {
	var pkts, bytes, refused uint64
	for _, p := range sent {
		if p.refused {
			refused += uint64(p.segs)
		} else {
			pkts += uint64(p.segs)
			bytes += uint64(p.wire)
		}
		p.release()
	}
	d.c.sendErrs.Add(refused)
	d.c.outPkts.Add(pkts)
	d.c.outBytes.Add(bytes)
}
