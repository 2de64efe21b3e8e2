package traffic

import (
	"fmt"
	"net/netip"
	"time"

	"github.com/emuctl/emuctl/units"
)

// Protocols.
const (
	TCP   = "tcp"
	MPTCP = "mptcp"
	UDP   = "udp"
)

// Engines.
const (
	EngineNative = "native"
	EngineIperf3 = "iperf3"
)

// Probe kinds.
const (
	ProbeICMP = "icmp"
	ProbeUDP  = "udp"
)

// Defaults and limits.
const (
	DefaultDuration = 10 * time.Second
	DefaultInterval = 100 * time.Millisecond
	MinInterval     = 10 * time.Millisecond
	DefaultUDPRate  = 1_000_000 // bit/s, as iperf3
	DefaultUDPSize  = 1448      // payload bytes: one datagram per 1500-byte frame
	MinUDPSize      = udpHeaderLen
	MaxUDPSize      = 65507
	MaxParallel     = 128
	DefaultProbeHz  = 10
)

// Flow is one flow to run: Client connects to Server. Data goes Client →
// Server, or Server → Client with Reverse (as iperf3's -R).
type Flow struct {
	// Name identifies the flow in results ("f1" when empty).
	Name string
	// Client and Server are node names (--from and --to).
	Client, Server string
	// Dst is the server address to connect to; invalid means the server
	// node's first address.
	Dst netip.Addr
	// Proto is tcp, mptcp or udp.
	Proto string
	// Engine is native (default) or iperf3.
	Engine string
	// Start is the offset from the start of the run.
	Start time.Duration
	// Duration is how long data is sent.
	Duration time.Duration
	// Interval is the sampling interval (10 ms .. Duration).
	Interval time.Duration
	// Reverse makes the server send.
	Reverse bool
	// Parallel is the number of streams (connections, or UDP sockets).
	Parallel int
	// Port is the server port; 0 lets the kernel pick a free one.
	Port int
	// Sock are TCP socket options (CC per socket, no-delay, ...).
	Sock SockOpts
	// Rate is the sending rate of payload, per stream: UDP's pacing, or
	// for TCP and MPTCP an application that writes no faster (0: as fast
	// as the socket takes data).
	Rate units.BitRate
	// Size is the UDP payload size in bytes.
	Size int
	// Probe is "", icmp or udp: an echo probe alongside the flow, Client →
	// Server → Client.
	Probe string
	// ProbeRate is the probe rate in Hz.
	ProbeRate float64
	// KeepPackets records every received UDP datagram in the result
	// (default on; off for very long or fast flows).
	KeepPackets *bool
	// Pos is where the flow was declared ("file:line:col"), for messages.
	Pos string
}

// withDefaults fills unset fields.
func (f Flow) withDefaults(i int) Flow {
	if f.Name == "" {
		f.Name = fmt.Sprintf("f%d", i+1)
	}
	if f.Proto == "" {
		f.Proto = TCP
	}
	if f.Engine == "" {
		f.Engine = EngineNative
	}
	if f.Duration == 0 {
		f.Duration = DefaultDuration
	}
	if f.Interval == 0 {
		f.Interval = DefaultInterval
	}
	if f.Parallel == 0 {
		f.Parallel = 1
	}
	if f.Proto == UDP {
		if f.Rate == 0 {
			f.Rate = DefaultUDPRate
		}
		if f.Size == 0 {
			f.Size = DefaultUDPSize
		}
	}
	if f.Probe != "" && f.ProbeRate == 0 {
		f.ProbeRate = DefaultProbeHz
	}
	return f
}

// check validates one flow on its own (nodes are checked against the lab
// by Run). It returns every problem found.
func (f Flow) check() []string {
	var p []string
	if f.Client == "" {
		p = append(p, "no client node (--from)")
	}
	if f.Server == "" {
		p = append(p, "no server node (--to)")
	}
	if f.Client != "" && f.Client == f.Server {
		p = append(p, fmt.Sprintf("client and server are the same node %q", f.Client))
	}
	switch f.Proto {
	case TCP, MPTCP, UDP:
	default:
		p = append(p, fmt.Sprintf("unknown protocol %q (valid: tcp, mptcp, udp)", f.Proto))
	}
	switch f.Engine {
	case EngineNative, EngineIperf3:
	default:
		p = append(p, fmt.Sprintf("unknown engine %q (valid: native, iperf3)", f.Engine))
	}
	if f.Engine == EngineIperf3 && f.Proto == MPTCP {
		p = append(p, "the iperf3 engine cannot run MPTCP (Debian's iperf3 3.12 has no --mptcp); use the native engine")
	}
	if f.Duration < 100*time.Millisecond || f.Duration > 24*time.Hour {
		p = append(p, fmt.Sprintf("duration %v out of range (valid: 100ms .. 24h)", f.Duration))
	}
	if f.Start < 0 || f.Start > 24*time.Hour {
		p = append(p, fmt.Sprintf("start offset %v out of range (valid: 0 .. 24h)", f.Start))
	}
	if f.Interval < MinInterval || f.Interval > f.Duration {
		p = append(p, fmt.Sprintf("interval %v out of range (valid: %v .. the duration, %v)", f.Interval, MinInterval, f.Duration))
	}
	if f.Engine == EngineIperf3 && f.Interval < 100*time.Millisecond {
		p = append(p, fmt.Sprintf("interval %v: iperf3 reports at most every 100ms", f.Interval))
	}
	if f.Parallel < 1 || f.Parallel > MaxParallel {
		p = append(p, fmt.Sprintf("parallel %d out of range (valid: 1 .. %d)", f.Parallel, MaxParallel))
	}
	if f.Port < 0 || f.Port > 65535 {
		p = append(p, fmt.Sprintf("port %d out of range (valid: 1 .. 65535, or 0 for automatic)", f.Port))
	}
	if f.Proto == UDP {
		if f.Size < MinUDPSize || f.Size > MaxUDPSize {
			p = append(p, fmt.Sprintf("size %d out of range (valid: %d .. %d bytes of UDP payload)", f.Size, MinUDPSize, MaxUDPSize))
		}
		if f.Sock.CC != "" {
			p = append(p, "a congestion control makes no sense for UDP")
		}
	} else if f.Size != 0 {
		p = append(p, "size applies to UDP only (a TCP flow's writes are 128 KiB blocks, or paced by rate)")
	}
	if f.Proto != UDP && f.Rate != 0 && f.Engine == EngineIperf3 {
		p = append(p, "a paced TCP application (rate) needs the native engine")
	}
	if err := CheckCC(f.Sock.CC); err != nil {
		p = append(p, err.Error())
	}
	switch f.Probe {
	case "":
	case ProbeICMP, ProbeUDP:
		if f.ProbeRate <= 0 || f.ProbeRate > 1000 {
			p = append(p, fmt.Sprintf("probe rate %g Hz out of range (valid: > 0 .. 1000)", f.ProbeRate))
		}
	default:
		p = append(p, fmt.Sprintf("unknown probe %q (valid: icmp, udp)", f.Probe))
	}
	if f.Sock.SndBuf < 0 || f.Sock.RcvBuf < 0 {
		p = append(p, "buffer sizes must be positive")
	}
	return p
}

// dataFrom and dataTo are the nodes that send and receive the data.
func (f Flow) dataFrom() string {
	if f.Reverse {
		return f.Server
	}
	return f.Client
}

func (f Flow) dataTo() string {
	if f.Reverse {
		return f.Client
	}
	return f.Server
}

func (f Flow) keepPackets() bool { return f.KeepPackets == nil || *f.KeepPackets }
