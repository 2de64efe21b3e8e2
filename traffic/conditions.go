package traffic

import (
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"strings"

	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/internal/buildinfo"
	"github.com/emuctl/emuctl/units"
	"golang.org/x/sys/unix"
)

// nodeSnap is what is read from one node before and after a run.
type nodeSnap struct {
	sysctls  map[string]string
	counters map[string]int64
	ifaces   []ifaceInfo
}

// snapshot reads every node's counters and interfaces (and, for
// endpoints, the TCP sysctls) from inside its namespace.
func snapshot(lab string, nodes []string, endpoints map[string]bool) map[string]*nodeSnap {
	out := map[string]*nodeSnap{}
	for _, n := range nodes {
		s := &nodeSnap{}
		inNode(lab, n, func() error {
			if endpoints[n] {
				s.sysctls = readSysctls(tcpSysctls)
				s.counters = readCounters()
			}
			s.ifaces, _ = readIfaces()
			return nil
		})
		out[n] = s
	}
	return out
}

// conditions records what the numbers depend on.
func conditions(st *emu.State, flows []Flow, shaped map[int]stateLink, hops []hop, snaps map[string]*nodeSnap) map[string]string {
	c := map[string]string{}
	var u unix.Utsname
	if unix.Uname(&u) == nil {
		c["kernel_release"] = unix.ByteSliceToString(u.Release[:])
		c["kernel_version"] = unix.ByteSliceToString(u.Version[:])
		c["machine"] = unix.ByteSliceToString(u.Machine[:])
	}
	if hz := kernelHZ(); hz != "" {
		c["kernel_hz"] = hz
	}
	c["cpus"] = fmt.Sprint(runtime.NumCPU())
	c["go_version"] = runtime.Version()
	c["tool"] = toolVersion()
	c["clock"] = "one CLOCK_REALTIME for every node (one process, one kernel): one-way delays are exact"
	for _, k := range []string{"tcp_available_congestion_control", "tcp_allowed_congestion_control"} {
		if b, err := os.ReadFile("/proc/sys/net/ipv4/" + k); err == nil {
			c["host."+k] = strings.Join(strings.Fields(string(b)), " ")
		}
	}
	if b, err := json.Marshal(st.Spec); err == nil {
		sum := sha256.Sum256(b)
		c["topology_sha256"] = hex.EncodeToString(sum[:])
	}
	c["topology_source"] = st.Spec.Source
	for n, s := range snaps {
		for k, v := range s.sysctls {
			c["sysctl."+n+"."+k] = v
		}
		for _, ii := range s.ifaces {
			c["iface."+n+"."+ii.name] = ii.offloads
		}
	}
	seen := map[int]bool{}
	for _, h := range hops {
		if seen[h.link] {
			continue
		}
		seen[h.link] = true
		l := allLinks(st.Spec)[h.link]
		backend, _ := linkDirection(st.Spec, shaped, h)
		desc := fmt.Sprintf("%s <-> %s backend=%s", l.A, l.B, backend)
		if l.Params != nil {
			desc += " params=" + l.Params.String()
		}
		if sl, ok := shaped[h.link]; ok && sl.Warning != "" {
			desc += " warning=" + sl.Warning
		}
		c[fmt.Sprintf("link.%d", h.link)] = desc
	}
	for _, f := range flows {
		c["flow."+f.Name] = f.describe()
		if f.Engine == EngineIperf3 && c["iperf3_version"] == "" {
			if out, err := exec.Command("iperf3", "--version").Output(); err == nil {
				c["iperf3_version"] = strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
			}
		}
	}
	return c
}

// describe renders a flow's configuration for the conditions.
func (f Flow) describe() string {
	s := fmt.Sprintf("engine=%s proto=%s client=%s server=%s reverse=%v parallel=%d start=%v duration=%v interval=%v",
		f.Engine, f.Proto, f.Client, f.Server, f.Reverse, f.Parallel, f.Start, f.Duration, f.Interval)
	if f.Proto == UDP {
		s += fmt.Sprintf(" rate=%s size=%d", f.Rate, f.Size)
	} else {
		cc := f.Sock.CC
		if cc == "" {
			cc = "(node default)"
		}
		s += fmt.Sprintf(" cc=%s nodelay=%v quickack=%v sndbuf=%s rcvbuf=%s", cc, f.Sock.NoDelay, f.Sock.QuickAck,
			bufString(f.Sock.SndBuf), bufString(f.Sock.RcvBuf))
	}
	if f.Probe != "" {
		s += fmt.Sprintf(" probe=%s probe_rate=%gHz", f.Probe, f.ProbeRate)
	}
	return s
}

func bufString(n units.Bytes) string {
	if n == 0 {
		return "auto"
	}
	return fmt.Sprint(int64(n))
}

// toolVersion is "emuctl <version> <vcs revision>", as `emuctl version`
// reports the build.
func toolVersion() string { return buildinfo.Read().Short() }

// kernelHZ reads CONFIG_HZ from /proc/config.gz when the kernel has it.
func kernelHZ() string {
	f, err := os.Open("/proc/config.gz")
	if err != nil {
		return ""
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		return ""
	}
	b, err := io.ReadAll(io.LimitReader(z, 4<<20))
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "CONFIG_HZ="); ok {
			return v
		}
	}
	return ""
}

// counters returns the endpoints' counter deltas.
func counters(before, after map[string]*nodeSnap) map[string]map[string]int64 {
	out := map[string]map[string]int64{}
	names := make([]string, 0, len(after))
	for n := range after {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		if before[n] == nil || after[n].counters == nil {
			continue
		}
		if d := counterDelta(before[n].counters, after[n].counters); len(d) > 0 {
			out[n] = d
		}
	}
	return out
}
