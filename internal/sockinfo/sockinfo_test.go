package sockinfo

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// tcpInfo61 is sizeof(struct tcp_info) on Linux 6.1 (it ends with
// tcpi_snd_wnd), smaller than x/sys's unix.TCPInfo.
const tcpInfo61 = 232

var ne = binary.NativeEndian

// TestLayout checks the Go mirrors against the offsets of
// include/uapi/linux/mptcp.h.
func TestLayout(t *testing.T) {
	var mi MPTCPInfo
	var fi fullInfo
	var si subflowInfo
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"sizeof mptcp_info", unsafe.Sizeof(mi), 96},
		{"mptcpi_add_addr_accepted_max", unsafe.Offsetof(mi.AddAddrAcceptedMax), 5},
		{"mptcpi_flags", unsafe.Offsetof(mi.Flags), 8},
		{"mptcpi_token", unsafe.Offsetof(mi.Token), 12},
		{"mptcpi_write_seq", unsafe.Offsetof(mi.WriteSeq), 16},
		{"mptcpi_rcv_nxt", unsafe.Offsetof(mi.RcvNxt), 32},
		{"mptcpi_local_addr_used", unsafe.Offsetof(mi.LocalAddrUsed), 40},
		{"mptcpi_csum_enabled", unsafe.Offsetof(mi.CsumEnabled), 42},
		{"mptcpi_retransmits", unsafe.Offsetof(mi.Retransmits), 44},
		{"mptcpi_bytes_retrans", unsafe.Offsetof(mi.BytesRetrans), 48},
		{"mptcpi_bytes_acked", unsafe.Offsetof(mi.BytesAcked), 72},
		{"mptcpi_subflows_total", unsafe.Offsetof(mi.SubflowsTotal), 80},
		{"mptcpi_last_data_sent", unsafe.Offsetof(mi.LastDataSent), 84},
		{"mptcpi_last_ack_recv", unsafe.Offsetof(mi.LastAckRecv), 92},
		{"sizeof mptcp_subflow_info", unsafe.Sizeof(si), 264},
		{"mptcp_subflow_info.addrs", unsafe.Offsetof(si.Local), 8},
		{"remote sockaddr_storage", unsafe.Offsetof(si.Remote), 136},
		{"mptcp_full_info.num_subflows", unsafe.Offsetof(fi.NumSubflows), 16},
		{"mptcp_full_info.subflow_info", unsafe.Offsetof(fi.SubflowInfo), 24},
		{"mptcp_full_info.tcp_info", unsafe.Offsetof(fi.TCPInfo), 32},
		{"mptcp_full_info.mptcp_info", unsafe.Offsetof(fi.Info), 40}, // MIN_FULL_INFO_OPTLEN_SIZE
	} {
		if c.got != c.want {
			t.Errorf("%s: %d, want %d", c.name, c.got, c.want)
		}
	}
}

// infoBytes is a 6.10+ mptcp_info laid out by hand.
func infoBytes() []byte {
	b := make([]byte, 96)
	b[0], b[3] = 1, 8 // subflows, subflows_max
	ne.PutUint32(b[8:], 2)
	ne.PutUint32(b[12:], 0xdeadbeef)
	ne.PutUint64(b[16:], 1000)
	b[42] = 1
	ne.PutUint32(b[44:], 3)
	ne.PutUint64(b[48:], 4)
	ne.PutUint64(b[56:], 160)
	ne.PutUint64(b[64:], 7)
	ne.PutUint64(b[72:], 150)
	b[80] = 2
	ne.PutUint32(b[84:], 11)
	ne.PutUint32(b[92:], 13)
	return b
}

func TestDecodeInfo(t *testing.T) {
	full := infoBytes()
	mi := decodeInfo(full)
	if mi.Subflows != 1 || mi.SubflowsMax != 8 || mi.Flags != 2 || mi.Token != 0xdeadbeef || mi.WriteSeq != 1000 ||
		mi.CsumEnabled != 1 || mi.Retransmits != 3 || mi.BytesRetrans != 4 || mi.BytesSent != 160 ||
		mi.BytesReceived != 7 || mi.BytesAcked != 150 || mi.SubflowsTotal != 2 || mi.LastDataSent != 11 || mi.LastAckRecv != 13 {
		t.Errorf("6.10 layout: %+v", mi)
	}
	// A 5.16 kernel's mptcp_info ends after mptcpi_csum_enabled (padded
	// to 48 bytes): the later fields stay zero.
	old := decodeInfo(full[:48])
	if old.Subflows != 1 || old.Flags != 2 || old.Retransmits != 3 || old.BytesSent != 0 || old.BytesAcked != 0 || old.LastAckRecv != 0 {
		t.Errorf("5.16 prefix: %+v", old)
	}
	// A future kernel's longer struct: the tail is ignored.
	if got := decodeInfo(append(full, make([]byte, 32)...)); got != mi {
		t.Errorf("longer struct: %+v, want %+v", got, mi)
	}
}

func sockaddr4(ip [4]byte, port uint16) (b [128]byte) {
	ne.PutUint16(b[0:], unix.AF_INET)
	binary.BigEndian.PutUint16(b[2:], port)
	copy(b[4:], ip[:])
	return b
}

func sockaddr6(ip [16]byte, port uint16) (b [128]byte) {
	ne.PutUint16(b[0:], unix.AF_INET6)
	binary.BigEndian.PutUint16(b[2:], port)
	copy(b[8:], ip[:])
	return b
}

func TestSockaddr(t *testing.T) {
	for _, c := range []struct {
		b    [128]byte
		want string
	}{
		{sockaddr4([4]byte{10, 74, 2, 1}, 5002), "10.74.2.1:5002"},
		{sockaddr6(netip.MustParseAddr("fd00::1").As16(), 443), "[fd00::1]:443"},
		{sockaddr6(netip.MustParseAddr("::ffff:192.0.2.7").As16(), 80), "192.0.2.7:80"}, // v4-mapped: unmapped
		{[128]byte{}, "invalid AddrPort"},
	} {
		if got := sockaddr(c.b).String(); got != c.want {
			t.Errorf("sockaddr: %s, want %s", got, c.want)
		}
	}
}

// putTCPInfo writes the fields the tests look at into a tcp_info of any
// size at b.
func putTCPInfo(b []byte, state uint8, rtt, cwnd uint32, acked uint64) {
	var ti unix.TCPInfo
	b[unsafe.Offsetof(ti.State)] = state
	ne.PutUint32(b[unsafe.Offsetof(ti.Rtt):], rtt)
	ne.PutUint32(b[unsafe.Offsetof(ti.Snd_cwnd):], cwnd)
	ne.PutUint64(b[unsafe.Offsetof(ti.Bytes_acked):], acked)
}

func TestDecodeSubflowData(t *testing.T) {
	// A 6.1 kernel's answer: 3 subflows, room (by length) for 2, each
	// tcp_info 232 bytes.
	b := make([]byte, subflowDataLen+2*tcpInfo61)
	ne.PutUint32(b[0:], subflowDataLen)
	ne.PutUint32(b[4:], 3)
	ne.PutUint32(b[8:], tcpInfo61)
	ne.PutUint32(b[12:], tcpInfo61)
	putTCPInfo(b[subflowDataLen:], 1, 500, 10, 100)
	b[subflowDataLen+6], b[subflowDataLen+7] = 9<<4|7, 1 // rcv_wscale 9, snd_wscale 7; app-limited
	putTCPInfo(b[subflowDataLen+tcpInfo61:], 1, 200, 20, 50)
	b[subflowDataLen+tcpInfo61+7] = 2 << 1 // fastopen_client_fail only
	tis, err := decodeSubflowData(b)
	if err != nil {
		t.Fatal(err)
	}
	if len(tis) != 2 || tis[0].TCPInfo.Rtt != 500 || tis[0].TCPInfo.Snd_cwnd != 10 || tis[0].TCPInfo.Bytes_acked != 100 ||
		tis[1].TCPInfo.State != 1 || tis[1].TCPInfo.Rtt != 200 || tis[1].TCPInfo.Snd_cwnd != 20 ||
		tis[1].TCPInfo.Bytes_acked != 50 || tis[1].TCPInfo.Rcv_wnd != 0 || tis[1].ID != 2 || tis[1].HaveIdentities {
		t.Errorf("%d tcp_info: %+v", len(tis), tis)
	}
	if !bigEndian && (!tis[0].Flags.AppLimited || tis[1].Flags.AppLimited || tis[0].Flags.SndWscale != 7 || tis[0].Flags.RcvWscale != 9) {
		t.Errorf("bit fields: %+v, %+v", tis[0].Flags, tis[1].Flags)
	}
	// num_subflows bounds the count too.
	ne.PutUint32(b[4:], 1)
	if tis, err := decodeSubflowData(b); err != nil || len(tis) != 1 {
		t.Errorf("num_subflows 1: %d, %v", len(tis), err)
	}
	// No subflow copied: only the header comes back.
	if tis, err := decodeSubflowData(b[:subflowDataLen]); err != nil || len(tis) != 0 {
		t.Errorf("header only: %d, %v", len(tis), err)
	}
	if _, err := decodeSubflowData(b[:8]); err == nil {
		t.Error("short answer: no error")
	}
	ne.PutUint32(b[12:], 0)
	if _, err := decodeSubflowData(b); err == nil {
		t.Error("size_user 0: no error")
	}
}

func TestFullInfoSubflows(t *testing.T) {
	// The kernel wrote at its own (smaller) tcp_info stride, had 3
	// subflows and room for 2.
	sfBuf := make([]byte, 2*sizeofSubflowInfo)
	tcBuf := make([]byte, 2*sizeofTCPInfo)
	for i, sa := range []struct{ l, r [128]byte }{
		{sockaddr4([4]byte{10, 74, 1, 1}, 40000), sockaddr4([4]byte{10, 74, 1, 2}, 5002)},
		{sockaddr4([4]byte{10, 74, 2, 1}, 40001), sockaddr4([4]byte{10, 74, 1, 2}, 5002)},
	} {
		si := subflowInfo{ID: uint32(i + 1), Local: sa.l, Remote: sa.r}
		copy(sfBuf[i*sizeofSubflowInfo:], bytesOf(&si))
		putTCPInfo(tcBuf[i*tcpInfo61:], 1, uint32(100*(i+1)), uint32(10*(i+1)), uint64(1000*(i+1)))
	}
	fi := fullInfo{SizeTCPInfoKernel: tcpInfo61, SizeTCPInfoUser: tcpInfo61,
		SizeSfInfoKernel: uint32(sizeofSubflowInfo), SizeSfInfoUser: uint32(sizeofSubflowInfo),
		NumSubflows: 3, SizeArraysUser: 2}
	sfs := fi.subflows(sfBuf, tcBuf)
	if len(sfs) != 2 {
		t.Fatalf("%d subflows, want 2", len(sfs))
	}
	for i, sf := range sfs {
		n := uint32(i + 1)
		if sf.ID != n || !sf.HaveIdentities || sf.TCPInfo.Rtt != 100*n || sf.TCPInfo.Snd_cwnd != 10*n ||
			sf.TCPInfo.Bytes_acked != uint64(1000*n) || sf.TCPInfo.State != 1 || sf.Remote.String() != "10.74.1.2:5002" {
			t.Errorf("subflow %d: id %d %v -> %v %+v", i, sf.ID, sf.Local, sf.Remote, sf.TCPInfo)
		}
	}
	if sfs[1].Local.String() != "10.74.2.1:40001" {
		t.Errorf("subflow 1 local %v", sfs[1].Local)
	}
	// Buffers shorter than the kernel's count: no reading past them.
	if got := fi.subflows(sfBuf[:sizeofSubflowInfo], tcBuf); len(got) != 1 {
		t.Errorf("one subflow_info of room: %d subflows", len(got))
	}
	// No subflow_info written: tcp_info only, without identities.
	fi.SizeSfInfoUser = 0
	if got := fi.subflows(nil, tcBuf); len(got) != 2 || got[1].HaveIdentities || got[1].ID != 2 || got[1].TCPInfo.Rtt != 200 {
		t.Errorf("without subflow_info: %+v", got)
	}
}

func TestMapFallback(t *testing.T) {
	for _, c := range []struct{ in, want error }{
		{unix.EOPNOTSUPP, ErrFallback},
		{unix.ENOPROTOOPT, ErrFallback},
		{unix.EINVAL, unix.EINVAL},
		{nil, nil},
	} {
		if got := mapFallback(c.in); !errors.Is(got, c.want) || (c.want == nil) != (got == nil) {
			t.Errorf("mapFallback(%v) = %v, want %v", c.in, got, c.want)
		}
	}
}

// TestLoopback reads a real MPTCP connection over loopback in the test's
// own namespace (skipped where MPTCP is off), and a plain TCP one.
func TestLoopback(t *testing.T) {
	// dial connects over loopback and runs fn on the client socket.
	dial := func(t *testing.T, mptcp bool, fn func(c *net.TCPConn, fd int)) {
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
		defer func() {
			nc.Close()
			if s := <-accepted; s != nil {
				s.Close()
			}
		}()
		c := nc.(*net.TCPConn)
		if mp, _ := c.MultipathTCP(); mp != mptcp {
			t.Skipf("MultipathTCP() = %v (net.mptcp.enabled=0?)", mp)
		}
		rc, err := c.SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		if err := rc.Control(func(fd uintptr) { fn(c, int(fd)) }); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("mptcp", func(t *testing.T) {
		dial(t, true, func(c *net.TCPConn, fd int) {
			mi, err := ReadInfo(fd)
			if err != nil {
				t.Fatalf("MPTCP_INFO: %v", err)
			}
			if mi.Flags&1 != 0 {
				t.Errorf("MPTCP_INFO flags %#x: fell back", mi.Flags)
			}
			if _, _, err := ReadFullInfo(fd); err != nil {
				t.Logf("MPTCP_FULL_INFO: %v (a kernel before 6.5: ReadSubflows falls back to MPTCP_INFO + MPTCP_TCPINFO)", err)
			}
			mi, sfs, err := ReadSubflows(fd)
			if err != nil || mi == nil || len(sfs) != 1 {
				t.Fatalf("ReadSubflows: %v, %d subflows, %v", mi, len(sfs), err)
			}
			sf := sfs[0]
			if want := c.LocalAddr().(*net.TCPAddr).AddrPort(); sf.HaveIdentities && sf.Local != want {
				t.Errorf("subflow local %v, want %v", sf.Local, want)
			}
			if sf.TCPInfo.State != 1 || sf.TCPInfo.Snd_mss == 0 {
				t.Errorf("subflow tcp_info: state %d mss %d", sf.TCPInfo.State, sf.TCPInfo.Snd_mss)
			}
			// The pre-6.5 path, whatever this kernel is.
			if tis, err := readSubflowData(fd); err != nil || len(tis) != 1 || tis[0].TCPInfo.Snd_mss != sf.TCPInfo.Snd_mss {
				t.Errorf("MPTCP_TCPINFO: %d, %v", len(tis), err)
			}
			t.Logf("identities %v: %v -> %v, rtt %d us", sf.HaveIdentities, sf.Local, sf.Remote, sf.TCPInfo.Rtt)
		})
	})
	t.Run("tcp", func(t *testing.T) {
		dial(t, false, func(_ *net.TCPConn, fd int) {
			if _, err := ReadInfo(fd); !errors.Is(err, ErrFallback) {
				t.Errorf("MPTCP_INFO on plain TCP: %v, want ErrFallback", err)
			}
			if _, _, err := ReadFullInfo(fd); !errors.Is(err, ErrFallback) {
				t.Errorf("MPTCP_FULL_INFO on plain TCP: %v, want ErrFallback", err)
			}
			if mi, sfs, err := ReadSubflows(fd); !errors.Is(err, ErrFallback) || mi != nil || sfs != nil {
				t.Errorf("ReadSubflows on plain TCP: %v %v %v, want ErrFallback", mi, sfs, err)
			}
		})
	})
}
