package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/emuctl/emuctl/analysis"
	golab "github.com/emuctl/emuctl/lab"
	"github.com/emuctl/emuctl/topo"
)

// The machines rows (bench --machines N): one topology (tree,3,10 unless
// --topo says otherwise) brought up and torn down on one machine and over
// N local machines (automatic placement, cut links = kernel VXLAN), the
// medians side by side with their ratio; then a linear,2 lab whose
// switch-to-switch link is a plain veth on one machine and a VXLAN tunnel
// between two local machines: one unshaped TCP flow (iperf3, run in the
// nodes as `emuctl exec` runs it) and ping's RTT across each, with the
// ratio and the latency the tunnel adds. Both labs of a pair are made from
// the same topology file text, with and without machines:.

// benchUnderlay is the bench labs' underlay: machine mI has .I.
const benchUnderlay = "192.168.254."

const (
	benchCutPings  = 200 // ping probes per lab and round
	benchCutFlow   = 5 * time.Second
	benchIperfPort = 5299
)

type machinesResult struct {
	topo         string
	machines     int
	nodes, links int
	perMachine   []int // nodes placed on m1, m2, ...
	cuts         int
	reps         int
	up1, down1   time.Duration // one machine, medians
	upN, downN   time.Duration // over the machines, medians
	settle1      time.Duration // the longest kernel cleanup after down
	settleN      time.Duration
	cut          *cutLinkResult // nil when not run
}

type cutLinkResult struct {
	rounds      int
	flow        time.Duration
	underlayRTT time.Duration // median RTT between the machines' underlay addresses, measured at up
	bpsVeth     float64       // median goodput; 0 without iperf3
	bpsVXLAN    float64
	noIperf3    bool
	pings       int           // replies per lab, all rounds
	rttVeth     time.Duration // median of the replies
	rttVXLAN    time.Duration
}

// benchYAML writes a generated topology as a topology file named name:
// plain, or (machines > 1) over local machines m1..mN — placed by
// automatic placement, or by place (node → machine) when it is given.
func benchYAML(spec *topo.Spec, name string, machines int, place func(node string) string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\n", name)
	if machines > 1 {
		b.WriteString("machines:\n")
		for i := 1; i <= machines; i++ {
			fmt.Fprintf(&b, "  m%d: {ssh: local, underlay: %s%d}\n", i, benchUnderlay, i)
		}
		if place == nil {
			b.WriteString("placement: auto\n")
		} else {
			b.WriteString("placement: explicit\n")
		}
	}
	b.WriteString("nodes:\n")
	for _, n := range spec.Nodes {
		if machines > 1 && place != nil {
			fmt.Fprintf(&b, "  %s: {kind: %s, machine: %s}\n", n.Name, n.Kind, place(n.Name))
		} else {
			fmt.Fprintf(&b, "  %s: {kind: %s}\n", n.Name, n.Kind)
		}
	}
	b.WriteString("links:\n")
	for _, l := range spec.Links {
		fmt.Fprintf(&b, "  - endpoints: [%s, %s]\n", l.A.Node, l.B.Node)
	}
	return b.String()
}

func benchLoad(gen, name string, machines int, place func(string) string) (*topo.Spec, error) {
	g, err := topo.Generate(gen, topo.GenOptions{Name: name})
	if err != nil {
		return nil, err
	}
	return topo.Load("bench-"+name+".yaml", []byte(benchYAML(g, name, machines, place)))
}

func benchMachines(gen string, machines, reps int, withCut, asJSON bool) error {
	if machines < 2 {
		return fmt.Errorf("bench --machines %d: give 2 or more", machines)
	}
	if reps < 1 {
		reps = 1
	}
	r := machinesResult{topo: gen, machines: machines, reps: reps}
	golab.WaitNetnsSettled(30 * time.Second)
	var up1, down1, upN, downN []time.Duration
	for i := 0; i < reps; i++ {
		order := []int{1, machines}
		if i%2 == 1 { // alternate: on a shared machine the order alone shifts results
			order = []int{machines, 1}
		}
		for _, m := range order {
			name := "benchm1"
			if m > 1 {
				name = "benchm" + strconv.Itoa(m)
			}
			spec, err := benchLoad(gen, name, m, nil)
			if err != nil {
				return err
			}
			r.nodes, r.links = len(spec.Nodes), len(spec.Links)
			if spec.Cluster != nil {
				r.cuts = len(spec.Cluster.Cuts)
				r.perMachine = nodesPerMachine(spec.Cluster)
			}
			up, down, settle, err := timeUpDown(spec)
			if err != nil {
				return err
			}
			if m == 1 {
				up1, down1 = append(up1, up), append(down1, down)
				r.settle1 = max(r.settle1, settle)
			} else {
				upN, downN = append(upN, up), append(downN, down)
				r.settleN = max(r.settleN, settle)
			}
		}
	}
	r.up1, r.down1, r.upN, r.downN = medianDur(up1), medianDur(down1), medianDur(upN), medianDur(downN)
	if withCut {
		c, err := benchCutLink(reps)
		if err != nil {
			return err
		}
		r.cut = c
	}
	if asJSON {
		return writeJSON(os.Stdout, machinesJSONOf(r))
	}
	printMachines(os.Stdout, r)
	return nil
}

func nodesPerMachine(c *topo.Cluster) []int {
	idx := map[string]int{}
	for i, m := range c.Machines {
		idx[m.Name] = i
	}
	out := make([]int, len(c.Machines))
	for _, m := range c.Nodes {
		out[idx[m]]++
	}
	return out
}

// benchCutLink brings up linear,2 twice — on one machine, and with
// h1, s1 on m1 and h2, s2 on m2 (s1-s2 cut) — and measures h1 → h2 on
// both, alternating which lab goes first, for rounds rounds.
func benchCutLink(rounds int) (*cutLinkResult, error) {
	c := &cutLinkResult{rounds: rounds, flow: benchCutFlow}
	place := func(node string) string { return "m" + node[1:] } // h1, s1 → m1; h2, s2 → m2
	var labs []*topo.Spec
	defer func() {
		for _, s := range labs {
			golab.Down(s.Name, nil)
		}
		golab.WaitNetnsSettled(30 * time.Second)
	}()
	for _, m := range []int{1, 2} {
		spec, err := benchLoad("linear,2", "benchl"+strconv.Itoa(m), m, place)
		if err != nil {
			return nil, err
		}
		if m == 2 && (spec.Cluster == nil || len(spec.Cluster.Cuts) != 1) {
			return nil, fmt.Errorf("bench: linear,2 over 2 machines should cut one link")
		}
		if _, err := golab.Deploy(context.Background(), spec, golab.Options{}); err != nil {
			return nil, err
		}
		labs = append(labs, spec)
	}
	if st, err := golab.ReadState(labs[1].Name); err == nil {
		var rtts []time.Duration
		for _, p := range st.Underlay {
			rtts = append(rtts, p.RTT)
		}
		c.underlayRTT = medianDur(rtts)
	}
	dst, ok := golab.PrimaryAddr(labs[0].Node("h2"))
	if !ok {
		return nil, errors.New("bench: h2 has no address")
	}
	_, err := exec.LookPath("iperf3")
	c.noIperf3 = err != nil
	var bps [2][]float64
	var rtt [2][]time.Duration
	for i := 0; i < rounds; i++ {
		order := []int{0, 1}
		if i%2 == 1 {
			order = []int{1, 0}
		}
		for _, k := range order {
			lab := labs[k].Name
			out, err := benchExec(lab, "h1", 30*time.Second, "ping", "-n", "-c", strconv.Itoa(benchCutPings+1), "-i", "0.005", "-W", "1", dst.String())
			if err != nil {
				return nil, fmt.Errorf("lab %s: h1 ping %s: %v\n%s", lab, dst, err, out)
			}
			rtt[k] = append(rtt[k], pingRTTs(out)...)
		}
		if c.noIperf3 {
			continue
		}
		for _, k := range order {
			g, err := benchIperf3(labs[k].Name, "h1", "h2", dst, benchCutFlow)
			if err != nil {
				return nil, err
			}
			bps[k] = append(bps[k], g)
		}
	}
	if len(rtt[0]) == 0 || len(rtt[1]) == 0 {
		return nil, errors.New("bench: no ping replies across the link")
	}
	c.pings = min(len(rtt[0]), len(rtt[1]))
	c.rttVeth, c.rttVXLAN = medianDur(rtt[0]), medianDur(rtt[1])
	c.bpsVeth, c.bpsVXLAN = analysis.Median(bps[0]), analysis.Median(bps[1])
	return c, nil
}

// benchExec runs argv in a node (on its machine) and returns its output.
func benchExec(lab, node string, timeout time.Duration, argv ...string) (string, error) {
	cmd, err := golab.NodeCommand(lab, node, argv)
	if err != nil {
		return "", err
	}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return "", err
	}
	t := time.AfterFunc(timeout, func() { cmd.Process.Kill() }) // the process this bench started
	err = cmd.Wait()
	t.Stop()
	return out.String(), err
}

// benchIperf3 runs one iperf3 TCP flow client → server (the server at
// dst, one test, then it exits) and returns the receiver's goodput.
func benchIperf3(lab, client, server string, dst netip.Addr, dur time.Duration) (float64, error) {
	port := strconv.Itoa(benchIperfPort)
	srv, err := golab.NodeCommand(lab, server, []string{"iperf3", "-s", "-1", "--forceflush", "-B", dst.String(), "-p", port})
	if err != nil {
		return 0, err
	}
	pr, err := srv.StdoutPipe()
	if err != nil {
		return 0, err
	}
	srv.Stderr = srv.Stdout
	if err := srv.Start(); err != nil {
		return 0, err
	}
	done := make(chan error, 1)
	defer func() {
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			srv.Process.Kill() // ours; golab.Down ends what runs in the node
			<-done
		}
	}()
	ready := make(chan bool, 1)
	var srvOut strings.Builder
	go func() {
		sc := bufio.NewScanner(pr)
		said := false
		for sc.Scan() {
			srvOut.WriteString(sc.Text() + "\n")
			if !said && strings.Contains(sc.Text(), "Server listening") {
				said = true
				ready <- true
			}
		}
		if !said {
			ready <- false
		}
		done <- srv.Wait()
	}()
	select {
	case ok := <-ready:
		if !ok {
			return 0, fmt.Errorf("lab %s: iperf3 server in %s did not start", lab, server)
		}
	case <-time.After(10 * time.Second):
		return 0, fmt.Errorf("lab %s: iperf3 server in %s did not start in 10 s", lab, server)
	}
	out, err := benchExec(lab, client, dur+20*time.Second, "iperf3", "-c", dst.String(), "-p", port, "-t", secs(dur), "-J")
	if err != nil {
		return 0, fmt.Errorf("lab %s: iperf3 %s -> %s: %v\n%s", lab, client, server, err, lastLines(out, 5))
	}
	return iperf3Goodput([]byte(out))
}

func secs(d time.Duration) string { return strconv.FormatFloat(d.Seconds(), 'f', -1, 64) }

func lastLines(s string, n int) string {
	ls := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return strings.Join(ls, "\n")
}

// iperf3Goodput reads the receiver's rate from iperf3's -J output.
func iperf3Goodput(b []byte) (float64, error) {
	var d struct {
		Error string `json:"error"`
		End   struct {
			SumReceived struct {
				BitsPerSecond float64 `json:"bits_per_second"`
			} `json:"sum_received"`
		} `json:"end"`
	}
	if err := json.Unmarshal(b, &d); err != nil {
		return 0, fmt.Errorf("iperf3 output: %v", err)
	}
	if d.Error != "" {
		return 0, fmt.Errorf("iperf3: %s", d.Error)
	}
	if d.End.SumReceived.BitsPerSecond <= 0 {
		return 0, errors.New("iperf3 output: no receiver rate")
	}
	return d.End.SumReceived.BitsPerSecond, nil
}

var pingReply = regexp.MustCompile(`icmp_seq=(\d+) .*time=([0-9.]+) ms`)

// pingRTTs returns the round trips ping(8) printed, without the first
// reply (it may have waited for ARP).
func pingRTTs(out string) []time.Duration {
	var rtts []time.Duration
	for _, m := range pingReply.FindAllStringSubmatch(out, -1) {
		if m[1] == "1" {
			continue
		}
		ms, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			continue
		}
		rtts = append(rtts, time.Duration(ms*float64(time.Millisecond)+0.5))
	}
	return rtts
}

// medianDur is analysis.Median over durations.
func medianDur(x []time.Duration) time.Duration {
	f := make([]float64, len(x))
	for i, d := range x {
		f[i] = float64(d)
	}
	return time.Duration(analysis.Median(f))
}

func ratio(a, b float64) string {
	if b == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx", a/b)
}

func printMachines(w io.Writer, r machinesResult) {
	place := make([]string, len(r.perMachine))
	for i, n := range r.perMachine {
		place[i] = strconv.Itoa(n)
	}
	runs := "median of " + strconv.Itoa(r.reps) + " runs each"
	if r.reps == 1 {
		runs = "one run each"
	}
	fmt.Fprintf(w, "\nmachines: %s (%d nodes, %d links) on 1 machine and over %d local machines (automatic placement: %s nodes, %d cut links = VXLAN), %s\n",
		r.topo, r.nodes, r.links, r.machines, strings.Join(place, " + "), r.cuts, runs)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "\t1 machine\t%d machines\tratio (%d/1)\t\n", r.machines, r.machines)
	row := func(what string, a, b time.Duration) {
		fmt.Fprintf(tw, "%s\t%.3fs\t%.3fs\t%s\t\n", what, a.Seconds(), b.Seconds(), ratio(b.Seconds(), a.Seconds()))
	}
	row("emuctl up", r.up1, r.upN)
	row("emuctl down", r.down1, r.downN)
	row("emuctl total", r.up1+r.down1, r.upN+r.downN)
	row("kernel cleanup after down (max)", r.settle1, r.settleN)
	tw.Flush()
	if c := r.cut; c != nil {
		fmt.Fprintf(w, "\ncut link: linear,2 (h1-s1-s2-h2, unshaped), s1-s2 a veth on 1 machine vs VXLAN between 2 local machines (h1, s1 | s2, h2; underlay RTT %.1f µs at up)\n",
			float64(c.underlayRTT)/1e3)
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "h1 -> h2\tveth\tvxlan\tvxlan / veth\tadded by vxlan\t")
		if c.noIperf3 {
			fmt.Fprintln(tw, "TCP goodput\tiperf3 not installed\t-\t-\t-\t")
		} else {
			fmt.Fprintf(tw, "TCP goodput (iperf3, 1 flow, %s, median of %d)\t%.2f Gbit/s\t%.2f Gbit/s\t%s\t%+.2f Gbit/s\t\n", c.flow, c.rounds,
				c.bpsVeth/1e9, c.bpsVXLAN/1e9, ratio(c.bpsVXLAN, c.bpsVeth), (c.bpsVXLAN-c.bpsVeth)/1e9)
		}
		fmt.Fprintf(tw, "RTT (ping, median of %d)\t%.0f µs\t%.0f µs\t%s\t%+.0f µs\t\n", c.pings,
			float64(c.rttVeth)/1e3, float64(c.rttVXLAN)/1e3, ratio(float64(c.rttVXLAN), float64(c.rttVeth)), float64(c.rttVXLAN-c.rttVeth)/1e3)
		tw.Flush()
	}
	fmt.Fprintln(w, "(local machines: network namespaces with their own mount namespace on a veth underlay, so the 2-machine figures are the cost of the machinery and the tunnels, not of a network; every run starts on a settled kernel; ping(8) prints round trips to 1 µs)")
}

type machinesJSON struct {
	Topology        string       `json:"topology"`
	Machines        int          `json:"machines"`
	Nodes           int          `json:"nodes"`
	Links           int          `json:"links"`
	NodesPerMachine []int        `json:"nodes_per_machine"`
	CutLinks        int          `json:"cut_links"`
	Reps            int          `json:"reps"`
	One             machinesSide `json:"one_machine"`
	Many            machinesSide `json:"over_machines"`
	UpRatio         float64      `json:"up_ratio"`
	DownRatio       float64      `json:"down_ratio"`
	Cut             *cutLinkJSON `json:"cut_link,omitempty"`
}

type machinesSide struct {
	UpS            float64 `json:"up_s"`
	DownS          float64 `json:"down_s"`
	KernelCleanupS float64 `json:"kernel_cleanup_s"`
}

type cutLinkJSON struct {
	Rounds        int     `json:"rounds"`
	FlowS         float64 `json:"flow_s"`
	UnderlayRTTUs float64 `json:"underlay_rtt_us"`
	VethBps       float64 `json:"veth_bps,omitempty"`
	VXLANBps      float64 `json:"vxlan_bps,omitempty"`
	BpsRatio      float64 `json:"bps_ratio,omitempty"`
	Iperf3        string  `json:"iperf3,omitempty"` // why there is no goodput
	Pings         int     `json:"pings"`
	VethRTTUs     float64 `json:"veth_rtt_us"`
	VXLANRTTUs    float64 `json:"vxlan_rtt_us"`
	AddedRTTUs    float64 `json:"added_rtt_us"`
}

func machinesJSONOf(r machinesResult) machinesJSON {
	div := func(a, b float64) float64 {
		if b == 0 {
			return 0
		}
		return a / b
	}
	j := machinesJSON{Topology: r.topo, Machines: r.machines, Nodes: r.nodes, Links: r.links, NodesPerMachine: r.perMachine,
		CutLinks: r.cuts, Reps: r.reps,
		One:     machinesSide{r.up1.Seconds(), r.down1.Seconds(), r.settle1.Seconds()},
		Many:    machinesSide{r.upN.Seconds(), r.downN.Seconds(), r.settleN.Seconds()},
		UpRatio: div(r.upN.Seconds(), r.up1.Seconds()), DownRatio: div(r.downN.Seconds(), r.down1.Seconds())}
	if c := r.cut; c != nil {
		us := func(d time.Duration) float64 { return float64(d) / 1e3 }
		j.Cut = &cutLinkJSON{Rounds: c.rounds, FlowS: c.flow.Seconds(), UnderlayRTTUs: us(c.underlayRTT),
			VethBps: c.bpsVeth, VXLANBps: c.bpsVXLAN, BpsRatio: div(c.bpsVXLAN, c.bpsVeth),
			Pings: c.pings, VethRTTUs: us(c.rttVeth), VXLANRTTUs: us(c.rttVXLAN), AddedRTTUs: us(c.rttVXLAN - c.rttVeth)}
		if c.noIperf3 {
			j.Cut.Iperf3 = "not installed"
		}
	}
	return j
}
