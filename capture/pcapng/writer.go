package pcapng

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
)

// Writer writes one pcapng section: a section header, interface
// descriptions and enhanced packet blocks with nanosecond timestamps, in
// little-endian byte order. It buffers; call Flush at the end.
type Writer struct {
	w      *bufio.Writer
	ifaces []Interface
	buf    []byte
}

var le = binary.LittleEndian

// NewWriter starts a section; app names the writing application
// (shb_userappl), e.g. "emuctl capture".
func NewWriter(w io.Writer, app string) (*Writer, error) {
	pw := &Writer{w: bufio.NewWriterSize(w, 1<<16)}
	body := le.AppendUint32(nil, byteOrderMagic)
	body = le.AppendUint16(body, 1) // major
	body = le.AppendUint16(body, 0) // minor
	body = le.AppendUint64(body, ^uint64(0))
	if app != "" {
		body = appendOption(body, shbUserAppl, []byte(app))
	}
	body = appendOption(body, optEnd, nil)
	return pw, pw.block(blockSHB, body)
}

// AddInterface writes an interface description and returns its index.
// Timestamps written for it are nanoseconds (if_tsresol = 9).
func (w *Writer) AddInterface(ifc Interface) (int, error) {
	body := le.AppendUint16(nil, ifc.LinkType)
	body = le.AppendUint16(body, 0)
	body = le.AppendUint32(body, ifc.SnapLen)
	if ifc.Name != "" {
		body = appendOption(body, ifName, []byte(ifc.Name))
	}
	if ifc.Description != "" {
		body = appendOption(body, ifDescr, []byte(ifc.Description))
	}
	body = appendOption(body, ifTsresol, []byte{9})
	body = appendOption(body, optEnd, nil)
	if err := w.block(blockIDB, body); err != nil {
		return 0, err
	}
	ifc.unitsPerSec = 1e9
	w.ifaces = append(w.ifaces, ifc)
	return len(w.ifaces) - 1, nil
}

// WritePacket writes one packet captured on interface ifIndex at
// tsNs (Unix nanoseconds). data is what was captured; origLen the length
// on the wire (≥ len(data)); flags the epb_flags (0 to omit).
func (w *Writer) WritePacket(ifIndex int, tsNs int64, data []byte, origLen int, flags uint32) error {
	return w.WritePacketParts(ifIndex, tsNs, nil, data, origLen, flags)
}

// WritePacketParts is WritePacket for a packet captured as head followed
// by data (a radiotap header and the frame behind it, say), written
// without first copying the two together. origLen is the length of the
// whole packet on the wire (≥ len(head)+len(data)).
func (w *Writer) WritePacketParts(ifIndex int, tsNs int64, head, data []byte, origLen int, flags uint32) error {
	if ifIndex < 0 || ifIndex >= len(w.ifaces) {
		return fmt.Errorf("pcapng: interface %d not added", ifIndex)
	}
	n := len(head) + len(data)
	if origLen < n {
		origLen = n
	}
	pad := (4 - n%4) % 4
	optLen := 0
	if flags != 0 {
		optLen = 8 + 4 // flags option + end of options
	}
	total := 12 + 20 + n + pad + optLen
	b := w.buf[:0]
	b = le.AppendUint32(b, blockEPB)
	b = le.AppendUint32(b, uint32(total))
	b = le.AppendUint32(b, uint32(ifIndex))
	ts := uint64(tsNs)
	b = le.AppendUint32(b, uint32(ts>>32))
	b = le.AppendUint32(b, uint32(ts))
	b = le.AppendUint32(b, uint32(n))
	b = le.AppendUint32(b, uint32(origLen))
	w.buf = b
	if _, err := w.w.Write(b); err != nil {
		return err
	}
	if _, err := w.w.Write(head); err != nil {
		return err
	}
	if _, err := w.w.Write(data); err != nil {
		return err
	}
	b = append(b[:0], 0, 0, 0)[:pad]
	if flags != 0 {
		b = le.AppendUint16(b, epbFlags)
		b = le.AppendUint16(b, 4)
		b = le.AppendUint32(b, flags)
		b = le.AppendUint32(b, 0) // opt_endofopt
	}
	b = le.AppendUint32(b, uint32(total))
	w.buf = b
	_, err := w.w.Write(b)
	return err
}

// Flush writes buffered blocks to the underlying writer.
func (w *Writer) Flush() error { return w.w.Flush() }

func (w *Writer) block(typ uint32, body []byte) error {
	total := uint32(12 + len(body))
	b := le.AppendUint32(nil, typ)
	b = le.AppendUint32(b, total)
	b = append(b, body...)
	b = le.AppendUint32(b, total)
	_, err := w.w.Write(b)
	return err
}

func appendOption(b []byte, code uint16, val []byte) []byte {
	b = le.AppendUint16(b, code)
	b = le.AppendUint16(b, uint16(len(val)))
	b = append(b, val...)
	for i := 0; i < (4-len(val)%4)%4; i++ {
		b = append(b, 0)
	}
	return b
}
