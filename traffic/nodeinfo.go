package traffic

import (
	"bufio"
	"os"
	"strconv"
	"strings"

	"github.com/emuctl/emuctl/internal/sysctl"
)

// tcpSysctls are the settings recorded from each endpoint's namespace: the
// effective TCP (and MPTCP) profile.
var tcpSysctls = []string{
	"net.ipv4.tcp_congestion_control", "net.ipv4.tcp_sack", "net.ipv4.tcp_timestamps",
	"net.ipv4.tcp_window_scaling", "net.ipv4.tcp_ecn", "net.ipv4.tcp_no_metrics_save",
	"net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem", "net.ipv4.tcp_recovery", "net.ipv4.tcp_early_retrans",
	"net.ipv4.tcp_backlog_ack_defer",
	"net.ipv4.tcp_frto", "net.ipv4.tcp_comp_sack_delay_ns", "net.ipv4.tcp_comp_sack_nr",
	"net.ipv4.tcp_autocorking", "net.ipv4.tcp_limit_output_bytes", "net.ipv4.tcp_notsent_lowat",
	"net.ipv4.tcp_slow_start_after_idle", "net.ipv4.tcp_mtu_probing", "net.ipv4.tcp_moderate_rcvbuf",
	"net.ipv4.tcp_adv_win_scale", "net.ipv4.tcp_min_tso_segs", "net.ipv4.tcp_pacing_ss_ratio",
	"net.ipv4.tcp_pacing_ca_ratio", "net.ipv4.ip_forward",
	"net.mptcp.enabled", "net.mptcp.path_manager", "net.mptcp.scheduler", "net.mptcp.checksum_enabled",
	"net.mptcp.stale_loss_cnt", "net.mptcp.allow_join_initial_addr_port",
}

// readSysctls reads keys inside the calling thread's namespace; missing
// keys are skipped.
func readSysctls(keys []string) map[string]string {
	out := map[string]string{}
	for _, k := range keys {
		b, err := sysctl.Read(k)
		if err == nil {
			out[k] = strings.Join(strings.Fields(string(b)), " ")
		}
	}
	return out
}

// readCounters reads the namespace's SNMP and extended counters with
// nstat's names (TcpRetransSegs, TcpExtTCPTimeouts, MPTcpExtMPJoinSynAckRx,
// ...). It must run on a thread inside the namespace: /proc/net follows the
// thread-group leader, /proc/thread-self/net the thread.
func readCounters() map[string]int64 {
	out := map[string]int64{}
	for _, f := range []string{"/proc/thread-self/net/snmp", "/proc/thread-self/net/netstat"} {
		parseCounterFile(f, out)
	}
	return out
}

// parseCounterFile reads pairs of lines "Prefix: names..." / "Prefix:
// values...".
func parseCounterFile(path string, out map[string]int64) {
	f, err := os.Open(path)
	if err != nil {
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	var names []string
	var prefix string
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 2 {
			continue
		}
		p := strings.TrimSuffix(fields[0], ":")
		if names == nil || p != prefix {
			prefix, names = p, fields[1:]
			continue
		}
		for i, v := range fields[1:] {
			if i < len(names) {
				if n, err := strconv.ParseInt(v, 10, 64); err == nil {
					out[prefix+names[i]] = n
				}
			}
		}
		names = nil
	}
}

// counterDelta keeps the counters that changed. Gauges such as
// TcpCurrEstab may go down; they are kept as signed deltas.
func counterDelta(before, after map[string]int64) map[string]int64 {
	out := map[string]int64{}
	for k, v := range after {
		if d := v - before[k]; d != 0 {
			out[k] = d
		}
	}
	return out
}
