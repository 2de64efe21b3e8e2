package sockinfo

import (
	"context"
	"net"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestTCPInfoLayout checks x/sys's unix.TCPInfo against the offsets of
// struct tcp_info in include/uapi/linux/tcp.h (Linux 6.x): the fields
// the limited-by diagnosis reads, and the bit fields at bytes 6 and 7
// that unix.TCPInfo leaves as padding.
func TestTCPInfoLayout(t *testing.T) {
	var ti unix.TCPInfo
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"tcpi_options", unsafe.Offsetof(ti.Options), 5},
		{"tcpi_rto (after the two bit-field bytes)", unsafe.Offsetof(ti.Rto), 8},
		{"tcpi_snd_cwnd", unsafe.Offsetof(ti.Snd_cwnd), 80},
		{"tcpi_pacing_rate", unsafe.Offsetof(ti.Pacing_rate), 104},
		{"tcpi_bytes_acked", unsafe.Offsetof(ti.Bytes_acked), 120},
		{"tcpi_notsent_bytes", unsafe.Offsetof(ti.Notsent_bytes), 144},
		{"tcpi_min_rtt", unsafe.Offsetof(ti.Min_rtt), 148},
		{"tcpi_delivery_rate", unsafe.Offsetof(ti.Delivery_rate), 160},
		{"tcpi_busy_time", unsafe.Offsetof(ti.Busy_time), 168},
		{"tcpi_rwnd_limited", unsafe.Offsetof(ti.Rwnd_limited), 176},
		{"tcpi_sndbuf_limited", unsafe.Offsetof(ti.Sndbuf_limited), 184},
		{"tcpi_delivered", unsafe.Offsetof(ti.Delivered), 192},
		{"tcpi_bytes_sent", unsafe.Offsetof(ti.Bytes_sent), 200},
		{"tcpi_snd_wnd", unsafe.Offsetof(ti.Snd_wnd), 228},
	} {
		if c.got != c.want {
			t.Errorf("%s at %d, want %d", c.name, c.got, c.want)
		}
	}
}

func TestDecodeTCPFlags(t *testing.T) {
	if bigEndian {
		t.Skip("the hand-made bytes are little-endian bit fields")
	}
	b := make([]byte, 16)
	b[6] = 8<<4 | 7 // rcv_wscale 8, snd_wscale 7
	b[7] = 1 | 1<<1 // app-limited, fastopen_client_fail 1
	if got := decodeTCPFlags(b); got != (TCPFlags{SndWscale: 7, RcvWscale: 8, AppLimited: true}) {
		t.Errorf("decodeTCPFlags = %+v", got)
	}
	b[7] = 3 << 1 // fastopen_client_fail only
	if decodeTCPFlags(b).AppLimited {
		t.Error("fastopen_client_fail read as app-limited")
	}
	if decodeTCPFlags(b[:7]) != (TCPFlags{}) {
		t.Error("a 7-byte answer gave flags")
	}
}

// TestSendQueueLoopback fills a real connection whose receiver does not
// read (TCP, and MPTCP where the kernel has it): the send queue holds
// data the peer has not acknowledged, some of it unsent, within
// SO_SNDBUF; TCP_INFO's bit fields carry the window scales both ends
// agreed.
func TestSendQueueLoopback(t *testing.T) {
	for _, mptcp := range []bool{false, true} {
		name := map[bool]string{false: "tcp", true: "mptcp"}[mptcp]
		t.Run(name, func(t *testing.T) {
			var lc net.ListenConfig
			lc.SetMultipathTCP(mptcp)
			ln, err := lc.Listen(context.Background(), "tcp", "127.0.0.1:0")
			if err != nil {
				t.Skipf("listen: %v", err)
			}
			defer ln.Close()
			accepted := make(chan net.Conn, 1)
			go func() {
				c, _ := ln.Accept()
				accepted <- c
			}()
			var d net.Dialer
			d.SetMultipathTCP(mptcp)
			nc, err := d.Dial("tcp", ln.Addr().String())
			if err != nil {
				t.Fatal(err)
			}
			defer nc.Close()
			if s := <-accepted; s != nil {
				defer s.Close() // never read: the window fills
			}
			if mp, _ := nc.(*net.TCPConn).MultipathTCP(); mp != mptcp {
				t.Skipf("MultipathTCP() = %v (net.mptcp.enabled=0?)", mp)
			}
			rc, _ := nc.(*net.TCPConn).SyscallConn()
			var q SendQueue
			var flags TCPFlags
			var qerr, ierr error
			rc.Control(func(fd uintptr) {
				buf := make([]byte, 64<<10)
				deadline := time.Now().Add(5 * time.Second)
				for time.Now().Before(deadline) { // non-blocking writes until the buffer is full
					if _, err := unix.Write(int(fd), buf); err == unix.EAGAIN {
						break
					}
				}
				time.Sleep(50 * time.Millisecond)
				q, qerr = ReadSendQueue(int(fd))
				_, flags, ierr = ReadTCPInfo(int(fd))
			})
			if qerr != nil || ierr != nil {
				t.Fatalf("ReadSendQueue: %v; ReadTCPInfo: %v", qerr, ierr)
			}
			t.Logf("SO_SNDBUF %d, SIOCOUTQ %d, SIOCOUTQNSD %d, sk_wmem_queued %d; flags %+v", q.Size, q.Queued, q.Unsent, q.WmemQueued, flags)
			if q.Size <= 0 || q.Queued <= 0 || q.Unsent <= 0 || q.Unsent > q.Queued || q.Queued > q.Size {
				t.Errorf("send queue %+v: want 0 < unsent <= queued <= size", q)
			}
			// The writer stopped on a full buffer: the memory charged is
			// at least the payload and has reached the limit.
			if q.WmemQueued < q.Queued || q.WmemQueued < q.Size*2/3 {
				t.Errorf("sk_wmem_queued %d: want >= queued %d and >= 2/3 of SO_SNDBUF %d", q.WmemQueued, q.Queued, q.Size)
			}
			if flags.SndWscale == 0 || flags.RcvWscale == 0 {
				t.Errorf("window scales %+v: loopback connections scale their windows", flags)
			}
		})
	}
}
