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

	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/topo"
	"github.com/emuctl/emuctl/traffic"
	"github.com/spf13/cobra"
)

type benchRow struct {
	topo         string
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
	)
	cmd := &cobra.Command{
		Use:   "bench",
		Short: "Time lab bring-up and teardown (and Mininet's, side by side, when installed)",
		Example: `  sudo emuctl bench
  sudo emuctl bench --topo linear,200 --topo tree,3,10 --mininet=false`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			emu.WaitNetnsSettled(30 * time.Second)
			var rows []benchRow
			for _, t := range topos {
				row := benchRow{topo: t}
				for r := 0; r < reps; r++ {
					spec, err := topo.Generate(t, topo.GenOptions{Name: fmt.Sprintf("bench%d", r)})
					if err != nil {
						return err
					}
					row.nodes, row.links = len(spec.Nodes), len(spec.Links)
					t0 := time.Now()
					if _, err := emu.Deploy(context.Background(), spec, emu.Options{}); err != nil {
						return err
					}
					up := time.Since(t0)
					t1 := time.Now()
					if err := emu.Down(spec.Name, nil); err != nil {
						return err
					}
					down := time.Since(t1)
					settle := emu.WaitNetnsSettled(30 * time.Second)
					if settle > row.settle {
						row.settle = settle
					}
					if r == 0 || up+down < row.up+row.down {
						row.up, row.down = up, down
					}
				}
				if mininet {
					row.mininet, row.mininetErr = runMininet(t)
				}
				rows = append(rows, row)
			}
			var ru syscall.Rusage
			syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
			tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(tw, "topology\tnodes\tlinks\temuctl up\temuctl down\temuctl total\tkernel cleanup after down\tmininet total\tspeed-up\t")
			for _, r := range rows {
				mn, ratio := "-", "-"
				if r.mininet > 0 {
					mn = fmt.Sprintf("%.2fs", r.mininet.Seconds())
					ratio = fmt.Sprintf("%.0fx", r.mininet.Seconds()/(r.up+r.down).Seconds())
				} else if r.mininetErr != "" {
					mn = r.mininetErr
				}
				fmt.Fprintf(tw, "%s\t%d\t%d\t%.3fs\t%.3fs\t%.3fs\t%.2fs\t%s\t%s\t\n", r.topo, r.nodes, r.links,
					r.up.Seconds(), r.down.Seconds(), (r.up + r.down).Seconds(), r.settle.Seconds(), mn, ratio)
			}
			tw.Flush()
			if withTraffic {
				if err := benchTraffic(); err != nil {
					return err
				}
			}
			fmt.Println("(up and down: what the commands take; kernel cleanup: how long the kernel then needs to free the namespaces in the background, measured by probing namespace creation; every run starts on a settled kernel)")
			fmt.Printf("emuctl peak memory (max RSS): %.1f MB (best of %d runs per topology)\n", float64(ru.Maxrss)/1024, reps)
			return nil
		},
	}
	cmd.Flags().StringArrayVar(&topos, "topo", []string{"linear,50", "linear,200", "tree,3,10"}, "topologies to time")
	cmd.Flags().BoolVar(&mininet, "mininet", true, "also time Mininet (mn --switch lxbr --controller none --test none) when installed")
	cmd.Flags().IntVar(&reps, "reps", 3, "repetitions per topology (best is reported)")
	cmd.Flags().BoolVar(&withTraffic, "traffic", true, "also compare emuctl's TCP generator (TCP_INFO sampled at 100 Hz) with iperf3 on an unshaped link, when iperf3 is installed")
	return cmd
}

// runMininet times Mininet building and tearing down the same topology,
// the figure Mininet users know. Only the mn process we start is waited on.
func runMininet(t string) (time.Duration, string) {
	mn, err := exec.LookPath("mn")
	if err != nil {
		return 0, "not installed"
	}
	if !strings.HasPrefix(t, "linear,") && !strings.HasPrefix(t, "tree,") && !strings.HasPrefix(t, "single,") {
		return 0, "n/a"
	}
	c := exec.Command(mn, "--switch", "lxbr", "--controller", "none", "--topo", t, "--test", "none")
	c.Stdout, c.Stderr = nil, nil
	t0 := time.Now()
	if err := c.Run(); err != nil {
		return 0, "failed: " + err.Error()
	}
	return time.Since(t0), ""
}

// benchTraffic runs emuctl's TCP generator and iperf3 side by side on one
// unshaped veth between two hosts and prints both with their ratio.
func benchTraffic() error {
	if _, err := exec.LookPath("iperf3"); err != nil {
		fmt.Println("traffic: iperf3 not installed, comparison skipped")
		return nil
	}
	spec, err := topo.Load("bench-traffic.yaml", []byte("name: benchtraffic\nnodes: {h1: {}, h2: {}}\nlinks:\n  - endpoints: [h1, h2]\n"))
	if err != nil {
		return err
	}
	if _, err := emu.Deploy(context.Background(), spec, emu.Options{}); err != nil {
		return err
	}
	defer emu.Down(spec.Name, nil)
	c, err := traffic.CompareWithIperf3(context.Background(), spec.Name, "h1", "h2", 5*time.Second, 10*time.Millisecond, 2)
	if err != nil {
		return err
	}
	fmt.Println(c)
	return nil
}
