package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"text/tabwriter"

	golab "github.com/emuctl/emuctl/lab"
	"github.com/emuctl/emuctl/units"
	"github.com/spf13/cobra"
)

func newVerifyCmd() *cobra.Command {
	var (
		lab    string
		asJSON bool
		built  bool
		opt    golab.VerifyOptions
	)
	cmd := &cobra.Command{
		Use:               "verify [--lab LAB | LAB]",
		ValidArgsFunction: completeLabArg,
		Short:             "Measure every shaped link (one-way delay, rate, loss) against its configuration",
		Long: `verify sends raw Ethernet probe frames on one end of each shaped link and
captures them on the other end, in both directions: 50 small frames for the
one-way delay (exact: every node shares one clock), a burst of back-to-back
full frames for the rate (arrival rate in wire bytes), and small frames paced
at half the rate for the loss. The probes cross only the link under test.
Exit status 1 when a direction deviates by more than the tolerance (rate,
delay) or 3 sigma (loss).

With --built, no traffic: every node is read back from the kernel (and
OVSDB) and compared with the lab's topology as it stands now — namespaces,
interfaces, MACs, MTUs, addresses, each switch's bridge and ports, OVS
bridges and ports, the kernel settings a node's kind and topology ask for.
Exit status 1 when a node differs.`,
		Example: `  sudo emuctl verify
  sudo emuctl verify demo --all --json
  sudo emuctl verify demo --built`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := labArg(lab, args)
			if err != nil {
				return err
			}
			st, err := resolveLab(name)
			if err != nil {
				return err
			}
			if built {
				return verifyBuilt(st.Lab, asJSON) // verify_built.go
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			res, err := golab.Verify(ctx, st.Lab, opt)
			if err != nil {
				return err
			}
			bad := 0
			for _, r := range res {
				if !r.OK() {
					bad++
				}
			}
			if asJSON {
				if err := writeJSON(os.Stdout, res); err != nil {
					return err
				}
			} else {
				if len(res) == 0 {
					fmt.Println("no shaped links (use --all to check every link's delay floor)")
				}
				tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "LINK\tDIR\tBACKEND\tDELAY want\tmin\tmean\tjitter\tRATE want\tgot\terr\tLOSS want\tgot\tRESULT")
				for _, r := range res {
					rateErr := "-"
					if r.WantRate > 0 {
						rateErr = fmt.Sprintf("%+.1f%%", 100*(float64(r.Rate)-float64(r.WantRate))/float64(r.WantRate))
					}
					verdict := "ok"
					if !r.OK() {
						verdict = "FAIL: " + strings.Join(r.Problems, "; ")
					}
					fmt.Fprintf(tw, "%d %s\t%s\t%s\t%v\t%v\t%v\t%v\t%s\t%s\t%s\t%.2f%%\t%.2f%%\t%s\n", r.Link, r.Name, r.Dir, r.Backend,
						r.WantDelay, r.MinDelay.Round(10e3), r.MeanDelay.Round(10e3), r.Jitter.Round(10e3),
						rateOrDash(r.WantRate), rateOrDash(r.Rate), rateErr, r.WantLoss, r.Loss, verdict)
				}
				tw.Flush()
				// a lab over several machines: the clocks' offsets applied
				for _, r := range res {
					switch {
					case r.ClockNote != "":
						fmt.Printf("link %d %s: one-way delays corrected by the receiver's clock offset %+v from the sender's; %s\n", r.Link, r.Dir, r.ClockOffset, r.ClockNote)
					case r.ClockOffset != 0 || r.ClockOffsetUp != 0:
						fmt.Printf("link %d %s: one-way delays corrected by the receiver's clock offset from the sender's, measured now: %+v (at up %+v, drift %+v)\n",
							r.Link, r.Dir, r.ClockOffset, r.ClockOffsetUp, r.ClockOffset-r.ClockOffsetUp)
					}
				}
			}
			if bad > 0 {
				fmt.Fprintf(os.Stderr, "%d of %d link directions deviate from their configuration\n", bad, len(res))
				return exitError{1}
			}
			return nil
		},
	}
	addLabFlag(cmd, &lab, false)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	cmd.Flags().BoolVar(&built, "built", false, "no traffic: read every node back (interfaces, MACs, MTUs, addresses, bridges, OVS ports, kernel settings) and compare it with the topology")
	cmd.Flags().BoolVar(&opt.All, "all", false, "also check unshaped links")
	cmd.Flags().IntVar(&opt.LossProbes, "loss-probes", 3000, "loss probes per direction")
	cmd.Flags().DurationVar(&opt.RateDuration, "rate-time", 0, "length of the rate burst (default 1s)")
	cmd.Flags().Float64Var(&opt.Tolerance, "tolerance", 0.05, "relative tolerance for rate and delay")
	return cmd
}

func rateOrDash(r units.BitRate) string {
	if r == 0 {
		return "-"
	}
	return r.TC()
}
