package emu

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"sync"
	"time"
)

// Clock offsets between machines, measured over the underlay as NTP does
// (RFC 5905's on-wire exchange): a machine sends t1, the peer stamps its
// receipt t2 and its reply t3, the reply arrives at t4; the peer's clock
// minus ours is ((t2 - t1) + (t3 - t4)) / 2, taken from the exchange with
// the shortest round trip (t4 - t1) - (t3 - t2), the least disturbed by
// queueing. Every machine answers on its underlay address, UDP port
// clockPort, while it probes its peers, and until each peer has asked
// clockProbes times (or clockStart has passed): the machines probe each
// other at about the same time, which on slow machines (an emulated VM
// reached over SSH) can be seconds apart, so a peer's first reply is
// awaited for clockStart, then the exchanges take at most clockWait. One-way delays measured across two machines need this
// offset; it is kept with the underlay's round trips (State.Underlay).

const (
	clockPort   = 4788
	clockProbes = 20
	clockWait   = 3 * time.Second
	clockStart  = 20 * time.Second
)

// clockResponder answers clock requests until stopped; asked counts the
// requests from each source address.
type clockResponder struct {
	conn  *net.UDPConn
	mu    sync.Mutex
	asked map[netip.Addr]int
	done  chan struct{}
}

func startClockResponder() (*clockResponder, error) {
	conn, err := net.ListenUDP("udp4", &net.UDPAddr{Port: clockPort})
	if err != nil {
		return nil, fmt.Errorf("clock responder on port %d: %w", clockPort, err)
	}
	r := &clockResponder{conn: conn, asked: map[netip.Addr]int{}, done: make(chan struct{})}
	go func() {
		defer close(r.done)
		buf := make([]byte, 64)
		for {
			n, from, err := conn.ReadFromUDPAddrPort(buf)
			t2 := time.Now().UnixNano()
			if err != nil {
				return
			}
			if n != 8 {
				continue
			}
			out := make([]byte, 24)
			copy(out, buf[:8])
			binary.BigEndian.PutUint64(out[8:], uint64(t2))
			binary.BigEndian.PutUint64(out[16:], uint64(time.Now().UnixNano()))
			conn.WriteToUDPAddrPort(out, from)
			r.mu.Lock()
			r.asked[from.Addr().Unmap()]++
			r.mu.Unlock()
		}
	}()
	return r, nil
}

// waitAsked waits until every peer has asked n times, or for at most wait.
func (r *clockResponder) waitAsked(peers []netip.Addr, n int, wait time.Duration) {
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		r.mu.Lock()
		all := true
		for _, p := range peers {
			all = all && r.asked[p] >= n
		}
		r.mu.Unlock()
		if all {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func (r *clockResponder) stop() {
	r.conn.Close()
	<-r.done
}

// clockOffset measures peer's clock minus ours: n exchanges, retried while
// the peer's responder is not up yet (it starts with the peer's probe).
func clockOffset(peer netip.Addr, n int) (offset, rtt time.Duration, err error) {
	conn, err := net.DialUDP("udp4", nil, net.UDPAddrFromAddrPort(netip.AddrPortFrom(peer, clockPort)))
	if err != nil {
		return 0, 0, err
	}
	defer conn.Close()
	best := time.Duration(-1)
	got := 0
	buf := make([]byte, 64)
	// the first reply may take the peer's start (clockStart); the
	// exchanges then clockWait
	deadline := time.Now().Add(clockStart)
	for got < n && time.Now().Before(deadline) {
		req := make([]byte, 8)
		t1 := time.Now().UnixNano()
		binary.BigEndian.PutUint64(req, uint64(t1))
		if _, err := conn.Write(req); err != nil {
			time.Sleep(20 * time.Millisecond) // ECONNREFUSED: the peer's responder is not up yet
			continue
		}
		conn.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
		k, err := conn.Read(buf)
		t4 := time.Now().UnixNano()
		if err != nil {
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() {
				time.Sleep(20 * time.Millisecond)
			}
			continue
		}
		if k != 24 || int64(binary.BigEndian.Uint64(buf)) != t1 {
			continue
		}
		t2, t3 := int64(binary.BigEndian.Uint64(buf[8:])), int64(binary.BigEndian.Uint64(buf[16:]))
		if got == 0 {
			deadline = time.Now().Add(clockWait)
		}
		got++
		if r := time.Duration((t4 - t1) - (t3 - t2)); best < 0 || r < best {
			best = r
			offset = time.Duration(((t2 - t1) + (t3 - t4)) / 2)
		}
		time.Sleep(2 * time.Millisecond)
	}
	if got == 0 {
		return 0, 0, fmt.Errorf("no clock reply from %s:%d", peer, clockPort)
	}
	return offset, best, nil
}
