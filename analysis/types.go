package analysis

import "time"

// Version is the result-format version this package reads and writes. A
// reader refuses any other version rather than guess at renamed fields.
const Version = 1

// Result is one run of one or more concurrent flows: the JSON document the
// traffic generator writes (one file per run) and everything in this
// package reads. Times inside a run are seconds since Start unless a field
// says otherwise; rates are bits per second; RTTs are microseconds.
//
// A run that is one repetition of a scenario names the scenario and its
// repetition index, so Repetitions can pool runs across files.
type Result struct {
	// Version is the format version; always 1 for this layout.
	Version int `json:"version"`
	// Tool names the producer and its version, e.g. "emuctl 0.4.0".
	Tool string `json:"tool,omitempty"`
	// Engine is the traffic engine: "emuctl" (native) or "iperf3"
	// (converted from iperf3 JSON).
	Engine string `json:"engine,omitempty"`
	// Lab is the emuctl lab the run used.
	Lab string `json:"lab,omitempty"`
	// Scenario groups repetitions of the same configuration
	// (e.g. "sack=on,loss=5%"). Runs with equal Scenario are pooled.
	Scenario string `json:"scenario,omitempty"`
	// Repetition is the 1-based index of this run within its scenario
	// (0 when the run is not part of a repeated scenario).
	Repetition int `json:"repetition,omitempty"`
	// Start is the wall-clock time of t = 0 (RFC 3339, nanoseconds).
	Start time.Time `json:"start"`
	// DurationS is the length of the run in seconds (t = 0 to the end of
	// the last flow).
	DurationS float64 `json:"duration_s"`
	// IntervalS is the nominal sampling interval in seconds (e.g. 0.1).
	IntervalS float64 `json:"interval_s,omitempty"`
	// Flows are the measured data flows.
	Flows []Flow `json:"flows"`
	// Probes are latency probes (ICMP or UDP echo) run alongside the flows.
	Probes []Probe `json:"probes,omitempty"`
	// CongStateEvents are tcp:tcp_cong_state_set trace events matched to
	// flows, when tracing was enabled. They give exact loss-recovery
	// episode boundaries; without them episodes come from sampled ca_state.
	CongStateEvents []CongStateEvent `json:"cong_state_events,omitempty"`
	// Links are the configured links the flows crossed, with their queue
	// counters over the run.
	Links []Link `json:"links,omitempty"`
	// Counters are per-node kernel counter deltas over the run (nstat
	// names, e.g. "TcpRetransSegs", "TcpOutSegs", "TcpExtTCPTimeouts"),
	// keyed by node name, then counter name; unitless counts.
	Counters map[string]map[string]int64 `json:"counters,omitempty"`
	// Captures are packet captures taken during the run.
	Captures []CaptureRef `json:"captures,omitempty"`
	// WiFi is the lab's Wi-Fi medium over the run: each radio's airtime,
	// attempts, retries, collisions and losses (labs whose Wi-Fi runs on
	// emuctl's medium).
	WiFi *WiFiMedium `json:"wifi,omitempty"`
	// Steps are the schedule steps (link changes on a timetable) applied
	// during the run, in order: plots mark them, reports list them.
	Steps []Step `json:"steps,omitempty"`
	// Conditions are the recorded run conditions as text: kernel release,
	// HZ, sysctls (tcp_sack, tcp_recovery, ...), offload settings, tool
	// versions, capability probes, topology hash. Keys are free-form
	// lower_snake_case; reports print them sorted.
	Conditions map[string]string `json:"conditions,omitempty"`
	// Summary is the producer's own per-flow summary (normally
	// analysis.Summarize of this result). Informational: analysis always
	// recomputes from the samples and ignores it.
	Summary []FlowSummary `json:"summary,omitempty"`
}

// Flow is one data flow. Data always goes From → To (a "reverse" run is
// recorded with From = the node that sent the data).
type Flow struct {
	// ID is unique within the result, e.g. "f1" or "h1-h2#0".
	ID string `json:"id"`
	// Group ties parallel streams of one logical flow together (optional).
	Group string `json:"group,omitempty"`
	// Proto is "tcp", "mptcp" or "udp".
	Proto string `json:"proto"`
	// CC is the congestion control read back from the socket
	// (TCP_CONGESTION), e.g. "cubic"; empty for UDP.
	CC string `json:"cc,omitempty"`
	// From and To are the sending and receiving node names.
	From string `json:"from"`
	To   string `json:"to"`
	// Src and Dst are the socket addresses "ip:port" (sender, receiver).
	Src string `json:"src,omitempty"`
	Dst string `json:"dst,omitempty"`
	// StartS and EndS bound the flow's active period, seconds since
	// Result.Start.
	StartS float64 `json:"start_s"`
	EndS   float64 `json:"end_s"`
	// SendEndS is when the sending application stopped writing, seconds
	// since Result.Start (TCP and MPTCP flows of the native engine; 0:
	// not recorded). What follows is the drain of what was in flight or
	// queued, which the limited-by diagnosis leaves out.
	SendEndS float64 `json:"send_end_s,omitempty"`
	// BottleneckBps is the configured rate of the narrowest shaped link on
	// the flow's path in bits/s, counted on the wire as tc/HTB does
	// (Ethernet header included). 0 means unshaped/unknown; utilisation is
	// then not reported.
	BottleneckBps float64 `json:"bottleneck_bps,omitempty"`
	// MPTCPFallback is true when an MPTCP flow fell back to plain TCP.
	MPTCPFallback bool `json:"mptcp_fallback,omitempty"`
	// BytesSent is the application payload the sender wrote, in bytes.
	BytesSent int64 `json:"bytes_sent,omitempty"`
	// BytesReceived is the application payload the receiver read, in bytes.
	BytesReceived int64 `json:"bytes_received,omitempty"`
	// Samples are per-interval samples in time order. Sample i covers the
	// interval (Samples[i-1].TS, Samples[i].TS]; the first one starts at
	// StartS.
	Samples []Sample `json:"samples,omitempty"`
	// UDP holds the receiver's per-packet records and counts (UDP flows).
	UDP *UDPFlow `json:"udp,omitempty"`
}

// Sample is one sampling interval of a flow.
type Sample struct {
	// TS is the end of the interval, seconds since Result.Start.
	TS float64 `json:"t_s"`
	// Bytes is the application payload delivered to the receiving
	// application during the interval, in bytes.
	Bytes int64 `json:"bytes"`
	// GoodputBps is Bytes × 8 / interval length, in bits/s.
	GoodputBps float64 `json:"goodput_bps"`
	// Packets is the number of datagrams received in the interval (UDP).
	Packets int64 `json:"packets,omitempty"`
	// TCP is the sender's TCP_INFO at the end of the interval (TCP and
	// MPTCP flows; for MPTCP the MPTCP-level socket where meaningful).
	TCP *TCPInfo `json:"tcp,omitempty"`
	// Subflows are the MPTCP subflows' numbers at the end of the interval.
	Subflows []SubflowSample `json:"subflows,omitempty"`
	// SendBuffer is the sender socket's send buffer at the end of the
	// interval (TCP and MPTCP flows of the native engine).
	SendBuffer *SendBuffer `json:"send_buffer,omitempty"`
	// WriteWaitUs is the cumulative time the sending application spent
	// inside its blocking write calls, µs: a write returns once the send
	// buffer has taken the data, so this is the writer waiting for
	// buffer space (TCP and MPTCP flows of the native engine).
	WriteWaitUs uint64 `json:"write_wait_us,omitempty"`
}

// TCPInfo is the subset of the kernel's struct tcp_info a sample carries.
// Counters marked cumulative count from the start of the connection.
type TCPInfo struct {
	// BytesAcked is tcpi_bytes_acked: cumulative bytes acknowledged.
	BytesAcked uint64 `json:"bytes_acked"`
	// BytesSent is tcpi_bytes_sent: cumulative bytes sent, retransmissions
	// included.
	BytesSent uint64 `json:"bytes_sent,omitempty"`
	// BytesRetrans is tcpi_bytes_retrans: cumulative bytes retransmitted.
	BytesRetrans uint64 `json:"bytes_retrans,omitempty"`
	// SegsOut is tcpi_segs_out: cumulative segments sent, retransmissions
	// included.
	SegsOut uint64 `json:"segs_out,omitempty"`
	// MSS is tcpi_snd_mss: the sender's current payload bytes per segment
	// (1448 on a 1500-byte MTU with timestamps).
	MSS uint32 `json:"mss,omitempty"`
	// CwndSegs is tcpi_snd_cwnd: congestion window in segments.
	CwndSegs uint32 `json:"cwnd_segs"`
	// CwndBytes is CwndSegs × MSS, in bytes.
	CwndBytes uint64 `json:"cwnd_bytes"`
	// SsthreshSegs is tcpi_snd_ssthresh in segments; 0 while unset (the
	// kernel's "infinite" 0x7fffffff is written as 0).
	SsthreshSegs uint32 `json:"ssthresh_segs,omitempty"`
	// SrttUs is tcpi_rtt: smoothed RTT in microseconds.
	SrttUs uint32 `json:"srtt_us"`
	// RttvarUs is tcpi_rttvar: RTT variation in microseconds.
	RttvarUs uint32 `json:"rttvar_us,omitempty"`
	// MinRttUs is tcpi_min_rtt: windowed minimum RTT in microseconds.
	MinRttUs uint32 `json:"min_rtt_us,omitempty"`
	// Retrans is tcpi_total_retrans: cumulative segments retransmitted.
	Retrans uint32 `json:"retrans"`
	// Lost is tcpi_lost: segments currently marked lost (a gauge, not
	// cumulative).
	Lost uint32 `json:"lost,omitempty"`
	// DeliveryRateBps is tcpi_delivery_rate × 8, in bits/s.
	DeliveryRateBps float64 `json:"delivery_rate_bps,omitempty"`
	// PacingRateBps is tcpi_pacing_rate × 8, in bits/s (0 when unlimited).
	PacingRateBps float64 `json:"pacing_rate_bps,omitempty"`
	// CAState is tcpi_ca_state: 0 Open, 1 Disorder, 2 CWR, 3 Recovery,
	// 4 Loss.
	CAState uint8 `json:"ca_state"`

	// --- What limited the sender (Linux 4.10+; absent from older
	// results and, on MPTCP flows, from the connection-level TCP: each
	// subflow carries its own). The kernel keeps the three times in
	// jiffies (4 ms at HZ=250) and reports microseconds. See Limited.

	// BusyUs is tcpi_busy_time: cumulative µs the socket had data in
	// flight or waiting to be sent, including the time it was limited by
	// the receive window or the send buffer.
	BusyUs uint64 `json:"busy_us,omitempty"`
	// RwndLimitedUs is tcpi_rwnd_limited: cumulative µs the peer's
	// receive window stopped the sender.
	RwndLimitedUs uint64 `json:"rwnd_limited_us,omitempty"`
	// SndbufLimitedUs is tcpi_sndbuf_limited: cumulative µs the sender had
	// sent everything written, cwnd had room, and the writer waited for
	// send-buffer space.
	SndbufLimitedUs uint64 `json:"sndbuf_limited_us,omitempty"`
	// AppLimited is tcpi_delivery_rate_app_limited: the latest
	// delivery-rate sample was taken while the sender had fewer packets in
	// flight than cwnd allowed and nothing more to send.
	AppLimited bool `json:"app_limited,omitempty"`
	// NotsentBytes is tcpi_notsent_bytes: bytes written and not yet sent.
	NotsentBytes uint32 `json:"notsent_bytes,omitempty"`
	// InFlightSegs is the segments the kernel counts against cwnd
	// (tcp_packets_in_flight: tcpi_unacked − tcpi_sacked − tcpi_lost +
	// tcpi_retrans).
	InFlightSegs uint32 `json:"in_flight_segs,omitempty"`
	// SndWndBytes is tcpi_snd_wnd: the peer's advertised receive window,
	// in bytes.
	SndWndBytes uint32 `json:"snd_wnd_bytes,omitempty"`
}

// SendBuffer is a sender socket's send buffer at the end of an interval
// (for MPTCP, the MPTCP socket's: the connection's data level).
type SendBuffer struct {
	// SizeBytes is SO_SNDBUF: the buffer's limit. An MPTCP socket's is
	// tcp_wmem[0] plus the sum of its subflows' buffers unless SO_SNDBUF
	// locked it.
	SizeBytes int64 `json:"size_bytes"`
	// QueuedBytes is SIOCOUTQ: written and not yet acknowledged (MPTCP:
	// not yet DATA_ACKed, so data delivered behind another subflow's hole
	// still counts).
	QueuedBytes int64 `json:"queued_bytes"`
	// UnsentBytes is SIOCOUTQNSD: written and not yet sent (MPTCP: not yet
	// handed to a subflow).
	UnsentBytes int64 `json:"unsent_bytes"`
	// WmemQueuedBytes is sk_wmem_queued (SO_MEMINFO): the memory charged
	// for the queued data, overhead included — what the kernel compares
	// with SizeBytes before it lets the writer add more.
	WmemQueuedBytes int64 `json:"wmem_queued_bytes,omitempty"`
}

// SubflowSample is one MPTCP subflow at the end of a sampling interval.
type SubflowSample struct {
	// ID identifies the subflow within its flow, stable across samples
	// (e.g. the local address id, or "10.0.1.1:40000-10.0.1.2:5201").
	ID string `json:"id"`
	// Src and Dst are the subflow's socket addresses "ip:port".
	Src string `json:"src,omitempty"`
	Dst string `json:"dst,omitempty"`
	// Bytes is the payload acknowledged on this subflow during the
	// interval (delta of tcpi_bytes_acked), in bytes.
	Bytes int64 `json:"bytes"`
	// GoodputBps is Bytes × 8 / interval length, in bits/s.
	GoodputBps float64 `json:"goodput_bps"`
	// TCP is the subflow's TCP_INFO (MPTCP_TCPINFO).
	TCP TCPInfo `json:"tcp"`
}

// TCP congestion-avoidance states (tcpi_ca_state, and cong_state in the
// tcp:tcp_cong_state_set trace event).
const (
	CAOpen     uint8 = 0
	CADisorder uint8 = 1
	CACWR      uint8 = 2
	CARecovery uint8 = 3
	CALoss     uint8 = 4
)

// UDPFlow is what a UDP receiver recorded.
type UDPFlow struct {
	// Sent is the number of datagrams the sender sent.
	Sent int64 `json:"sent"`
	// Received is the number of datagrams received, duplicates included.
	Received int64 `json:"received"`
	// Duplicates is the number of datagrams received more than once.
	Duplicates int64 `json:"duplicates,omitempty"`
	// OutOfOrder is the number of datagrams that arrived with a sequence
	// number lower than one already seen.
	OutOfOrder int64 `json:"out_of_order,omitempty"`
	// PayloadBytes is the UDP payload size of each datagram, in bytes.
	PayloadBytes int `json:"payload_bytes,omitempty"`
	// Packets are the received datagrams in arrival order (may be omitted
	// for long runs; the counts above are then the only loss source).
	Packets []UDPPacket `json:"packets,omitempty"`

	// --- Added by traffic/ (issue 6): the receiver's own whole-flow
	// figures, so results without Packets (the iperf3 engine, or
	// `emuctl traffic --udp-packets=false`) still carry jitter and delay.
	// When Packets are present they are derived from them and agree.

	// JitterRFC3550Us is the receiver's RFC 3550 jitter estimate at the
	// end of the flow (iperf's estimator; iperf3's jitter_ms × 1000), µs.
	JitterRFC3550Us float64 `json:"jitter_rfc3550_us,omitempty"`
	// JitterMeanAbsDeltaUs is Σ|d_i − d_{i−1}| / (N − 1) over consecutive
	// arrivals, µs (emuctl engine only).
	JitterMeanAbsDeltaUs float64 `json:"jitter_mean_abs_delta_us,omitempty"`
	// OWDMinUs, OWDMeanUs and OWDMaxUs summarise the one-way delay over
	// every datagram received, µs (emuctl engine only).
	OWDMinUs  float64 `json:"owd_min_us,omitempty"`
	OWDMeanUs float64 `json:"owd_mean_us,omitempty"`
	OWDMaxUs  float64 `json:"owd_max_us,omitempty"`
}

// UDPPacket is one received datagram. All nodes share one clock, so the
// one-way delay is exact.
type UDPPacket struct {
	// Seq is the sender's sequence number, starting at 0.
	Seq uint64 `json:"seq"`
	// SentNs is the send timestamp carried in the payload, Unix nanoseconds.
	SentNs int64 `json:"sent_ns"`
	// RecvNs is the receive timestamp, Unix nanoseconds.
	RecvNs int64 `json:"recv_ns"`
	// OWDUs is the one-way delay (RecvNs − SentNs) / 1000, microseconds.
	OWDUs float64 `json:"owd_us"`
}

// Probe is a latency probe (ping-like) run alongside the flows.
type Probe struct {
	// ID is unique within the result, e.g. "p1".
	ID string `json:"id"`
	// Kind is "icmp" or "udp".
	Kind string `json:"kind"`
	// From and To are node names (the probe measures From → To → From).
	From string `json:"from"`
	To   string `json:"to"`
	// Flow is the ID of the flow this probe accompanies (optional).
	Flow string `json:"flow,omitempty"`
	// IntervalS is the probe interval in seconds.
	IntervalS float64 `json:"interval_s,omitempty"`
	// Samples are the probes in send order, lost ones included.
	Samples []ProbeSample `json:"samples"`
}

// ProbeSample is one probe.
type ProbeSample struct {
	// TS is the send time, seconds since Result.Start.
	TS float64 `json:"t_s"`
	// RTTUs is the round-trip time in microseconds (0 when lost).
	RTTUs float64 `json:"rtt_us"`
	// Lost is true when no reply arrived before the timeout.
	Lost bool `json:"lost,omitempty"`
}

// CongStateEvent is one tcp:tcp_cong_state_set trace event.
type CongStateEvent struct {
	// TS is the event time, seconds since Result.Start.
	TS float64 `json:"t_s"`
	// Flow is the ID of the flow whose socket changed state.
	Flow string `json:"flow"`
	// State is the new cong_state (see CAOpen ... CALoss).
	State uint8 `json:"state"`
}

// Link is one configured link direction and its queue counters.
type Link struct {
	// Name identifies the link direction, e.g. "r1:eth1->h2".
	Name string `json:"name"`
	// Backend is how it is emulated: "htb+pfifo", "netem", "tbf",
	// "userspace", "none".
	Backend string `json:"backend,omitempty"`
	// RateBps is the configured rate in bits/s (0 = unshaped).
	RateBps float64 `json:"rate_bps,omitempty"`
	// DelayUs is the configured one-way delay in microseconds.
	DelayUs float64 `json:"delay_us,omitempty"`
	// LossPct is the configured random loss in percent.
	LossPct float64 `json:"loss_pct,omitempty"`
	// QueuePackets is the configured queue limit in packets (0 = unknown
	// or a byte limit).
	QueuePackets int `json:"queue_packets,omitempty"`
	// SentPackets is the qdisc's sent-packet delta over the run.
	SentPackets int64 `json:"sent_packets,omitempty"`
	// DroppedPackets is the qdisc's drop delta over the run (queue
	// overflow and qdisc-level random loss such as netem's).
	DroppedPackets int64 `json:"dropped_packets,omitempty"`
	// RandomDrops is the emulated random-loss drop count when a separate
	// element counts it (nft rule, userspace link engine).
	RandomDrops int64 `json:"random_drops,omitempty"`
	// Discipline is the queue's discipline (droptail, drophead, codel,
	// fq_codel, pie, red, cake).
	Discipline string `json:"discipline,omitempty"`
	// AQMDrops are the drops the discipline chose (CoDel's at the head,
	// PIE's and RED's early drops; DroppedPackets includes them), Marks
	// the packets it marked CE instead, over the run.
	AQMDrops int64 `json:"aqm_drops,omitempty"`
	Marks    int64 `json:"marks,omitempty"`
	// Sojourn percentiles (ms): how long packets waited in the queue.
	// SojournFrom says how they were measured: "every packet" (the link
	// engine), or "backlog/rate sampled" (kernel qdiscs: the queue's
	// bytes over its rate, read every QueueSampleMs).
	SojournP50Ms float64 `json:"sojourn_p50_ms,omitempty"`
	SojournP95Ms float64 `json:"sojourn_p95_ms,omitempty"`
	SojournP99Ms float64 `json:"sojourn_p99_ms,omitempty"`
	SojournFrom  string  `json:"sojourn_from,omitempty"`
	// Queue occupancy (packets) sampled every QueueSampleMs during the
	// flows: percentiles and the number of samples.
	QueueP50Pkts  float64 `json:"queue_p50_pkts,omitempty"`
	QueueP95Pkts  float64 `json:"queue_p95_pkts,omitempty"`
	QueueSamples  int     `json:"queue_samples,omitempty"`
	QueueSampleMs float64 `json:"queue_sample_ms,omitempty"`
}

// WiFiMedium is a lab's Wi-Fi medium over one run.
type WiFiMedium struct {
	// Backend is hwsim (mac80211_hwsim radios) or engine (veth pairs).
	Backend string `json:"backend"`
	// DurationS is the medium time the counters cover.
	DurationS float64 `json:"duration_s"`
	// LateMeanUs and LateMaxUs are how late the medium acted on its
	// events (its own timing error): the mean over the run (over its
	// whole life so far from a medium that does not say), the maximum
	// over its whole life so far.
	LateMeanUs float64 `json:"late_mean_us"`
	LateMaxUs  float64 `json:"late_max_us"`
	// Radios are the counters' deltas over the run, by node name order.
	Radios []WiFiRadio `json:"radios"`
	// Track is where the lab's moving nodes (mobility:) were during the
	// run, sampled every 250 ms: empty when no node moves.
	Track []WiFiPlace `json:"track,omitempty"`
	// Handovers are the stations' moves between the access points of
	// their network during the run (engine backend).
	Handovers []WiFiHandover `json:"handovers,omitempty"`
}

// WiFiHandover is one station's handover during a run.
type WiFiHandover struct {
	// TS is seconds since Result.Start when it began.
	TS      float64 `json:"t_s"`
	Station string  `json:"station"`
	From    string  `json:"from"`
	To      string  `json:"to"`
	// FromSNRdB and ToSNRdB: how the station heard the two APs then.
	FromSNRdB float64 `json:"from_snr_db"`
	ToSNRdB   float64 `json:"to_snr_db"`
	// OffAirMs is how long it was off the air (Done: it came back during
	// the run); Held frames its node sent meanwhile went out after, and
	// Dropped were lost (beyond the queue, or for it while it was off).
	OffAirMs float64 `json:"off_air_ms"`
	Done     bool    `json:"done"`
	Held     int     `json:"held"`
	Dropped  int     `json:"dropped"`
}

// WiFiPlace is a moving node at one instant of a run.
type WiFiPlace struct {
	// TS is seconds since Result.Start.
	TS   float64    `json:"t_s"`
	Node string     `json:"node"`
	Pos  [3]float64 `json:"pos"`
	// SNRdB is a station's SNR at its access point (the medium's, now);
	// Rate the rate of its last data frame; AP its access point then (a
	// station that roams).
	SNRdB float64 `json:"snr_db,omitempty"`
	Rate  string  `json:"rate,omitempty"`
	AP    string  `json:"ap,omitempty"`
}

// WiFiRadio is one radio's medium counters over a run.
type WiFiRadio struct {
	Node string `json:"node"`
	// Frames were submitted; Attempts are PPDUs sent; Retries MPDU
	// attempts after the first; Collisions attempts that overlapped
	// another transmission; Errors MPDU attempts lost to the channel;
	// Failed frames given up after the retry chain; Dropped frames
	// tail-dropped at the radio's queue; Delivered unicast MPDUs received.
	Frames     uint64 `json:"frames"`
	Attempts   uint64 `json:"attempts"`
	Retries    uint64 `json:"retries"`
	Collisions uint64 `json:"collisions"`
	Errors     uint64 `json:"errors"`
	Failed     uint64 `json:"failed"`
	Dropped    uint64 `json:"dropped"`
	Delivered  uint64 `json:"delivered"`
	// AirtimeS is the radio's own PPDUs' airtime; AirtimeShare that over
	// the run's medium time.
	AirtimeS     float64 `json:"airtime_s"`
	AirtimeShare float64 `json:"airtime_share"`
	// PER is Errors over the MPDU attempts that reached the air without a
	// collision (Errors + Delivered).
	PER float64 `json:"per"`
	// Rate is the rate of the radio's last data frame.
	Rate string `json:"rate,omitempty"`
	// Links: a multi-link radio's counters per link (each on its own
	// channel), by frequency.
	Links []WiFiLink `json:"links,omitempty"`
}

// WiFiLink is one link of a multi-link radio over a run.
type WiFiLink struct {
	FreqMHz      int     `json:"freq_mhz"`
	Frames       uint64  `json:"frames"`
	Delivered    uint64  `json:"delivered"`
	AirtimeShare float64 `json:"airtime_share"`
}

// CaptureRef points at a packet capture taken during the run.
type CaptureRef struct {
	// Node and Iface are where the capture was taken.
	Node  string `json:"node"`
	Iface string `json:"iface"`
	// File is the pcapng path, relative to the result file's directory.
	File string `json:"file"`
	// Snaplen is the capture snap length in bytes.
	Snaplen int `json:"snaplen,omitempty"`
	// Filter is the capture filter expression, if any.
	Filter string `json:"filter,omitempty"`
}

// Step is one schedule step applied during a run.
type Step struct {
	Schedule string  `json:"schedule"`
	AtS      float64 `json:"at_s"`   // when it took effect, s from the run's t = 0
	LateS    float64 `json:"late_s"` // how long after its planned time
	Link     int     `json:"link"`
	Dir      string  `json:"dir,omitempty"`      // "" both, a->b, b->a
	RateBps  float64 `json:"rate_bps,omitempty"` // the rate it set, if any
	What     string  `json:"what"`               // e.g. "at 10s ue-enb a->b rate=2mbit"
	Error    string  `json:"error,omitempty"`
}
