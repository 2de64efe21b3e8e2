package wifi

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/emuctl/emuctl/capture/pcapng"
	"github.com/emuctl/emuctl/wifi/model"
)

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestAirCaptureRadiotapGolden: the radiotap header of each rate class,
// against bytes worked out by hand from the field definitions
// (radiotap.org; Linux include/net/ieee80211_radiotap.h): header
// {version 0, pad, le16 length, le32 present}, then the present fields
// in bit order, each aligned to its own alignment from the header start
// — Flags (bit 1, u8), Rate (2, u8, 500 kbit/s), Channel (3, le16 MHz +
// le16 flags, align 2), dBm antenna signal (5, s8), MCS (19, u8 known,
// flags, index), A-MPDU status (20, le32 reference, le16 flags, u8 CRC,
// u8 reserved, align 4), VHT (21, 12 bytes, align 2), HE (23, 6 × le16,
// align 2).
func TestAirCaptureRadiotapGolden(t *testing.T) {
	ns := time.Nanosecond
	for _, tc := range []struct {
		name  string
		rate  model.Rate
		freq  int
		flags uint8
		dbm   float64
		ampdu bool
		ref   uint32
		last  bool
		want  string
	}{{
		// present 0x2e (flags, rate, channel, signal); short preamble
		// 0x02; 11 Mbit/s = 22 × 500 kbit/s; 2437 MHz = 0x0985, CCK
		// 0x20 | 2 GHz 0x80; −42 dBm = 0xd6. 15 bytes.
		name: "DSSS", rate: model.Rate{Class: model.DSSS, Kbps: 11000, ShortPreamble: true}, freq: 2437, flags: 0x02, dbm: -42,
		want: "00 00 0f00 2e000000 02 16 8509 a000 d6",
	}, {
		// bad FCS 0x40; 54 Mbit/s = 108; 5180 MHz = 0x143c, OFDM 0x40 |
		// 5 GHz 0x100; −61.5 dBm rounds to −62 = 0xc2.
		name: "OFDM", rate: model.Rate{Class: model.OFDM, Kbps: 54000}, freq: 5180, flags: 0x40, dbm: -61.5,
		want: "00 00 0f00 2e000000 40 6c 3c14 4001 c2",
	}, {
		// present 0x18002a (flags, channel, signal, MCS, A-MPDU). No
		// Rate: one pad byte before Channel (offset 10). Signal −50 =
		// 0xce at 14; MCS at 15: known 0x7f (bw, mcs, gi, format, FEC,
		// STBC, extension streams), flags 40 MHz 0x01 | short GI 0x04,
		// index 15. A-MPDU aligned
		// to 4: two pad bytes, offset 20: reference 7, flags last-known
		// 0x04 | last 0x08, CRC 0, reserved 0. 28 bytes.
		name: "HT A-MPDU last", rate: model.Rate{Class: model.HT, MCS: 15, WidthMHz: 40, GI: 400 * ns}, freq: 5180, dbm: -50, ampdu: true, ref: 7, last: true,
		want: "00 00 1c00 2a001800 00 00 3c14 4001 ce 7f 05 0f 0000 07000000 0c00 00 00",
	}, {
		// HT MCS 3, 20 MHz, long GI, 2.4 GHz: OFDM | 2 GHz = 0xc0; not
		// in an A-MPDU. 18 bytes.
		name: "HT 2.4 GHz", rate: model.Rate{Class: model.HT, MCS: 3, WidthMHz: 20, GI: 800 * ns}, freq: 2412, dbm: -33,
		want: "00 00 1200 2a000800 00 00 6c09 c000 df 7f 00 03",
	}, {
		// present 0x20002a (flags, channel, signal, VHT). VHT aligned
		// to 2 at 16: known STBC 0x01 | GI 0x04 | bandwidth 0x40 =
		// 0x45, flags short GI
		// 0x04, bandwidth 80 MHz = 4, mcs_nss[0] = MCS 9 << 4 | 2
		// streams, users 1-3 absent, coding 0 (BCC), group ID 0, partial
		// AID 0. 5500 MHz = 0x157c; −70 dBm = 0xba. 28 bytes.
		name: "VHT", rate: model.Rate{Class: model.VHT, MCS: 9, NSS: 2, WidthMHz: 80, GI: 400 * ns}, freq: 5500, dbm: -70,
		want: "00 00 1c00 2a002000 00 00 7c15 4001 ba 00 4500 04 04 92000000 00 00 0000",
	}, {
		// VHT 160 MHz (bandwidth 11), one stream, long GI, A-MPDU:
		// A-MPDU status (bit 20) comes before VHT (21): aligned to 4 at
		// 16, VHT at 24. present 0x30002a; 36 bytes.
		name: "VHT A-MPDU", rate: model.Rate{Class: model.VHT, MCS: 0, NSS: 1, WidthMHz: 160, GI: 800 * ns}, freq: 5250, dbm: -80, ampdu: true, ref: 0x10000, last: false,
		want: "00 00 2400 2a003000 00 00 8214 4001 b0 00 00000100 0400 00 00 4500 00 0b 01000000 00 00 0000",
	}, {
		// present 0x90002a (flags, channel, signal, A-MPDU, HE). 6 GHz
		// 5975 MHz = 0x1757 (5 GHz flag, as Linux sets it); −45.3 dBm
		// → −45 = 0xd3. A-MPDU at 16: reference 0x01020304, last known,
		// not last. HE at 24: data1 SU (0) | data MCS known 0x0020 |
		// coding known 0x0080 | STBC known 0x0200 | BW/RU known 0x4000
		// = 0x42a0; data2 GI
		// known 0x0002; data3 MCS 11 << 8 | LDPC 0x2000 = 0x2b00; data4
		// 0; data5 80 MHz (2) | GI 1.6 µs (1 << 4) | 2x LTF (2 << 6) =
		// 0x92; data6 NSTS 2. 36 bytes.
		name: "HE", rate: model.Rate{Class: model.HE, MCS: 11, NSS: 2, WidthMHz: 80, GI: 1600 * ns}, freq: 5975, dbm: -45.3, ampdu: true, ref: 0x01020304,
		want: "00 00 2400 2a009000 00 00 5717 4001 d3 00 04030201 0400 00 00 a042 0200 002b 0000 9200 0200",
	}, {
		// HE 20 MHz, GI 3.2 µs (2 << 4), MCS 0, NSS 1, no A-MPDU: HE at
		// 16 after a pad byte. present 0x80002a; 28 bytes.
		name: "HE 20", rate: model.Rate{Class: model.HE, MCS: 0, NSS: 1, WidthMHz: 20, GI: 3200 * ns}, freq: 5180, dbm: -200,
		want: "00 00 1c00 2a008000 00 00 3c14 4001 80 00 a042 0200 0020 0000 a000 0100",
	}} {
		got := appendRadiotap([]byte{0xaa}, tc.rate, tc.freq, tc.flags, tc.dbm, tc.ampdu, tc.ref, tc.last)
		if want := append([]byte{0xaa}, unhex(t, tc.want)...); !bytes.Equal(got, want) {
			t.Errorf("%s:\n got % x\nwant % x", tc.name, got[1:], want[1:])
		}
	}
}

func capAddr(i int) [6]byte { return [6]byte{0x02, 0, 0, 0, byte(i), 0} }

// qosFrame is a QoS data MPDU (no FCS) from radio tx to rx with a
// sequence number, TID and body of n bytes.
func qosFrame(tx, rx int, seq uint16, tid, n int) []byte {
	b := make([]byte, 26+n)
	b[0], b[1] = 0x88, 0x01 // QoS data, to DS
	a1, a2 := capAddr(rx), capAddr(tx)
	copy(b[4:], a1[:])
	copy(b[10:], a2[:])
	copy(b[16:], a1[:])
	b[22], b[23] = byte(seq<<4), byte(seq>>4)
	b[24] = byte(tid)
	for i := 26; i < len(b); i++ {
		b[i] = byte(i)
	}
	return b
}

type capPacket struct {
	ns         int64
	data       []byte
	origLen    int
	rtLen      int
	present    uint32
	flags      uint8
	ampduRef   uint32
	ampduFlags uint16
	hasAMPDU   bool
}

func readCapture(t *testing.T, b []byte) []capPacket {
	t.Helper()
	r, err := pcapng.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	var out []capPacket
	for {
		d, ci, err := r.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if r.LinkType(ci.Interface) != pcapng.LinkTypeRadiotap {
			t.Fatalf("link type %d", r.LinkType(ci.Interface))
		}
		n := int(d[2]) | int(d[3])<<8
		p := capPacket{ns: ci.TimestampNs, data: append([]byte(nil), d[n:]...), origLen: ci.Length, rtLen: n,
			present: uint32(d[4]) | uint32(d[5])<<8 | uint32(d[6])<<16 | uint32(d[7])<<24, flags: d[8]}
		if p.present&(1<<20) != 0 { // every A-MPDU header here ends with the status field or has VHT/HE after it
			off := 16
			if p.present&(1<<19) != 0 {
				off = 20
			}
			p.hasAMPDU = true
			p.ampduRef = uint32(d[off]) | uint32(d[off+1])<<8 | uint32(d[off+2])<<16 | uint32(d[off+3])<<24
			p.ampduFlags = uint16(d[off+4]) | uint16(d[off+5])<<8
		}
		out = append(out, p)
	}
	return out
}

// TestAirCaptureResponses: an A-MPDU of three MPDUs (the second lost)
// is written as three subframes sharing a reference number, the last one
// flagged, the lost one with a bad FCS; then the compressed Block Ack,
// whose bytes are worked out by hand; then a single frame and its ACK;
// then a collided frame.
// The frames keep their bodies outside Data (Extra, Ref), mpdu returns
// them whole; a snaplen of 64 cuts them and keeps their length.
func TestAirCaptureResponses(t *testing.T) {
	start := time.Unix(1_700_000_000, 5)
	var buf bytes.Buffer
	c, err := NewAirCapture(&buf, start, 64)
	if err != nil {
		t.Fatal(err)
	}
	ht := model.Rate{Class: model.HT, MCS: 7, WidthMHz: 20, GI: 800 * time.Nanosecond}
	var frames []*model.MediumFrame
	for _, s := range []uint16{4094, 4095, 1} { // across the wrap
		full := qosFrame(3, 1, s, 5, 1000)
		frames = append(frames, &model.MediumFrame{Radio: 3, Data: full[:26], Extra: len(full) - 26, Ref: full})
	}
	mpdu := func(f *model.MediumFrame) []byte { return f.Ref.([]byte) }
	addr := func(i int) [6]byte { return capAddr(i) }
	signal := func(tx, rx int) float64 { return -float64(10*tx + rx) }
	a := model.Air{At: 10 * time.Microsecond, Dur: 500 * time.Microsecond, Radio: 3, Freq: 5180, Rate: ht, Frames: frames,
		OK: []bool{true, false, true}, RespAt: 526 * time.Microsecond, RespDur: 32 * time.Microsecond, RespFrom: 1,
		RespRate: model.Rate{Class: model.OFDM, Kbps: 24000}, BlockAck: true}
	if err := c.Write(a, mpdu, addr, signal); err != nil {
		t.Fatal(err)
	}
	single := qosFrame(3, 1, 2, 5, 10)
	b := model.Air{At: time.Millisecond, Dur: 100 * time.Microsecond, Radio: 3, Freq: 5180, Rate: ht,
		Frames: []*model.MediumFrame{{Radio: 3, Data: single}}, OK: []bool{true}, RespAt: 1116 * time.Microsecond,
		RespDur: 28 * time.Microsecond, RespFrom: 1, RespRate: model.Rate{Class: model.OFDM, Kbps: 24000}}
	if err := c.Write(b, nil, addr, signal); err != nil {
		t.Fatal(err)
	}
	// A collided PPDU is not received, whatever OK says.
	coll := model.Air{At: 2 * time.Millisecond, Dur: 100 * time.Microsecond, Radio: 3, Freq: 5180, Rate: ht,
		Frames: []*model.MediumFrame{{Radio: 3, Data: single}}, OK: []bool{true}, Collided: true}
	if err := c.Write(coll, nil, addr, signal); err != nil {
		t.Fatal(err)
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	p := readCapture(t, buf.Bytes())
	if len(p) != 7 {
		t.Fatalf("%d packets, want 3 subframes, a Block Ack, a frame and an ACK, a collided frame", len(p))
	}
	t0 := start.UnixNano()
	if q := p[6]; q.ns != t0+2_000_000 || q.flags&0x40 == 0 {
		t.Errorf("collided frame at %d: flags %#x, want bad FCS", q.ns-t0, q.flags)
	}
	for i := 0; i < 3; i++ {
		q := p[i]
		wantFlags := uint16(0x04)
		if i == 2 {
			wantFlags |= 0x08
		}
		if q.ns != t0+10_000 || !q.hasAMPDU || q.ampduRef != p[0].ampduRef || q.ampduFlags != wantFlags {
			t.Errorf("subframe %d: at %d, A-MPDU %v ref %d flags %#x", i, q.ns-t0, q.hasAMPDU, q.ampduRef, q.ampduFlags)
		}
		if bad := q.flags&0x40 != 0; bad != (i == 1) {
			t.Errorf("subframe %d: bad FCS %v", i, bad)
		}
		if q.rtLen+len(q.data) != 64 || q.origLen != q.rtLen+1026 || !bytes.Equal(q.data, frames[i].Ref.([]byte)[:len(q.data)]) {
			t.Errorf("subframe %d: %d+%d bytes captured of %d", i, q.rtLen, len(q.data), q.origLen)
		}
	}
	// Compressed Block Ack: FC 0x94 0x00, duration 0; RA = radio 3
	// (the data's TA); TA = radio 1 (the data's RA); BA control: type
	// compressed (0x0004) | TID 5 << 12 = 0x5004; SSC: SSN 4094 << 4 =
	// 0xffe0; bitmap: 4094 (bit 0) and 1 (bit 3), not 4095.
	wantBA := unhex(t, "9400 0000 020000000300 020000000100 0450 e0ff 0900000000000000")
	if q := p[3]; q.ns != t0+526_000 || q.hasAMPDU || !bytes.Equal(q.data, wantBA) || q.flags != 0 || q.present != 0x2e {
		t.Errorf("Block Ack at %d: % x (flags %#x, present %#x), want % x", q.ns-t0, q.data, q.flags, q.present, wantBA)
	}
	if q := p[4]; q.ns != t0+1_000_000 || q.hasAMPDU || !bytes.Equal(q.data, single) || q.origLen != q.rtLen+len(single) {
		t.Errorf("single frame: at %d, % x", q.ns-t0, q.data)
	}
	wantACK := unhex(t, "d400 0000 020000000300")
	if q := p[5]; q.ns != t0+1_116_000 || !bytes.Equal(q.data, wantACK) {
		t.Errorf("ACK at %d: % x, want % x", q.ns-t0, q.data, wantACK)
	}
	// Signals: data at radio 1 (−31 dBm), responses at radio 3 (−13).
	for i, want := range []int8{-31, -31, -31, -13, -31, -13, -31} {
		if got := int8(readSignal(t, buf.Bytes(), i)); got != want {
			t.Errorf("packet %d: signal %d dBm, want %d", i, got, want)
		}
	}
}

// readSignal returns the dBm antenna signal of packet i (always at
// offset 14 in the headers written here).
func readSignal(t *testing.T, file []byte, i int) int8 {
	r, _ := pcapng.NewReader(bytes.NewReader(file))
	for j := 0; ; j++ {
		d, _, err := r.Next()
		if err != nil {
			t.Fatal(err)
		}
		if j == i {
			return int8(d[14])
		}
	}
}

// TestAirCaptureSignal: a unicast frame's signal is the one at its
// receiver, even when it was lost and nothing answered (the receiver is
// known from its address), a group frame's the strongest radio's, and
// −50 dBm while no other radio is known.
func TestAirCaptureSignal(t *testing.T) {
	var buf bytes.Buffer
	c, _ := NewAirCapture(&buf, time.Unix(0, 0), 0)
	addr := func(i int) [6]byte { return capAddr(i) }
	signal := func(tx, rx int) float64 { return -float64(10*tx + rx) }
	ofdm := model.Rate{Class: model.OFDM, Kbps: 6000}
	group := qosFrame(2, 0, 0, 0, 10)
	copy(group[4:10], []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	air := func(tx int, b []byte) model.Air {
		return model.Air{Radio: tx, Freq: 5180, Rate: ofdm, Frames: []*model.MediumFrame{{Radio: tx, Data: b}}, OK: []bool{false}}
	}
	c.Write(air(2, group), nil, addr, signal)                    // nobody else known: −50
	c.Write(air(2, qosFrame(2, 4, 0, 0, 10)), nil, addr, signal) // radio 4 unknown: −50
	c.Write(air(1, qosFrame(1, 2, 0, 0, 10)), nil, addr, signal) // radio 2 known: −12
	c.Write(air(2, group), nil, addr, signal)                    // strongest of {1}: −21
	c.Learn(4, capAddr(4))
	c.Write(air(2, qosFrame(2, 4, 0, 0, 10)), nil, addr, signal) // −24
	c.Write(air(2, group), nil, addr, signal)                    // strongest of {1, 4}: −21
	c.Flush()
	for i, want := range []int8{-50, -50, -12, -21, -24, -21} {
		if got := readSignal(t, buf.Bytes(), i); got != want {
			t.Errorf("packet %d: %d dBm, want %d", i, got, want)
		}
	}
	if _, err := NewAirCapture(io.Discard, time.Time{}, 20); err == nil {
		t.Error("snaplen 20 accepted")
	}
}

type capAir struct {
	model.Air
	frames [][]byte
	ok     []bool
	dbm    float64 // expected signal of the MPDUs
	respDB float64
}

type capSender struct {
	tx, rx   int
	rate     model.Rate
	tid      int
	inFlight int
	body     int
	group    bool // group frames, one every period
	period   time.Duration
}

// TestAirCaptureTshark drives a model.Medium with ReportAir on — 5180
// MHz: an HT A-MPDU sender (40 MHz, short GI, TID 3), 24 and 54 Mbit/s
// senders contending with it (collisions) and group frames at 6 Mbit/s;
// 5200 MHz: a lossy 24 Mbit/s link (half the MPDUs lost); 2437 MHz: two
// DSSS/CCK senders; 5500 MHz: VHT80 A-MPDUs; 5975 MHz: HE80 A-MPDUs —
// writes every Air event to an AirCapture (snaplen 256, bodies outside
// Data), and has tshark read the file back: every packet parses without
// a warning, in time order, at start + the model's times to the
// nanosecond; channel, signal, rates/MCS (and Wireshark's own data rate
// for HT and VHT) are the medium's; MPDUs keep their type, addresses,
// sequence numbers and length, the lost ones flagged; A-MPDU subframes
// share one reference per PPDU, the last flagged; each ACK and Block Ack
// follows its data, addressed to the data's sender, the Block Ack with
// the data's TID/SSN and the bitmap of what was received.
func TestAirCaptureTshark(t *testing.T) {
	tshark, err := exec.LookPath("tshark")
	if err != nil {
		t.Skip("tshark not installed: apt-get install tshark")
	}
	ns := time.Nanosecond
	ofdm := func(k int) model.Rate { return model.Rate{Class: model.OFDM, Kbps: k} }
	lossyRate := ofdm(24000)
	htRate := model.Rate{Class: model.HT, MCS: 15, WidthMHz: 40, GI: 400 * ns}
	// The SNR at which an MPDU of n bytes at r is lost with probability p.
	snrFor := func(r model.Rate, n int, p float64) float64 {
		lo, hi := 0.0, 60.0
		for range 60 {
			mid := (lo + hi) / 2
			if model.PER(r, n, model.DBToLinear(mid)) > p {
				lo = mid
			} else {
				hi = mid
			}
		}
		return hi
	}
	lossySNR := snrFor(lossyRate, 26+1000+4, 0.5) // half of the 24 Mbit/s link's MPDUs lost
	htSNR := snrFor(htRate, 26+1200+4, 0.1)       // some A-MPDU subframes lost
	freq := map[int]int{0: 5180, 1: 5180, 2: 5180, 3: 5180, 4: 2437, 5: 2437, 6: 5500, 7: 5500, 8: 5975, 9: 5975, 10: 5200, 11: 5200}
	link := func(tx, rx int) model.Link {
		l := model.Link{RxDBm: -30 - float64(tx) - 3.3*float64(rx), SNRdB: 40, OK: true}
		switch {
		case tx == 2 && rx == 0 || tx == 10 && rx == 11:
			l.SNRdB = lossySNR
		case tx == 1 && rx == 0:
			l.SNRdB = htSNR
		}
		return l
	}
	senders := []capSender{
		{tx: 1, rx: 0, rate: htRate, tid: 3, inFlight: 16, body: 1200},
		{tx: 2, rx: 0, rate: lossyRate, inFlight: 2, body: 1000},
		{tx: 3, rx: 0, rate: ofdm(54000), inFlight: 2, body: 1400},
		{tx: 0, group: true, rate: ofdm(6000), period: 2 * time.Millisecond, body: 100},
		{tx: 4, rx: 5, rate: model.Rate{Class: model.DSSS, Kbps: 11000, ShortPreamble: true}, inFlight: 2, body: 600},
		{tx: 5, rx: 4, rate: model.Rate{Class: model.DSSS, Kbps: 5500}, inFlight: 2, body: 300},
		{tx: 6, rx: 7, rate: model.Rate{Class: model.VHT, MCS: 9, NSS: 2, WidthMHz: 80, GI: 400 * ns}, tid: 6, inFlight: 12, body: 1400},
		{tx: 8, rx: 9, rate: model.Rate{Class: model.HE, MCS: 11, NSS: 2, WidthMHz: 80, GI: 1600 * ns}, inFlight: 12, body: 1400},
		{tx: 10, rx: 11, rate: lossyRate, inFlight: 2, body: 1000},
	}
	m := model.NewMedium(model.MediumConfig{Link: link, AMPDU: true, Seed: 11})
	for i := 0; i < len(freq); i++ {
		m.AddRadio(i, freq[i])
		m.LearnAddr(capAddr(i), i)
	}
	m.ReportAir(true)

	start := time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.UTC)
	path := filepath.Join(t.TempDir(), "air.pcapng")
	if p := os.Getenv("AIRCAP_KEEP"); p != "" { // keep the file to look at
		path = p
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	const snap = 256
	c, err := NewAirCapture(f, start, snap)
	if err != nil {
		t.Fatal(err)
	}
	mpdu := func(f *model.MediumFrame) []byte {
		if b, ok := f.Ref.([]byte); ok {
			return b
		}
		return f.Data
	}
	addr := func(i int) [6]byte { return capAddr(i) }
	signal := func(tx, rx int) float64 { return link(tx, rx).RxDBm }

	var airs []capAir
	seen := map[int]bool{}
	pending := map[int]int{}
	seq := map[int]uint16{}
	nextGroup := time.Duration(0)
	submit := func(now time.Duration) {
		for _, s := range senders {
			if s.group {
				if now < nextGroup {
					continue
				}
				nextGroup = now + s.period
				b := qosFrame(s.tx, 0, seq[s.tx], 0, s.body)
				b[0], b[1] = 0x08, 0x02 // data, from DS
				copy(b[4:10], []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
				b = b[:24+s.body]
				seq[s.tx] = (seq[s.tx] + 1) & 0xfff
				if err := m.Submit(now, &model.MediumFrame{Radio: s.tx, Freq: freq[s.tx], Data: b, Rates: [4]model.TxRate{{Rate: s.rate, Count: 1}}}); err != nil {
					t.Fatal(err)
				}
				continue
			}
			for pending[s.tx] < s.inFlight {
				full := qosFrame(s.tx, s.rx, seq[s.tx], s.tid, s.body)
				seq[s.tx] = (seq[s.tx] + 1) & 0xfff
				mf := &model.MediumFrame{Radio: s.tx, Freq: freq[s.tx], Data: full[:26], Extra: len(full) - 26, Ref: full,
					Rates: [4]model.TxRate{{Rate: s.rate, Count: 7}}}
				if err := m.Submit(now, mf); err != nil {
					t.Fatal(err)
				}
				pending[s.tx]++
			}
		}
	}
	dest := map[int]int{}
	for _, s := range senders {
		if !s.group {
			dest[s.tx] = s.rx
		}
	}
	const end = 40 * time.Millisecond
	submit(0)
	for {
		at, ok := m.Next()
		if !ok || at > end {
			break
		}
		m.Advance(at, func(ev any) {
			switch v := ev.(type) {
			case model.Air:
				// What the capture should say, worked out here from the
				// event: the signal at the intended receiver (the
				// addressed radio once the capture can know its address,
				// else the strongest radio it knows), the responder's
				// signal at the sender.
				seen[v.Radio] = true
				if v.RespDur > 0 {
					seen[v.RespFrom] = true
				}
				r := capAir{Air: v, ok: slices.Clone(v.OK), respDB: link(v.RespFrom, v.Radio).RxDBm}
				for _, f := range v.Frames {
					r.frames = append(r.frames, mpdu(f))
				}
				if rx, ok := dest[v.Radio]; ok && seen[rx] && r.frames[0][4]&1 == 0 {
					r.dbm = link(v.Radio, rx).RxDBm
				} else {
					r.dbm = -50
					best := math.Inf(-1)
					for o := range seen {
						if o != v.Radio {
							best = max(best, link(v.Radio, o).RxDBm)
						}
					}
					if !math.IsInf(best, -1) {
						r.dbm = best
					}
				}
				airs = append(airs, r)
				if err := c.Write(v, mpdu, addr, signal); err != nil {
					t.Fatal(err)
				}
			case model.Status:
				if v.Frame.Ref != nil {
					pending[v.Frame.Radio]--
				}
			}
		})
		submit(at)
	}
	if err := c.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()

	// What the file should hold, in time order: each PPDU's MPDUs at its
	// start, the response at its own time (before any PPDU that starts
	// at the same instant).
	type want struct {
		ns        int64
		resp      bool
		air       int
		i         int // subframe
		ampdu     bool
		ba        bool
		frame     []byte
		rate      model.Rate
		freq      int
		dbm       float64
		bad, last bool
	}
	var wants []want
	collisions, lost, lossy, ampdus, partial, bas, acks, groups := 0, 0, 0, 0, 0, 0, 0, 0
	classes := map[model.Class]int{}
	for k, a := range airs {
		at := start.UnixNano() + int64(a.At)
		if a.Collided {
			collisions++
		}
		if len(a.Frames) > 1 {
			ampdus++
		}
		for i, fr := range a.frames {
			bad := a.Collided || !a.ok[i]
			if bad {
				lost++
			}
			if !a.Collided && !a.ok[i] {
				lossy++ // lost to the channel, not to a collision
			}
			if fr[4]&1 != 0 {
				groups++
			}
			classes[a.Rate.Class]++
			wants = append(wants, want{ns: at, air: k, i: i, ampdu: len(a.frames) > 1, frame: fr, rate: a.Rate, freq: a.Freq,
				dbm: a.dbm, bad: bad, last: i == len(a.frames)-1})
		}
		if a.RespDur > 0 {
			if a.BlockAck {
				bas++
				if slices.Contains(a.ok, false) {
					partial++
				}
			} else {
				acks++
			}
			wants = append(wants, want{ns: start.UnixNano() + int64(a.RespAt), resp: true, air: k, ba: a.BlockAck, rate: a.RespRate,
				freq: a.Freq, dbm: a.respDB})
		}
	}
	slices.SortStableFunc(wants, func(x, y want) int {
		if x.ns != y.ns {
			return int(x.ns - y.ns)
		}
		if x.resp != y.resp {
			if x.resp {
				return -1
			}
			return 1
		}
		return 0
	})
	t.Logf("%d PPDUs: %d packets, %d A-MPDUs, %d Block Acks (%d with MPDUs missing), %d ACKs, %d collided PPDUs, %d MPDUs not received (%d in PPDUs that did not collide), %d group MPDUs, MPDUs by class %v",
		len(airs), len(wants), ampdus, bas, partial, acks, collisions, lost, lossy, groups, classes)
	if len(wants) < 300 || ampdus < 10 || partial == 0 || collisions == 0 || lossy == 0 || groups == 0 || acks == 0 || len(classes) != 5 {
		t.Fatalf("the run does not cover what it should")
	}

	fields := []string{"frame.time_epoch", "frame.len", "frame.cap_len", "radiotap.channel.freq", "radiotap.flags.badfcs",
		"radiotap.dbm_antsignal", "radiotap.datarate", "radiotap.mcs.index", "radiotap.mcs.bw", "radiotap.mcs.gi",
		"radiotap.vht.mcs.0", "radiotap.vht.nss.0", "radiotap.vht.bw", "radiotap.vht.gi", "radiotap.vht.datarate.0",
		"radiotap.he.data_3.data_mcs", "radiotap.he.data_5.data_bw_ru_allocation", "radiotap.he.data_5.gi", "radiotap.he.data_6.nsts",
		"radiotap.ampdu.reference", "radiotap.ampdu.flags.last", "wlan.fc.type_subtype", "wlan.ra", "wlan.ta", "wlan.seq",
		"wlan.ba.control.ba_type", "wlan.fixed.ssc.sequence", "wlan.ba.bm", "_ws.malformed", "_ws.expert.severity"}
	args := []string{"-r", path, "-n", "-T", "fields", "-E", "occurrence=f"}
	for _, fl := range fields {
		args = append(args, "-e", fl)
	}
	cmd := exec.Command(tshark, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("tshark: %v\n%s", err, stderr.String())
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) != len(wants) {
		t.Fatalf("tshark read %d packets, the capture has %d", len(lines), len(wants))
	}
	col := map[string]int{}
	for i, fl := range fields {
		col[fl] = i
	}
	mac := func(a []byte) string {
		return fmt.Sprintf("%02x:%02x:%02x:%02x:%02x:%02x", a[0], a[1], a[2], a[3], a[4], a[5])
	}
	refs := map[string]int{} // A-MPDU reference → the PPDU it was given to
	var prevNs int64
	checked := map[string]int{}
	for n, line := range lines {
		v := strings.Split(line, "\t")
		if len(v) != len(fields) {
			t.Fatalf("packet %d: %d fields: %q", n+1, len(v), line)
		}
		get := func(f string) string { return v[col[f]] }
		w := wants[n]
		errorf := func(format string, args ...any) {
			t.Helper()
			t.Errorf("packet %d (PPDU %d at %v, %v): %s", n+1, w.air, airs[w.air].At, airs[w.air].Rate, fmt.Sprintf(format, args...))
		}
		if get("_ws.malformed") != "" || get("_ws.expert.severity") != "" {
			errorf("malformed, or Wireshark warns: %q", line)
		}
		// Timestamps: exactly start + the model's time, in order.
		sec, frac, _ := strings.Cut(get("frame.time_epoch"), ".")
		s, _ := strconv.ParseInt(sec, 10, 64)
		fns, _ := strconv.ParseInt((frac + "000000000")[:9], 10, 64)
		if ns := s*1e9 + fns; ns != w.ns {
			errorf("time %s, want %d ns", get("frame.time_epoch"), w.ns)
		} else if ns < prevNs {
			errorf("time goes back")
		}
		prevNs = w.ns
		if got := get("radiotap.channel.freq"); got != strconv.Itoa(w.freq) {
			errorf("channel %s MHz, want %d", got, w.freq)
		}
		if got, want := get("radiotap.dbm_antsignal"), strconv.Itoa(int(math.Round(w.dbm))); got != want {
			errorf("signal %s dBm, want %s", got, want)
		}
		checked["signal"]++
		// Rates as the medium used them.
		r := w.rate
		switch r.Class {
		case model.DSSS, model.OFDM:
			if got := get("radiotap.datarate"); got != strconv.FormatFloat(float64(r.Kbps)/1000, 'f', -1, 64) {
				errorf("rate %s Mbit/s, want %v", got, r)
			}
			checked["legacy rate"]++
		case model.HT:
			bw := "0"
			if r.WidthMHz == 40 {
				bw = "1"
			}
			gi := "0"
			if r.GI == 400*ns {
				gi = "1"
			}
			if get("radiotap.mcs.index") != strconv.Itoa(r.MCS) || get("radiotap.mcs.bw") != bw || get("radiotap.mcs.gi") != gi {
				errorf("MCS %s bw %s gi %s, want %v", get("radiotap.mcs.index"), get("radiotap.mcs.bw"), get("radiotap.mcs.gi"), r)
			}
			if rate, _ := strconv.ParseFloat(get("radiotap.datarate"), 64); math.Abs(rate-r.Mbps()) > 0.1 {
				errorf("Wireshark's data rate %s Mbit/s, the model's %.1f", get("radiotap.datarate"), r.Mbps())
			}
			checked["HT MCS"]++
		case model.VHT:
			if get("radiotap.vht.mcs.0") != strconv.Itoa(r.MCS) || get("radiotap.vht.nss.0") != strconv.Itoa(r.NSS) ||
				get("radiotap.vht.bw") != "4" || get("radiotap.vht.gi") != "1" {
				errorf("VHT MCS %s NSS %s bw %s gi %s, want %v", get("radiotap.vht.mcs.0"), get("radiotap.vht.nss.0"), get("radiotap.vht.bw"), get("radiotap.vht.gi"), r)
			}
			if rate, _ := strconv.ParseFloat(get("radiotap.vht.datarate.0"), 64); math.Abs(rate-r.Mbps()) > 0.1 {
				errorf("Wireshark's VHT data rate %s Mbit/s, the model's %.1f", get("radiotap.vht.datarate.0"), r.Mbps())
			}
			checked["VHT MCS"]++
		case model.HE:
			if hexInt(get("radiotap.he.data_3.data_mcs")) != r.MCS || hexInt(get("radiotap.he.data_6.nsts")) != r.NSS ||
				hexInt(get("radiotap.he.data_5.data_bw_ru_allocation")) != 2 || hexInt(get("radiotap.he.data_5.gi")) != 1 {
				errorf("HE MCS %s NSTS %s bw %s gi %s, want %v", get("radiotap.he.data_3.data_mcs"), get("radiotap.he.data_6.nsts"),
					get("radiotap.he.data_5.data_bw_ru_allocation"), get("radiotap.he.data_5.gi"), r)
			}
			checked["HE MCS"]++
		}
		a := airs[w.air]
		txAddr := mac(a.frames[0][10:16])
		if w.resp {
			// The response follows its data, addressed to the data's
			// sender.
			if got := get("wlan.ra"); got != txAddr {
				errorf("response to %s, want %s", got, txAddr)
			}
			if get("frame.cap_len") != get("frame.len") || get("radiotap.flags.badfcs") != "0" {
				errorf("response cut or flagged bad: %q", line)
			}
			if !w.ba {
				if get("wlan.fc.type_subtype") != "0x001d" {
					errorf("ACK has type/subtype %s", get("wlan.fc.type_subtype"))
				}
				checked["ACK"]++
				continue
			}
			ssn, _ := seqTIDOf(a.frames[0])
			var bm [8]byte
			for i, fr := range a.frames {
				s, _ := seqTIDOf(fr)
				if d := (s - ssn) & 0xfff; a.ok[i] && d < 64 {
					bm[d/8] |= 1 << (d % 8)
				}
			}
			if get("wlan.fc.type_subtype") != "0x0019" || get("wlan.ta") != mac(a.frames[0][4:10]) ||
				get("wlan.ba.control.ba_type") != "0x0002" || get("wlan.fixed.ssc.sequence") != strconv.Itoa(int(ssn)) ||
				get("wlan.ba.bm") != hex.EncodeToString(bm[:]) {
				errorf("Block Ack %q: want TA %s, SSN %d, bitmap %x", line, mac(a.frames[0][4:10]), ssn, bm)
			}
			checked["Block Ack"]++
			continue
		}
		// An MPDU: its own addresses and sequence number, cut to the
		// snaplen with its length kept, flagged when not received.
		fr := w.frame
		wantType := fmt.Sprintf("0x%04x", int(fr[0]>>2&3)<<4|int(fr[0]>>4))
		seq, _ := seqTIDOf(fr)
		if get("wlan.fc.type_subtype") != wantType || get("wlan.ra") != mac(fr[4:10]) || get("wlan.ta") != txAddr ||
			get("wlan.seq") != strconv.Itoa(int(seq)) {
			errorf("MPDU %q: want type %s RA %s TA %s seq %d", line, wantType, mac(fr[4:10]), txAddr, seq)
		}
		capLen, _ := strconv.Atoi(get("frame.cap_len"))
		origLen, _ := strconv.Atoi(get("frame.len"))
		if capLen != min(snap, origLen) || origLen-len(fr) < 15 || origLen-len(fr) > 36 {
			errorf("lengths %d/%d for a %d-byte MPDU", capLen, origLen, len(fr))
		}
		if bad := get("radiotap.flags.badfcs") == "1"; bad != w.bad {
			errorf("bad FCS %v, want %v", bad, w.bad)
		}
		ref := get("radiotap.ampdu.reference")
		if !w.ampdu {
			if ref != "" {
				errorf("single MPDU in an A-MPDU (reference %s)", ref)
			}
			continue
		}
		// A-MPDU subframes: one reference per PPDU, the last flagged.
		if k, ok := refs[ref]; ref == "" || (ok && k != w.air) {
			errorf("A-MPDU reference %q (PPDU %d has it)", ref, k)
		}
		refs[ref] = w.air
		if last := get("radiotap.ampdu.flags.last") == "1"; last != w.last {
			errorf("last subframe %v, want %v", last, w.last)
		}
		checked["A-MPDU subframe"]++
	}
	if len(refs) != ampdus {
		t.Errorf("%d A-MPDU references, %d A-MPDUs", len(refs), ampdus)
	}
	t.Logf("tshark read %d packets; checked %v", len(lines), checked)
}

func hexInt(s string) int {
	v, err := strconv.ParseInt(strings.TrimPrefix(s, "0x"), 16, 64)
	if err != nil {
		return -1
	}
	return int(v)
}

// seqTIDOf reads a QoS data frame's sequence number and TID (for the
// test's own expectations).
func seqTIDOf(b []byte) (uint16, int) {
	return uint16(b[22])>>4 | uint16(b[23])<<4, int(b[24] & 15)
}

// BenchmarkAirCapture: CPU per MPDU written — a 32-MPDU HT A-MPDU and
// its Block Ack, and a single 54 Mbit/s frame and its ACK, 1500-byte
// MPDUs kept whole.
func BenchmarkAirCapture(b *testing.B) {
	c, _ := NewAirCapture(io.Discard, time.Unix(0, 0), 0)
	ht := model.Rate{Class: model.HT, MCS: 7, WidthMHz: 20, GI: 800 * time.Nanosecond}
	var frames []*model.MediumFrame
	var ok []bool
	for i := 0; i < 32; i++ {
		full := qosFrame(1, 0, uint16(i), 0, 1474)
		frames = append(frames, &model.MediumFrame{Radio: 1, Data: full[:26], Extra: len(full) - 26, Ref: full})
		ok = append(ok, i%5 != 0)
	}
	agg := model.Air{Dur: 2 * time.Millisecond, Radio: 1, Freq: 5180, Rate: ht, Frames: frames, OK: ok, RespDur: 32 * time.Microsecond,
		RespFrom: 0, RespRate: model.Rate{Class: model.OFDM, Kbps: 24000}, BlockAck: true}
	one := model.Air{Dur: 250 * time.Microsecond, Radio: 1, Freq: 5180, Rate: model.Rate{Class: model.OFDM, Kbps: 54000},
		Frames: frames[:1], OK: ok[:1], RespDur: 28 * time.Microsecond, RespFrom: 0, RespRate: model.Rate{Class: model.OFDM, Kbps: 24000}}
	mpdu := func(f *model.MediumFrame) []byte { return f.Ref.([]byte) }
	addr := func(i int) [6]byte { return capAddr(i) }
	signal := func(tx, rx int) float64 { return -40 }
	now := time.Duration(0)
	write := func() {
		agg.At, agg.RespAt = now, now+2016*time.Microsecond
		now += 3 * time.Millisecond
		one.At, one.RespAt = now, now+266*time.Microsecond
		now += time.Millisecond
		c.Write(agg, mpdu, addr, signal)
		c.Write(one, mpdu, addr, signal)
	}
	write()
	if n := testing.AllocsPerRun(100, write); n != 0 {
		b.Fatalf("%v allocations per write", n)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		write()
	}
	b.StopTimer()
	c.Flush()
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*33), "ns/MPDU")
}
