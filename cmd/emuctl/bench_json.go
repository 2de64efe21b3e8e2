package main

import (
	"fmt"
	"os"

	"github.com/emuctl/emuctl/traffic"
)

// What `emuctl bench --json` prints: the table's rows (seconds as
// numbers, the Mininet column's note when it has no time), peak memory and
// the traffic comparison; with --scale, the scale row against its targets.

type benchJSON struct {
	Rows      []benchRowJSON    `json:"rows"`
	Reps      int               `json:"reps"`
	PeakRSSMB float64           `json:"peak_rss_mb"`
	Traffic   *benchTrafficJSON `json:"traffic,omitempty"`
}

type benchRowJSON struct {
	Topology       string  `json:"topology"`
	Switch         string  `json:"switch"`
	Nodes          int     `json:"nodes"`
	Links          int     `json:"links"`
	UpS            float64 `json:"up_s"`
	DownS          float64 `json:"down_s"`
	TotalS         float64 `json:"total_s"`
	KernelCleanupS float64 `json:"kernel_cleanup_s"`
	MininetTotalS  float64 `json:"mininet_total_s,omitempty"`
	Mininet        string  `json:"mininet,omitempty"` // why there is no Mininet time
	SpeedUp        float64 `json:"speed_up,omitempty"`
}

type benchTrafficJSON struct {
	NativeBps float64 `json:"native_bps"`
	Iperf3Bps float64 `json:"iperf3_bps"`
	Ratio     float64 `json:"ratio"`
	Rounds    int     `json:"rounds"`
	DurationS float64 `json:"duration_s"`
}

func printBenchJSON(rows []benchRow, reps int, peakMB float64, withTraffic bool) error {
	out := benchJSON{Rows: []benchRowJSON{}, Reps: reps, PeakRSSMB: peakMB}
	for _, r := range rows {
		total := (r.up + r.down).Seconds()
		j := benchRowJSON{Topology: r.topo, Switch: r.sw, Nodes: r.nodes, Links: r.links, UpS: r.up.Seconds(), DownS: r.down.Seconds(),
			TotalS: total, KernelCleanupS: r.settle.Seconds(), Mininet: r.mininetErr}
		if r.mininet > 0 {
			j.MininetTotalS, j.SpeedUp = r.mininet.Seconds(), r.mininet.Seconds()/total
		}
		out.Rows = append(out.Rows, j)
	}
	if withTraffic {
		c, err := benchTraffic()
		if err != nil {
			return err
		}
		if c == nil {
			fmt.Fprintln(os.Stderr, "bench: traffic: iperf3 not installed, comparison skipped")
		} else {
			out.Traffic = trafficJSONOf(c)
		}
	}
	return writeJSON(os.Stdout, out)
}

func trafficJSONOf(c *traffic.Comparison) *benchTrafficJSON {
	return &benchTrafficJSON{NativeBps: c.Native, Iperf3Bps: c.Iperf3, Ratio: c.Ratio(), Rounds: c.Rounds, DurationS: c.Duration.Seconds()}
}

type scaleJSON struct {
	Topology       string  `json:"topology"`
	Nodes          int     `json:"nodes"`
	Links          int     `json:"links"`
	UpS            float64 `json:"up_s"`
	DownS          float64 `json:"down_s"`
	PeakRSSMB      float64 `json:"peak_rss_mb"`
	From           string  `json:"from"`
	To             string  `json:"to"`
	PingRTTMs      float64 `json:"ping_rtt_ms,omitempty"`
	PingError      string  `json:"ping_error,omitempty"`
	KernelCleanupS float64 `json:"kernel_cleanup_s"`
	SettledBeforeS float64 `json:"settled_before_s"`
	UpTargetS      float64 `json:"up_target_s"`
	DownTargetS    float64 `json:"down_target_s"`
	MemTargetMB    float64 `json:"mem_target_mb"`
	TargetsMet     bool    `json:"targets_met"`
}

func scaleJSONOf(r scaleResult) scaleJSON {
	mem := max(r.upRSS, r.dnRSS)
	j := scaleJSON{Topology: r.topo, Nodes: r.nodes, Links: r.links, UpS: r.up.Seconds(), DownS: r.down.Seconds(), PeakRSSMB: mem,
		From: r.from, To: r.to, KernelCleanupS: r.settle.Seconds(), SettledBeforeS: r.settledBefore.Seconds(),
		UpTargetS: scaleUpTarget.Seconds(), DownTargetS: scaleDownTarget.Seconds(), MemTargetMB: scaleMemTarget,
		TargetsMet: r.up <= scaleUpTarget && r.down <= scaleDownTarget && mem <= scaleMemTarget && r.pingErr == nil}
	if r.pingErr != nil {
		j.PingError = r.pingErr.Error()
	} else {
		j.PingRTTMs = float64(r.rtt) / 1e6
	}
	return j
}
