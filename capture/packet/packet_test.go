package packet

import (
	"encoding/binary"
	"net/netip"
	"testing"
)

var (
	a = netip.MustParseAddrPort("10.0.0.1:40000")
	b = netip.MustParseAddrPort("10.0.0.2:5201")
)

func TestDecodeTCPv4(t *testing.T) {
	f := TCPFrame(a, b, FlagACK|FlagPSH, 7, 9, TimestampOption, 1448)
	var in Info
	if !Decode(1, f, len(f), &in) || !in.Transport {
		t.Fatal("not decoded")
	}
	if in.Proto != ProtoTCP || in.Src != a.Addr() || in.Dst != b.Addr() || in.SrcPort != 40000 || in.DstPort != 5201 ||
		in.Seq != 7 || in.Ack != 9 || in.Flags != FlagACK|FlagPSH || in.Payload != 1448 || len(in.Options) != 12 {
		t.Fatalf("%+v", in)
	}
	// Truncated to 80 bytes (a snaplen): payload still from the IP length.
	if !Decode(1, f[:80], len(f), &in) || in.Payload != 1448 {
		t.Fatalf("truncated: %+v", in)
	}
	// A GSO super-packet whose IPv4 total length is 0.
	g := TCPFrame(a, b, FlagACK, 0, 0, nil, 60000)
	binary.BigEndian.PutUint16(g[16:], 0)
	if !Decode(1, g[:100], len(g), &in) || in.Payload != 60000 {
		t.Fatalf("gso: %+v", in)
	}
	// SYN options.
	s := TCPFrame(a, b, FlagSYN, 0, 0, SYNOptions(1460), 0)
	Decode(1, s, len(s), &in)
	if m, ok := TCPOptionMSS(in.Options); !ok || m != 1460 || !TCPOptionTimestamps(in.Options) {
		t.Fatalf("syn options: %d %v %v", m, ok, TCPOptionTimestamps(in.Options))
	}
}

func TestDecodeVLANAndSLL(t *testing.T) {
	f := TCPFrame(a, b, FlagACK, 1, 2, nil, 0)
	// 802.1Q tag between the MACs and the EtherType.
	v := append(append(append([]byte{}, f[:12]...), 0x81, 0x00, 0x00, 0x05), f[12:]...)
	var in Info
	if !Decode(1, v, len(v), &in) || in.DstPort != 5201 {
		t.Fatalf("vlan: %+v", in)
	}
	// Linux cooked (SLL): 16-byte header, protocol at 14.
	sll := append(make([]byte, 14), 0x08, 0x00)
	sll = append(sll, f[14:]...)
	if !Decode(113, sll, len(sll), &in) || in.SrcPort != 40000 {
		t.Fatalf("sll: %+v", in)
	}
	// Raw IP.
	if !Decode(101, f[14:], len(f)-14, &in) || in.SrcPort != 40000 {
		t.Fatalf("raw: %+v", in)
	}
	// ARP is not IP.
	arp := append(make([]byte, 12), 0x08, 0x06, 0, 1)
	if Decode(1, arp, len(arp), &in) {
		t.Fatal("arp decoded as IP")
	}
}

func TestDecodeIPv6UDP(t *testing.T) {
	p := make([]byte, 14+40+8+8+100)
	binary.BigEndian.PutUint16(p[12:], 0x86dd)
	ip := p[14:]
	ip[0] = 0x60
	binary.BigEndian.PutUint16(ip[4:], 8+8+100)
	ip[6] = 60 // destination options, then UDP
	src, dst := netip.MustParseAddr("fd00::1"), netip.MustParseAddr("fd00::2")
	s16, d16 := src.As16(), dst.As16()
	copy(ip[8:], s16[:])
	copy(ip[24:], d16[:])
	ip[40] = ProtoUDP // next header of the options header, length 0 → 8 bytes
	u := ip[48:]
	binary.BigEndian.PutUint16(u, 1234)
	binary.BigEndian.PutUint16(u[2:], 53)
	var in Info
	if !Decode(1, p, len(p), &in) || in.Proto != ProtoUDP || in.Src != src || in.DstPort != 53 || in.Payload != 100 {
		t.Fatalf("%+v", in)
	}
	f, _ := ParseFilter("udp and port 53 and host fd00::2")
	if !f.Match(&in, true) {
		t.Fatal("filter should match")
	}
}

func TestFilter(t *testing.T) {
	f := TCPFrame(a, b, FlagACK, 1, 2, nil, 10)
	var in Info
	ok := Decode(1, f, len(f), &in)
	for expr, want := range map[string]bool{
		"":                                   true,
		"tcp":                                true,
		"udp":                                false,
		"port 5201":                          true,
		"tcp and port 80":                    false,
		"port 80 port 40000":                 true,
		"host 10.0.0.2":                      true,
		"host 10.0.0.3":                      false,
		"tcp && port 5201 and host 10.0.0.1": true,
	} {
		flt, err := ParseFilter(expr)
		if err != nil {
			t.Fatalf("%q: %v", expr, err)
		}
		if got := flt.Match(&in, ok); got != want {
			t.Errorf("%q: match %v, want %v", expr, got, want)
		}
	}
	for _, bad := range []string{"tcp or udp", "port", "port 70000", "host foo", "tcp and udp"} {
		if _, err := ParseFilter(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	empty, _ := ParseFilter("")
	if !empty.Match(nil, false) {
		t.Error("empty filter must match non-IP packets")
	}
	tcp, _ := ParseFilter("tcp")
	if tcp.Match(&Info{}, false) {
		t.Error("non-IP packet matched tcp")
	}
}

func BenchmarkDecode(b *testing.B) {
	f := TCPFrame(a, netip.MustParseAddrPort("10.0.0.2:5201"), FlagACK, 1, 2, TimestampOption, 1448)
	var in Info
	for i := 0; i < b.N; i++ {
		Decode(1, f, len(f), &in)
	}
}
