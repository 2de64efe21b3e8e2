package pcapng

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"math/big"
)

// Reader reads packets from a pcapng file (any number of sections, either
// byte order) or a classic pcap file (µs or ns timestamps, either byte
// order). Data returned by Next is valid until the following call.
type Reader struct {
	r       *bufio.Reader
	order   binary.ByteOrder
	ifaces  []Interface
	discard int // bytes of the previous block still in the buffer
	own     []byte
	pcap    bool // classic libpcap file
}

const readBuf = 1 << 20

// NewReader detects the format from the first bytes of r.
func NewReader(r io.Reader) (*Reader, error) {
	pr := &Reader{r: bufio.NewReaderSize(r, readBuf)}
	head, err := pr.r.Peek(4)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrFormat, err)
	}
	switch m := binary.LittleEndian.Uint32(head); m {
	case blockSHB:
		return pr, nil // the section header is read by the first Next
	case 0xa1b2c3d4, 0xa1b23c4d, 0xd4c3b2a1, 0x4d3cb2a1:
		return pr, pr.readPcapHeader()
	}
	return nil, ErrFormat
}

// Interfaces are the interfaces described so far in the current section.
func (r *Reader) Interfaces() []Interface { return r.ifaces }

// LinkType is the link type of interface i (Ethernet if unknown).
func (r *Reader) LinkType(i int) uint16 {
	if i >= 0 && i < len(r.ifaces) {
		return r.ifaces[i].LinkType
	}
	return LinkTypeEthernet
}

// Next returns the next packet, or io.EOF at the end of the input.
func (r *Reader) Next() ([]byte, CaptureInfo, error) {
	if r.pcap {
		return r.nextPcap()
	}
	for {
		if r.discard > 0 {
			if _, err := r.r.Discard(r.discard); err != nil {
				return nil, CaptureInfo{}, unexpected(err)
			}
			r.discard = 0
		}
		blk, typ, err := r.block()
		if err != nil {
			return nil, CaptureInfo{}, err
		}
		body := blk[8 : len(blk)-4]
		switch typ {
		case blockEPB:
			return r.epb(body)
		case blockSPB:
			return r.spb(body)
		case blockPB:
			return r.pb(body)
		case blockIDB:
			if err := r.idb(body); err != nil {
				return nil, CaptureInfo{}, err
			}
		}
	}
}

// block returns the next whole block (header to trailer) and its type. The
// slice is valid until the next call.
func (r *Reader) block() ([]byte, uint32, error) {
	hdr, err := r.r.Peek(8)
	if err != nil {
		if err == io.EOF && len(hdr) == 0 {
			return nil, 0, io.EOF
		}
		return nil, 0, unexpected(err)
	}
	typ := binary.LittleEndian.Uint32(hdr) // SHB's type is a palindrome
	if typ == blockSHB {
		h, err := r.r.Peek(12)
		if err != nil {
			return nil, 0, unexpected(err)
		}
		switch binary.LittleEndian.Uint32(h[8:]) {
		case byteOrderMagic:
			r.order = binary.LittleEndian
		case 0x4D3C2B1A:
			r.order = binary.BigEndian
		default:
			return nil, 0, fmt.Errorf("%w: bad byte-order magic", ErrFormat)
		}
		r.ifaces = r.ifaces[:0]
	} else if r.order == nil {
		return nil, 0, fmt.Errorf("%w: no section header", ErrFormat)
	} else {
		typ = r.order.Uint32(hdr)
	}
	total := int(r.order.Uint32(hdr[4:]))
	if total < 12 || total%4 != 0 || total > maxBlockSize {
		return nil, 0, fmt.Errorf("%w: block length %d", ErrFormat, total)
	}
	var blk []byte
	if total <= readBuf {
		blk, err = r.r.Peek(total)
		if err != nil {
			return nil, 0, unexpected(err)
		}
		r.discard = total
	} else {
		if cap(r.own) < total {
			r.own = make([]byte, total)
		}
		blk = r.own[:total]
		if _, err := io.ReadFull(r.r, blk); err != nil {
			return nil, 0, unexpected(err)
		}
	}
	if typ == blockSHB && total < 28 {
		return nil, 0, fmt.Errorf("%w: short section header", ErrFormat)
	}
	return blk, typ, nil
}

func (r *Reader) idb(b []byte) error {
	if len(b) < 8 {
		return fmt.Errorf("%w: short interface block", ErrFormat)
	}
	ifc := Interface{LinkType: r.order.Uint16(b), SnapLen: r.order.Uint32(b[4:]), unitsPerSec: 1e6}
	opts := b[8:]
	for len(opts) >= 4 {
		code, n := r.order.Uint16(opts), int(r.order.Uint16(opts[2:]))
		if code == optEnd || 4+n > len(opts) {
			break
		}
		v := opts[4 : 4+n]
		switch {
		case code == ifName:
			ifc.Name = string(v)
		case code == ifDescr:
			ifc.Description = string(v)
		case code == ifTsresol && n >= 1:
			ifc.unitsPerSec = tsUnits(v[0])
		case code == ifTsoffset && n >= 8:
			ifc.offsetS = int64(r.order.Uint64(v))
		}
		opts = opts[4+(n+3)&^3:]
	}
	r.ifaces = append(r.ifaces, ifc)
	return nil
}

func tsUnits(v byte) uint64 {
	e := uint64(v & 0x7f)
	if v&0x80 != 0 {
		if e > 63 {
			e = 63
		}
		return 1 << e
	}
	u := uint64(1)
	for ; e > 0 && u <= 1e18; e-- {
		u *= 10
	}
	return u
}

func (r *Reader) epb(b []byte) ([]byte, CaptureInfo, error) {
	if len(b) < 20 {
		return nil, CaptureInfo{}, fmt.Errorf("%w: short packet block", ErrFormat)
	}
	ifi := int(r.order.Uint32(b))
	if ifi >= len(r.ifaces) {
		return nil, CaptureInfo{}, fmt.Errorf("%w: packet on undeclared interface %d", ErrFormat, ifi)
	}
	ts := uint64(r.order.Uint32(b[4:]))<<32 | uint64(r.order.Uint32(b[8:]))
	capLen, origLen := int(r.order.Uint32(b[12:])), int(r.order.Uint32(b[16:]))
	if 20+capLen > len(b) {
		return nil, CaptureInfo{}, fmt.Errorf("%w: packet longer than its block", ErrFormat)
	}
	ci := CaptureInfo{TimestampNs: r.ifaces[ifi].nanos(ts), CaptureLength: capLen, Length: origLen, Interface: ifi}
	opts := b[20+(capLen+3)&^3:]
	for len(opts) >= 4 {
		code, n := r.order.Uint16(opts), int(r.order.Uint16(opts[2:]))
		if code == optEnd || 4+n > len(opts) {
			break
		}
		if code == epbFlags && n == 4 {
			ci.Flags = r.order.Uint32(opts[4:])
		}
		opts = opts[4+(n+3)&^3:]
	}
	return b[20 : 20+capLen], ci, nil
}

func (r *Reader) spb(b []byte) ([]byte, CaptureInfo, error) {
	if len(b) < 4 || len(r.ifaces) == 0 {
		return nil, CaptureInfo{}, fmt.Errorf("%w: bad simple packet block", ErrFormat)
	}
	origLen := int(r.order.Uint32(b))
	capLen := min(origLen, len(b)-4)
	if s := int(r.ifaces[0].SnapLen); s > 0 && capLen > s {
		capLen = s
	}
	return b[4 : 4+capLen], CaptureInfo{CaptureLength: capLen, Length: origLen}, nil
}

func (r *Reader) pb(b []byte) ([]byte, CaptureInfo, error) {
	if len(b) < 20 {
		return nil, CaptureInfo{}, fmt.Errorf("%w: short packet block", ErrFormat)
	}
	ifi := int(r.order.Uint16(b))
	if ifi >= len(r.ifaces) {
		return nil, CaptureInfo{}, fmt.Errorf("%w: packet on undeclared interface %d", ErrFormat, ifi)
	}
	ts := uint64(r.order.Uint32(b[4:]))<<32 | uint64(r.order.Uint32(b[8:]))
	capLen, origLen := int(r.order.Uint32(b[12:])), int(r.order.Uint32(b[16:]))
	if 20+capLen > len(b) {
		return nil, CaptureInfo{}, fmt.Errorf("%w: packet longer than its block", ErrFormat)
	}
	return b[20 : 20+capLen], CaptureInfo{TimestampNs: r.ifaces[ifi].nanos(ts), CaptureLength: capLen, Length: origLen, Interface: ifi}, nil
}

// nanos converts a timestamp in the interface's units to Unix nanoseconds.
func (ifc *Interface) nanos(ts uint64) int64 {
	u := ifc.unitsPerSec
	var ns int64
	switch {
	case u == 1e9:
		ns = int64(ts)
	case u != 0 && 1e9%u == 0:
		ns = int64(ts * (1e9 / u))
	default:
		x := new(big.Int).SetUint64(ts)
		x.Mul(x, big.NewInt(1e9))
		x.Quo(x, new(big.Int).SetUint64(u))
		ns = x.Int64()
	}
	return ns + ifc.offsetS*1e9
}

func unexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
