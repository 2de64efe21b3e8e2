// Package tc owns link shaping: what one direction of a link does to the
// frames that cross it (Dir), and the two ways of doing it — a qdisc tree
// on the kernel's egress path (netem where the kernel has it), and a
// userspace link engine (Engine) where it does not.
//
// It owns: the Dir type and its validation; the capability probe (Probe);
// a pure planner from Dir to a qdisc tree (PlanKernel, PlanShaper); the
// rtnetlink encoding of that tree, ApplyKernel/ReadTree/ReadBack, and
// SetGSOLimits; the engine (NewEngine, Run, Update, Stats, Close).
//
// It must not: create or delete namespaces, links or addresses (emu does;
// the engine only brings its two interfaces up and quiets their IPv6 and
// forwarding), import topo, log, or touch the root namespace (Probe works
// in a throw-away namespace). Errors wrap ErrNotSupported when a kernel
// lacks something.
//
// # Units
//
// Dir.Rate is bit/s on the wire, counting the Ethernet header (14 bytes,
// no FCS, no preamble) as HTB, TBF and netem do: a full frame is MTU+14
// bytes, and TCP with timestamps gets at most Rate × 1448/1514. Delay and
// Jitter are time.Duration; Loss, Duplicate, Corrupt and the
// Gilbert-Elliott parameters are percents. The encoder converts: netem
// latency and jitter go as 64 ns psched ticks in tc_netem_qopt and as
// nanoseconds in TCA_NETEM_LATENCY64/JITTER64; netem and TBF rates are
// bytes/s (Rate/8, rounded), in TCA_*_RATE64 from 2^32-1 up (40 Gbit/s is
// 5e9 B/s); probabilities are percent/100 × (2^32-1).
//
// # Queues
//
// QueuePackets / QueueBytes bound the bottleneck queue (drop-tail) and
// count every frame not yet fully transmitted, the one being serialised
// included. They only exist with a Rate: an unshaped direction never
// queues. When both are 0 the queue is DefaultQueuePackets: the
// bandwidth-delay product of a round trip over the link,
// Rate × 2 × Delay / (8 × (MTU+14)), and at least 100 frames. Packet
// counts mean MTU-sized packets: on the kernel path call SetGSOLimits on
// the shaped interface (and on the senders' interfaces), or 64 KB GSO
// super-packets sit in the queue as one packet each; the engine cuts
// super-frames itself.
//
// # Kernel path with netem (PlanKernel)
//
// Everything goes on the EGRESS of one interface; a link gets one tree
// per direction, on each end. netem must be the stage that holds the
// queue: it orphans the skb (skb_orphan_partial when it has a delay, a
// jitter or a rate), so TCP Small Queues no longer count the packet and
// the queue can build up exactly as on a real router. HTB or TBF alone do
// not orphan: on an L2 path the sender keeps ~2 packets in flight and the
// queue stays empty (see kernel-notes.md). The layouts, parent before
// child:
//
//	Dir has                        tree (handle parent: qdisc)
//	nothing                        device default (root qdisc deleted)
//	no rate                        1: root  netem delay/jitter/loss/dup/corrupt  limit L
//	rate only                      1: root  netem rate R limit N
//	rate + anything else           1: root  netem delay/jitter/loss/corrupt      limit N+L
//	                               2: 1:1   netem rate R limit N
//	rate + duplicate               1: root  netem everything, rate R             limit N+inflight
//	rate + QueueBytes B            1: root  netem impairments, rate OrderRate    limit L+B/64
//	                               2: 1:1   tbf rate R burst b limit B
//	                               3: 2:1   bfifo limit B
//
// netem's rate is an exact serialiser: a frame of w bytes is sent at
// max(arrival + delay, previous send) + 8w/R, and its limit counts the
// frame in transmission, so the bottleneck netem (2:, or 1: alone) with
// limit N is a drop-tail queue of N packets at rate R with each frame's
// own serialisation time — better than TBF, whose bucket lets a frame go
// without its serialisation delay after idle. Its limit is exact because
// it is the leaf: a netem's limit counts its child's packets too (6.18
// accounts the whole subtree), so the delay stage sits above it with a
// limit L that is a safety cap, never the bottleneck: four times what
// max(R, 10 Gbit/s) keeps in flight over Delay plus the jitter's span, in
// full frames, at least 10000 (netem's default 1000 silently drops at
// high rate × delay). The delay stage therefore comes BEFORE the queue in
// the kernel (jitter is applied on the way in and a busy bottleneck
// re-spaces the frames), whereas the engine applies it after the queue.
// With jitter and Reorder=false the delay stage carries netem rate
// OrderRate (2^50 B/s, 0 ns per frame): with any rate netem never sends a
// frame before the previous one, so the jitter cannot reorder; with
// Reorder=true it has no rate and netem's time-sorted queue reorders.
// Jitter distributions are sent as tables (TCA_NETEM_DELAY_DIST, 4096
// entries, scale 8192) for all three kinds, uniform included, because
// netem keeps an old table when a change carries none: normal has
// σ = Jitter, uniform spans ±Jitter, pareto is iproute2's table (shape 3,
// mean-shifted, ×4/3, capped at +4). Gilbert-Elliott goes as
// TCA_NETEM_LOSS/NETEM_LOSS_GE {p, r, h = 1-(1-h), k1 = 1-k} because the
// kernel loses a bad-state frame when rnd > h. Kernels since mid-2025
// refuse a duplicating netem beside another netem, hence the single-netem
// layout for rate + duplicate, whose limit adds the frames the rate keeps
// in flight (approximate when small packets share the direction). netem
// cannot bound bytes, hence TBF + bfifo for QueueBytes, with the delay
// netem given OrderRate so it still orphans; TBF's limit always equals
// its fifo child's because the kernel passes it on at every change
// (fifo_set_limit). SetSeed seeds netem's PRNG (TCA_NETEM_PRNG_SEED).
//
// # Kernel path without netem (PlanShaper)
//
//	1: root  tbf rate R burst b limit N|B
//	2: 1:1   pfifo limit N  (or bfifo limit B)
//
// Rate and queue only (anything else is ErrNotSupported): faithful where
// packets were orphaned before, on an L3 router's egress (IP forwarding
// orphans) or behind the engine, and TSQ-limited on a sender's own
// interface. TBF is used rather than HTB: one class needs no classifier,
// default class or quantum (HTB's r2q quantum warnings at high rates do
// not arise). Burst b = one full frame (MTU+18, room for a VLAN tag) plus
// 1 ms of line rate: a one-frame bucket loses every microsecond its
// watchdog fires late (measured: 6 % of 50 Mbit/s), 1 ms absorbs timer
// and softirq latency, and after idle at most 1 ms of traffic passes at
// line rate. At 1 kbit/s that is 1518 B; at 50 Mbit/s 7768 B; at
// 40 Gbit/s 5 MB (64-bit rate). netem needs no burst: its hrtimer
// watchdog releases every frame whose time has come, however late.
//
// # Applying
//
// ApplyKernel reads the interface's tree; if it has the plan's shape
// (kinds, handles, parents) every qdisc is changed in place (RTM_NEWQDISC
// without NLM_F_CREATE: queued packets stay, counters continue), else the
// root is deleted and the tree created parent first; a failure leaves the
// device default. Every netem change carries every attribute this package
// uses, zero when off, because netem keeps values whose attribute is
// missing. It speaks rtnetlink itself (nlenc.go, unit-tested byte by
// byte): vishvananda/netlink v1.3.1 cannot encode pfifo limits, netem
// loss models, delay tables, 64-bit latency or the PRNG seed, and a
// *netlink.Handle does not reveal its namespace, so ApplyKernel and
// ReadBack take the namespace handle. ReadBack prints the tree with
// tc-like parameters and the kernel's counters for `emuctl inspect`.
//
// # The userspace link engine
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
// drops, duplicates, corruptions, send errors, receive drops, backlog,
// the queue's length and peak, and how late frames went out (mean, max):
// the engine's own timing error.
//
// Cost: two threads per link (blocked in ppoll when idle, no CPU), about
// 1 MB of receive buffers per direction (touched only by the frames that
// use them) and one copy per frame; measured figures are in the tests'
// logs (go test -v -run Engine) and in the package's report.
package tc
