package netcfg

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"sort"
	"strings"
	"sync/atomic"
	"time"

	"github.com/emuctl/emuctl/internal/sockinfo"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// CheckOptions configure CheckMPTCP.
type CheckOptions struct {
	// Server is the address the client connects to (required).
	Server netip.Addr
	// Port to listen on in the server node; 0 picks a free one.
	Port uint16
	// Duration of the bulk transfer from client to server (default 2 s).
	Duration time.Duration
	// Expect is how many subflows, the initial one included, must be up
	// at once; 0 means 2.
	Expect int
	// CC sets the congestion control of both sockets (TCP_CONGESTION);
	// "" keeps the namespaces' defaults.
	CC string
	// TCP opens a plain TCP connection instead of MPTCP (for comparisons):
	// the check then expects one path and no MPTCP.
	TCP bool
}

// Subflow is one subflow of the checked connection, seen from the client
// at the end of the transfer.
type Subflow struct {
	ID        uint32         `json:"id"`
	Local     netip.AddrPort `json:"local"`
	Remote    netip.AddrPort `json:"remote"`
	Interface string         `json:"interface"` // client interface holding Local
	// BytesAcked is the data the server acknowledged on this subflow.
	BytesAcked uint64 `json:"bytes_acked"`
	// Established is false for a subflow still (or again) without a
	// connection: a join that got no answer stays in SYN-SENT.
	Established  bool          `json:"established"`
	BytesRetrans uint64        `json:"bytes_retrans"`
	RTT          time.Duration `json:"rtt"`
	Cwnd         uint32        `json:"cwnd"`
}

// CheckResult is what CheckMPTCP measured.
type CheckResult struct {
	// MPTCP is false when the connection fell back to plain TCP.
	MPTCP bool `json:"mptcp"`
	// Expect is the number of subflows that had to be up at once.
	Expect int `json:"expect"`
	// MaxSubflows is the most subflows seen established at once.
	MaxSubflows int `json:"max_subflows"`
	// Subflows at the end of the transfer (nil for plain TCP).
	Subflows []Subflow `json:"subflows,omitempty"`
	// Bytes is what the server received within Duration (data still
	// queued when the transfer stopped is not counted).
	Bytes    uint64        `json:"bytes"`
	Duration time.Duration `json:"duration"`
	// Goodput is Bytes over Duration, in bit/s.
	Goodput float64 `json:"goodput_bps"`
	// CC is the client socket's congestion control.
	CC string `json:"cc"`
	// Local and Remote are the client socket's addresses (initial subflow).
	Local  netip.AddrPort `json:"local"`
	Remote netip.AddrPort `json:"remote"`
}

// ErrCheckFailed is wrapped by CheckMPTCP's verdicts (fallback, too few
// subflows); the result is returned with it.
var ErrCheckFailed = errors.New("MPTCP check failed")

// CheckMPTCP opens an MPTCP connection from a socket in the client
// namespace to a listener in the server namespace, sends bulk data for
// opt.Duration, and reports the subflows (MPTCP_FULL_INFO) and the bytes
// each carried. It fails (wrapping ErrCheckFailed, with the result) when the
// connection fell back to TCP or fewer than opt.Expect subflows were up at
// once.
func CheckMPTCP(ctx context.Context, client, server netns.NsHandle, opt CheckOptions) (*CheckResult, error) {
	if !opt.Server.IsValid() {
		return nil, errors.New("CheckMPTCP: no server address")
	}
	if opt.Duration <= 0 {
		opt.Duration = 2 * time.Second
	}
	if opt.Expect <= 0 {
		opt.Expect = 2
	}
	if opt.TCP {
		opt.Expect = 1
	}
	res := &CheckResult{Expect: opt.Expect, Duration: opt.Duration}
	// The listener takes every address of the server: MP_JOINs arrive at
	// the other addresses the server announced, and a listener bound to
	// the first address would never see them.
	var ln net.Listener
	err := do(server, func() (err error) {
		lc := net.ListenConfig{Control: CCControl(opt.CC)}
		lc.SetMultipathTCP(!opt.TCP)
		ln, err = lc.Listen(ctx, "tcp", fmt.Sprintf(":%d", opt.Port))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("listen in the server node: %w", err)
	}
	defer ln.Close()
	dst := netip.AddrPortFrom(opt.Server, uint16(ln.Addr().(*net.TCPAddr).Port))
	var received atomic.Uint64
	srvDone := make(chan error, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			srvDone <- err
			return
		}
		defer c.Close()
		buf := make([]byte, 256<<10)
		for {
			n, err := c.Read(buf)
			received.Add(uint64(n))
			if err == io.EOF {
				srvDone <- nil
				return
			}
			if err != nil {
				srvDone <- err
				return
			}
		}
	}()
	var conn net.Conn
	err = do(client, func() (err error) {
		d := net.Dialer{Control: CCControl(opt.CC), Timeout: 5 * time.Second}
		d.SetMultipathTCP(!opt.TCP)
		conn, err = d.DialContext(ctx, "tcp", dst.String())
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("connect from the client node to %s: %w", dst, err)
	}
	defer conn.Close()
	tc := conn.(*net.TCPConn)
	res.Local = tc.LocalAddr().(*net.TCPAddr).AddrPort()
	res.Remote = tc.RemoteAddr().(*net.TCPAddr).AddrPort()
	if res.CC, err = ConnCC(tc); err != nil {
		return nil, err
	}
	mp, _ := tc.MultipathTCP()
	res.MPTCP = mp

	start := time.Now()
	deadline := start.Add(opt.Duration)
	tc.SetWriteDeadline(deadline)
	wrDone := make(chan error, 1)
	go func() {
		buf := make([]byte, 64<<10)
		for {
			if _, err := tc.Write(buf); err != nil {
				if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, net.ErrClosed) || isTimeout(err) {
					err = nil
				}
				wrDone <- err
				return
			}
		}
	}()
	var last []Subflow
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var wrErr error
loop:
	for {
		select {
		case wrErr = <-wrDone:
			break loop
		case <-ctx.Done():
			tc.SetWriteDeadline(time.Now())
			wrErr = <-wrDone
			if wrErr == nil {
				wrErr = ctx.Err()
			}
			break loop
		case <-tick.C:
			if mp {
				if sfs, err := subflows(tc); err == nil {
					last = sfs
					res.MaxSubflows = max(res.MaxSubflows, established(sfs))
				}
			}
		}
	}
	res.Duration = time.Since(start)
	res.Bytes = received.Load() // what arrived within Duration
	if mp {
		if sfs, err := subflows(tc); err == nil { // the final counters
			last = sfs
			res.MaxSubflows = max(res.MaxSubflows, established(sfs))
		}
	} else {
		res.MaxSubflows = 1
	}
	tc.CloseWrite()
	select {
	case err := <-srvDone:
		if err != nil && wrErr == nil {
			wrErr = fmt.Errorf("server: %w", err)
		}
	case <-time.After(10 * time.Second):
		if wrErr == nil {
			wrErr = errors.New("server did not see the end of the stream within 10 s")
		}
	}
	res.Goodput = float64(res.Bytes) * 8 / res.Duration.Seconds()
	if wrErr != nil {
		return res, fmt.Errorf("transfer: %w", wrErr)
	}
	if err := nameInterfaces(client, last); err != nil {
		return res, err
	}
	res.Subflows = last
	switch {
	case !opt.TCP && !mp:
		return res, fmt.Errorf("%w: %v (is MPTCP enabled in both nodes? net.mptcp.enabled)", ErrCheckFailed, sockinfo.ErrFallback)
	case res.MaxSubflows < opt.Expect:
		return res, fmt.Errorf("%w: %d of %d expected subflows came up (%s)", ErrCheckFailed, res.MaxSubflows, opt.Expect, paths(last))
	}
	return res, nil
}

// tcpEstablished is TCP_ESTABLISHED, tcpi_state of a connected socket.
const tcpEstablished = 1

func established(sfs []Subflow) int {
	n := 0
	for _, s := range sfs {
		if s.Established {
			n++
		}
	}
	return n
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func subflows(c *net.TCPConn) ([]Subflow, error) {
	var sfs []sockinfo.Subflow
	// MPTCP_FULL_INFO on 6.5+, else MPTCP_TCPINFO with MPTCP_SUBFLOW_ADDRS
	// (5.17+, e.g. Debian 12's 6.1)
	err := sockinfo.WithFD(c, func(fd int) (err error) { _, sfs, err = sockinfo.ReadSubflows(fd); return err })
	var out []Subflow
	for i := range sfs {
		ti := &sfs[i].TCPInfo
		out = append(out, Subflow{
			ID: sfs[i].ID, Local: sfs[i].Local, Remote: sfs[i].Remote,
			BytesAcked: ti.Bytes_acked, BytesRetrans: ti.Bytes_retrans,
			Established: ti.State == tcpEstablished,
			RTT:         time.Duration(ti.Rtt) * time.Microsecond, Cwnd: ti.Snd_cwnd,
		})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, err
}

// nameInterfaces fills Subflow.Interface from the client's addresses.
func nameInterfaces(ns netns.NsHandle, sfs []Subflow) error {
	if len(sfs) == 0 {
		return nil
	}
	h, err := netlink.NewHandleAt(ns, unix.NETLINK_ROUTE)
	if err != nil {
		return err
	}
	defer h.Close()
	addrs, err := h.AddrList(nil, netlink.FAMILY_ALL)
	if err != nil && !errors.Is(err, netlink.ErrDumpInterrupted) {
		return err
	}
	byAddr := map[netip.Addr]int{}
	for _, a := range addrs {
		if ip, ok := netip.AddrFromSlice(a.IP); ok {
			byAddr[ip.Unmap()] = a.LinkIndex
		}
	}
	for i := range sfs {
		if idx, ok := byAddr[sfs[i].Local.Addr()]; ok {
			if l, err := h.LinkByIndex(idx); err == nil {
				sfs[i].Interface = l.Attrs().Name
			}
		}
	}
	return nil
}

func paths(sfs []Subflow) string {
	if len(sfs) == 0 {
		return "no subflow information"
	}
	var p []string
	for _, s := range sfs {
		state := "established"
		if !s.Established {
			state = "not established"
		}
		p = append(p, fmt.Sprintf("%s via %s -> %s %s", s.Local, s.Interface, s.Remote, state))
	}
	return strings.Join(p, ", ")
}
