// Package traffic generates and measures traffic between the nodes of a
// running lab: TCP flows with a congestion control set per socket, MPTCP
// flows with per-subflow statistics, paced UDP flows with sequence numbers
// and send timestamps, and ICMP or UDP echo probes for latency under load.
//
// It owns flows, the sockets it opens inside nodes, the samplers that read
// TCP_INFO / MPTCP_INFO every interval, and the results, which are
// analysis.Result documents (version 1).
//
// # Entry points
//
//	res, err := traffic.Run(ctx, lab, []traffic.Flow{{Client: "h1", Server: "h2",
//		Proto: traffic.TCP, Sock: traffic.SockOpts{CC: "cubic"}, Duration: 20 * time.Second}}, traffic.Options{})
//	ff, err := traffic.LoadFlowsFile("flows.yaml") // then Run(ctx, lab, ff.Flows, ...)
//	traffic.WriteSummary(os.Stdout, res)
//	cmp, err := traffic.CompareWithIperf3(ctx, lab, "h1", "h2", 5*time.Second, 10*time.Millisecond, 3)
//
// Run checks every flow against the lab first (unknown nodes, switches,
// unknown congestion controls, bad values: all reported at once), opens
// every server socket (so a port in use fails before anything starts),
// then starts each flow at its offset; flows run concurrently. Cancelling
// ctx (Ctrl-C) stops everything at once and returns the partial result
// with ctx's error. A flow that fails stops the run.
//
// # How it measures
//
// Sockets are opened by emuctl itself inside the nodes' network
// namespaces (a fresh goroutine locks its OS thread, enters
// /run/netns/<lab>.<node>, opens the socket and switches back), so the
// native engine needs no helper process and leaves no orphan. Server ports
// default to 0 (the kernel picks a free one in the server node), so
// concurrent flows never collide. All ends live in one process and share
// one clock, which makes UDP one-way delays exact.
//
// On a lab over several machines no process can enter every node: each
// flow's two ends run as halves in this binary's traffic role on their
// nodes' machines (split.go, started through emu.MachineCommand), probes
// on the client's machine, node snapshots on each machine
// (split_snapshot.go), each link direction's queue on the machine that
// sends it (split_queues.go), captures through the workers
// (emu.CaptureNode); a receiver on another machine moves its times onto
// the sender's clock by the offset measured just before the run.
//
//   - TCP: TCP_CONGESTION is set on every socket and read back from the
//     sender; TCP_NODELAY (off by default, as the kernel and iperf3),
//     TCP_QUICKACK after every read, SO_SNDBUF/SO_RCVBUF are options.
//     Data moves in 128 KiB blocking writes and reads (as iperf3), or with
//     a rate in writes paced to it (an application-limited sender), and
//     the sender's TCP_INFO is sampled every interval (10 ms and up):
//     goodput at the receiver, bytes acked, cwnd in segments and bytes,
//     ssthresh, srtt, rttvar, min RTT, retransmissions, lost, delivery and
//     pacing rates, ca_state; for the limited-by diagnosis
//     (analysis.Limited) the busy, rwnd- and sndbuf-limited times, the
//     app-limited flag, unsent bytes, packets in flight and the peer's
//     window; the sending socket's send buffer (SO_SNDBUF, SIOCOUTQ,
//     SIOCOUTQNSD, sk_wmem_queued); and the time the writer spent
//     inside its writes (waiting for buffer space).
//   - MPTCP: net.Dialer and net.ListenConfig.SetMultipathTCP(true) set
//     explicitly; fallback to TCP is detected with MultipathTCP() on both
//     ends and recorded (Flow.MPTCPFallback). Each sample carries every
//     subflow from MPTCP_FULL_INFO (6.5+; MPTCP_INFO + MPTCP_TCPINFO
//     before), connection-level numbers (see mptcpLevel), and the MPTCP
//     socket's send buffer (the connection's, which the subflows share).
//   - UDP: paced datagrams carry a sequence number and a send timestamp;
//     the receiver takes kernel receive timestamps and reports loss,
//     duplicates, reordering, RFC 3550 jitter (iperf's estimator), the mean
//     absolute delay difference and one-way delays, per datagram.
//   - Probes: ICMP echo (raw socket in the client node) or UDP echo (an
//     echo socket in the server node), at a set rate, alongside a flow.
//   - iperf3 engine: the installed iperf3 runs inside the nodes through
//     emu.Command (the program re-executed as emu's exec helper, a role
//     every binary importing emu serves: emu/roles.go), is stopped by
//     pid, dies with emuctl (parent-death signal), and its JSON (with
//     --get-server-output) is converted: bytes from the receiving side,
//     cwnd/RTT/retransmissions from the sending side.
//
// Every result records its conditions: kernel, HZ, tool and iperf3
// versions, the host's congestion-control lists, the endpoints' TCP and
// MPTCP sysctls, offloads/GSO limits/qdiscs of every interface on the
// path, each crossed link's backend and parameters (from the lab's state),
// counter deltas (nstat names) of the endpoints, and the topology hash.
//
// # Flows file
//
// See FlowsFile for the format; errors are topo.Errors with file:line:col.
//
// It must not change the lab: no interfaces, qdiscs, routes or sysctls are
// touched (reading /proc/sys, offloads, qdisc counters and nstat counters
// is fine). Traffic only flows between the lab's namespaces.
package traffic
