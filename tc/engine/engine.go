package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/emuctl/emuctl/internal/nsutil"
	"github.com/emuctl/emuctl/internal/sysctl"
	"github.com/emuctl/emuctl/tc"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// Engine is the userspace link: it forwards frames between two interfaces
// that live in one network namespace (the link's hidden namespace:
// node A <-veth-> [a  engine  b] <-veth-> node B), applying one tc.Dir from a
// to b and another from b to a. It is a library object: the caller runs
// it in a goroutine (Run), changes it at run time (Update) and reads its
// counters (Stats). See doc.go for the design.
type Engine struct {
	ifA, ifB string
	sockA    *pktSock
	sockB    *pktSock
	ab, ba   *direction
	epoch    time.Time
	stopFd   int // eventfd: readable = stop

	started   atomic.Bool
	stopped   atomic.Bool  // Run's loops have returned
	fdMu      sync.RWMutex // held for reading while Stats uses a socket
	closed    bool         // under fdMu
	closeOnce sync.Once
}

// DirStats counts what one direction did. Packets are wire packets: a GSO
// super-frame counts as its segments.
type DirStats struct {
	InPackets, InBytes   uint64 // received from the ingress interface
	OutPackets, OutBytes uint64 // transmitted on the egress interface
	LossDrops            uint64 // dropped by the loss model
	QueueDrops           uint64 // dropped at the queue's limit (tail drop, or see AQMDrops)
	Duplicated           uint64
	Corrupted            uint64
	SendErrors           uint64 // frames the kernel refused to transmit
	RecvDrops            uint64 // frames lost before the engine read them (socket overflow, truncation)
	Backlog              int    // frames inside the engine now (queue and delay line)
	// QueueLen and QueuePeak are the bottleneck queue's length now and its
	// maximum so far, in packets (the one being serialised included).
	QueueLen, QueuePeak int
	// LateMean and LateMax are how long after their due time frames were
	// handed to the kernel (timer and scheduling latency): the engine's
	// own timing error.
	LateMean, LateMax time.Duration
	// RxWaitMean and RxWaitMax are how long frames sat in the kernel
	// between their arrival (the kernel's receive timestamp) and the
	// engine reading them: its thread's wake-up latency. A frame is timed
	// from its arrival, so up to 1 ms of it adds no delay.
	RxWaitMean, RxWaitMax time.Duration
	// Discipline is the queue's discipline (droptail, drophead, codel,
	// fq_codel, pie, red). QueueDrops counts the drops at its hard limit
	// (FQ-CoDel's drops from the fattest flow included), AQMDrops those
	// the discipline chose (CoDel's at the head, PIE's and RED's early
	// drops), Marks the packets it marked CE instead of dropping.
	Discipline string `json:",omitempty"`
	AQMDrops   uint64 `json:",omitempty"`
	Marks      uint64 `json:",omitempty"`
	// Sojourn is the queueing delay of the packets transmitted: how long
	// each waited before its transmission started.
	Sojourn Sojourn
	// TraceOpps counts the delivery opportunities a traced direction's
	// trace has offered so far (used or not; mmtrace.Bytes each): what
	// OutBytes less 10 bytes a frame (mmtrace.Cost) can never exceed.
	TraceOpps uint64 `json:",omitempty"`
}

// Stats are both directions' counters.
type Stats struct{ AToB, BToA DirStats }

// New opens the engine's sockets on ifA and ifB inside ns (both must
// exist there; they are brought up, and IPv6 and forwarding are disabled
// on them so the namespace's own stack stays silent). seed makes loss,
// jitter, duplication and corruption reproducible.
func New(ns netns.NsHandle, ifA, ifB string, aToB, bToA tc.Dir, seed uint64) (*Engine, error) {
	if err := errors.Join(checkDir("a→b", aToB), checkDir("b→a", bToA)); err != nil {
		return nil, err
	}
	if ifA == ifB {
		return nil, fmt.Errorf("engine needs two interfaces, got %q twice", ifA)
	}
	h, err := handleAt(ns)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	links := make([]netlink.Link, 2)
	for i, name := range []string{ifA, ifB} {
		if links[i], err = h.LinkByName(name); err != nil {
			return nil, fmt.Errorf("engine interface %q: %w", name, err)
		}
		if err := h.LinkSetUp(links[i]); err != nil {
			return nil, fmt.Errorf("engine interface %q up: %w", name, err)
		}
	}
	e := &Engine{ifA: ifA, ifB: ifB, epoch: time.Now(), stopFd: -1}
	if e.stopFd, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK); err != nil {
		return nil, fmt.Errorf("eventfd: %w", err)
	}
	err = nsutil.Do(ns, func() error {
		for _, name := range []string{ifA, ifB} {
			quietInterface(name)
		}
		var err error
		if e.sockA, err = openPktSock(ifA, links[0].Attrs().Index); err != nil {
			return err
		}
		e.sockB, err = openPktSock(ifB, links[1].Attrs().Index)
		return err
	})
	if err != nil {
		e.Close()
		return nil, err
	}
	e.ab = newDirection(e, "a→b", e.sockA, e.sockB, aToB, links[1].Attrs().MTU, seed, 1)
	e.ba = newDirection(e, "b→a", e.sockB, e.sockA, bToA, links[0].Attrs().MTU, seed, 2)
	for _, d := range []*direction{e.ab, e.ba} {
		if d.wakeFd, err = unix.Eventfd(0, unix.EFD_CLOEXEC|unix.EFD_NONBLOCK); err != nil {
			e.Close()
			return nil, fmt.Errorf("eventfd: %w", err)
		}
	}
	return e, nil
}

// checkDir validates a direction for the engine: valid, and a queue
// discipline the engine implements.
func checkDir(name string, d tc.Dir) error {
	err := d.Validate()
	if err == nil && d.AQM != nil {
		err = d.AQM.EngineSupports()
	}
	if err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

func handleAt(ns netns.NsHandle) (*netlink.Handle, error) {
	if ns.IsOpen() {
		return netlink.NewHandleAt(ns, unix.NETLINK_ROUTE)
	}
	return netlink.NewHandle(unix.NETLINK_ROUTE)
}

// quietInterface keeps the engine namespace's own stack out of the way:
// no IPv6 (no DAD, router solicitations or MLD of its own) and no IPv4
// forwarding of the frames it also sees. Best effort: a kernel without
// IPv6 has no such file.
func quietInterface(name string) {
	for _, kv := range [][2]string{
		{"net/ipv6/conf/" + name + "/disable_ipv6", "1"},
		{"net/ipv4/conf/" + name + "/forwarding", "0"},
	} {
		_ = sysctl.Write(kv[0], kv[1])
	}
}

// Run forwards frames until ctx is done or Close is called (then it
// returns nil) or a socket fails (then it returns the error). The engine
// is closed when Run returns; it runs once.
func (e *Engine) Run(ctx context.Context) error {
	if !e.started.CompareAndSwap(false, true) {
		return errors.New("engine: Run called twice")
	}
	e.fdMu.RLock()
	closed := e.closed
	e.fdMu.RUnlock()
	if closed {
		return errors.New("engine: Run after Close")
	}
	errc := make(chan error, 2)
	var wg sync.WaitGroup
	for _, d := range []*direction{e.ab, e.ba} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := d.loop(e.stopFd); err != nil {
				errc <- fmt.Errorf("engine %s-%s %s: %w", e.ifA, e.ifB, d.name, err)
			}
		}()
	}
	loopsDone := make(chan struct{})
	go func() { wg.Wait(); close(loopsDone) }()
	var err error
	select {
	case <-ctx.Done():
	case err = <-errc:
	case <-loopsDone: // Close was called
	}
	e.signalStop()
	wg.Wait()
	e.stopped.Store(true)
	e.Close()
	return err
}

// Update replaces both directions' parameters at run time. A new rate
// re-times the frames in the drop-tail queue (the one being serialised
// sends its remaining bits at the new rate, those behind it follow at the
// new rate); frames past the queue, on the delay line, keep their times;
// new frames see the new parameters.
func (e *Engine) Update(aToB, bToA tc.Dir) error {
	if err := errors.Join(checkDir("a→b", aToB), checkDir("b→a", bToA)); err != nil {
		return err
	}
	e.fdMu.RLock()
	defer e.fdMu.RUnlock()
	for _, x := range []struct {
		d   *direction
		cfg tc.Dir
	}{{e.ab, aToB}, {e.ba, bToA}} {
		x.d.reconfigure(x.cfg)
		if !e.closed {
			// frames may have moved earlier: the loop must not sleep past them
			_, _ = unix.Write(x.d.wakeFd, []byte{1, 0, 0, 0, 0, 0, 0, 0})
		}
	}
	return nil
}

// Config returns the parameters in force.
func (e *Engine) Config() (aToB, bToA tc.Dir) {
	return e.ab.config(), e.ba.config()
}

// Stats returns both directions' counters (frozen once the engine is
// closed).
func (e *Engine) Stats() Stats {
	e.fdMu.RLock()
	defer e.fdMu.RUnlock()
	return Stats{AToB: e.ab.stats(!e.closed), BToA: e.ba.stats(!e.closed)}
}

// signalStop wakes both direction loops; they return. The eventfd stays
// readable, so a loop that starts late returns at once.
func (e *Engine) signalStop() {
	e.fdMu.RLock()
	defer e.fdMu.RUnlock()
	if !e.closed {
		_, _ = unix.Write(e.stopFd, []byte{1, 0, 0, 0, 0, 0, 0, 0})
	}
}

// Close stops a running engine (Run returns) and releases its sockets. It
// is safe to call more than once, and without Run.
func (e *Engine) Close() error {
	if e.started.Load() && !e.stopped.Load() {
		e.signalStop() // Run's deferred Close does the rest
		return nil
	}
	e.closeOnce.Do(func() {
		e.fdMu.Lock()
		defer e.fdMu.Unlock()
		e.closed = true
		for _, s := range []*pktSock{e.sockA, e.sockB} {
			if s != nil {
				s.close()
			}
		}
		if e.stopFd >= 0 {
			unix.Close(e.stopFd)
		}
		for _, d := range []*direction{e.ab, e.ba} {
			if d != nil && d.wakeFd >= 0 {
				unix.Close(d.wakeFd)
			}
		}
	})
	return nil
}

// now is the engine clock: monotonic nanoseconds since NewEngine.
func (e *Engine) now() int64 { return int64(time.Since(e.epoch)) }

func newRand(seed, stream uint64) *rand.Rand {
	return rand.New(rand.NewPCG(seed, 0x9E3779B97F4A7C15*stream))
}
