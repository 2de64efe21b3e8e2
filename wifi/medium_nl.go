package wifi

import (
	"encoding/binary"
	"errors"
	"fmt"
	"syscall"
	"time"

	"github.com/emuctl/emuctl/wifi/model"
	"github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// The wireless medium's side of MAC80211_HWSIM (drivers/net/wireless/
// virtual/mac80211_hwsim.{c,h}): a socket that REGISTERs as the medium of
// its network namespace's netgroup receives every frame the netgroup's
// radios transmit (HWSIM_CMD_FRAME) and must deliver them (FRAME, one per
// receiver) and report each transmission's outcome (TX_INFO_FRAME);
// ADD_MAC_ADDR/DEL_MAC_ADDR announce interface addresses.

const (
	hwsimCmdRegister    = 1
	hwsimCmdFrame       = 2
	hwsimCmdTxInfoFrame = 3
	hwsimCmdAddMACAddr  = 7
	hwsimCmdDelMACAddr  = 8

	hwsimAttrAddrReceiver    = 1
	hwsimAttrAddrTransmitter = 2
	hwsimAttrFrame           = 3
	hwsimAttrFlags           = 4
	hwsimAttrRxRate          = 5
	hwsimAttrSignal          = 6
	hwsimAttrTxInfo          = 7
	hwsimAttrCookie          = 8
	hwsimAttrFreq            = 19
	hwsimAttrTxInfoFlags     = 21
	hwsimAttrPermAddr        = 22

	hwsimTxCtlReqTxStatus = 1 << 0
	hwsimTxCtlNoAck       = 1 << 1
	hwsimTxStatAck        = 1 << 2

	// struct hwsim_tx_rate_flag flags (enum hwsim_tx_rate_flags).
	rateFlagShortPreamble = 1 << 2
	rateFlagMCS           = 1 << 3
	rateFlag40MHz         = 1 << 5
	rateFlagShortGI       = 1 << 7
	rateFlagVHTMCS        = 1 << 8
	rateFlag80MHz         = 1 << 9
	rateFlag160MHz        = 1 << 10
)

// ErrMediumBusy: the namespace already has a registered medium.
var ErrMediumBusy = errors.New("this lab's radios already have a medium (HWSIM_CMD_REGISTER: EBUSY)")

// ErrMultiChannelRadio: the kernel refuses a medium while any hwsim radio
// on the host has more than one channel (multi-link radios).
var ErrMultiChannelRadio = errors.New("the kernel refuses a medium while any mac80211_hwsim radio on this host has more than one channel (a multi-link radio: HWSIM_CMD_REGISTER: EOPNOTSUPP)")

// HwFrame is one frame a radio transmitted, as the kernel hands it over.
type HwFrame struct {
	Transmitter [6]byte // the radio's addresses[1] (its perm address)
	Data        []byte  // MPDU without FCS
	Flags       uint32
	Freq        int
	Rates       [4]HwRate
	Cookie      uint64
}

// HwRate is one entry of the frame's retry chain: a band-relative legacy
// index or an MCS (by Flags), and the attempt count.
type HwRate struct {
	Idx   int8
	Count uint8
	Flags uint16
}

// HwAddr is an ADD_MAC_ADDR/DEL_MAC_ADDR notice.
type HwAddr struct {
	Radio, Addr [6]byte
	Add         bool
}

// decodeMediumMessage decodes one generic netlink message the kernel sends
// a registered medium: *HwFrame, *HwAddr, or nil for anything else.
func decodeMediumMessage(cmd uint8, attrs []byte) (any, error) {
	ad, err := netlink.NewAttributeDecoder(attrs)
	if err != nil {
		return nil, err
	}
	switch cmd {
	case hwsimCmdFrame:
		f := &HwFrame{}
		for ad.Next() {
			switch ad.Type() {
			case hwsimAttrAddrTransmitter:
				copy(f.Transmitter[:], ad.Bytes())
			case hwsimAttrFrame:
				f.Data = ad.Bytes()
			case hwsimAttrFlags:
				f.Flags = ad.Uint32()
			case hwsimAttrFreq:
				f.Freq = int(ad.Uint32())
			case hwsimAttrCookie:
				f.Cookie = ad.Uint64()
			case hwsimAttrTxInfo:
				b := ad.Bytes()
				for i := 0; i < 4 && 2*i+1 < len(b); i++ {
					f.Rates[i].Idx, f.Rates[i].Count = int8(b[2*i]), b[2*i+1]
				}
			case hwsimAttrTxInfoFlags:
				b := ad.Bytes()
				for i := 0; i < 4 && 3*i+2 < len(b); i++ {
					f.Rates[i].Flags = binary.NativeEndian.Uint16(b[3*i+1:])
				}
			}
		}
		if err := ad.Err(); err != nil {
			return nil, err
		}
		if len(f.Data) < 10 {
			return nil, fmt.Errorf("hwsim frame of %d bytes", len(f.Data))
		}
		return f, nil
	case hwsimCmdAddMACAddr, hwsimCmdDelMACAddr:
		a := &HwAddr{Add: cmd == hwsimCmdAddMACAddr}
		for ad.Next() {
			switch ad.Type() {
			case hwsimAttrAddrTransmitter:
				copy(a.Radio[:], ad.Bytes())
			case hwsimAttrAddrReceiver:
				copy(a.Addr[:], ad.Bytes())
			}
		}
		return a, ad.Err()
	}
	return nil, nil
}

// encodeFrame is HWSIM_CMD_FRAME towards the kernel: deliver data to the
// radio whose addresses[1] is rx.
func encodeFrame(rx [6]byte, data []byte, rxRate uint32, signalDBm int, freq int) ([]byte, error) {
	ae := netlink.NewAttributeEncoder()
	ae.Bytes(hwsimAttrAddrReceiver, rx[:])
	ae.Bytes(hwsimAttrFrame, data)
	ae.Uint32(hwsimAttrRxRate, rxRate)
	ae.Uint32(hwsimAttrSignal, uint32(int32(signalDBm)))
	if freq > 0 {
		ae.Uint32(hwsimAttrFreq, uint32(freq))
	}
	return ae.Encode()
}

// encodeTxInfo is HWSIM_CMD_TX_INFO_FRAME: the outcome of the frame with
// cookie from radio tx (flags: the frame's, plus STAT_ACK when acked).
func encodeTxInfo(tx [6]byte, flags uint32, cookie uint64, ackSignalDBm int, rates [4]HwRate) ([]byte, error) {
	ae := netlink.NewAttributeEncoder()
	ae.Bytes(hwsimAttrAddrTransmitter, tx[:])
	ae.Uint32(hwsimAttrFlags, flags)
	ae.Uint32(hwsimAttrSignal, uint32(int32(ackSignalDBm)))
	b := make([]byte, 8)
	for i, r := range rates {
		b[2*i], b[2*i+1] = byte(r.Idx), r.Count
	}
	ae.Bytes(hwsimAttrTxInfo, b)
	ae.Uint64(hwsimAttrCookie, cookie)
	return ae.Encode()
}

// Legacy rate tables of mac80211_hwsim (kbit/s, index = bitrate index).
var (
	hwsimRates2G = []int{1000, 2000, 5500, 11000, 6000, 9000, 12000, 18000, 24000, 36000, 48000, 54000}
	hwsimRates5G = []int{6000, 9000, 12000, 18000, 24000, 36000, 48000, 54000}
)

func legacyTable(b model.Band) []int {
	if b == model.Band2G4 {
		return hwsimRates2G
	}
	return hwsimRates5G
}

// RateOf turns a retry-chain entry into the model's rate on band b
// (false: the entry ends the chain or names no rate).
func RateOf(r HwRate, b model.Band) (model.Rate, bool) {
	if r.Idx < 0 || r.Count == 0 {
		return model.Rate{}, false
	}
	gi := 800.0
	if r.Flags&rateFlagShortGI != 0 {
		gi = 400
	}
	width := 20
	switch {
	case r.Flags&rateFlag160MHz != 0:
		width = 160
	case r.Flags&rateFlag80MHz != 0:
		width = 80
	case r.Flags&rateFlag40MHz != 0:
		width = 40
	}
	switch {
	case r.Flags&rateFlagVHTMCS != 0:
		x := model.Rate{Class: model.VHT, MCS: int(r.Idx) & 0xf, NSS: int(r.Idx)>>4 + 1, WidthMHz: width, GI: durNs(gi)}
		return x, x.Validate() == nil
	case r.Flags&rateFlagMCS != 0:
		x := model.Rate{Class: model.HT, MCS: int(r.Idx), WidthMHz: min(width, 40), GI: durNs(gi)}
		return x, x.Validate() == nil
	}
	t := legacyTable(b)
	if int(r.Idx) >= len(t) {
		return model.Rate{}, false
	}
	k := t[r.Idx]
	if k == 1000 || k == 2000 || k == 5500 || k == 11000 {
		return model.Rate{Class: model.DSSS, Kbps: k, ShortPreamble: r.Flags&rateFlagShortPreamble != 0}, true
	}
	return model.Rate{Class: model.OFDM, Kbps: k}, true
}

// RxRateIndex is the legacy bitrate index a received frame is reported
// at: the rate itself for legacy frames, the non-HT reference rate for
// HT/VHT/HE (the kernel takes only legacy indexes; RX_RATE ≥ n_bitrates
// is refused).
func RxRateIndex(r model.Rate, b model.Band) uint32 {
	k := r.NonHTReference()
	t := legacyTable(b)
	best := 0
	for i, x := range t {
		if x == k {
			return uint32(i)
		}
		if x <= k {
			best = i
		}
	}
	return uint32(best)
}

// MediumSocket is a registered medium's socket.
type MediumSocket struct {
	h   *Hwsim
	raw syscall.RawConn
	seq uint32
	buf []byte
}

// RegisterMedium makes this socket the medium of its namespace's netgroup
// (every radio created from that namespace, now or later).
func (h *Hwsim) RegisterMedium() (*MediumSocket, error) {
	if _, err := h.exec(hwsimCmdRegister, nil); err != nil {
		switch {
		case errors.Is(err, unix.EBUSY):
			return nil, ErrMediumBusy
		case errors.Is(err, unix.EOPNOTSUPP):
			return nil, ErrMultiChannelRadio
		}
		return nil, fmt.Errorf("hwsim: register medium: %w", err)
	}
	// Radios' pending frames are freed (tx_failed) when the socket buffer
	// is full: give it room for every radio's queue.
	_ = h.c.SetReadBuffer(8 << 20)
	_ = h.c.SetWriteBuffer(8 << 20)
	raw, err := h.c.SyscallConn()
	if err != nil {
		return nil, err
	}
	return &MediumSocket{h: h, raw: raw, buf: make([]byte, 1<<20)}, nil
}

// Fd is the socket's descriptor, for polling it on the medium's own
// thread.
func (s *MediumSocket) Fd() int {
	fd := -1
	s.raw.Control(func(f uintptr) { fd = int(f) })
	return fd
}

// Receive blocks until the kernel sends something and returns the decoded
// messages (*HwFrame, *HwAddr) and how many error replies came with them
// (answers to deliveries the kernel refused: a receiver gone idle, ...).
func (s *MediumSocket) Receive() (msgs []any, nlErrors int, err error) {
	var n int
	var rerr error
	err = s.raw.Read(func(fd uintptr) bool {
		n, _, rerr = unix.Recvfrom(int(fd), s.buf, unix.MSG_DONTWAIT)
		return rerr != unix.EAGAIN
	})
	if err == nil {
		err = rerr
	}
	return s.decode(n, err)
}

// TryReceive is Receive without waiting: nothing pending returns no
// messages and no error.
func (s *MediumSocket) TryReceive(fd int) (msgs []any, nlErrors int, more bool, err error) {
	n, _, err := unix.Recvfrom(fd, s.buf, unix.MSG_DONTWAIT)
	if err == unix.EAGAIN || err == unix.EINTR {
		return nil, 0, false, nil
	}
	msgs, nlErrors, err = s.decode(n, err)
	return msgs, nlErrors, err == nil, err
}

func (s *MediumSocket) decode(n int, err error) (msgs []any, nlErrors int, _ error) {
	if err != nil {
		if errors.Is(err, unix.ENOBUFS) {
			return nil, 0, fmt.Errorf("hwsim medium: receive buffer overrun (frames lost): %w", err)
		}
		return nil, 0, err
	}
	nms, err := syscall.ParseNetlinkMessage(s.buf[:n])
	if err != nil {
		return nil, 0, err
	}
	for _, m := range nms {
		if m.Header.Type == unix.NLMSG_ERROR {
			if len(m.Data) >= 4 && int32(binary.NativeEndian.Uint32(m.Data)) != 0 {
				nlErrors++
			}
			continue
		}
		if m.Header.Type != s.h.fam.ID || len(m.Data) < 4 {
			continue
		}
		v, err := decodeMediumMessage(m.Data[0], m.Data[4:])
		if err != nil {
			nlErrors++
			continue
		}
		if v != nil {
			// Data aliases the receive buffer: copy what outlives it.
			if f, ok := v.(*HwFrame); ok {
				f.Data = append([]byte(nil), f.Data...)
			}
			msgs = append(msgs, v)
		}
	}
	return msgs, nlErrors, nil
}

// Batch collects messages for one sendmsg.
type Batch struct{ b []byte }

func (s *MediumSocket) add(bt *Batch, cmd uint8, attrs []byte) {
	s.seq++
	l := unix.NLMSG_HDRLEN + 4 + len(attrs)
	hdr := make([]byte, unix.NLMSG_HDRLEN+4)
	binary.NativeEndian.PutUint32(hdr[0:], uint32(l))
	binary.NativeEndian.PutUint16(hdr[4:], s.h.fam.ID)
	binary.NativeEndian.PutUint16(hdr[6:], unix.NLM_F_REQUEST)
	binary.NativeEndian.PutUint32(hdr[8:], s.seq)
	hdr[16], hdr[17] = cmd, s.h.fam.Version
	bt.b = append(bt.b, hdr...)
	bt.b = append(bt.b, attrs...)
	for len(bt.b)%4 != 0 {
		bt.b = append(bt.b, 0)
	}
}

// Deliver queues a FRAME for radio rx.
func (s *MediumSocket) Deliver(bt *Batch, rx [6]byte, data []byte, rxRate uint32, signalDBm, freq int) error {
	a, err := encodeFrame(rx, data, rxRate, signalDBm, freq)
	if err != nil {
		return err
	}
	s.add(bt, hwsimCmdFrame, a)
	return nil
}

// TxInfo queues a TX_INFO_FRAME.
func (s *MediumSocket) TxInfo(bt *Batch, tx [6]byte, flags uint32, cookie uint64, ackSignalDBm int, rates [4]HwRate) error {
	a, err := encodeTxInfo(tx, flags, cookie, ackSignalDBm, rates)
	if err != nil {
		return err
	}
	s.add(bt, hwsimCmdTxInfoFrame, a)
	return nil
}

// maxBatch keeps one sendmsg well under the socket's limits.
const maxBatch = 256 << 10

// Flush sends the batch in as few sendmsg calls as fit.
func (s *MediumSocket) Flush(bt *Batch) error {
	defer func() { bt.b = bt.b[:0] }()
	b := bt.b
	for len(b) > 0 {
		// Split on message boundaries.
		cut := 0
		for cut < len(b) {
			l := int(binary.NativeEndian.Uint32(b[cut:]))
			l = (l + 3) &^ 3
			if cut > 0 && cut+l > maxBatch {
				break
			}
			cut += l
		}
		var serr error
		err := s.raw.Write(func(fd uintptr) bool {
			serr = unix.Sendto(int(fd), b[:cut], 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK})
			return serr != unix.EAGAIN
		})
		if err == nil {
			err = serr
		}
		if err != nil {
			return fmt.Errorf("hwsim medium: send: %w", err)
		}
		b = b[cut:]
	}
	return nil
}

// Close unregisters the medium (the kernel does on socket release).
func (s *MediumSocket) Close() error { return s.h.Close() }

func durNs(ns float64) time.Duration { return time.Duration(ns) }
