package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"text/tabwriter"
)

// bench --mininet-script: one Python script written for Mininet, run as
// it is by Debian's Mininet (python3) and by emuctl's Mininet layer
// (emuctl mininet), in one run: a 100-host tree (TreeTopo(2, 10), Linux
// bridges, no controller) built, pingAll(), stopped, end to end; and a
// TCLink path (5 Mbit/s, 15 ms on each host's link, two switches between)
// measured by iperf 2 and ping against physics (capacity = R × 1448/1514,
// RTT floor 4 × 15 ms).

const mininetBenchScript = `
import json, re, sys, time
from mininet.net import Mininet
from mininet.topo import Topo
from mininet.topolib import TreeTopo
from mininet.nodelib import LinuxBridge
from mininet.link import TCLink
from mininet.log import setLogLevel

setLogLevel('warning')
out = {}
t0 = time.time()
net = Mininet(topo=TreeTopo(depth=2, fanout=10), switch=LinuxBridge, controller=None)
net.start()
out['loss'] = net.pingAll()
net.stop()
out['tree100'] = time.time() - t0

class Path(Topo):
    def build(self):
        h1, h2 = self.addHost('h1'), self.addHost('h2')
        s1, s2 = self.addSwitch('s1'), self.addSwitch('s2')
        self.addLink(h1, s1, bw=5, delay='15ms')
        self.addLink(s1, s2)
        self.addLink(s2, h2, bw=5, delay='15ms')

try:
    net = Mininet(topo=Path(), switch=LinuxBridge, controller=None, link=TCLink)
    net.start()
    h1, h2 = net['h1'], net['h2']
    ping = h1.cmd('ping -c 20 -i 0.2 %s' % h2.IP())
    m = re.search(r'= ([\d.]+)/([\d.]+)/([\d.]+)/', ping)
    out['rtt_min_ms'], out['rtt_avg_ms'] = float(m.group(1)), float(m.group(2))
    h2.cmd('iperf -s -p 5001 > /tmp/emuctl-bench-iperf-%d.txt 2>&1 &' % id(net))
    time.sleep(0.5)
    cli = h1.cmd('iperf -t 15 -f m -c %s -p 5001' % h2.IP())
    time.sleep(1)
    srv = h2.cmd('kill %iperf; sleep 0.2; cat /tmp/emuctl-bench-iperf-*.txt; rm -f /tmp/emuctl-bench-iperf-*.txt')
    rates = re.findall(r'([\d.]+) ([KMG])bits/sec', srv)
    scale = {'K': 1e-3, 'M': 1.0, 'G': 1e3}
    out['iperf_mbps'] = float(rates[-1][0]) * scale[rates[-1][1]]
    net.stop()
except Exception as e:
    out['tclink_error'] = str(e).splitlines()[0][:200]
    try:
        net.stop()
    except Exception:
        pass
print(json.dumps(out))
`

type mininetScriptRun struct {
	Tree100   float64 `json:"tree100"`
	Loss      float64 `json:"loss"`
	RTTMin    float64 `json:"rtt_min_ms"`
	RTTAvg    float64 `json:"rtt_avg_ms"`
	IperfMbps float64 `json:"iperf_mbps"`
	TCLinkErr string  `json:"tclink_error,omitempty"`
	Err       string  `json:"error,omitempty"`
}

// runMininetScript runs the script with argv (python3 script, or emuctl
// mininet script); its last line is the JSON result.
func runMininetScript(argv ...string) mininetScriptRun {
	var r mininetScriptRun
	f, err := os.CreateTemp("", "emuctl-bench-mn-*.py")
	if err != nil {
		r.Err = err.Error()
		return r
	}
	defer os.Remove(f.Name())
	f.WriteString(mininetBenchScript)
	f.Close()
	out, err := exec.Command(argv[0], append(argv[1:], f.Name())...).CombinedOutput()
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	last := lines[len(lines)-1]
	if jerr := json.Unmarshal([]byte(last), &r); jerr != nil {
		r.Err = fmt.Sprintf("%v: %s", err, last)
	}
	return r
}

func benchMininetScript(asJSON bool) error {
	self, err := os.Executable()
	if err != nil {
		return err
	}
	ours := runMininetScript(self, "mininet")
	var theirs mininetScriptRun
	if err := exec.Command("/usr/bin/python3", "-c", "import mininet.net").Run(); err != nil {
		theirs.Err = "skipped: no Mininet for /usr/bin/python3 (apt-get install mininet)"
	} else {
		theirs = runMininetScript("/usr/bin/python3")
	}
	if asJSON {
		return writeJSON(os.Stdout, map[string]mininetScriptRun{"emuctl": ours, "mininet": theirs})
	}
	if ours.Err != "" {
		return fmt.Errorf("the script under emuctl mininet: %s", ours.Err)
	}
	capacity := 5 * 1448.0 / 1514
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "measure\temuctl mininet\tMininet 2.3.0\tratio\ttarget")
	mn, ratio := theirs.Err, "-"
	if theirs.Err == "" {
		mn = fmt.Sprintf("%.2f s (%.0f%% dropped)", theirs.Tree100, theirs.Loss)
		ratio = fmt.Sprintf("%.1fx", theirs.Tree100/ours.Tree100)
	}
	fmt.Fprintf(tw, "100-host tree: build, pingAll(), stop\t%.2f s (%.0f%% dropped)\t%s\t%s\t>= 10x\n", ours.Tree100, ours.Loss, mn, ratio)
	tc := func(r mininetScriptRun, v func(mininetScriptRun) string) string {
		switch {
		case r.Err != "":
			return "-"
		case r.TCLinkErr != "":
			return "failed: " + r.TCLinkErr
		}
		return v(r)
	}
	bw := func(r mininetScriptRun) string {
		return fmt.Sprintf("%.3f Mbit/s = %.3f x capacity", r.IperfMbps, r.IperfMbps/capacity)
	}
	rtt := func(r mininetScriptRun) string { return fmt.Sprintf("min %.2f ms, avg %.2f ms", r.RTTMin, r.RTTAvg) }
	fmt.Fprintf(tw, "TCLink 5 Mbit/s: iperf goodput (capacity %.3f)\t%s\t%s\t\t0.95-1.02 x\n", capacity, tc(ours, bw), tc(theirs, bw))
	fmt.Fprintf(tw, "TCLink 2 x 15 ms each way: ping RTT\t%s\t%s\t\twithin 1 ms of 60 ms\n", tc(ours, rtt), tc(theirs, rtt))
	return tw.Flush()
}
