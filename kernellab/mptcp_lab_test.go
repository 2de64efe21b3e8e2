package kernellab

import (
	"context"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/emuctl/emuctl/internal/mptcppm"
	"github.com/emuctl/emuctl/internal/sockinfo"
	"golang.org/x/sys/unix"
)

// TestLabMPTCPTwoSubflows: client and server namespaces joined by two veth
// pairs; the path manager (configured over generic netlink) opens a second
// subflow over the second pair under a Go MPTCP connection.
func TestLabMPTCPTwoSubflows(t *testing.T) {
	RequireLab(t, "checks the lab kernel's MPTCP")
	c, s := newNS(t, "mptcp-c"), newNS(t, "mptcp-s")
	for i := 1; i <= 2; i++ {
		veth(t, c, fmt.Sprintf("eth%d", i), s, fmt.Sprintf("eth%d", i))
		c.addr(t, fmt.Sprintf("eth%d", i), fmt.Sprintf("10.74.%d.1/24", i))
		s.addr(t, fmt.Sprintf("eth%d", i), fmt.Sprintf("10.74.%d.2/24", i))
	}
	var enabled []byte
	_ = c.Do(func() (err error) { enabled, err = os.ReadFile("/proc/sys/net/mptcp/enabled"); return err })
	Require(t, "MPTCP (net.mptcp.enabled=1)", strings.TrimSpace(string(enabled)) == "1", "net.mptcp.enabled="+string(enabled))

	// Both ends accept 2 subflows; the client opens one from its second
	// address (an endpoint with the subflow flag, bound to eth2).
	for _, ns := range []*testNS{c, s} {
		pm, err := mptcppm.Dial(ns.H)
		Require(t, "mptcp_pm generic netlink", err == nil, errString(err))
		if err := pm.SetLimits(2, 2); err != nil {
			t.Fatalf("%s: set limits: %v", ns.Name, err)
		}
		if ns == c {
			ep := mptcppm.Endpoint{ID: 2, Addr: net.ParseIP("10.74.2.1"), Flags: mptcppm.FlagSubflow,
				IfIndex: int32(c.link(t, "eth2").Attrs().Index)}
			if err := pm.AddEndpoint(ep); err != nil {
				t.Fatalf("%s: add endpoint: %v", ns.Name, err)
			}
		}
		if sf, aa, err := pm.Limits(); err != nil || sf != 2 || aa != 2 {
			t.Fatalf("%s: limits read back: subflows=%d add_addr_accepted=%d err=%v", ns.Name, sf, aa, err)
		}
		pm.Close()
	}

	const addr = "10.74.1.2:5002"
	var ln net.Listener
	if err := s.Do(func() (err error) {
		var lc net.ListenConfig
		lc.SetMultipathTCP(true)
		ln, err = lc.Listen(context.Background(), "tcp", addr)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	received := make(chan int64, 1)
	serverMPTCP := make(chan bool, 1)
	go func() {
		conn, err := ln.Accept()
		if err != nil {
			received <- -1
			return
		}
		defer conn.Close()
		mp, _ := conn.(*net.TCPConn).MultipathTCP()
		serverMPTCP <- mp
		n, _ := io.Copy(io.Discard, conn)
		received <- n
	}()

	var conn *net.TCPConn
	if err := c.Do(func() error {
		var d net.Dialer
		d.SetMultipathTCP(true)
		nc, err := d.Dial("tcp", addr)
		if err == nil {
			conn = nc.(*net.TCPConn)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if mp, err := conn.MultipathTCP(); !mp {
		t.Fatalf("client connection fell back to TCP (%v)", err)
	}

	// Keep data flowing while the second subflow joins.
	var sent atomic.Int64
	stop := make(chan struct{})
	sendDone := make(chan error, 1)
	go func() {
		buf := make([]byte, 64<<10)
		for {
			select {
			case <-stop:
				sendDone <- nil
				return
			default:
			}
			n, err := conn.Write(buf)
			sent.Add(int64(n))
			if err != nil {
				sendDone <- err
				return
			}
		}
	}()
	rc, err := conn.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	var info *sockinfo.MPTCPInfo
	took := waitFor(t, 30*time.Second, "a second subflow (MPTCP_INFO)", func() (bool, error) {
		var err error
		if cerr := rc.Control(func(fd uintptr) { info, err = sockinfo.ReadInfo(int(fd)) }); cerr != nil {
			return false, cerr
		}
		return err == nil && info.Subflows >= 1, err
	})
	subflows := subflowSources(t, c, addr)
	// MPTCP_FULL_INFO on 6.5+, MPTCP_INFO + MPTCP_TCPINFO before.
	var sfs []sockinfo.Subflow
	var sfErr error
	if err := rc.Control(func(fd uintptr) { _, sfs, sfErr = sockinfo.ReadSubflows(int(fd)) }); err != nil {
		sfErr = err
	}
	close(stop)
	if err := <-sendDone; err != nil {
		t.Fatalf("send: %v", err)
	}
	conn.CloseWrite()
	var got int64
	select {
	case got = <-received:
	case <-time.After(30 * time.Second):
		t.Fatal("server did not see the end of the stream")
	}
	t.Logf("second subflow after %v; MPTCP_INFO subflows=%d (extra) subflows_max=%d flags=%#x; subflow sources %v; %d bytes sent, %d received",
		took.Round(time.Millisecond), info.Subflows, info.SubflowsMax, info.Flags, subflows, sent.Load(), got)

	if !<-serverMPTCP {
		t.Errorf("server side fell back to TCP")
	}
	if info.Subflows != 1 {
		t.Errorf("MPTCP_INFO: %d extra subflows, want 1 (2 in total)", info.Subflows)
	}
	if len(subflows) != 2 || !strings.Contains(strings.Join(subflows, " "), "10.74.2.1") {
		t.Errorf("inet_diag: subflows from %v, want one from 10.74.1.1 and one from 10.74.2.1", subflows)
	}
	if sfErr != nil || len(sfs) != 2 {
		t.Errorf("sockinfo.ReadSubflows: %d subflows, want 2 (%v)", len(sfs), sfErr)
	} else {
		for _, sf := range sfs {
			t.Logf("subflow %d (identities %v: %v -> %v): state %d, rtt %d us, %d bytes acked",
				sf.ID, sf.HaveIdentities, sf.Local, sf.Remote, sf.TCPInfo.State, sf.TCPInfo.Rtt, sf.TCPInfo.Bytes_acked)
		}
	}
	if got != sent.Load() || got == 0 {
		t.Errorf("received %d bytes, sent %d", got, sent.Load())
	}
}

// subflowSources lists the local addresses of the TCP sockets in ns that
// talk to dst: MPTCP subflows appear in inet_diag as plain TCP sockets.
func subflowSources(t *testing.T, ns *testNS, dst string) []string {
	t.Helper()
	socks, err := ns.NL.SocketDiagTCPInfo(unix.AF_INET)
	if err != nil {
		t.Fatalf("inet_diag in %s: %v", ns.Name, err)
	}
	var out []string
	for _, s := range socks {
		id := s.InetDiagMsg.ID
		if net.JoinHostPort(id.Destination.String(), fmt.Sprint(id.DestinationPort)) == dst {
			out = append(out, id.Source.String())
		}
	}
	return out
}
