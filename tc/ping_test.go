package tc

import (
	"encoding/binary"
	"net"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/emuctl/emuctl/internal/inet"
)

// pinger sends ICMP echo requests from a raw socket inside src; the
// destination's kernel answers, so no userspace hop adds latency there.
type pinger struct {
	c    *net.IPConn
	id   uint16
	mu   sync.Mutex
	sent map[uint16]time.Time
	rtts []time.Duration
	done chan struct{}
}

func newPinger(t testing.TB, src *node) *pinger {
	t.Helper()
	var pc net.PacketConn
	err := inNS(src.ns, func() (err error) {
		pc, err = net.ListenPacket("ip4:icmp", "0.0.0.0")
		return err
	})
	if err != nil {
		t.Fatalf("icmp socket: %v", err)
	}
	p := &pinger{c: pc.(*net.IPConn), id: uint16(os.Getpid()), sent: map[uint16]time.Time{}, done: make(chan struct{})}
	go p.receive()
	t.Cleanup(func() { p.c.Close(); <-p.done })
	return p
}

func (p *pinger) receive() {
	defer close(p.done)
	buf := make([]byte, 1500)
	for {
		n, _, err := p.c.ReadFrom(buf)
		now := time.Now()
		if err != nil {
			return
		}
		if n < 8 || buf[0] != 0 || binary.BigEndian.Uint16(buf[4:]) != p.id {
			continue
		}
		seq := binary.BigEndian.Uint16(buf[6:])
		p.mu.Lock()
		if t0, ok := p.sent[seq]; ok {
			p.rtts = append(p.rtts, now.Sub(t0))
			delete(p.sent, seq)
		}
		p.mu.Unlock()
	}
}

func (p *pinger) send(dst string, seq uint16) {
	msg := make([]byte, 64)
	msg[0] = 8 // echo request
	binary.BigEndian.PutUint16(msg[4:], p.id)
	binary.BigEndian.PutUint16(msg[6:], seq)
	binary.BigEndian.PutUint16(msg[2:], ^inet.Fold(inet.Sum(0, msg)))
	p.mu.Lock()
	p.sent[seq] = time.Now()
	p.mu.Unlock()
	_, _ = p.c.WriteTo(msg, &net.IPAddr{IP: net.ParseIP(dst)})
}

// run sends n echoes every interval and returns the RTTs received (lost
// ones are missing), waiting up to wait for the last answers.
func (p *pinger) run(dst string, n int, interval, wait time.Duration) []time.Duration {
	p.mu.Lock()
	p.rtts = nil
	p.mu.Unlock()
	for i := 0; i < n; i++ {
		p.send(dst, uint16(i))
		time.Sleep(interval)
	}
	deadline := time.Now().Add(wait)
	for time.Now().Before(deadline) {
		p.mu.Lock()
		left := len(p.sent)
		p.mu.Unlock()
		if left == 0 {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	clear(p.sent)
	return slices.Clone(p.rtts)
}

// percentile returns the p-th percentile (nearest rank) of ds.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	i := int(float64(len(s))*p/100+0.5) - 1
	return s[max(0, min(i, len(s)-1))]
}

type rttStats struct {
	n                   int
	min, p50, mean, max time.Duration
	p95                 time.Duration
}

func summarize(rtts []time.Duration) rttStats {
	if len(rtts) == 0 {
		return rttStats{}
	}
	s := slices.Clone(rtts)
	slices.Sort(s)
	var sum time.Duration
	for _, r := range s {
		sum += r
	}
	return rttStats{n: len(s), min: s[0], p50: s[len(s)/2], p95: s[len(s)*95/100], max: s[len(s)-1], mean: sum / time.Duration(len(s))}
}

func (s rttStats) String() string {
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	return formatf("n=%d min %.3f p50 %.3f mean %.3f p95 %.3f max %.3f ms", s.n, ms(s.min), ms(s.p50), ms(s.mean), ms(s.p95), ms(s.max))
}
