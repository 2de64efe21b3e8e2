package tc

import (
	"encoding/binary"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"
)

var formatf = fmt.Sprintf

// udpSink counts datagrams arriving at dst:port and records one-way delays
// (senders stamp the process's monotonic clock).
type udpSink struct {
	c         *net.UDPConn
	mu        sync.Mutex
	n         int
	delay     []time.Duration
	maxSeq    int64
	reordered int // datagrams that arrived after one with a higher sequence number
	done      chan struct{}
}

var clockBase = time.Now()

func newUDPSink(t testing.TB, dst *node, ip string, port int) *udpSink {
	t.Helper()
	var c *net.UDPConn
	err := inNS(dst.ns, func() (err error) {
		c, err = net.ListenUDP("udp4", &net.UDPAddr{IP: net.ParseIP(ip), Port: port})
		return err
	})
	if err != nil {
		t.Fatalf("udp listen: %v", err)
	}
	_ = c.SetReadBuffer(8 << 20)
	s := &udpSink{c: c, done: make(chan struct{}), maxSeq: -1}
	go func() {
		defer close(s.done)
		buf := make([]byte, 2048)
		for {
			n, err := c.Read(buf)
			now := time.Since(clockBase)
			if err != nil {
				return
			}
			s.mu.Lock()
			s.n++
			if n >= 16 {
				s.delay = append(s.delay, now-time.Duration(binary.BigEndian.Uint64(buf)))
				seq := int64(binary.BigEndian.Uint64(buf[8:]))
				if seq < s.maxSeq {
					s.reordered++
				}
				s.maxSeq = max(s.maxSeq, seq)
			}
			s.mu.Unlock()
		}
	}()
	t.Cleanup(func() { c.Close(); <-s.done })
	return s
}

func (s *udpSink) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

func (s *udpSink) reorders() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reordered
}

func (s *udpSink) delays() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.delay...)
}

// udpSend sends n datagrams of size bytes from src to ip:port, burst at a
// time with a pause in between.
func udpSend(t testing.TB, src *node, ip string, port, n, size, burst int, pause time.Duration) {
	t.Helper()
	var c *net.UDPConn
	err := inNS(src.ns, func() (err error) {
		c, err = net.DialUDP("udp4", nil, &net.UDPAddr{IP: net.ParseIP(ip), Port: port})
		return err
	})
	if err != nil {
		t.Fatalf("udp dial: %v", err)
	}
	defer c.Close()
	buf := make([]byte, size)
	for i := 0; i < n; i++ {
		binary.BigEndian.PutUint64(buf, uint64(time.Since(clockBase)))
		binary.BigEndian.PutUint64(buf[8:], uint64(i))
		if _, err := c.Write(buf); err != nil {
			t.Fatalf("udp write: %v", err)
		}
		if (i+1)%burst == 0 {
			time.Sleep(pause)
		}
	}
}
