package traffic

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/emuctl/emuctl/emu"
)

// A lab over several machines (emu's cluster.go): this process cannot
// enter nodes that live in another machine's namespaces, so the native
// engine (sockets opened inside the nodes), traffic-time captures and
// ping probes are refused there, and the iperf3 engine runs iperf3 in
// each node on its machine through the workers' exec (emu.Command), as
// `emuctl exec` does: its JSON (goodput, retransmits, the sender's cwnd
// and RTT per interval) is the flow's record. Node counters, the links'
// qdisc statistics and queue sampling are not read there (the result's
// conditions say so).

// iperf3RemoteStart bounds how long a server on another machine may take
// to listen (each check is an exec on that machine: over SSH a session).
const iperf3RemoteStart = 15 * time.Second

// clusterRefusals says what a run on a lab over several machines cannot
// do, every problem at once.
func clusterRefusals(lab string, flows []Flow, opt Options) error {
	var errs []string
	for i, f := range flows {
		name := f.Name
		if name == "" {
			name = fmt.Sprintf("f%d", i+1) // the default name (Flow.withDefaults)
		}
		if f.Engine != EngineIperf3 {
			errs = append(errs, fmt.Sprintf("flow %s: the native engine measures from inside the nodes, which only their own machines can enter: run it with engine: iperf3 (--engine iperf3), which runs iperf3 on each node's machine", name))
		}
		if f.Probe != "" {
			errs = append(errs, fmt.Sprintf("flow %s: probe: ping probes are sent from this process; use engine iperf3's RTT samples, or emuctl exec NODE -- ping", name))
		}
	}
	if len(opt.Captures) > 0 {
		errs = append(errs, "captures during the run are taken from this process: use `emuctl capture NODE:IFACE` beside the run (it reaches every machine)")
	}
	if len(errs) > 0 {
		return fmt.Errorf("lab %s is spread over several machines:\n  %s", lab, strings.Join(errs, "\n  "))
	}
	return nil
}

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
func clusterConditions(st *emu.State, c map[string]string) {
	cl := st.Spec.Cluster
	var ms []string
	for _, m := range cl.Machines {
		ms = append(ms, m.Name)
	}
	sort.Strings(ms)
	c["machines"] = strings.Join(ms, ", ")
	c["machines_not_read"] = "node counters, link qdisc statistics and queue samples (the nodes are on other machines; iperf3 ran on each node's machine)"
}
