package suite

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"

	"github.com/emuctl/emuctl/analysis"
	"github.com/emuctl/emuctl/emu"
	"golang.org/x/sys/unix"
)

// tracer records tcp:tcp_cong_state_set events (exact loss-recovery
// episode edges) in a private tracefs instance, so it neither sees nor
// disturbs anyone else's tracing. tracefs is mounted, when the host has
// not mounted it, inside a private mount namespace owned by one locked
// OS thread: nothing is mounted on the host. The instance directory is
// removed by close.
type tracer struct {
	req  chan func()
	inst string // instance directory, valid on the tracer's thread
}

const tracefsDir = "/sys/kernel/tracing"

// startTracer prepares the instance; errors mean "no trace", never a
// failed suite (episodes then come from sampled ca_state).
func startTracer() (*tracer, error) {
	t := &tracer{req: make(chan func())}
	ready := make(chan error)
	go func() {
		// The thread stays locked and dies with the goroutine: its mount
		// namespace is private and must never be reused.
		runtime.LockOSThread()
		if err := t.setup(); err != nil {
			ready <- err
			return
		}
		ready <- nil
		for f := range t.req {
			f()
		}
	}()
	if err := <-ready; err != nil {
		return nil, fmt.Errorf("tracefs: %w", err)
	}
	return t, nil
}

func (t *tracer) setup() error {
	if err := unix.Unshare(unix.CLONE_NEWNS); err != nil {
		return fmt.Errorf("private mount namespace: %w", err)
	}
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return fmt.Errorf("make mounts private: %w", err)
	}
	if _, err := os.Stat(filepath.Join(tracefsDir, "instances")); err != nil {
		if err := unix.Mount("tracefs", tracefsDir, "tracefs", 0, ""); err != nil {
			return fmt.Errorf("mount tracefs: %w", err)
		}
	}
	if _, err := os.Stat(filepath.Join(tracefsDir, "events/tcp/tcp_cong_state_set")); err != nil {
		return errors.New("this kernel has no tcp:tcp_cong_state_set event")
	}
	for i := 0; ; i++ {
		t.inst = filepath.Join(tracefsDir, "instances", emu.TraceInstanceName(i))
		err := os.Mkdir(t.inst, 0o755)
		if err == nil {
			break
		}
		if !errors.Is(err, os.ErrExist) || i > 8 {
			return fmt.Errorf("create instance: %w", err)
		}
	}
	for _, w := range [][2]string{{"trace_clock", "mono"}, {"buffer_size_kb", "8192"}, {"events/tcp/tcp_cong_state_set/enable", "1"}} {
		if err := os.WriteFile(filepath.Join(t.inst, w[0]), []byte(w[1]), 0); err != nil {
			os.Remove(t.inst)
			return fmt.Errorf("%s: %w", w[0], err)
		}
	}
	return nil
}

// do runs f on the tracer's thread.
func (t *tracer) do(f func()) {
	done := make(chan struct{})
	t.req <- func() { f(); close(done) }
	<-done
}

// clear empties the ring buffer before a run.
func (t *tracer) clear() {
	t.do(func() { os.WriteFile(filepath.Join(t.inst, "trace"), nil, 0) })
}

// events reads the buffer and returns the events of res's TCP flows,
// timed from res.Start.
func (t *tracer) events(res *analysis.Result) []analysis.CongStateEvent {
	var data []byte
	var mono, real unix.Timespec
	t.do(func() {
		data, _ = os.ReadFile(filepath.Join(t.inst, "trace"))
		unix.ClockGettime(unix.CLOCK_MONOTONIC, &mono)
		unix.ClockGettime(unix.CLOCK_REALTIME, &real)
	})
	offset := float64(real.Nano()-mono.Nano()) / 1e9 // wall − mono, seconds
	start := float64(res.Start.UnixNano()) / 1e9
	return parseCongEvents(string(data), res.Flows, offset-start)
}

// close disables the event and removes the instance.
func (t *tracer) close() {
	t.do(func() {
		os.WriteFile(filepath.Join(t.inst, "events/tcp/tcp_cong_state_set/enable"), []byte("0"), 0)
		for i := 0; i < 20; i++ {
			if os.Remove(t.inst) == nil {
				break
			}
			time.Sleep(50 * time.Millisecond)
		}
	})
	close(t.req)
}

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
