package traffic

import (
	"context"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"net"
	"net/netip"
	"sync"
	"time"

	"github.com/emuctl/emuctl/analysis"
	"github.com/emuctl/emuctl/internal/inet"
	"github.com/emuctl/emuctl/internal/sockinfo"
	"golang.org/x/sys/unix"
)

// probeTimeout is how long a probe waits for its reply before it counts
// as lost.
const probeTimeout = 2 * time.Second

// prober sends echo requests Client → Server at a fixed rate and records
// each round-trip time. ICMP uses a raw socket in the client node (the
// server's kernel answers); UDP uses an echo socket emuctl opens in the
// server node.
type prober struct {
	lab, kind, from, to string
	dst                 netip.Addr
	rate                float64
	id                  string
	flow                string

	ident uint16 // ICMP identifier / UDP token
	ic    *net.IPConn
	echo  *net.UDPConn // in the server node
	cl    *net.UDPConn // in the client node

	mu   sync.Mutex
	sent []int64 // send time by sequence number, unix ns
	rtt  []int64 // ns, 0 = no reply
}

func newProber(lab string, f Flow, dst netip.Addr, id string) *prober {
	return &prober{lab: lab, kind: f.Probe, from: f.Client, to: f.Server, dst: dst, rate: f.ProbeRate,
		id: id, flow: f.Name, ident: uint16(rand.Uint32())}
}

func (p *prober) prepare() error {
	if p.kind == ProbeICMP {
		netw, laddr := "ip4:icmp", "0.0.0.0"
		if p.dst.Is6() {
			netw, laddr = "ip6:ipv6-icmp", "::"
		}
		err := inNode(p.lab, p.from, func() error {
			c, err := net.ListenPacket(netw, laddr)
			if err == nil {
				p.ic = c.(*net.IPConn)
			}
			return err
		})
		if err != nil {
			return err
		}
		return sockinfo.WithFD(p.ic, func(fd int) error {
			return unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
		})
	}
	var err error
	if p.echo, err = listenUDP(p.lab, p.to, p.dst, 0); err != nil {
		return err
	}
	dst := netip.AddrPortFrom(p.dst, addrPort(p.echo.LocalAddr()).Port())
	if p.cl, err = dialUDP(p.lab, p.from, dst); err != nil {
		return err
	}
	return sockinfo.WithFD(p.cl, func(fd int) error {
		return unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	})
}

func (p *prober) close() {
	if p.ic != nil {
		p.ic.Close()
	}
	if p.echo != nil {
		p.echo.Close()
	}
	if p.cl != nil {
		p.cl.Close()
	}
}

// run probes from start until end (or ctx), waits for the last replies
// and returns the samples, times relative to t0.
func (p *prober) run(ctx context.Context, t0, start, end time.Time) analysis.Probe {
	if p.echo != nil {
		go echoLoop(p.echo)
	}
	done := make(chan struct{})
	go func() { defer close(done); p.receive() }()
	gap := time.Duration(float64(time.Second) / p.rate)
	buf := make([]byte, 64)
	for seq := 0; ; seq++ {
		next := start.Add(time.Duration(seq) * gap)
		if !next.Before(end) {
			break
		}
		select {
		case <-ctx.Done():
		case <-time.After(time.Until(next)):
		}
		if ctx.Err() != nil {
			break
		}
		now := time.Now().UnixNano()
		p.mu.Lock()
		p.sent = append(p.sent, now)
		p.rtt = append(p.rtt, 0)
		p.mu.Unlock()
		p.write(buf, uint64(seq), now)
	}
	p.waitReplies(ctx)
	if p.ic != nil {
		p.ic.Close()
	} else {
		p.cl.Close()
		if p.echo != nil { // on another machine: the split engine's echo half
			p.echo.Close()
		}
	}
	<-done
	pr := analysis.Probe{ID: p.id, Kind: p.kind, From: p.from, To: p.to, Flow: p.flow, IntervalS: gap.Seconds()}
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, s := range p.sent {
		ps := analysis.ProbeSample{TS: time.Unix(0, s).Sub(t0).Seconds()}
		if p.rtt[i] > 0 {
			ps.RTTUs = float64(p.rtt[i]) / 1e3
		} else {
			ps.Lost = true
		}
		pr.Samples = append(pr.Samples, ps)
	}
	return pr
}

// waitReplies returns when every probe has its reply or timed out.
func (p *prober) waitReplies(ctx context.Context) {
	limit := time.Now().Add(probeTimeout)
	for time.Now().Before(limit) && ctx.Err() == nil {
		p.mu.Lock()
		missing := false
		for i := range p.sent {
			if p.rtt[i] == 0 && time.Since(time.Unix(0, p.sent[i])) < probeTimeout {
				missing = true
				break
			}
		}
		p.mu.Unlock()
		if !missing {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// write sends echo request seq carrying its send time.
func (p *prober) write(buf []byte, seq uint64, now int64) {
	if p.ic != nil {
		clear(buf)
		buf[0] = 8 // echo request
		if p.dst.Is6() {
			buf[0] = 128
		}
		binary.BigEndian.PutUint16(buf[4:], p.ident)
		binary.BigEndian.PutUint16(buf[6:], uint16(seq))
		binary.BigEndian.PutUint64(buf[8:], uint64(now))
		binary.BigEndian.PutUint64(buf[16:], seq) // the ICMP field wraps
		if p.dst.Is4() {
			binary.BigEndian.PutUint16(buf[2:], inet.Checksum(buf))
		}
		p.ic.WriteToIP(buf, &net.IPAddr{IP: p.dst.AsSlice()})
		return
	}
	putUDPHeader(buf, uint32(p.ident), seq, now)
	p.cl.Write(buf)
}

// receive matches replies to requests until the socket closes. The RTT
// uses the kernel's receive timestamp.
func (p *prober) receive() {
	buf := make([]byte, 1500)
	oob := make([]byte, oobSize)
	for {
		var n, oobn int
		var err error
		if p.ic != nil {
			n, oobn, _, _, err = p.ic.ReadMsgIP(buf, oob)
		} else {
			n, oobn, _, _, err = p.cl.ReadMsgUDPAddrPort(buf, oob)
		}
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		seq, sent, ok := p.parseReply(buf[:n])
		if !ok {
			continue
		}
		rx := rxTime(oob[:oobn])
		p.mu.Lock()
		if int(seq) < len(p.sent) && p.sent[seq] == sent && p.rtt[seq] == 0 {
			p.rtt[seq] = max(rx-sent, 1)
		}
		p.mu.Unlock()
	}
}

func (p *prober) parseReply(b []byte) (seq uint64, sent int64, ok bool) {
	if p.ic == nil {
		return parseUDPHeader(b, uint32(p.ident))
	}
	reply := byte(0)
	if p.dst.Is6() {
		reply = 129
	} else if len(b) >= 20 && b[0]>>4 == 4 {
		b = b[int(b[0]&0x0f)*4:] // ReadMsgIP keeps the IPv4 header
	}
	if len(b) < 24 || b[0] != reply || binary.BigEndian.Uint16(b[4:]) != p.ident {
		return 0, 0, false
	}
	return binary.BigEndian.Uint64(b[16:]), int64(binary.BigEndian.Uint64(b[8:])), true
}

// echoLoop sends every datagram back to where it came from, until the
// socket closes.
func echoLoop(c *net.UDPConn) {
	buf := make([]byte, 65536)
	for {
		n, from, err := c.ReadFromUDPAddrPort(buf)
		if err != nil {
			if errors.Is(err, net.ErrClosed) {
				return
			}
			continue
		}
		c.WriteToUDPAddrPort(buf[:n], from)
	}
}
