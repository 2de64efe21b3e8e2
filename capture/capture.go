package capture

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/emuctl/emuctl/capture/packet"
	"github.com/emuctl/emuctl/capture/pcapng"
)

// DefaultSnaplen keeps whole packets (as tcpdump does).
const DefaultSnaplen = 262144

// Options control a capture.
type Options struct {
	// Snaplen is the most bytes kept per packet (default DefaultSnaplen).
	// 128 keeps every header of a TCP/IPv4 packet and makes long runs
	// small.
	Snaplen int
	// Count stops after this many packets were written (0 = no limit).
	Count int
	// Duration stops after this long (0 = until the context ends).
	Duration time.Duration
	// Filter selects the packets written (zero value: all).
	Filter packet.Filter
	// Ready, if set, is called once the socket is bound and receiving.
	Ready func()
}

// Stats count what a capture saw.
type Stats struct {
	// Written packets went to the file; Filtered did not match the
	// filter; KernelDrops were dropped by the kernel because the socket
	// buffer was full (the capture is then incomplete).
	Written     uint64 `json:"written"`
	Filtered    uint64 `json:"filtered"`
	KernelDrops uint64 `json:"kernel_drops"`
	// LinkType is the pcap link type of the interface.
	LinkType uint16 `json:"link_type"`
}

// Capture records packets from iface in the network namespace mounted at
// nsPath ("" = the caller's namespace) to w as pcapng, until ctx ends,
// Count packets were written, or Duration passed. The file is flushed
// before it returns, also on error.
func Capture(ctx context.Context, nsPath, iface string, o Options, w io.Writer) (Stats, error) {
	if o.Snaplen <= 0 {
		o.Snaplen = DefaultSnaplen
	}
	if o.Duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Duration)
		defer cancel()
	}
	s, err := openSocket(nsPath, iface)
	if err != nil {
		return Stats{}, err
	}
	defer s.close()
	st := Stats{LinkType: s.linkType}
	pw, err := pcapng.NewWriter(w, "emuctl capture")
	if err != nil {
		return st, err
	}
	if _, err := pw.AddInterface(pcapng.Interface{LinkType: s.linkType, SnapLen: uint32(o.Snaplen), Name: iface}); err != nil {
		return st, err
	}
	if o.Ready != nil {
		o.Ready()
	}
	err = loop(ctx, s, o, pw, &st)
	st.KernelDrops += s.drops()
	if ferr := pw.Flush(); err == nil {
		err = ferr
	}
	return st, err
}

func loop(ctx context.Context, s *socket, o Options, pw *pcapng.Writer, st *Stats) error {
	// Read whole packets (up to a 256 KiB GSO/BIG TCP frame) so the filter
	// sees the headers, then keep Snaplen bytes.
	buf := make([]byte, max(o.Snaplen, 256<<10))
	oob := make([]byte, 128)
	var in packet.Info
	for {
		if ctx.Err() != nil {
			return nil
		}
		f, err := s.recv(buf, oob)
		if errors.Is(err, errTimeout) {
			continue
		}
		if err != nil {
			return fmt.Errorf("capture on %s: %w", s.iface, err)
		}
		data := buf[:f.n]
		if !o.Filter.Empty() && !o.Filter.Match(&in, packet.Decode(s.linkType, data, f.wire, &in)) {
			st.Filtered++
			continue
		}
		if len(data) > o.Snaplen {
			data = data[:o.Snaplen]
		}
		if err := pw.WritePacket(0, f.tsNs, data, f.wire, f.flags); err != nil {
			return err
		}
		st.Written++
		if o.Count > 0 && st.Written >= uint64(o.Count) {
			return nil
		}
	}
}
