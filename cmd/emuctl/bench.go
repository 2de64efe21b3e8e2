package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	golab "github.com/emuctl/emuctl/lab"
	"github.com/emuctl/emuctl/ovs"
	"github.com/emuctl/emuctl/topo"
	"github.com/emuctl/emuctl/traffic"
	"github.com/spf13/cobra"
)

type benchRow struct {
	topo, sw     string
	nodes, links int
	up, down     time.Duration
	mininet      time.Duration // build + teardown, 0 when not run
	mininetErr   string
	settle       time.Duration // kernel cleanup after down
}

func newBenchCmd() *cobra.Command {
	var (
		topos       []string
		mininet     bool
		reps        int
		withTraffic bool
		ovsTopos    []string // OVS rows (ls_ovs.go has the rest of OVS in the CLI)
		sw          string
		scale       string // bench_scale.go
		asJSON      bool   // bench_json.go
		machines    int    // bench_machines.go
		change      bool   // bench_change.go
		uiPages     bool   // bench_ui.go
		mnScript    bool   // bench_mininet.go
		mobile      bool   // bench_mobility.go
		shellsTopo  string
	)
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Time lab bring-up and teardown (and Mininet's, side by side, when installed)",
		Example: `  sudo emuctl bench
  sudo emuctl bench --topo linear,200 --topo tree,3,10 --mininet=false
  sudo emuctl bench --machines 2`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if scale != "" {
				return benchScale(scale, asJSON)
			}
			if mnScript {
				return benchMininetScript(asJSON)
			}
			if change {
				longLivedGC()
				return benchChange(reps, shellsTopo, mininet, asJSON)
			}
			if uiPages {
				return benchUI(asJSON)
			}
			if mobile {
				r := 5
				if cmd.Flags().Changed("reps") {
					r = reps
				}
				return benchMobility(asJSON, r)
			}
			if machines > 0 {
				t := "tree,3,10"
				if cmd.Flags().Changed("topo") {
					if len(topos) != 1 {
						return fmt.Errorf("bench --machines: give one --topo (default tree,3,10)")
					}
					t = topos[0]
				}
				return benchMachines(t, machines, reps, withTraffic, asJSON)
			}
			golab.WaitNetnsSettled(30 * time.Second)
			var rows []benchRow
			type run struct{ topo, sw string }
			var runs []run
			for _, t := range topos {
				runs = append(runs, run{t, sw})
			}
			if err := ovsAvailable(); err != nil && len(ovsTopos) > 0 && sw != topo.SwitchOVS {
				fmt.Fprintf(os.Stderr, "bench: no OVS rows: %v\n", err)
			} else if sw != topo.SwitchOVS {
				for _, t := range ovsTopos {
					runs = append(runs, run{t, topo.SwitchOVS})
				}
			}
			// What Mininet lacks, per switch type, said once up front.
			peerMissing := map[string]peerTool{}
			said := map[string]bool{}
			for _, rn := range runs {
				if _, seen := peerMissing[rn.sw]; !mininet || seen {
					continue
				}
				if tl, ok := missingPeerTool(mininetTools(rn.sw), exec.LookPath); ok {
					peerMissing[rn.sw] = tl
					if msg := peerSkipMessage(tl); !said[msg] {
						said[msg] = true
						fmt.Fprintln(os.Stderr, "bench: "+msg)
					}
				}
			}
			for _, rn := range runs {
				t := rn.topo
				row := benchRow{topo: t, sw: rn.sw}
				if row.sw == "" {
					row.sw = topo.SwitchLinuxBridge
				}
				for r := 0; r < reps; r++ {
					spec, err := topo.Generate(t, topo.GenOptions{Name: fmt.Sprintf("bench%d", r), Switch: rn.sw})
					if err != nil {
						return err
					}
					row.nodes, row.links = len(spec.Nodes), len(spec.Links)
					up, down, settle, err := timeUpDown(spec)
					if err != nil {
						return err
					}
					if settle > row.settle {
						row.settle = settle
					}
					if r == 0 || up+down < row.up+row.down {
						row.up, row.down = up, down
					}
				}
				if tl, ok := peerMissing[rn.sw]; ok {
					row.mininetErr = peerSkipCell(tl)
				} else if mininet {
					row.mininet, row.mininetErr = runMininet(t, row.sw)
				}
				rows = append(rows, row)
			}
			var ru syscall.Rusage
			syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
			if asJSON {
				return printBenchJSON(rows, reps, float64(ru.Maxrss)/1024, withTraffic)
			}
			tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(tw, "topology\tswitch\tnodes\tlinks\temuctl up\temuctl down\temuctl total\tkernel cleanup after down\tmininet total\tspeed-up\t")
			for _, r := range rows {
				mn, ratio := "-", "-"
				if r.mininet > 0 {
					mn = fmt.Sprintf("%.2fs", r.mininet.Seconds())
					ratio = fmt.Sprintf("%.0fx", r.mininet.Seconds()/(r.up+r.down).Seconds())
				} else if r.mininetErr != "" {
					mn = r.mininetErr
				}
				fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%.3fs\t%.3fs\t%.3fs\t%.2fs\t%s\t%s\t\n", r.topo, r.sw, r.nodes, r.links,
					r.up.Seconds(), r.down.Seconds(), (r.up + r.down).Seconds(), r.settle.Seconds(), mn, ratio)
			}
			tw.Flush()
			if withTraffic {
				c, err := benchTraffic()
				if err != nil {
					return err
				}
				if c == nil {
					fmt.Println("traffic: iperf3 not installed, comparison skipped")
				} else {
					fmt.Println(*c)
				}
			}
			fmt.Println("(up and down: what the commands take; kernel cleanup: how long the kernel then needs to free the namespaces in the background, measured by probing namespace creation; every run starts on a settled kernel)")
			fmt.Println("(ovs rows: without a system Open vSwitch, emuctl's up includes starting its embedded ovsdb-server + ovs-vswitchd and its down stopping them; Mininet is timed against a running ovsdb: the system one, or a private pair started for it and not counted)")
			fmt.Printf("emuctl peak memory (max RSS): %.1f MB (best of %d runs per topology)\n", float64(ru.Maxrss)/1024, reps)
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&topos, "topo", []string{"linear,50", "linear,200", "tree,3,10"}, "topologies to time")
	cmd.Flags().StringArrayVar(&ovsTopos, "ovs-topo", []string{"linear,50"}, "topologies also timed with Open vSwitch switches (when OVS is installed or running)")
	cmd.Flags().StringVar(&sw, "switch", "", "switch type of the --topo rows: linux-bridge (default) | ovs")
	cmd.Flags().BoolVar(&mininet, "mininet", true, "also time Mininet (mn --switch lxbr, or ovs,datapath=user for ovs rows, --controller none --test none) when installed")
	cmd.Flags().StringVar(&scale, "scale", "", "instead of the comparison rows: the scale row for one large topology (e.g. tree,4,10: 11,111 nodes) — up, down, peak memory, first host to last host, kernel cleanup, against the targets")
	cmd.Flags().IntVar(&reps, "reps", 3, "repetitions per topology (best is reported; with --machines, the median)")
	cmd.Flags().BoolVar(&change, "change", false, "instead of the comparison rows: a lab that changes while it runs — a host and its link added to a running 100-node lab and pinged, removed, Cmd(\"true\") through a node's shell, a shell on every node of --shells-topo — beside Mininet's API doing the same (when installed)")
	cmd.Flags().BoolVar(&mobile, "mobility", false, "instead of the comparison rows: the engine medium's CPU with 20 stations still and on random walks (placed at 20 Hz) under a 30 Mbit/s UDP download, in alternating rounds (--reps, default 5)")
	cmd.Flags().BoolVar(&uiPages, "ui", false, "instead of the comparison rows: emuctl ui's server CPU while 3 pages watch a 200-node lab under a shaped TCP flow, and the flow's goodput with and without them")
	cmd.Flags().BoolVar(&mnScript, "mininet-script", false, "instead of the comparison rows: one Mininet Python script (a 100-host tree built, pingAll(), stopped; a 5 Mbit/s 15 ms TCLink path measured by iperf and ping) run by Debian's Mininet and by emuctl mininet, side by side")
	cmd.Flags().StringVar(&shellsTopo, "shells-topo", "tree,2,32", "with --change: the lab whose every node gets a shell (tree,2,32 is Mininet's tree1024: 1,057 nodes)")
	cmd.Flags().IntVar(&machines, "machines", 0, "instead of the comparison rows: up and down of tree,3,10 (or the one --topo) on one machine vs over N local machines (automatic placement, cut links = VXLAN), and, unless --traffic=false, TCP goodput (iperf3) and ping RTT across a cut link vs a veth")
	addSpecCompletion(cmd)
	completeFlag(cmd, "ovs-topo", cobra.FixedCompletions(generatorCompletions, cobra.ShellCompDirectiveNoFileComp|cobra.ShellCompDirectiveNoSpace))
	completeFlag(cmd, "scale", cobra.FixedCompletions(generatorCompletions, cobra.ShellCompDirectiveNoFileComp|cobra.ShellCompDirectiveNoSpace))
	cmd.Flags().BoolVar(&withTraffic, "traffic", true, "also compare emuctl's TCP generator (TCP_INFO sampled at 100 Hz) with iperf3 on an unshaped link, when iperf3 is installed")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON: the rows (or the --scale row), peak memory and the traffic comparison")
	return cmd
}

// runMininet times Mininet building and tearing down the same topology,
// the figure Mininet users know. Only the mn process we start is waited on.
// For ovs rows Mininet needs a running ovsdb-server: the system one, or a
// private pair started here (in a temporary directory, OVS_RUNDIR pointing
// Mininet's ovs-vsctl/ovs-ofctl at it), stopped by pid afterwards.
func runMininet(t, sw string) (time.Duration, string) {
	mn, err := exec.LookPath("mn")
	if err != nil {
		return 0, peerSkipCell(peerTool{"mn", "mininet"})
	}
	if !strings.HasPrefix(t, "linear,") && !strings.HasPrefix(t, "tree,") && !strings.HasPrefix(t, "single,") {
		return 0, "n/a"
	}
	mnSwitch := "lxbr"
	env := os.Environ()
	if sw == topo.SwitchOVS {
		mnSwitch = "ovs,datapath=user"
		if golab.KernelOVSDatapath() {
			mnSwitch = "ovs"
		}
		if !golab.SystemOVSAnswers() {
			if users := golab.EmbeddedOVSUsers(); len(users) > 0 {
				// A second ovs-vswitchd in the root namespace would fight it.
				return 0, "skipped: emuctl's embedded OVS serves labs " + strings.Join(users, ", ")
			}
			dir, err := os.MkdirTemp("", "emuctl-bench-ovs-")
			if err != nil {
				return 0, "failed: " + err.Error()
			}
			defer os.RemoveAll(dir)
			e := ovs.Embedded{Dir: dir + "/ovs", Cleanup: golab.KernelOVSDatapath()}
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			err = e.Start(ctx, nil)
			cancel()
			defer e.Stop(10 * time.Second)
			if err != nil {
				return 0, "failed: no ovsdb for Mininet: " + err.Error()
			}
			env = append(env, "OVS_RUNDIR="+e.Dir)
		}
	}
	c := exec.Command(mn, "--switch", mnSwitch, "--controller", "none", "--topo", t, "--test", "none")
	c.Env = env
	var out strings.Builder
	c.Stdout, c.Stderr = &out, &out
	t0 := time.Now()
	if err := c.Run(); err != nil {
		if tl, ok := mininetMissing(out.String(), sw); ok {
			// Mininet's own message ends with the whole PATH.
			fmt.Fprintln(os.Stderr, "bench: "+peerSkipMessage(tl))
			return 0, peerSkipCell(tl)
		}
		tail := strings.TrimSpace(out.String())
		if i := strings.LastIndexByte(tail, '\n'); i >= 0 {
			tail = tail[i+1:]
		}
		return 0, "failed: " + err.Error() + ": " + tail
	}
	return time.Since(t0), ""
}

// ovsAvailable says why OVS rows cannot run, or nil.
func ovsAvailable() error {
	if golab.SystemOVSAnswers() {
		return nil
	}
	_, err := ovs.Binaries()
	return err
}

// benchTraffic runs emuctl's TCP generator and iperf3 side by side on one
// unshaped veth between two hosts; nil without iperf3.
func benchTraffic() (*traffic.Comparison, error) {
	if _, err := exec.LookPath("iperf3"); err != nil {
		return nil, nil
	}
	spec, err := topo.Load("bench-traffic.yaml", []byte("name: benchtraffic\nnodes: {h1: {}, h2: {}}\nlinks:\n  - endpoints: [h1, h2]\n"))
	if err != nil {
		return nil, err
	}
	if _, err := golab.Deploy(context.Background(), spec, golab.Options{}); err != nil {
		return nil, err
	}
	defer golab.Down(spec.Name, nil)
	c, err := traffic.CompareWithIperf3(context.Background(), spec.Name, "h1", "h2", 5*time.Second, 10*time.Millisecond, 2)
	if err != nil {
		return nil, err
	}
	return &c, nil
}

// timeUpDown brings spec up and down once and returns how long each took
// and how long the kernel then took to finish freeing its namespaces.
func timeUpDown(spec *topo.Spec) (up, down, settle time.Duration, err error) {
	t0 := time.Now()
	if _, err := golab.Deploy(context.Background(), spec, golab.Options{}); err != nil {
		return 0, 0, 0, err
	}
	up = time.Since(t0)
	t1 := time.Now()
	if err := golab.Down(spec.Name, nil); err != nil {
		return up, 0, 0, err
	}
	down = time.Since(t1)
	return up, down, golab.WaitNetnsSettled(30 * time.Second), nil
}
