package main

import (
	"context"
	"fmt"
	"os"
	"os/signal"

	golab "github.com/emuctl/emuctl/lab"
	"github.com/emuctl/emuctl/topo"
	"github.com/spf13/cobra"
)

// node add/del and link add/del: a running lab grows and shrinks through
// package lab (lab/change.go), which edits the lab's topology and builds
// what the edit adds with up's own code.

func newNodeCmd() *cobra.Command {
	var lab string
	cmd := &cobra.Command{
		Use:   "node",
		Short: "Add nodes to a running lab, or remove them: add, del",
	}
	addLabFlag(cmd, &lab, true)
	cmd.AddCommand(newNodeAddCmd(&lab), newNodeDelCmd(&lab))
	return cmd
}

func newNodeAddCmd(lab *string) *cobra.Command {
	var kind, switchType, names, keys, ap, position string
	var allowExternal bool
	cmd := &cobra.Command{
		Use:   "add NAME [--kind host|router|switch|station|ap] [--switch-type linux-bridge|ovs] [--names unique|topology] [--ap AP] [--position X,Y[,Z]] [--keys '{KEY: VALUE, ...}']",
		Short: "Add a node to a running lab (no links yet: link add gives it some)",
		Long: `Adds a host (default), a router or a switch to the running lab, with the
node's namespace, its bridge (a switch), sysctls and TCP profile, exactly
as if it had been in the topology file. The name follows the topology's
rules: a letter, then letters, digits, '-' or '_', and short enough for
its interfaces' names (<node>-ethN, 15 bytes).

A station (--kind station) joins access point --ap (or the lab's only
one) at --position, with its wireless interface <node>-wlan0 addressed
from its AP's segment, on a new port of the running medium: the engine
backend only (on mac80211_hwsim the change is refused, saying why).`,
		Example: `  sudo emuctl node add h3
  sudo emuctl node add r9 --kind router
  sudo emuctl node add s9 --kind switch --switch-type ovs --keys '{fail_mode: secure, protocols: [OpenFlow13]}'
  sudo emuctl node add h4 --keys '{sysctls: {net.ipv4.tcp_ecn: 1}}'
  sudo emuctl node add s5 --kind switch
  sudo emuctl node add s6 --kind switch --switch-type ovs --names topology
  sudo emuctl node add sta3 --kind station --ap ap1 --position 3,4
  sudo emuctl node add sta4 --kind station --keys '{wifi: {rate: 54mbit}, mobility: {model: random-walk, bounds: [[-5, -5], [5, 5]], speed: [1, 2]}}'
  sudo emuctl node add ap2 --kind ap --position 100,0 --keys '{wifi: {ssid: two, mode: g, channel: 11}}'`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			l, ctx, stop, err := openLab(*lab)
			if err != nil {
				return err
			}
			defer stop()
			var opt []golab.NodeKindOption
			switch kind {
			case "", "host":
			case "router":
				opt = append(opt, golab.AsRouter())
			case "switch":
				if names != "" {
					if switchType != "" && switchType != topo.SwitchOVS {
						return fmt.Errorf("--names is for --switch-type ovs")
					}
					opt = append(opt, golab.AsOVSSwitch(names))
				} else {
					opt = append(opt, golab.AsSwitch(switchType))
				}
			case "station":
				opt = append(opt, golab.AsStation(ap))
			case "ap":
				opt = append(opt, golab.AsAP())
			default:
				return fmt.Errorf("--kind %q: valid kinds are host, router, switch, station, ap", kind)
			}
			if switchType != "" && kind != "switch" {
				return fmt.Errorf("--switch-type is for --kind switch")
			}
			if ap != "" && kind != "station" {
				return fmt.Errorf("--ap is for --kind station")
			}
			if position != "" {
				p, err := parsePosition(position)
				if err != nil {
					return fmt.Errorf("--position %q: %w", position, err)
				}
				opt = append(opt, golab.AtPosition(p[0], p[1], p[2]))
			}
			if keys != "" {
				opt = append(opt, golab.NodeKeys(keys))
			}
			if allowExternal {
				opt = append(opt, golab.AllowExternal())
			}
			if err := l.AddNode(ctx, args[0], opt...); err != nil {
				return topo.Named(err, "node add "+args[0])
			}
			fmt.Printf("node %s added to lab %s\n", args[0], l.Name())
			return nil
		},
	}
	cmd.Flags().StringVar(&kind, "kind", "host", "host, router, switch, station or ap")
	cmd.Flags().StringVar(&ap, "ap", "", "a station's access point (default: the lab's only one)")
	cmd.Flags().StringVar(&position, "position", "", "a station's or access point's position in metres: X,Y or X,Y,Z")
	cmd.Flags().StringVar(&switchType, "switch-type", "", "linux-bridge or ovs (default: the lab's)")
	cmd.Flags().StringVar(&names, "names", "", "an ovs switch's device names on the host: unique (default) or topology")
	cmd.Flags().BoolVar(&allowExternal, "allow-external", false, "a node of kind root (--keys '{kind: root}'): the machine's own namespace")
	cmd.Flags().StringVar(&keys, "keys", "", "more of the node's keys as the topology file writes them, a flow mapping: '{fail_mode: secure}'")
	return cmd
}

func newNodeDelCmd(lab *string) *cobra.Command {
	return &cobra.Command{
		Use:     "del NAME",
		Aliases: []string{"rm", "remove"},
		Short:   "Remove a node and every link that ends on it from a running lab",
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			l, ctx, stop, err := openLab(*lab)
			if err != nil {
				return err
			}
			defer stop()
			if err := l.RemoveNode(ctx, args[0]); err != nil {
				return err
			}
			fmt.Printf("node %s removed from lab %s\n", args[0], l.Name())
			return nil
		},
	}
}

// openLab opens the lab a change acts on, with a context Ctrl-C ends.
func openLab(name string) (*golab.Lab, context.Context, func(), error) {
	st, err := resolveLab(name)
	if err != nil {
		return nil, nil, nil, err
	}
	l, err := golab.Open(st.Lab)
	if err != nil {
		return nil, nil, nil, err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	return l, ctx, stop, nil
}
