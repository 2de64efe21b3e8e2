// Package engine is the userspace link engine: emuctl's link shaping where
// the kernel has no netem. It applies a tc.Dir per direction — the same
// type, units and semantics as the kernel path (package tc) — to the
// frames crossing a pair of interfaces: New, Run, Update, Config, Stats,
// Close. It also exports the frame helpers other userspace forwarders
// share (VnetHdrLen, SplitGSO: the Wi-Fi medium's Ethernet glue).
//
// It must not create or delete namespaces, links or addresses (emu does;
// the engine only brings its two interfaces up and quiets their IPv6 and
// forwarding), log, or touch the root namespace. Linux only.
//
// When the kernel has no netem, a link is node A <-veth-> [la engine lb]
// <-veth-> node B with la and lb in a hidden namespace of its own. The
// Engine opens one AF_PACKET socket per interface inside that namespace
// (fresh locked thread + setns), with PACKET_VNET_HDR (frames come with
// their virtio_net_hdr: checksum-offload and GSO state), and
// PACKET_IGNORE_OUTGOING (its own transmissions do not come back). Frames
// are copied out of the kernel, so the sender's skb is freed at once:
// like netem, the engine breaks TSQ's hold and its queue is real.
//
// Offloads: nothing is turned off anywhere. A frame whose L4 checksum was
// left to "hardware" (CHECKSUM_PARTIAL) keeps that state through its vnet
// header and reaches the receiver as such. A GSO super-frame (up to 64 KB
// of TCP or UDP payload) is cut into wire frames in software when the
// direction decides per packet (rate, loss, Gilbert-Elliott, duplicate,
// corrupt): headers copied, IP length/ID and TCP sequence/flags fixed,
// each segment's checksum left partial with the right pseudo-header sum.
// A direction with only delay/jitter forwards super-frames whole (and
// counts their segments). On a direction without a rate the segments that
// survive and are due together are joined back into one GSO frame on the
// way out (coalesce.go), as the infinitely fast link would have delivered
// them: cheaper, and Linux 6.18's receive-buffer autotuning does not grow
// a window fed with bursts of dozens of MTU frames (10 ms + 0.01 % loss
// gave 52 Mbit/s before joining). Shaped directions never join: each frame
// is paced and is its own arrival.
//
// Each direction is a pipeline of stages, run when a frame arrives, in
// arrival order (stage.go):
//
//	loss (Bernoulli | Gilbert-Elliott) → corrupt → rate + bounded drop-tail
//	queue → delay + jitter line → transmit
//
// plus duplication before them (a duplicate runs the stages on its own).
// When the queue has a discipline other than drop-tail (Dir.AQM:
// drop-head, CoDel, FQ-CoDel, PIE, RED; not cake), the rate + queue stage
// is the discipline's queue in front of the serialiser instead
// (stage_aqm.go), and the frame's departure is decided at its dequeue,
// not on arrival: the direction runs every dequeue due before it admits
// later arrivals, in virtual time (the instants the serialiser frees),
// so each decision sees exactly the queue a router would see then; the
// loop wakes for the next dequeue without spinning, since a late wake
// changes no decision. The algorithms follow the Linux qdiscs (CoDel's
// control law and re-entry, FQ-CoDel's new/old flow lists, DRR and
// fat-flow drops, PIE's auto-tuned update and de-randomisation, RED's
// count-based marking and the kernel's idle decay) with the same
// parameters and defaults (tc.Dir.Discipline), so the two backends can
// be compared on the same runs; ECN marking sets CE on ECT(0)/ECT(1)
// IPv4 (checksum updated) and IPv6 packets, and drops the others. Every
// direction counts its sojourn times (the wait before transmission
// starts) in a histogram with 2.2 % resolution, drop-tail included.
// A direction with a mahimahi trace (tc.Trace) has a trace stage in place
// of rate + queue (stage_trace.go): it replays mm-link exactly — 1504
// bytes per opportunity, byte accounting across packets, a packet using
// only opportunities after the millisecond it arrived in, looping with
// the last timestamp as period, the queue limits counting waiting packets
// — and the stages run in Dir.Order (mahimahi's shells nest: uplink link,
// loss, delay; downlink delay, loss, link). Drop-tail decides on arrival;
// drop-head holds its packets until they leave, as a discipline does.
// Each stage maps the time a frame enters it to the time it leaves, so a
// frame's whole path is decided on arrival and only its transmit time is
// waited for: the queue keeps exact departure times (ns plus a remainder
// in 1/Rate ns, no drift), drops a frame that finds QueuePackets frames
// (or would exceed QueueBytes) not yet transmitted, and never relies on
// back-pressure from a downstream qdisc. The delay line never lets a frame
// overtake the one before it unless Reorder (then a heap orders by time).
// Jitter is drawn from netem's tables; loss, jitter, duplication and
// corruption draw from one seeded PCG per direction, so a run is
// reproducible for a given arrival sequence. Corruption flips one bit
// after the Ethernet header (netem may hit the MAC header) and first
// completes a partial checksum so the receiver sees a bad one. New
// behaviours (trace-driven links, a shared Wi-Fi medium booking airtime,
// multi-link striping) are new stages with the same two methods.
//
// Each direction runs on one goroutine locked to its OS thread: ppoll on
// the ingress socket with a timeout ending at the head frame's transmit
// time (nanosecond timeout, timer slack set to 1 ns on the thread),
// recvmmsg in batches of 16, sendmmsg in batches of 64. Go timers round
// sleeps up to ~1 ms and a netpoller hand-off costs a futex wake per
// frame; this loop has neither. Frames the egress socket cannot take wait
// in order until it can (the engine's queue is the only queue). Update
// changes parameters under the direction's lock: frames already scheduled
// keep their times, the queue and the loss state carry on. Stats counts
// per direction, in wire packets and bytes: in, out, loss drops, queue
// drops (at the limit), the discipline's own drops and CE marks,
// duplicates, corruptions, send errors, receive drops, backlog, the
// queue's length and peak, sojourn percentiles, and how late frames went
// out (mean, max): the engine's own timing error.
//
// Cost: two threads per link (blocked in ppoll when idle, no CPU), about
// 1 MB of receive buffers per direction (touched only by the frames that
// use them) and one copy per frame; measured figures are in the tests'
// logs (go test -v -run Engine) and in the package's report.
package engine
