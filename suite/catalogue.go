package suite

import (
	"sort"

	"github.com/emuctl/emuctl/suite/expr"
)

// argKind says what goes between [ ] after a metric name.
type argKind int

const (
	argNone    argKind = iota
	argFlowOpt         // optional flow name; without it, all flows
	argFlow            // a flow name
	argLink            // a link direction "a->b" (node names)
	argLinkOpt         // optional link direction; without it, the worst of all
	argNodeKey         // "node:name" (a counter or a sysctl)
	argNode            // a node name
)

// metricDef describes one per-run metric.
type metricDef struct {
	arg  argKind
	unit string
	doc  string
}

// metricDefs is every metric expressions can name. Per run a metric is
// one number (or string); in a scenario-level check it is the median over
// the scenario's valid runs. Without [flow], flow metrics cover every
// TCP/MPTCP flow (goodput: the aggregate over the common steady window;
// the others: the mean over flows), UDP metrics every UDP flow, probe
// metrics every probe.
var metricDefs = map[string]metricDef{
	"goodput":                 {argFlowOpt, "Mbit/s", "steady-state goodput (application bytes after the warm-up)"},
	"goodput_whole":           {argFlowOpt, "Mbit/s", "goodput over the whole flow"},
	"capacity":                {argFlowOpt, "Mbit/s", "bottleneck rate × 1448/1514 on the flow's path (as traffic found it)"},
	"util":                    {argFlowOpt, "", "steady goodput / capacity"},
	"srtt":                    {argFlowOpt, "ms", "mean smoothed RTT (tcpi_rtt) over the steady window"},
	"srtt_p95":                {argFlowOpt, "ms", "95th percentile of tcpi_rtt"},
	"srtt_std":                {argFlowOpt, "ms", "standard deviation of tcpi_rtt"},
	"srtt_max":                {argFlowOpt, "ms", "largest tcpi_rtt"},
	"min_rtt":                 {argFlowOpt, "ms", "tcpi_min_rtt"},
	"idle_rtt":                {argFlowOpt, "ms", "smallest of 5 pings from the flow's client to its server address before any traffic (the path's floor)"},
	"cwnd_mean":               {argFlowOpt, "bytes", "mean cwnd × MSS over the steady window"},
	"cwnd_max":                {argFlowOpt, "bytes", "largest cwnd × MSS"},
	"retrans":                 {argFlowOpt, "segments", "segments retransmitted (tcpi_total_retrans)"},
	"retrans_ratio":           {argFlowOpt, "", "retransmitted / sent segments"},
	"rtos":                    {argFlowOpt, "", "retransmission timeouts on the sending node (TcpExtTCPTimeouts)"},
	"tlps":                    {argFlowOpt, "", "tail loss probes on the sending node (TcpExtTCPLossProbes)"},
	"recoveries":              {argFlowOpt, "", "loss-recovery episodes (tracefs tcp_cong_state_set when collected, else sampled ca_state)"},
	"recovery_mean":           {argFlowOpt, "ms", "mean loss-recovery episode duration"},
	"recovery_p95":            {argFlowOpt, "ms", "95th percentile of episode durations"},
	"subflows":                {argFlowOpt, "", "MPTCP subflows that carried data"},
	"mptcp":                   {argFlowOpt, "", "1 when the flow ran as MPTCP on both ends (no fallback)"},
	"limited_net":             {argFlowOpt, "%", "share of the steady window the sender was limited by the network (cwnd or pacing): analysis.Limited, METRICS.md; MPTCP: the subflows weighted by their rate while busy"},
	"limited_rwnd":            {argFlowOpt, "%", "share of the steady window the receive window limited the sender"},
	"limited_sndbuf":          {argFlowOpt, "%", "share of the steady window the send buffer limited the sender (short of data while the writer waited for buffer space)"},
	"limited_app":             {argFlowOpt, "%", "share of the steady window the application limited the sender (short of data, the writer not waiting)"},
	"busy":                    {argFlowOpt, "%", "share of the steady window the sender had data in flight or queued (tcpi_busy_time)"},
	"busy_fast":               {argFlowOpt, "%", "busy share of the MPTCP subflow that carried the most data (TCP: the flow's own)"},
	"limited_sndbuf_fast":     {argFlowOpt, "%", "limited_sndbuf of the MPTCP subflow that carried the most data (TCP: the flow's own)"},
	"udp_loss":                {argFlowOpt, "", "UDP datagrams lost / sent"},
	"owd_mean":                {argFlowOpt, "ms", "mean one-way delay of UDP datagrams"},
	"owd_p95":                 {argFlowOpt, "ms", "95th percentile one-way delay"},
	"owd_p99":                 {argFlowOpt, "ms", "99th percentile one-way delay"},
	"owd_p99_unstalled":       {argFlowOpt, "ms", "99th percentile one-way delay, each datagram's delay less the host stall time (stalls over 2 ms) inside its flight: what the emulated path added, for physics bounds"},
	"owd_min":                 {argFlowOpt, "ms", "smallest one-way delay"},
	"owd_max":                 {argFlowOpt, "ms", "largest one-way delay"},
	"jitter":                  {argFlowOpt, "ms", "RFC 3550 interarrival jitter of UDP datagrams"},
	"jitter_mad":              {argFlowOpt, "ms", "mean |Δ one-way delay| (TIPHON-style jitter)"},
	"probe_rtt":               {argFlowOpt, "ms", "mean probe RTT (probes sent after the warm-up)"},
	"probe_rtt_p95":           {argFlowOpt, "ms", "95th percentile probe RTT"},
	"probe_rtt_p99":           {argFlowOpt, "ms", "99th percentile probe RTT"},
	"probe_rtt_p99_unstalled": {argFlowOpt, "ms", "99th percentile probe RTT, each probe's RTT less the host stall time (stalls over 2 ms) inside its flight: what the emulated path added, for physics bounds"},
	"probe_rtt_min":           {argFlowOpt, "ms", "smallest probe RTT over the whole flow"},
	"probe_rtt_max":           {argFlowOpt, "ms", "largest probe RTT"},
	"probe_jitter":            {argFlowOpt, "ms", "RFC 3550 jitter of the probe RTTs"},
	"probe_loss":              {argFlowOpt, "", "probes lost / sent"},
	"ack_ratio":               {argFlow, "", "receiver's segments sent / sender's segments sent (TcpOutSegs): pure ACKs per data packet"},
	"ack_rate":                {argFlow, "Hz", "receiver's segments sent per second"},
	"data_rate":               {argFlow, "Hz", "sender's segments sent per second"},
	"cc":                      {argFlow, "", "congestion control read back from the socket (text)"},
	"jain":                    {argNone, "", "Jain's fairness index of the TCP/MPTCP flows over their common steady window"},
	"cpu_max":                 {argNone, "%", "busiest CPU core's busy share over the traffic period (0..1; write 90%)"},
	"cpu_peak":                {argNone, "%", "busiest core in any one-second sample (0..1)"},
	"cpu_total":               {argNone, "%", "the whole machine's busy share over the traffic period, all cores together (0..1)"},
	"delay_samples_stalled":   {argNone, "%", "share of the run's delay samples (probe RTTs, UDP one-way delays) whose flight overlapped a host stall over 2 ms (recorded; the _unstalled percentiles subtract the stall time)"},
	"host_stall":              {argNone, "ms", "longest a 2 ms timer woke late during the traffic: the host stopped scheduling the emulator that long"},
	"wifi_model":              {argFlowOpt, "Mbit/s", "the pure 802.11 model's goodput (wifi/model, as `emuctl model wifi`) for the flow's Wi-Fi hop at its rate, mode, retry limit and SNR, with every flow on the same BSS a saturated sender (no [ ]: the sum over flows); on fixed rates, or the engine backend's ideal rates"},
	"wifi_model_tack":         {argFlowOpt, "Mbit/s", "wifi_model for a TCP flow had its receiver ACKed at TACK's frequency min(bw/(2·MSS), 4/RTT_min) (Li et al., SIGCOMM 2020): one ACK per max(2, bw·RTT_min/(4·MSS)) segments, RTT_min the flow's"},
	"wifi_airtime":            {argNode, "%", "share of the medium's time a Wi-Fi node's own PPDUs took over the run, [node]"},
	"wifi_frames":             {argNode, "frames", "frames a Wi-Fi node's radio handed to the medium, [node]"},
	"wifi_attempts":           {argNode, "PPDUs", "PPDUs a Wi-Fi node's radio sent (its channel accesses; an A-MPDU is one), [node]"},
	"wifi_retries":            {argNode, "", "MPDU retries per frame of a Wi-Fi node, [node]"},
	"wifi_collisions":         {argNode, "", "attempts of a Wi-Fi node that overlapped another transmission, [node]"},
	"wifi_per":                {argNode, "", "share of a node's MPDU attempts lost to the channel (of those that did not collide), [node]"},
	"wifi_lost":               {argNode, "frames", "frames a Wi-Fi node gave up after its retry chain, [node]"},
	"wifi_loss":               {argNode, "", "share of a Wi-Fi node's frames that went on the air and were lost after the retry chain (the loss the IP layer sees), [node]"},
	"wifi_drops":              {argNode, "frames", "frames its queue on the medium dropped (full), [node]"},
	"wifi_rate":               {argNode, "", "the rate of a Wi-Fi node's last data frame, [node] (text)"},
	"wifi_late":               {argNone, "ms", "how late the Wi-Fi medium acted on its events, mean over the run (its own timing error)"},
	"link_in":                 {argLink, "packets", "frames offered to the link direction (link engine)"},
	"link_out":                {argLink, "packets", "frames it delivered"},
	"loss_drops":              {argLink, "packets", "frames its loss model dropped"},
	"queue_drops":             {argLink, "packets", "frames its bounded queue dropped (tail drop)"},
	"loss_rate":               {argLink, "", "loss_drops / link_in"},
	"queue_drop_ratio":        {argLink, "", "queue_drops / (link_in − loss_drops)"},
	"queue_peak":              {argLink, "packets", "largest queue length seen"},
	"trace_opps":              {argLink, "", "delivery opportunities a traced direction's trace offered during the run (1504 bytes each, used or not)"},
	"trace_use":               {argLink, "", "bytes the traced direction delivered (mahimahi's count: frame − 14 + 4) / (1504 × trace_opps): ≤ 1, a link never delivers more than its trace offers"},
	"sched_follow":            {argFlowOpt, "", "worst ratio, over the phases between the run's rate steps, of the phase's goodput to cap(its rate), each phase judged from its step + the flow's largest smoothed RTT (one RTT with the queue full: RTT + queue drain) to the next step"},
	"sched_excess":            {argFlowOpt, "", "largest ratio, at any sample, of the payload delivered so far to what the schedule's rates could carry since t = 0 (rate × 1448/1514 integrated over the steps' actual times): ≤ 1"},
	"aqm_drops":               {argLink, "packets", "packets the queue's discipline dropped by its own rule (CoDel at the head, PIE and RED early), over the run"},
	"marks":                   {argLink, "packets", "packets the queue's discipline marked CE instead of dropping them, over the run"},
	"sojourn_p50":             {argLink, "ms", "median time a packet waited in the link direction's queue (link engine: every packet; kernel: backlog × 8 / rate, sampled every 20 ms)"},
	"sojourn_p95":             {argLink, "ms", "95th percentile of the queueing delay (as sojourn_p50)"},
	"sojourn_p99":             {argLink, "ms", "99th percentile of the queueing delay (as sojourn_p50)"},
	"queue_p50":               {argLink, "packets", "median queue occupancy, sampled every 20 ms while the flows run"},
	"queue_p95":               {argLink, "packets", "95th percentile of the sampled queue occupancy"},
	"engine_late_max":         {argLinkOpt, "ms", "link engine's worst lateness against a frame's due time (no [ ]: worst link)"},
	"engine_late_mean":        {argLinkOpt, "ms", "link engine's mean lateness against frames' due times (no [ ]: worst link)"},
	"counter":                 {argNodeKey, "", "kernel counter delta over the run, [node:NstatName]"},
	"ovs_queue_sent":          {argNodeKey, "packets", "packets an Open vSwitch QoS queue (queue 0) sent, [switch:port]"},
	"ovs_queue_drops":         {argNodeKey, "packets", "packets its FIFO dropped (queue_limit), [switch:port]"},
	"ovs_drop_ratio":          {argNodeKey, "", "drops / (sent + drops) of that queue, [switch:port]"},
	"sysctl":                  {argNodeKey, "", "sysctl read back in a node at the run, [node:net.ipv4.tcp_sack]"},
	"iface":                   {argNodeKey, "", "an interface setting read at the run, [node:iface.key] with key gro, tso, gso, gso_max_segs, mtu, qdiscs, ... (text)"},
}

func metricNames() []string {
	out := make([]string, 0, len(metricDefs))
	for k := range metricDefs {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func functionNames() []string {
	out := make([]string, 0, len(expr.Functions))
	for k := range expr.Functions {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
