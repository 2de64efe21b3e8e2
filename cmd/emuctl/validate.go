package main

import (
	"fmt"
	"os"

	"github.com/emuctl/emuctl/suite"
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
