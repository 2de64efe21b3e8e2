package netcfg

import (
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"

	"github.com/emuctl/emuctl/internal/sysctl"
	"github.com/emuctl/emuctl/topo"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

// TCPState is a node's effective TCP profile, read from its namespace.
type TCPState struct {
	CongestionControl string `json:"congestion_control"`
	SACK              bool   `json:"sack"`
	Timestamps        int    `json:"timestamps"` // 0 off, 1 on, 2 on without per-connection offsets
	WindowScaling     bool   `json:"window_scaling"`
	ECN               int    `json:"ecn"`
	NoMetricsSave     bool   `json:"no_metrics_save"`
	Rmem              [3]int `json:"rmem"`
	Wmem              [3]int `json:"wmem"`
	Recovery          int    `json:"recovery"`
	EarlyRetrans      int    `json:"early_retrans"`
	// BacklogACKDefer is tcp_backlog_ack_defer; nil on kernels without
	// it (before 6.7), which never defer.
	BacklogACKDefer *bool `json:"backlog_ack_defer,omitempty"`
	// Sysctls are the profile's escape-hatch keys (tcp.sysctls), read back.
	Sysctls []topo.KV `json:"sysctls,omitempty"`
	// Routes are the node's routes that carry TCP metrics.
	Routes []RouteMetrics `json:"routes,omitempty"`
}

// backlogACKDeferKey is the sysctl of tcp.backlog_ack_defer (Linux >= 6.7).
const backlogACKDeferKey = "net.ipv4.tcp_backlog_ack_defer"

// profileKeys are the sysctls of a TCP profile, in the order they are
// written and read.
var profileKeys = []string{
	defaultCCKey,
	"net.ipv4.tcp_sack",
	"net.ipv4.tcp_timestamps",
	"net.ipv4.tcp_window_scaling",
	"net.ipv4.tcp_ecn",
	"net.ipv4.tcp_no_metrics_save",
	"net.ipv4.tcp_rmem",
	"net.ipv4.tcp_wmem",
	"net.ipv4.tcp_recovery",
	"net.ipv4.tcp_early_retrans",
}

// TCPSysctls returns the sysctls a profile sets, in the order ApplyTCP
// writes them: the profile's keys, then its escape-hatch sysctls.
// tcp_no_metrics_save is 1 unless the profile says otherwise, also for a
// nil profile: cached ssthresh and RTT would leak between runs.
func TCPSysctls(p *topo.TCPProfile) []topo.KV {
	if p == nil {
		p = &topo.TCPProfile{}
	}
	var out []topo.KV
	set := func(key, v string) { out = append(out, topo.KV{Key: key, Value: v}) }
	b := func(key string, v *bool) {
		if v != nil {
			set(key, map[bool]string{false: "0", true: "1"}[*v])
		}
	}
	i := func(key string, v *int) {
		if v != nil {
			set(key, strconv.Itoa(*v))
		}
	}
	triple := func(key string, v []int) {
		if len(v) == 3 {
			set(key, fmt.Sprintf("%d %d %d", v[0], v[1], v[2]))
		}
	}
	if p.CongestionControl != "" {
		set(defaultCCKey, p.CongestionControl)
	}
	b("net.ipv4.tcp_sack", p.SACK)
	b("net.ipv4.tcp_timestamps", p.Timestamps)
	b("net.ipv4.tcp_window_scaling", p.WindowScaling)
	i("net.ipv4.tcp_ecn", p.ECN)
	nms := true
	if p.NoMetricsSave != nil {
		nms = *p.NoMetricsSave
	}
	b("net.ipv4.tcp_no_metrics_save", &nms)
	triple("net.ipv4.tcp_rmem", p.Rmem)
	triple("net.ipv4.tcp_wmem", p.Wmem)
	i("net.ipv4.tcp_recovery", p.Recovery)
	i("net.ipv4.tcp_early_retrans", p.EarlyRetrans)
	b(backlogACKDeferKey, p.BacklogACKDefer)
	out = append(out, p.Sysctls...)
	return out
}

// ApplyTCP applies node's TCP profile (node.TCP, which may be nil: the
// defaults still apply) inside ns: its sysctls, each read back, then its
// per-route metrics through h, a netlink handle in ns. It returns the
// effective profile as read back. A node default congestion control that
// the root namespace does not allow fails with ErrCCNotAllowed and says
// how to opt in; run Preflight first to catch it before deploying.
func ApplyTCP(ns netns.NsHandle, h *netlink.Handle, node *topo.Node) (*TCPState, error) {
	kvs := TCPSysctls(node.TCP)
	err := do(ns, func() error {
		for _, kv := range kvs {
			if kv.Key == defaultCCKey {
				if err := setDefaultCC(kv.Value); err != nil {
					return err
				}
				continue
			}
			if kv.Key == backlogACKDeferKey {
				if _, err := sysctl.Read(kv.Key); errors.Is(err, fs.ErrNotExist) {
					if kv.Value == "0" {
						continue // Linux < 6.7 never defers: an ACK per segment as asked
					}
					return fmt.Errorf("tcp.backlog_ack_defer: true: this kernel has no %s (it arrived in Linux 6.7); remove the key or set it to false", kv.Key)
				}
			}
			if err := writeSysctl(kv.Key, kv.Value); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if node.TCP != nil && len(node.TCP.Routes) > 0 {
		if err := applyRouteMetrics(h, node.TCP.Routes); err != nil {
			return nil, err
		}
	}
	st, err := readTCP(ns, h)
	if err != nil {
		return nil, err
	}
	if node.TCP != nil {
		err = do(ns, func() error {
			for _, kv := range node.TCP.Sysctls {
				v, err := readSysctl(kv.Key)
				if err != nil {
					return err
				}
				st.Sysctls = append(st.Sysctls, topo.KV{Key: kv.Key, Value: v})
			}
			return nil
		})
	}
	return st, err
}

// setDefaultCC sets the namespace's default congestion control (call it
// inside do), explaining the kernel's rules when it refuses.
func setDefaultCC(name string) error {
	cur, err := readSysctl(defaultCCKey)
	if err != nil {
		return err
	}
	if cur == name {
		return nil
	}
	av, err := readSysctl(availableCCKey)
	if err != nil {
		return err
	}
	if !slices.Contains(strings.Fields(av), name) {
		return fmt.Errorf("congestion control %q: %w (available: %s)", name, ErrCCNotAvailable, av)
	}
	al, err := readSysctl(allowedCCKey)
	if err != nil {
		return err
	}
	if err := writeSysctl(defaultCCKey, name); err != nil {
		if errors.Is(err, unix.EPERM) || !slices.Contains(strings.Fields(al), name) {
			return fmt.Errorf("congestion control %q as the namespace default: %w (%v): %s",
				name, ErrCCNotAllowed, err, ccAllowedAdvice(name, strings.Fields(al)))
		}
		return err
	}
	return nil
}

// ReadTCP reads the effective TCP profile of the namespace ns (for
// emuctl inspect): the profile's sysctls and the routes with TCP metrics.
func ReadTCP(ns netns.NsHandle) (*TCPState, error) {
	h, err := netlink.NewHandleAt(ns, unix.NETLINK_ROUTE)
	if err != nil {
		return nil, err
	}
	defer h.Close()
	return readTCP(ns, h)
}

func readTCP(ns netns.NsHandle, h *netlink.Handle) (*TCPState, error) {
	st := &TCPState{}
	err := do(ns, func() error {
		vals := map[string]string{}
		for _, k := range profileKeys {
			v, err := readSysctl(k)
			if err != nil {
				return err
			}
			vals[k] = v
		}
		atoi := func(k string) int { n, _ := strconv.Atoi(vals[k]); return n }
		trip := func(k string) (t [3]int) {
			for i, f := range strings.Fields(vals[k]) {
				if i < 3 {
					t[i], _ = strconv.Atoi(f)
				}
			}
			return t
		}
		st.CongestionControl = vals[defaultCCKey]
		st.SACK = atoi("net.ipv4.tcp_sack") != 0
		st.Timestamps = atoi("net.ipv4.tcp_timestamps")
		st.WindowScaling = atoi("net.ipv4.tcp_window_scaling") != 0
		st.ECN = atoi("net.ipv4.tcp_ecn")
		st.NoMetricsSave = atoi("net.ipv4.tcp_no_metrics_save") != 0
		st.Rmem, st.Wmem = trip("net.ipv4.tcp_rmem"), trip("net.ipv4.tcp_wmem")
		st.Recovery = atoi("net.ipv4.tcp_recovery")
		st.EarlyRetrans = atoi("net.ipv4.tcp_early_retrans")
		if v, err := readSysctl(backlogACKDeferKey); err == nil {
			on := v != "0"
			st.BacklogACKDefer = &on
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	st.Routes, err = readRouteMetrics(h)
	return st, err
}
