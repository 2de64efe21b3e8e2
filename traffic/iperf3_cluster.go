package traffic

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/emuctl/emuctl/emu"
)

// A lab over several machines (emu's cluster.go): this process cannot
// enter nodes that live in another machine's namespaces. The native
// engine runs each flow's ends there (split.go); the iperf3 engine runs
// iperf3 in each node on its machine through the workers' exec
// (emu.Command), as `emuctl exec` does: its JSON (goodput, retransmits,
// the sender's cwnd and RTT per interval) is the flow's record. Node
// snapshots are read on each machine (split_snapshot.go); queue sampling
// during the run is not done there (the result's conditions say so).

// iperf3RemoteStart bounds how long a server on another machine may take
// to listen (each check is an exec on that machine: over SSH a session).
const iperf3RemoteStart = 15 * time.Second

// reserveRemotePort picks the server port of a flow on another machine:
// the one asked for, or the first from 5201 that no other flow of this
// run uses on that node (the node's own sockets cannot be probed from
// here: a port in use makes iperf3's server fail, and the run says so).
func reserveRemotePort(lab, node string, want int) (int, func(), error) {
	reserved.Lock()
	defer reserved.Unlock()
	port := want
	if port == 0 {
		for port = 5201; reserved.m[fmt.Sprintf("%s/%s/%d", lab, node, port)]; port++ {
		}
	}
	key := fmt.Sprintf("%s/%s/%d", lab, node, port)
	if reserved.m[key] {
		return 0, nil, fmt.Errorf("node %s: port %d is already used by another flow of this run", node, port)
	}
	reserved.m[key] = true
	return port, func() { reserved.Lock(); delete(reserved.m, key); reserved.Unlock() }, nil
}

// remoteListening reports whether a TCP socket listens on port in a node
// on another machine: its /proc/net/tcp{,6}, read by cat in the node.
func remoteListening(lab, node string, port int) bool {
	cmd, err := emu.Command(lab, node, []string{"cat", "/proc/net/tcp", "/proc/net/tcp6"})
	if err != nil {
		return false
	}
	out, _ := cmd.Output() // tcp6 is missing where IPv6 is off
	return tcpListensIn(string(out), port)
}

// clusterConditions notes, in a result's conditions, what a run on a lab
// over several machines did not read.
func clusterConditions(st *emu.State, c map[string]string, clocks map[[2]string]*clockPair) {
	cl := st.Spec.Cluster
	var ms []string
	for _, m := range cl.Machines {
		ms = append(ms, m.Name)
	}
	sort.Strings(ms)
	c["machines"] = strings.Join(ms, ", ")
	c["machines_read"] = "node sysctls, counters, interfaces and qdisc counters on each node's machine; each link direction's queue on the machine that sends it"
	c["clock"] = "one clock per flow, its sender's: a receiver on another machine moved its times by the offset measured before the run (clock_offset[sender->receiver]); a flow's place on the run's time line is when this process heard it start"
	for _, cp := range clocks {
		v := fmt.Sprintf("%.1f us (at up %.1f us, drift %.1f us)", us(cp.offset), us(cp.atUp), us(cp.offset-cp.atUp))
		if cp.note != "" {
			v += "; " + cp.note
		}
		c["clock_offset["+cp.from+"->"+cp.to+"]"] = v
	}
}

func us(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
