package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"time"

	golab "github.com/emuctl/emuctl/lab"
	"github.com/emuctl/emuctl/topo"
	"github.com/spf13/cobra"
)

type specFlags struct {
	topo, name, sw, link string
}

func (f *specFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.topo, "topo", "", "built-in topology instead of a file: single,N | linear,N | tree,DEPTH,FANOUT | dumbbell,N")
	cmd.Flags().StringVar(&f.name, "name", "", "lab name (default: the file's name field, or derived)")
	cmd.Flags().StringVar(&f.sw, "switch", "", "switch type for --topo: linux-bridge | ovs")
	cmd.Flags().StringVar(&f.link, "link", "", "link parameters for --topo, e.g. rate=10mbit,delay=5ms,loss=1%,queue=100")
	addSpecCompletion(cmd)
}

// load returns the Spec from a file argument or from --topo.
func (f *specFlags) load(args []string) (*topo.Spec, error) {
	switch {
	case f.topo != "" && len(args) > 0:
		return nil, errors.New("give either a topology file or --topo, not both")
	case f.topo != "":
		return topo.Generate(f.topo, topo.GenOptions{Name: f.name, Switch: f.sw, Link: f.link})
	case len(args) == 1:
		if f.sw != "" || f.link != "" {
			return nil, errors.New("--switch and --link apply to --topo only; set them in the file")
		}
		spec, err := topo.LoadFile(args[0])
		if err != nil {
			return nil, err
		}
		if f.name != "" {
			if err := topo.Rename(spec, f.name); err != nil {
				return nil, err
			}
		}
		return spec, nil
	}
	return nil, errors.New("give a topology file or --topo (e.g. `emuctl up --topo linear,3`)")
}

func newUpCmd() *cobra.Command {
	var (
		sf             specFlags
		allowUnapplied bool
		allowExternal  bool
		extendCC       bool
		workers        int
	)
	cmd := &cobra.Command{
		Use:   "up [topology.yaml]",
		Short: "Build a lab; returns when every link is up",
		Example: `  sudo emuctl up topologies/linear3.yaml
  sudo emuctl up --topo linear,200 --name big
  sudo emuctl up --topo tree,2,2 --link rate=10mbit,delay=5ms,queue=100`,
		Args:              cobra.MaximumNArgs(1),
		ValidArgsFunction: yamlArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			spec, err := sf.load(args)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
			defer stop()
			t0 := time.Now()
			st, err := golab.Deploy(ctx, spec, golab.Options{AllowExternal: allowExternal, ExtendAllowedCC: extendCC, Workers: workers, Log: logger()})
			if err != nil {
				return err
			}
			for _, l := range st.Links {
				if l.Warning != "" {
					fmt.Fprintf(os.Stderr, "warning: link %d (%s): %s\n", l.Index, l.Name, l.Warning)
				}
			}
			for _, w := range st.Warnings {
				fmt.Fprintf(os.Stderr, "warning: %s\n", w)
			}
			aps, stas := 0, 0
			for _, n := range spec.Nodes {
				if n.AP != nil {
					aps++
				}
				if n.Station != nil {
					stas++
				}
			}
			wifiPart := ""
			if aps > 0 { // Wi-Fi: up returns once every station is associated
				wifiPart = fmt.Sprintf(" (Wi-Fi: %d access point(s), %d station(s) associated)", aps, stas)
			}
			fmt.Printf("lab %s up: %d nodes, %d links%s in %.2fs\n", st.Lab, len(spec.Nodes), len(spec.Links), wifiPart, time.Since(t0).Seconds())
			return nil
		},
	}
	sf.add(cmd)
	// every setting a file can hold is applied now: the flag is kept so
	// scripts that pass it still run
	cmd.Flags().BoolVar(&allowUnapplied, "allow-unapplied", false, "no effect: every setting a topology can hold is applied")
	cmd.Flags().MarkDeprecated("allow-unapplied", "every setting a topology can hold is applied; the flag does nothing")
	cmd.Flags().BoolVar(&allowExternal, "allow-external", false, "allow taking real host interfaces (external:) into the lab")
	cmd.Flags().BoolVar(&extendCC, "extend-allowed-cc", false,
		"let nodes default to congestion controls outside the host's net.ipv4.tcp_allowed_congestion_control by adding them to it while the lab is up (a host-wide change, undone by down)")
	cmd.Flags().IntVar(&workers, "workers", 0, "parallel netlink workers (default 2 x CPUs)")
	return cmd
}
