package pcapng

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

type pkt struct {
	ts      int64
	data    []byte
	origLen int
	flags   uint32
	ifi     int
}

func randomPackets(n int) []pkt {
	rng := rand.New(rand.NewSource(1))
	out := make([]pkt, n)
	ts := int64(1_700_000_000_123_456_789)
	for i := range out {
		ln := rng.Intn(1600)
		d := make([]byte, ln)
		rng.Read(d)
		ts += int64(rng.Intn(1_000_000))
		out[i] = pkt{ts: ts, data: d, origLen: ln + rng.Intn(3)*100, flags: uint32(rng.Intn(3)), ifi: i % 2}
	}
	return out
}

func TestRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w, err := NewWriter(&buf, "test")
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"eth0", "veth-with-a-long-name"} {
		if _, err := w.AddInterface(Interface{LinkType: LinkTypeEthernet, SnapLen: 2000, Name: name, Description: "the " + name + " link"}); err != nil {
			t.Fatal(err)
		}
	}
	in := randomPackets(500)
	for _, p := range in {
		if err := w.WritePacket(p.ifi, p.ts, p.data, p.origLen, p.flags); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if buf.Len()%4 != 0 {
		t.Fatalf("file length %d is not a multiple of 4", buf.Len())
	}
	r, err := NewReader(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range in {
		data, ci, err := r.Next()
		if err != nil {
			t.Fatalf("packet %d: %v", i, err)
		}
		if !bytes.Equal(data, want.data) || ci.TimestampNs != want.ts || ci.Length != max(want.origLen, len(want.data)) ||
			ci.CaptureLength != len(want.data) || ci.Flags != want.flags || ci.Interface != want.ifi {
			t.Fatalf("packet %d: got ts=%d len=%d/%d flags=%d if=%d, want ts=%d len=%d/%d flags=%d if=%d",
				i, ci.TimestampNs, ci.CaptureLength, ci.Length, ci.Flags, ci.Interface, want.ts, len(want.data), want.origLen, want.flags, want.ifi)
		}
	}
	if _, _, err := r.Next(); !errors.Is(err, io.EOF) {
		t.Fatalf("after last packet: %v, want io.EOF", err)
	}
	ifs := r.Interfaces()
	if len(ifs) != 2 || ifs[1].Name != "veth-with-a-long-name" || ifs[1].Description != "the veth-with-a-long-name link" ||
		ifs[0].SnapLen != 2000 || ifs[0].LinkType != LinkTypeEthernet {
		t.Fatalf("interfaces: %+v", ifs)
	}
}

// TestWritePacketParts: a packet written as two parts reads back as one,
// with the same bytes as WritePacket of the joined parts; neither writer
// allocates per packet.
func TestWritePacketParts(t *testing.T) {
	var a, b bytes.Buffer
	wa, _ := NewWriter(&a, "x")
	wb, _ := NewWriter(&b, "x")
	for _, w := range []*Writer{wa, wb} {
		w.AddInterface(Interface{LinkType: LinkTypeRadiotap, Name: "mon0"})
	}
	for i, p := range randomPackets(200) {
		cut := i % (len(p.data) + 1)
		if err := wa.WritePacketParts(0, p.ts, p.data[:cut], p.data[cut:], p.origLen, p.flags); err != nil {
			t.Fatal(err)
		}
		wb.WritePacket(0, p.ts, p.data, p.origLen, p.flags)
	}
	wa.Flush()
	wb.Flush()
	if !bytes.Equal(a.Bytes(), b.Bytes()) {
		t.Fatal("WritePacketParts and WritePacket wrote different files")
	}
	head, data := make([]byte, 13), make([]byte, 1500)
	w, _ := NewWriter(io.Discard, "")
	w.AddInterface(Interface{LinkType: LinkTypeRadiotap})
	if n := testing.AllocsPerRun(100, func() {
		w.WritePacketParts(0, 1, head, data, 2000, FlagInbound)
		w.WritePacket(0, 1, data[:77], 0, 0)
	}); n != 0 {
		t.Errorf("%v allocations per packet", n)
	}
}

func TestTruncated(t *testing.T) {
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, "")
	w.AddInterface(Interface{LinkType: 1})
	w.WritePacket(0, 1, make([]byte, 100), 100, 0)
	w.Flush()
	b := buf.Bytes()[:buf.Len()-10]
	r, err := NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := r.Next(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("truncated file: %v, want unexpected EOF", err)
	}
	if _, err := NewReader(strings.NewReader("hello world")); !errors.Is(err, ErrFormat) {
		t.Fatalf("garbage: %v, want ErrFormat", err)
	}
}

// TestBigEndianMicroseconds reads a hand-built big-endian section with the
// default (microsecond) resolution and a 2^-10 s interface.
func TestBigEndianMicroseconds(t *testing.T) {
	be := binary.BigEndian
	blk := func(typ uint32, body []byte) []byte {
		n := uint32(12 + len(body))
		b := be.AppendUint32(nil, typ)
		b = be.AppendUint32(b, n)
		b = append(b, body...)
		return be.AppendUint32(b, n)
	}
	var f []byte
	shb := be.AppendUint32(nil, byteOrderMagic)
	shb = be.AppendUint16(shb, 1)
	shb = be.AppendUint16(shb, 0)
	shb = be.AppendUint64(shb, ^uint64(0))
	f = append(f, blk(blockSHB, shb)...)
	idb := be.AppendUint16(nil, LinkTypeEthernet)
	idb = be.AppendUint16(idb, 0)
	idb = be.AppendUint32(idb, 0)
	f = append(f, blk(blockIDB, idb)...)
	idb2 := be.AppendUint16(nil, LinkTypeRaw)
	idb2 = be.AppendUint16(idb2, 0)
	idb2 = be.AppendUint32(idb2, 0)
	idb2 = append(idb2, 0, ifTsresol, 0, 1, 0x80|10, 0, 0, 0, 0, 0, 0, 0)
	f = append(f, blk(blockIDB, idb2)...)
	epb := func(ifi uint32, ts uint64, data []byte) []byte {
		b := be.AppendUint32(nil, ifi)
		b = be.AppendUint32(b, uint32(ts>>32))
		b = be.AppendUint32(b, uint32(ts))
		b = be.AppendUint32(b, uint32(len(data)))
		b = be.AppendUint32(b, uint32(len(data)))
		b = append(b, data...)
		for len(b)%4 != 0 {
			b = append(b, 0)
		}
		return blk(blockEPB, b)
	}
	f = append(f, epb(0, 1_500_000, []byte{1, 2, 3})...)
	f = append(f, epb(1, 3*1024, []byte{4, 5, 6, 7, 8})...)
	f = append(f, blk(0x0BAD, []byte{1, 2, 3, 4})...) // unknown block: skipped
	r, err := NewReader(bytes.NewReader(f))
	if err != nil {
		t.Fatal(err)
	}
	d, ci, err := r.Next()
	if err != nil || !bytes.Equal(d, []byte{1, 2, 3}) || ci.TimestampNs != 1_500_000_000 {
		t.Fatalf("packet 1: %v %v %+v", err, d, ci)
	}
	d, ci, err = r.Next()
	if err != nil || len(d) != 5 || ci.TimestampNs != 3_000_000_000 || r.LinkType(ci.Interface) != LinkTypeRaw {
		t.Fatalf("packet 2: %v %v %+v", err, d, ci)
	}
	if _, _, err := r.Next(); !errors.Is(err, io.EOF) {
		t.Fatalf("end: %v", err)
	}
}

func TestClassicPcap(t *testing.T) {
	for _, tc := range []struct {
		magic uint32
		order binary.AppendByteOrder
		scale int64
	}{{0xa1b2c3d4, binary.LittleEndian, 1000}, {0xa1b23c4d, binary.BigEndian, 1}} {
		o := tc.order
		h := o.AppendUint32(nil, tc.magic)
		h = o.AppendUint16(h, 2)
		h = o.AppendUint16(h, 4)
		h = o.AppendUint32(h, 0)
		h = o.AppendUint32(h, 0)
		h = o.AppendUint32(h, 65535)
		h = o.AppendUint32(h, LinkTypeLinuxSLL)
		rec := o.AppendUint32(nil, 100)
		rec = o.AppendUint32(rec, 250)
		rec = o.AppendUint32(rec, 3)
		rec = o.AppendUint32(rec, 60)
		rec = append(rec, 9, 8, 7)
		r, err := NewReader(bytes.NewReader(append(h, rec...)))
		if err != nil {
			t.Fatal(err)
		}
		d, ci, err := r.Next()
		if err != nil || !bytes.Equal(d, []byte{9, 8, 7}) || ci.TimestampNs != 100e9+250*tc.scale || ci.Length != 60 || r.LinkType(0) != LinkTypeLinuxSLL {
			t.Fatalf("magic %#x: %v %v %+v", tc.magic, err, d, ci)
		}
		if _, _, err := r.Next(); !errors.Is(err, io.EOF) {
			t.Fatalf("end: %v", err)
		}
	}
}

// TestTsharkReads checks that Wireshark's reader accepts our files (when
// tshark is installed): same packet count and lengths.
func TestTsharkReads(t *testing.T) {
	tshark, err := exec.LookPath("tshark")
	if err != nil {
		t.Skip("tshark not installed")
	}
	path := filepath.Join(t.TempDir(), "x.pcapng")
	f, _ := os.Create(path)
	w, _ := NewWriter(f, "test")
	w.AddInterface(Interface{LinkType: LinkTypeEthernet, SnapLen: 65535, Name: "eth0"})
	in := randomPackets(50)
	for _, p := range in {
		w.WritePacket(0, p.ts, p.data, p.origLen, FlagOutbound)
	}
	w.Flush()
	f.Close()
	out, err := exec.Command(tshark, "-r", path, "-T", "fields", "-e", "frame.cap_len", "-e", "frame.len").CombinedOutput()
	if err != nil {
		t.Fatalf("tshark: %v\n%s", err, out)
	}
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if l != "" && !strings.Contains(l, "Running as user") {
			lines = append(lines, l)
		}
	}
	if len(lines) != len(in) {
		t.Fatalf("tshark read %d packets, want %d:\n%s", len(lines), len(in), out)
	}
	for i, l := range lines {
		f := strings.Fields(l)
		c, _ := strconv.Atoi(f[0])
		o, _ := strconv.Atoi(f[1])
		if c != len(in[i].data) || o != max(in[i].origLen, len(in[i].data)) {
			t.Fatalf("packet %d: tshark says %d/%d, want %d/%d", i, c, o, len(in[i].data), in[i].origLen)
		}
	}
}

func BenchmarkRead(b *testing.B) {
	var buf bytes.Buffer
	w, _ := NewWriter(&buf, "")
	w.AddInterface(Interface{LinkType: 1})
	d := make([]byte, 128)
	const n = 100000
	for i := 0; i < n; i++ {
		w.WritePacket(0, int64(i), d, 1514, FlagInbound)
	}
	w.Flush()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r, _ := NewReader(bytes.NewReader(buf.Bytes()))
		for {
			if _, _, err := r.Next(); err != nil {
				break
			}
		}
	}
	b.ReportMetric(float64(n*b.N)/b.Elapsed().Seconds()/1e6, "Mpkt/s")
}
