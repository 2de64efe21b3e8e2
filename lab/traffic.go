package lab

import (
	"context"
	"fmt"

	"github.com/emuctl/emuctl/analysis"
	"github.com/emuctl/emuctl/traffic"
)

// Flow is one traffic flow between two nodes: Client and Server (node
// names), Proto (tcp, the default; mptcp; udp), Duration (default 10 s),
// Interval (sampling, default 100 ms), Reverse, Parallel, Rate, socket
// options (Sock.CC: congestion control per socket), a Probe alongside...
// See traffic.Flow.
type Flow = traffic.Flow

// TrafficOptions tune TrafficWith: captures, scenario labels, a logger.
type TrafficOptions = traffic.Options

// Result is a traffic run's result: every stream's samples (goodput, cwnd,
// RTT, retransmissions, ...), its summary (Summary[i].SteadyGoodputBps,
// CapacityBps, Utilisation, ...), probes, the links crossed and the
// conditions (kernel, backends, settings). It is the versioned JSON that
// `emuctl report` and package analysis read (analysis.Encode writes it).
type Result = analysis.Result

// Traffic runs flows in the lab, concurrently, as `emuctl traffic` does,
// and returns their measurements once the last one ends. Bad flows are
// reported before anything starts, every problem at once. When ctx is
// cancelled the flows stop, and Traffic returns what was measured with
// ctx's error.
func (l *Lab) Traffic(ctx context.Context, flows ...Flow) (*Result, error) {
	return l.TrafficWith(ctx, TrafficOptions{}, flows...)
}

// TrafficWith is Traffic with options (packet captures, the scenario
// recorded in the result, a logger).
func (l *Lab) TrafficWith(ctx context.Context, opt TrafficOptions, flows ...Flow) (*Result, error) {
	if opt.Log == nil {
		opt.Log = l.log
	}
	return traffic.Run(ctx, l.name, flows, opt)
}

// TrafficFile runs the flows of a flows file (the format of `emuctl
// traffic --flows`; see package traffic) in the lab. A file naming
// another lab (lab:) is refused.
func (l *Lab) TrafficFile(ctx context.Context, path string) (*Result, error) {
	ff, err := traffic.LoadFlowsFile(path)
	if err != nil {
		return nil, err
	}
	if ff.Lab != "" && ff.Lab != l.name {
		return nil, fmt.Errorf("%s: its flows are for lab %s, not %s", path, ff.Lab, l.name)
	}
	return l.TrafficWith(ctx, TrafficOptions{Captures: ff.Captures}, ff.Flows...)
}
