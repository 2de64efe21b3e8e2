// Package tc owns link shaping: what one direction of a link does to the
// frames that cross it (Dir), and the kernel's way of doing it — a qdisc
// tree on the egress path (netem where the kernel has it). The other way,
// the userspace link engine for kernels without netem, is package
// tc/engine, which takes the same Dir.
//
// It owns: the Dir type and its validation; a pure planner from Dir to a
// qdisc tree (PlanKernel, PlanShaper) and netem's jitter tables (DistTable,
// shared with the engine) — these build on any OS (make lint checks
// GOOS=darwin); and, on Linux only, the capability probe (Probe), the
// rtnetlink encoding of the tree, ApplyKernel/ReadTree/ReadBack,
// ApplyPerDestination and SetGSOLimits.
//
// It must not: create or delete namespaces, links or addresses (emu does),
// import topo, log, or touch the root namespace (Probe works in a
// throw-away namespace). Errors wrap ErrNotSupported when a kernel
// lacks something.
//
// # Units
//
// Dir.Rate is bit/s on the wire, counting the Ethernet header (14 bytes,
// no FCS, no preamble) as HTB, TBF and netem do: a full frame is MTU+14
// bytes, and TCP with timestamps gets at most Rate × 1448/1514. Delay and
// Jitter are time.Duration; Loss, Duplicate, Corrupt and the
// Gilbert-Elliott parameters are percents (package units' types). The encoder converts: netem
// latency and jitter go as 64 ns psched ticks in tc_netem_qopt and as
// nanoseconds in TCA_NETEM_LATENCY64/JITTER64; netem and TBF rates are
// bytes/s (Rate/8, rounded), in TCA_*_RATE64 from 2^32-1 up (40 Gbit/s is
// 5e9 B/s); probabilities are percent/100 × (2^32-1).
//
// # Queues
//
// QueuePackets / QueueBytes bound the bottleneck queue (drop-tail, or
// the discipline's hard limit: see below) and, for drop-tail, count every
// frame not yet fully transmitted, the one being serialised included. They only exist with a Rate: an unshaped direction never
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
// # Queue disciplines (aqm.go, plan_aqm.go)
//
// Dir.AQM selects the bottleneck queue's discipline: drop-tail (nil, the
// layouts above), drop-head, CoDel, FQ-CoDel, PIE, RED or cake, with the
// kernel qdiscs' defaults for what it leaves zero (Dir.Discipline fills
// them in; both backends run the resolved parameters). netem's own queue
// is drop-tail only, so a discipline needs a shaper with a real child
// queue: the delay netem (impairments, OrderRate so it always orphans)
// feeds tbf at the rate, whose child is the discipline's qdisc; cake
// shapes by itself and is netem's child directly:
//
//	1: root  netem impairments, rate OrderRate      limit L+N
//	2: 1:1   tbf rate R burst b
//	3: 2:1   codel | fq_codel | pie | red | pfifo_head_drop   limit N
//
//	1: root  netem impairments, rate OrderRate      limit L+N
//	2: 1:1   cake bandwidth R rtt interval target target
//
// Without netem (PlanShaper) the tree starts at tbf (or cake). Limits:
// packets for codel, fq_codel, pie and pfifo_head_drop (their defaults
// 1000, 10240, 1000; a byte limit is ErrNotSupported), bytes for red (the
// packets given, in full frames; 1000 by default) and cake's memory
// limit. fq_codel's memory limit is set from its packet limit (8 KB per
// packet) so the packet limit is the one that binds, as in the engine.
// RED's EWMA weight, thresholds and idle decay table are computed here
// (AQM.RED, REDIdleTable) and used by both backends. The kernel's red has
// no gentle mode (ErrNotSupported; the engine has it); the engine has no
// cake (AQM.EngineSupports says why). Probe reports which discipline
// qdiscs the kernel has (Caps.AQM); read back, an AQM leaf carries its
// counters: drops at the limit, the discipline's own drops, CE marks and
// its last measured queueing delay (QdiscStats).
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
package tc
