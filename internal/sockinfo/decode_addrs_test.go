package sockinfo

import (
	"encoding/binary"
	"net/netip"
	"testing"

	"golang.org/x/sys/unix"
)

// An MPTCP_SUBFLOW_ADDRS answer as 6.1 writes it: header, then one
// local/remote sockaddr_storage pair per subflow (IPv4 and IPv6 here).
func TestDecodeSubflowAddrs(t *testing.T) {
	b := make([]byte, subflowDataLen+2*sizeofSubflowAddrs)
	binary.NativeEndian.PutUint32(b[0:], subflowDataLen)
	binary.NativeEndian.PutUint32(b[4:], 2)
	binary.NativeEndian.PutUint32(b[8:], sizeofSubflowAddrs)
	binary.NativeEndian.PutUint32(b[12:], sizeofSubflowAddrs)
	put4 := func(off int, a string, port uint16) {
		binary.NativeEndian.PutUint16(b[off:], unix.AF_INET)
		binary.BigEndian.PutUint16(b[off+2:], port)
		ip := netip.MustParseAddr(a).As4()
		copy(b[off+4:], ip[:])
	}
	put6 := func(off int, a string, port uint16) {
		binary.NativeEndian.PutUint16(b[off:], unix.AF_INET6)
		binary.BigEndian.PutUint16(b[off+2:], port)
		ip := netip.MustParseAddr(a).As16()
		copy(b[off+8:], ip[:])
	}
	put4(16, "10.0.1.2", 40000)
	put4(16+128, "10.0.3.2", 5201)
	put6(16+256, "fd00:2::2", 40001)
	put6(16+256+128, "fd00:3::2", 5201)
	got, err := decodeSubflowAddrs(b)
	if err != nil {
		t.Fatal(err)
	}
	want := [][2]string{{"10.0.1.2:40000", "10.0.3.2:5201"}, {"[fd00:2::2]:40001", "[fd00:3::2]:5201"}}
	if len(got) != 2 {
		t.Fatalf("got %d subflows", len(got))
	}
	for i := range want {
		if got[i][0].String() != want[i][0] || got[i][1].String() != want[i][1] {
			t.Errorf("subflow %d: %v, want %v", i, got[i], want[i])
		}
	}
	if _, err := decodeSubflowAddrs(b[:10]); err == nil {
		t.Error("short answer accepted")
	}
	// the kernel reports fewer subflows than the buffer holds
	binary.NativeEndian.PutUint32(b[4:], 1)
	if got, _ := decodeSubflowAddrs(b); len(got) != 1 {
		t.Errorf("num_subflows 1: got %d", len(got))
	}
}
