package main

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/emuctl/emuctl/suite"
	"github.com/emuctl/emuctl/tc/mmtrace"
	"github.com/emuctl/emuctl/topo"
	"github.com/spf13/cobra"
)

func newValidateCmd() *cobra.Command {
	var sf specFlags
	cmd := &cobra.Command{
		Use:   "validate [topology.yaml ...]",
		Short: "Check topology files (or --topo); touches nothing; errors as file:line:col",
		Example: `  emuctl validate topologies/*.yaml
  emuctl validate --topo tree,3,10 --link rate=10mbit,delay=5ms`,
		ValidArgsFunction: yamlArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if sf.topo != "" {
				spec, err := sf.load(nil)
				if err != nil {
					return err
				}
				fmt.Printf("--topo %s: ok (lab %s: %d nodes, %d links)\n", sf.topo, spec.Name, len(spec.Nodes), len(spec.Links))
				return nil
			}
			if len(args) == 0 {
				return fmt.Errorf("give one or more topology files, or --topo")
			}
			bad := 0
			for _, f := range args {
				if data, err := os.ReadFile(f); err == nil && suite.IsSuite(data) {
					if !validateSuite(f) {
						bad++
					}
					continue
				}
				spec, err := topo.LoadFile(f)
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					bad++
					continue
				}
				fmt.Printf("%s: ok (lab %s: %d nodes, %d links)\n", f, spec.Name, len(spec.Nodes), len(spec.Links))
				printTraces(spec)
			}
			if bad > 0 {
				return exitError{1}
			}
			return nil
		},
	}
	sf.add(cmd)
	return cmd
}

// validateSuite loads a suite file (a top-level suite: key): every
// scenario's topology and flows, every check.
func validateSuite(f string) bool {
	s, err := suite.LoadFile(f)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return false
	}
	fmt.Printf("%s: ok (suite %s: %d parameters, %d checks", f, s.Name, len(s.Params), len(s.Checks))
	for _, p := range suite.ProfileNames {
		if plan, err := s.Plan(p, suite.PlanOptions{}); err == nil {
			fmt.Printf("; %s %d runs", p, plan.Runs())
		}
	}
	fmt.Println(")")
	return true
}

// printTraces describes every traced direction's trace: length, mean
// rate, worst and best whole second, longest outage (a warning past 10 s:
// a TCP flow will time out in it), and the schedules' step counts.
func printTraces(spec *topo.Spec) {
	for i, l := range spec.Links {
		for _, d := range []struct {
			name string
			aToB bool
		}{{"a->b", true}, {"b->a", false}} {
			tr := l.Params.Dir(d.aToB).Trace
			if tr == nil {
				continue
			}
			st := mmtrace.Summarize(tr.Ms)
			fmt.Printf("  link %d %s %s: trace %s: %v, mean %.2f Mbit/s, 1-s min %.2f max %.2f Mbit/s, longest outage %v\n",
				i, l.A.Node+"-"+l.B.Node, d.name, tr.File, st.Length, st.MeanBps/1e6, st.MinBps/1e6, st.MaxBps/1e6, st.LongestGap)
			if st.LongestGap > 10*time.Second {
				fmt.Printf("  warning: link %d %s: the trace is silent for %v: flows will time out in it\n", i, d.name, st.LongestGap)
			}
		}
	}
	for _, s := range spec.Schedules {
		fmt.Printf("  schedule %s (t0: %s): %d steps\n", s.Name, s.T0, len(s.Steps))
	}
	for _, n := range spec.Nodes {
		if n.Mobility != nil {
			fmt.Printf("  %s moves (t0: %s): %s\n", n.Name, n.Mobility.T0, topo.MobilityString(n.Mobility))
		}
		if st := n.Station; st != nil && len(st.ESS) > 1 {
			off := "the reassociation exchange's airtime"
			if st.Roaming.OffAir > 0 {
				off = st.Roaming.OffAir.String()
			} else if st.Roaming.Scan > 0 {
				off += " + " + st.Roaming.Scan.String() + " of scan"
			}
			nets := st.SSID
			if len(st.Networks) > 1 {
				nets = "the networks " + strings.Join(st.Networks, ", ")
			}
			how := fmt.Sprintf("hysteresis %g dB", st.Roaming.HysteresisDB)
			if st.Roaming.Association == topo.WiFiAssocLLF {
				how = "least loaded first"
			}
			fmt.Printf("  %s roams in %s (%s): %s, off the air %s per handover\n", n.Name, nets, strings.Join(st.ESS, ", "), how, off)
		}
	}
}
