package wifi

import (
	"encoding/binary"
	"errors"
	"io"
	"math"
	"slices"
	"time"

	"github.com/emuctl/emuctl/capture/pcapng"
	"github.com/emuctl/emuctl/wifi/model"
)

// AirCapture writes a medium's PPDUs as a monitor on the channel would
// capture them: a pcapng file with one interface of link type 127
// (802.11 behind a radiotap header) that Wireshark and tshark open. Feed
// it the model's Air events (Medium.ReportAir) in the order the medium
// emits them. It reuses its buffers, so a capture can run inside the
// medium's real-time thread; it is not safe for concurrent use.
type AirCapture struct {
	w       *pcapng.Writer
	start   int64 // Unix ns of the medium's time 0
	snaplen int
	rt      []byte // radiotap header being built
	ref     uint32 // last A-MPDU reference number
	who     map[[6]byte]int
	radios  []int // radios seen, ascending
	// Responses (ACK, Block Ack) are held until nothing earlier can
	// come, so the file stays in time order across channels.
	pending []airResponse
}

type airResponse struct {
	at    int64
	frame [blockAckLen]byte
	n     int
	rate  model.Rate
	freq  int
	dbm   float64
}

// Control frames as synthesised (without FCS).
const (
	ackLen      = model.ACKBytes - model.FCSBytes      // FC, duration, RA
	blockAckLen = model.BlockAckBytes - model.FCSBytes // + TA, BA control, SSC, bitmap
)

// airSnapMin is the smallest snaplen NewAirCapture takes: the largest
// radiotap header it writes plus an 802.11 header.
const airSnapMin = 64

// Radiotap (https://www.radiotap.org/fields/defined): field bits, and
// the values written.
const (
	rtFlags     = 1
	rtRate      = 2
	rtChannel   = 3
	rtDBmSignal = 5
	rtMCS       = 19
	rtAMPDU     = 20
	rtVHT       = 21
	rtHE        = 23

	rtFlagShortPre = 0x02
	rtFlagBadFCS   = 0x40

	rtChanCCK  = 0x0020
	rtChanOFDM = 0x0040
	rtChan2GHz = 0x0080
	rtChan5GHz = 0x0100

	// MCS known: bandwidth, MCS index, guard interval, HT format, FEC,
	// STBC, extension streams (the model times HT-mixed PPDUs with BCC,
	// no STBC, no extension streams: those flags stay 0).
	rtMCSKnown = 0x01 | 0x02 | 0x04 | 0x08 | 0x10 | 0x20 | 0x40
	rtMCSBW40  = 0x01
	rtMCSSGI   = 0x04

	rtAMPDULastKnown = 0x0004
	rtAMPDUIsLast    = 0x0008

	// VHT known: STBC (none), guard interval, bandwidth.
	rtVHTKnown = 0x0001 | 0x0004 | 0x0040
	rtVHTSGI   = 0x04

	// HE: an SU PPDU (data1 format 0) whose data MCS, coding, STBC and
	// bandwidth are known (data1) and GI (data2); LDPC coding (the
	// model's HE airtime has no tail bits), no STBC, 2x HE-LTF.
	rtHEData1 = 0x0020 | 0x0080 | 0x0200 | 0x4000
	rtHEData2 = 0x0002
	rtHELDPC  = 0x2000
	rtHELTF2x = 2 << 6
)

var rtLE = binary.LittleEndian

// NewAirCapture starts a capture on w. start is the wall-clock time of
// the medium's time 0 (packets are stamped start + the model's times, in
// nanoseconds); snaplen caps the bytes kept of each packet, radiotap
// header included (0: whole packets; otherwise at least 64).
func NewAirCapture(w io.Writer, start time.Time, snaplen int) (*AirCapture, error) {
	if snaplen < 0 || (snaplen > 0 && snaplen < airSnapMin) {
		return nil, errors.New("air capture: snaplen must be 0 (whole frames) or at least 64 bytes")
	}
	pw, err := pcapng.NewWriter(w, "emuctl wifi medium")
	if err != nil {
		return nil, err
	}
	if _, err := pw.AddInterface(pcapng.Interface{LinkType: pcapng.LinkTypeRadiotap, SnapLen: uint32(snaplen),
		Name: "medium", Description: "emuctl Wi-Fi medium: every PPDU on the air, as a monitor would capture it"}); err != nil {
		return nil, err
	}
	return &AirCapture{w: pw, start: start.UnixNano(), snaplen: snaplen, rt: make([]byte, 0, 64), who: map[[6]byte]int{}}, nil
}

// Learn tells the capture an address of a radio's (an interface address
// other than the one Write's addr returns), so that the signal of frames
// sent to it is the signal at that radio even when none was received.
func (c *AirCapture) Learn(radio int, addr [6]byte) {
	c.know(radio, nil)
	c.who[addr] = radio
}

func (c *AirCapture) know(radio int, addr func(int) [6]byte) {
	i, found := slices.BinarySearch(c.radios, radio)
	if found {
		return
	}
	c.radios = slices.Insert(c.radios, i, radio)
	if addr != nil {
		c.who[addr(radio)] = radio
	}
}

// Write records one model.Air event: each MPDU of the PPDU as one packet
// (an A-MPDU's subframes carry the radiotap A-MPDU status field with one
// reference number per PPDU, last-subframe flag on the last), then the
// ACK or Block Ack the receiver sent (when RespDur > 0), synthesised as a
// real 802.11 control frame (ACK: FC 0xd4, RA = the data's transmitter;
// compressed Block Ack: FC 0x94, BA control, starting sequence number
// and a 64-bit bitmap from the MPDUs' sequence numbers and the OK
// flags). mpdu returns the bytes of an MPDU without FCS (nil: the
// frame's Data); addr returns a radio's MAC address; signal returns the
// received power (dBm) of tx's frames at rx (nil: −50 dBm throughout).
//
// MPDUs not received (OK false, or a collision) carry the radiotap
// bad-FCS flag. A packet's signal is the one at the intended receiver:
// the radio the frame's RA belongs to, for group frames (or an RA of no
// radio known) the strongest radio seen.
func (c *AirCapture) Write(a model.Air, mpdu func(*model.MediumFrame) []byte, addr func(radio int) [6]byte, signal func(tx, rx int) float64) error {
	if len(a.Frames) == 0 {
		return nil
	}
	ts := c.start + int64(a.At)
	if err := c.writeResponses(ts); err != nil {
		return err
	}
	if addr != nil {
		c.know(a.Radio, addr)
		if a.RespDur > 0 {
			c.know(a.RespFrom, addr)
		}
	}
	head := frameBytes(a.Frames[0], mpdu)
	if len(head) >= 16 {
		c.who[[6]byte(head[10:16])] = a.Radio // transmitted frames teach their TA
	}
	if a.RespDur > 0 && len(head) >= 10 {
		c.who[[6]byte(head[4:10])] = a.RespFrom
	}
	dbm := c.rxSignal(a, head, signal)
	ampdu := len(a.Frames) > 1
	if ampdu {
		c.ref++
	}
	pre := uint8(0)
	if shortPreamble(a.Rate) {
		pre = rtFlagShortPre
	}
	for i, f := range a.Frames {
		b := head
		if i > 0 {
			b = frameBytes(f, mpdu)
		}
		flags := pre
		if a.Collided || i >= len(a.OK) || !a.OK[i] {
			flags |= rtFlagBadFCS
		}
		c.rt = appendRadiotap(c.rt[:0], a.Rate, a.Freq, flags, dbm, ampdu, c.ref, i == len(a.Frames)-1)
		orig := len(c.rt) + max(len(b), f.Len()-model.FCSBytes)
		if err := c.w.WritePacketParts(0, ts, c.rt, c.snap(b), orig, 0); err != nil {
			return err
		}
	}
	if a.RespDur > 0 {
		c.queueResponse(a, head, mpdu, addr, signal)
	}
	return nil
}

// Flush writes the responses still held and everything buffered.
func (c *AirCapture) Flush() error {
	if err := c.writeResponses(math.MaxInt64); err != nil {
		return err
	}
	return c.w.Flush()
}

func frameBytes(f *model.MediumFrame, mpdu func(*model.MediumFrame) []byte) []byte {
	if mpdu == nil {
		return f.Data
	}
	return mpdu(f)
}

// snap cuts b so that the radiotap header in c.rt and b fit the snaplen.
func (c *AirCapture) snap(b []byte) []byte {
	if c.snaplen > 0 && len(c.rt)+len(b) > c.snaplen {
		return b[:max(0, c.snaplen-len(c.rt))]
	}
	return b
}

func shortPreamble(r model.Rate) bool {
	return r.Class == model.DSSS && r.ShortPreamble && r.Kbps != 1000
}

// rxSignal is the power of a's PPDU at its intended receiver.
func (c *AirCapture) rxSignal(a model.Air, head []byte, signal func(tx, rx int) float64) float64 {
	if signal == nil {
		return -50
	}
	if len(head) >= 10 && head[4]&1 == 0 { // unicast
		rx, ok := a.RespFrom, a.RespDur > 0
		if !ok {
			rx, ok = c.who[[6]byte(head[4:10])]
		}
		if ok && rx != a.Radio {
			return signal(a.Radio, rx)
		}
	}
	best, found := math.Inf(-1), false
	for _, r := range c.radios {
		if r != a.Radio {
			best, found = max(best, signal(a.Radio, r)), true
		}
	}
	if !found {
		return -50
	}
	return best
}

// queueResponse builds the ACK or Block Ack answering a and holds it
// until its time.
func (c *AirCapture) queueResponse(a model.Air, head []byte, mpdu func(*model.MediumFrame) []byte, addr func(int) [6]byte, signal func(tx, rx int) float64) {
	r := airResponse{at: c.start + int64(a.RespAt), rate: a.RespRate, freq: a.Freq, dbm: -50}
	if signal != nil {
		r.dbm = signal(a.RespFrom, a.Radio)
	}
	// RA: the eliciting frame's TA; a Block Ack's TA: the address the
	// data was sent to.
	var ra, ta [6]byte
	switch {
	case len(head) >= 16:
		ra = [6]byte(head[10:16])
	case addr != nil:
		ra = addr(a.Radio)
	}
	switch {
	case len(head) >= 10:
		ta = [6]byte(head[4:10])
	case addr != nil:
		ta = addr(a.RespFrom)
	}
	fr := r.frame[:0]
	if !a.BlockAck {
		fr = append(fr, 0xd4, 0, 0, 0)
		fr = append(fr, ra[:]...)
	} else {
		fr = append(fr, 0x94, 0, 0, 0)
		fr = append(fr, ra[:]...)
		fr = append(fr, ta[:]...)
		ssn, tid := seqTID(head)
		var bm uint64
		for i, f := range a.Frames {
			if i >= len(a.OK) || !a.OK[i] {
				continue
			}
			b := head
			if i > 0 {
				b = frameBytes(f, mpdu)
			}
			s, _ := seqTID(b)
			if d := (s - ssn) & 0xfff; d < 64 {
				bm |= 1 << d
			}
		}
		fr = rtLE.AppendUint16(fr, 0x0004|uint16(tid)<<12) // compressed bitmap; TID_INFO
		fr = rtLE.AppendUint16(fr, ssn<<4)
		fr = rtLE.AppendUint64(fr, bm)
	}
	r.n = len(fr)
	i := len(c.pending)
	for i > 0 && c.pending[i-1].at > r.at {
		i--
	}
	c.pending = slices.Insert(c.pending, i, r)
}

// seqTID reads a data frame's sequence number and (QoS) TID.
func seqTID(b []byte) (seq uint16, tid int) {
	if len(b) < 24 {
		return 0, 0
	}
	seq = rtLE.Uint16(b[22:]) >> 4
	off := 24
	if b[1]&3 == 3 { // four addresses
		off = 30
	}
	if (b[0]>>2)&3 == 2 && b[0]&0x80 != 0 && len(b) >= off+2 { // QoS data
		tid = int(b[off] & 0x0f)
	}
	return seq, tid
}

// writeResponses writes the held responses due by ts.
func (c *AirCapture) writeResponses(ts int64) error {
	n := 0
	for ; n < len(c.pending) && c.pending[n].at <= ts; n++ {
		r := &c.pending[n]
		flags := uint8(0)
		if shortPreamble(r.rate) {
			flags = rtFlagShortPre
		}
		c.rt = appendRadiotap(c.rt[:0], r.rate, r.freq, flags, r.dbm, false, 0, false)
		if err := c.w.WritePacketParts(0, r.at, c.rt, c.snap(r.frame[:r.n]), len(c.rt)+r.n, 0); err != nil {
			return err
		}
	}
	if n > 0 {
		c.pending = append(c.pending[:0], c.pending[n:]...)
	}
	return nil
}

// appendRadiotap appends a radiotap header for a PPDU at rate r on freq
// MHz: Flags, Rate (legacy rates), Channel, dBm antenna signal, then MCS
// (HT), A-MPDU status (ampdu), VHT or HE — in field-number order, each
// aligned to its size as the radiotap spec requires.
func appendRadiotap(b []byte, r model.Rate, freq int, flags uint8, dbm float64, ampdu bool, ref uint32, last bool) []byte {
	base := len(b)
	align := func(b []byte, n int) []byte {
		for (len(b)-base)%n != 0 {
			b = append(b, 0)
		}
		return b
	}
	b = append(b, 0, 0, 0, 0, 0, 0, 0, 0) // version 0, pad, length, present
	present := uint32(1<<rtFlags | 1<<rtChannel | 1<<rtDBmSignal)
	b = append(b, flags)
	if r.Class == model.DSSS || r.Class == model.OFDM {
		present |= 1 << rtRate
		b = append(b, byte(r.Kbps/500))
	}
	b = align(b, 2)
	ch := uint16(rtChanOFDM)
	if r.Class == model.DSSS {
		ch = rtChanCCK
	}
	if freq < 3000 {
		ch |= rtChan2GHz
	} else {
		ch |= rtChan5GHz
	}
	b = rtLE.AppendUint16(b, uint16(freq))
	b = rtLE.AppendUint16(b, ch)
	b = append(b, byte(dBm8(dbm)))
	nss := max(r.NSS, 1)
	switch r.Class {
	case model.HT:
		present |= 1 << rtMCS
		f := uint8(0)
		if r.WidthMHz == 40 {
			f |= rtMCSBW40
		}
		if r.GI == 400*time.Nanosecond {
			f |= rtMCSSGI
		}
		b = append(b, rtMCSKnown, f, byte(r.MCS))
	}
	if ampdu {
		present |= 1 << rtAMPDU
		b = align(b, 4)
		b = rtLE.AppendUint32(b, ref)
		f := uint16(rtAMPDULastKnown)
		if last {
			f |= rtAMPDUIsLast
		}
		b = rtLE.AppendUint16(b, f)
		b = append(b, 0, 0) // delimiter CRC, reserved
	}
	switch r.Class {
	case model.VHT:
		present |= 1 << rtVHT
		b = align(b, 2)
		b = rtLE.AppendUint16(b, rtVHTKnown)
		f := uint8(0)
		if r.GI == 400*time.Nanosecond {
			f |= rtVHTSGI
		}
		bw := uint8(0) // 20 MHz
		switch r.WidthMHz {
		case 40:
			bw = 1
		case 80:
			bw = 4
		case 160:
			bw = 11
		}
		b = append(b, f, bw, byte(r.MCS<<4|nss&0x0f), 0, 0, 0) // mcs_nss of user 0 only
		b = append(b, 0, 0, 0, 0)                              // coding (BCC), group ID, partial AID
	case model.HE:
		present |= 1 << rtHE
		b = align(b, 2)
		bw := uint16(0) // 20 MHz
		switch r.WidthMHz {
		case 40:
			bw = 1
		case 80:
			bw = 2
		case 160:
			bw = 3
		}
		gi := uint16(0) // 0.8 µs
		switch r.GI {
		case 1600 * time.Nanosecond:
			gi = 1
		case 3200 * time.Nanosecond:
			gi = 2
		}
		b = rtLE.AppendUint16(b, rtHEData1)
		b = rtLE.AppendUint16(b, rtHEData2)
		b = rtLE.AppendUint16(b, uint16(r.MCS&0x0f)<<8|rtHELDPC)
		b = rtLE.AppendUint16(b, 0)
		b = rtLE.AppendUint16(b, bw|gi<<4|rtHELTF2x)
		b = rtLE.AppendUint16(b, uint16(nss&0x0f))
	}
	rtLE.PutUint16(b[base+2:], uint16(len(b)-base))
	rtLE.PutUint32(b[base+4:], present)
	return b
}

// dBm8 is a power as radiotap's signed dBm byte.
func dBm8(x float64) int8 {
	x = math.Round(x)
	switch {
	case !(x >= -128): // and NaN
		return -128
	case x > 127:
		return 127
	}
	return int8(x)
}
