package traffic

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/emuctl/emuctl/analysis"
	"github.com/emuctl/emuctl/topo"
)

// twoPaths is two hosts joined by two links (two /30 subnets).
const twoPaths = `
name: %s
nodes:
  h1: %s
  h2: %s
links:
  - endpoints: [h1, h2]
  - endpoints: [h1, h2]
`

// mptcpEndpoints sets limits on both hosts and has h2 announce its second
// address (the set-up that works, see kernel-notes.md), with iproute2:
// test scaffolding, not product code.
func mptcpEndpoints(t *testing.T, lab string) {
	t.Helper()
	cmds := [][]string{
		{"-n", topo.Namespace(lab, "h1"), "mptcp", "limits", "set", "subflow", "2", "add_addr_accepted", "2"},
		{"-n", topo.Namespace(lab, "h2"), "mptcp", "limits", "set", "subflow", "2", "add_addr_accepted", "2"},
		{"-n", topo.Namespace(lab, "h2"), "mptcp", "endpoint", "add", "10.0.0.6", "dev", "h2-eth1", "signal"},
	}
	for _, c := range cmds {
		if out, err := exec.Command("ip", c...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v: %s", strings.Join(c, " "), err, out)
		}
	}
}

func TestMPTCPSubflows(t *testing.T) {
	needRoot(t)
	lab := yamlLab(t, fmt.Sprintf(twoPaths, "ttrmp", "{}", "{}"))
	mptcpEndpoints(t, lab)
	for _, rev := range []bool{false, true} {
		r := run(t, lab, Flow{Client: "h1", Server: "h2", Proto: MPTCP, Duration: 1500 * time.Millisecond, Reverse: rev, Sock: SockOpts{CC: "cubic"}})
		f := r.Flows[0]
		if f.MPTCPFallback {
			t.Fatalf("reverse=%v: MPTCP fell back to TCP", rev)
		}
		if f.CC != "cubic" {
			t.Errorf("cc read back %q", f.CC)
		}
		most := 0
		for _, s := range f.Samples {
			most = max(most, len(s.Subflows))
		}
		if most != 2 {
			t.Fatalf("reverse=%v: at most %d subflows, want 2", rev, most)
		}
		last := f.Samples[len(f.Samples)-1]
		paths := map[string]int64{}
		for _, s := range f.Samples {
			for _, sf := range s.Subflows {
				paths[strings.Split(sf.Dst, ":")[0]] += sf.Bytes
				if sf.TCP.CwndSegs == 0 || sf.TCP.SrttUs == 0 {
					t.Errorf("subflow %s: cwnd %d srtt %d", sf.ID, sf.TCP.CwndSegs, sf.TCP.SrttUs)
				}
			}
		}
		if len(paths) != 2 {
			t.Errorf("subflows used %d remote addresses, want 2: %v", len(paths), paths)
		}
		for a, b := range paths {
			if b == 0 {
				t.Errorf("subflow to %s carried nothing", a)
			}
		}
		if last.TCP == nil || last.TCP.BytesAcked == 0 {
			t.Errorf("no connection-level numbers: %+v", last.TCP)
		}
		// What the limited-by diagnosis reads: each subflow's busy time,
		// the connection's send buffer (MPTCP socket) and the writer's
		// waiting.
		for _, sf := range last.Subflows {
			if sf.TCP.BusyUs == 0 {
				t.Errorf("subflow %s: no tcpi_busy_time", sf.ID)
			}
		}
		if b := last.SendBuffer; b == nil || b.SizeBytes <= 0 || b.WmemQueuedBytes < 0 {
			t.Errorf("connection send buffer %+v", b)
		}
		if last.WriteWaitUs == 0 {
			t.Error("the writer's waiting was not recorded")
		}
		if l, ok := analysis.Limited(&f, analysis.WholeRun(&f)); !ok || len(l.Subflows) != 2 {
			t.Errorf("limited-by: ok %v, %d subflows", ok, len(l.Subflows))
		}
	}
}

// TestMPTCPFallback: with MPTCP disabled in one node's namespace the flow
// runs as plain TCP and says so.
func TestMPTCPFallback(t *testing.T) {
	needRoot(t)
	off := "{sysctls: {net.mptcp.enabled: 0}}"
	for _, side := range []string{"server", "client"} {
		h1, h2 := "{}", off
		if side == "client" {
			h1, h2 = off, "{}"
		}
		lab := yamlLab(t, fmt.Sprintf(twoPaths, "ttrfb"+side[:1], h1, h2))
		r := run(t, lab, Flow{Client: "h1", Server: "h2", Proto: MPTCP, Duration: 500 * time.Millisecond})
		f := r.Flows[0]
		if !f.MPTCPFallback {
			t.Errorf("MPTCP disabled on the %s: fallback not detected", side)
		}
		if f.BytesReceived == 0 {
			t.Errorf("fallback flow moved no data")
		}
		for _, s := range f.Samples {
			if len(s.Subflows) != 0 || s.TCP == nil {
				t.Fatalf("fallback flow sample: %d subflows, tcp %v", len(s.Subflows), s.TCP)
			}
		}
	}
}
