package emu

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/netip"
	"path/filepath"
	"sync"
	"time"

	"github.com/emuctl/emuctl/internal/inet"
	"github.com/emuctl/emuctl/internal/sockinfo"
	"github.com/emuctl/emuctl/topo"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// ErrTimeout is returned by Ping when no reply came in time.
var ErrTimeout = errors.New("no reply")

// Ping sends one ICMP echo request from inside a node's namespace to dst
// and returns the round-trip time. It opens its own raw socket, so it needs
// no ping binary and can run many probes in parallel.
func Ping(ctx context.Context, lab, node string, dst netip.Addr, timeout time.Duration) (time.Duration, error) {
	h, err := netns.GetFromPath(filepath.Join(NetnsDir, topo.Namespace(lab, node)))
	if err != nil {
		if st, rerr := ReadState(lab); rerr == nil && isController(st) {
			return clusterPing(ctx, lab, node, dst, timeout) // on the node's machine (cluster_worker.go)
		}
		return 0, fmt.Errorf("node %s: %w", node, err)
	}
	defer h.Close()
	return pingIn(ctx, h, node, dst, timeout)
}

// pingIn sends one ICMP echo request from namespace h (named where in
// messages) and returns the round trip of its reply.
func pingIn(ctx context.Context, h netns.NsHandle, where string, dst netip.Addr, timeout time.Duration) (time.Duration, error) {
	var fd int
	err := do(h, func() error {
		var err error
		if dst.Is4() {
			fd, err = unix.Socket(unix.AF_INET, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.IPPROTO_ICMP)
		} else {
			fd, err = unix.Socket(unix.AF_INET6, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.IPPROTO_ICMPV6)
		}
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("icmp socket in %s: %w", where, err)
	}
	defer unix.Close(fd)
	// the reply's time is the kernel's (a reader woken late would add
	// its own delay to the round trip)
	unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1)
	id := uint16(rand.Uint32())
	seq := uint16(1)
	pkt := make([]byte, 64)
	if dst.Is4() {
		pkt[0] = 8
	} else {
		pkt[0] = 128
	}
	binary.BigEndian.PutUint16(pkt[4:], id)
	binary.BigEndian.PutUint16(pkt[6:], seq)
	if dst.Is4() {
		binary.BigEndian.PutUint16(pkt[2:], inet.Checksum(pkt))
	}
	var sa unix.Sockaddr
	if dst.Is4() {
		sa = &unix.SockaddrInet4{Addr: dst.As4()}
	} else {
		sa = &unix.SockaddrInet6{Addr: dst.As16()}
	}
	deadline := time.Now().Add(timeout)
	if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	t0 := time.Now()
	if err := unix.Sendto(fd, pkt, 0, sa); err != nil {
		return 0, fmt.Errorf("send to %s: %w", dst, err)
	}
	buf, oob := make([]byte, 1500), make([]byte, sockinfo.RxTimeOOB)
	for {
		left := time.Until(deadline)
		if left <= 0 {
			return 0, ErrTimeout
		}
		tv := unix.NsecToTimeval(min(left, 100*time.Millisecond).Nanoseconds())
		unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv)
		n, oobn, _, _, err := unix.Recvmsg(fd, buf, oob, 0)
		if err != nil {
			if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
				if ctx.Err() != nil {
					return 0, ctx.Err()
				}
				continue
			}
			return 0, err
		}
		b := buf[:n]
		if dst.Is4() {
			if len(b) < 20 {
				continue
			}
			b = b[int(b[0]&0x0f)*4:]
			if len(b) < 8 || b[0] != 0 {
				continue
			}
		} else if len(b) < 8 || b[0] != 129 {
			continue
		}
		if binary.BigEndian.Uint16(b[4:]) == id && binary.BigEndian.Uint16(b[6:]) == seq {
			if ns, ok := sockinfo.RxTime(oob[:oobn]); ok {
				if rtt := time.Unix(0, ns).Sub(t0); rtt > 0 {
					return rtt, nil
				}
			}
			return time.Since(t0), nil
		}
	}
}

// PingResult is one source/destination probe of PingAll.
type PingResult struct {
	From string        `json:"from"`
	To   string        `json:"to"`
	Addr netip.Addr    `json:"addr"`
	RTT  time.Duration `json:"rtt_ns"`
	OK   bool          `json:"ok"`
}

// PrimaryAddr returns a node's first IPv4 address (else first IPv6).
func PrimaryAddr(n *topo.Node) (netip.Addr, bool) {
	var v6 netip.Addr
	for _, ifc := range n.Interfaces {
		for _, a := range ifc.Addrs {
			if a.Addr().Is4() {
				return a.Addr(), true
			}
			if !v6.IsValid() {
				v6 = a.Addr()
			}
		}
	}
	return v6, v6.IsValid()
}

// PingAll pings every host/router from every other one (tries times each,
// the first success counts), in parallel, like Mininet's pingall.
func PingAll(ctx context.Context, st *State, tries int, timeout time.Duration) []PingResult {
	hosts := st.Spec.Hosts()
	var jobs []PingResult
	for _, a := range hosts {
		for _, b := range hosts {
			if a == b {
				continue
			}
			addr, ok := PrimaryAddr(b)
			if !ok {
				continue
			}
			jobs = append(jobs, PingResult{From: a.Name, To: b.Name, Addr: addr})
		}
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i := range jobs {
		wg.Add(1)
		sem <- struct{}{}
		go func(j *PingResult) {
			defer wg.Done()
			defer func() { <-sem }()
			for t := 0; t < max(1, tries); t++ {
				rtt, err := Ping(ctx, st.Lab, j.From, j.Addr, timeout)
				if err == nil {
					j.RTT, j.OK = rtt, true
					return
				}
			}
		}(&jobs[i])
	}
	wg.Wait()
	return jobs
}
