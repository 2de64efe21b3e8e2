package suite

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/emuctl/emuctl/analysis"
	"github.com/emuctl/emuctl/internal/tracefs"
	"golang.org/x/sys/unix"
)

// tracer records tcp:tcp_cong_state_set events (exact loss-recovery
// episode edges) in a private tracefs instance (internal/tracefs: nothing
// is mounted on the host, nobody else's tracing is seen or disturbed, and
// clean removes the instance a killed run leaves).
type tracer struct{ in *tracefs.Instance }

// startTracer prepares the instance; errors mean "no trace", never a
// failed suite (episodes then come from sampled ca_state).
func startTracer() (*tracer, error) {
	in, err := tracefs.New([][2]string{{"trace_clock", "mono"}, {"buffer_size_kb", "8192"}}, "tcp/tcp_cong_state_set")
	if err != nil {
		return nil, err
	}
	return &tracer{in: in}, nil
}

// clear empties the ring buffer before a run.
func (t *tracer) clear() { t.in.Clear() }

// events reads the buffer and returns the events of res's TCP flows,
// timed from res.Start.
func (t *tracer) events(res *analysis.Result) []analysis.CongStateEvent {
	data, _ := t.in.Read()
	var mono, real unix.Timespec
	unix.ClockGettime(unix.CLOCK_MONOTONIC, &mono)
	unix.ClockGettime(unix.CLOCK_REALTIME, &real)
	offset := float64(real.Nano()-mono.Nano()) / 1e9 // wall − mono, seconds
	start := float64(res.Start.UnixNano()) / 1e9
	return parseCongEvents(string(data), res.Flows, offset-start)
}

// close disables the event and removes the instance.
func (t *tracer) close() { t.in.Close() }

var congLine = regexp.MustCompile(`\s(\d+\.\d+): tcp_cong_state_set: .*?sport=(\d+) dport=(\d+) saddr=(\S+) daddr=(\S+) .*cong_state=(\d+)`)

// parseCongEvents matches trace lines to TCP flows by their sender's
// 4-tuple; shift converts trace (monotonic) seconds to run seconds.
func parseCongEvents(text string, flows []analysis.Flow, shift float64) []analysis.CongStateEvent {
	byTuple := map[string]string{}
	for _, f := range flows {
		if f.Proto == "tcp" && f.Src != "" && f.Dst != "" {
			byTuple[f.Src+">"+f.Dst] = f.ID
		}
	}
	var out []analysis.CongStateEvent
	for _, line := range strings.Split(text, "\n") {
		m := congLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		id, ok := byTuple[m[4]+":"+m[2]+">"+m[5]+":"+m[3]]
		if !ok {
			continue
		}
		ts, _ := strconv.ParseFloat(m[1], 64)
		st, _ := strconv.Atoi(m[6])
		out = append(out, analysis.CongStateEvent{TS: ts + shift, Flow: id, State: uint8(st)})
	}
	return out
}
