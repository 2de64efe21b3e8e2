package pcapng

import (
	"encoding/binary"
	"fmt"
	"io"
)

// readPcapHeader reads a classic libpcap global header.
func (r *Reader) readPcapHeader() error {
	h := make([]byte, 24)
	if _, err := io.ReadFull(r.r, h); err != nil {
		return fmt.Errorf("%w: %v", ErrFormat, err)
	}
	ifc := Interface{unitsPerSec: 1e6}
	switch binary.LittleEndian.Uint32(h) {
	case 0xa1b2c3d4:
		r.order = binary.LittleEndian
	case 0xa1b23c4d:
		r.order, ifc.unitsPerSec = binary.LittleEndian, 1e9
	case 0xd4c3b2a1:
		r.order = binary.BigEndian
	case 0x4d3cb2a1:
		r.order, ifc.unitsPerSec = binary.BigEndian, 1e9
	}
	ifc.SnapLen = r.order.Uint32(h[16:])
	ifc.LinkType = uint16(r.order.Uint32(h[20:]) & 0xffff)
	r.ifaces = []Interface{ifc}
	r.pcap = true
	return nil
}

// nextPcap reads one classic pcap record.
func (r *Reader) nextPcap() ([]byte, CaptureInfo, error) {
	if r.discard > 0 {
		if _, err := r.r.Discard(r.discard); err != nil {
			return nil, CaptureInfo{}, unexpected(err)
		}
		r.discard = 0
	}
	h, err := r.r.Peek(16)
	if err != nil {
		if err == io.EOF && len(h) == 0 {
			return nil, CaptureInfo{}, io.EOF
		}
		return nil, CaptureInfo{}, unexpected(err)
	}
	sec, frac := uint64(r.order.Uint32(h)), uint64(r.order.Uint32(h[4:]))
	capLen, origLen := int(r.order.Uint32(h[8:])), int(r.order.Uint32(h[12:]))
	if capLen > maxBlockSize {
		return nil, CaptureInfo{}, fmt.Errorf("%w: record length %d", ErrFormat, capLen)
	}
	ifc := &r.ifaces[0]
	ci := CaptureInfo{TimestampNs: int64(sec)*1e9 + int64(frac*(1e9/ifc.unitsPerSec)), CaptureLength: capLen, Length: origLen}
	var rec []byte
	if 16+capLen <= readBuf {
		rec, err = r.r.Peek(16 + capLen)
		r.discard = 16 + capLen
	} else {
		if cap(r.own) < 16+capLen {
			r.own = make([]byte, 16+capLen)
		}
		rec = r.own[:16+capLen]
		_, err = io.ReadFull(r.r, rec)
	}
	if err != nil {
		return nil, CaptureInfo{}, unexpected(err)
	}
	return rec[16:], ci, nil
}
