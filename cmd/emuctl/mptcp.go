package main

import (
	"context"
	"fmt"
	"net/netip"
	"os"
	"os/signal"
	"path/filepath"
	"text/tabwriter"
	"time"

	golab "github.com/emuctl/emuctl/lab"
	"github.com/emuctl/emuctl/netcfg"
	"github.com/emuctl/emuctl/topo"
	"github.com/spf13/cobra"
	"github.com/vishvananda/netns"
)

func newMPTCPCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mptcp",
		Short: "MPTCP tools for a running lab",
	}
	cmd.AddCommand(newMPTCPCheckCmd())
	return cmd
}

func newMPTCPCheckCmd() *cobra.Command {
	var (
		lab, addr, cc string
		expect        int
		duration      time.Duration
		asJSON        bool
	)
	cmd := &cobra.Command{
		Use:   "check [--lab LAB] <client> <server>",
		Short: "Open an MPTCP connection between two nodes and report its subflows per path",
		Long: `Opens an MPTCP connection from a socket in the client node to a listener in
the server node (on all its addresses), sends bulk data for --duration and
reports every subflow (MPTCP_FULL_INFO): local address and interface, remote
address, bytes acknowledged, RTT. Fails when the connection fell back to plain
TCP or when fewer subflows than expected were established at once. The
expected number defaults to what both nodes' path managers should set up:
the server's announced (signal) addresses the client accepts, plus the
client's subflow endpoints, within both ends' limits.`,
		Example: `  sudo emuctl mptcp check c s
  sudo emuctl mptcp check --lab twopath c s --addr 10.31.3.2 --expect 2 --duration 5s`,
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: completeNodes(2, hostOrRouter),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := resolveLab(lab)
			if err != nil {
				return err
			}
			client, server := st.Spec.Node(args[0]), st.Spec.Node(args[1])
			for i, n := range []*topo.Node{client, server} {
				if n == nil || n.Kind == topo.KindSwitch {
					return fmt.Errorf("lab %s has no host or router %q", st.Lab, args[i])
				}
			}
			dst, err := serverAddr(server, addr)
			if err != nil {
				return err
			}
			cns, err := openNodeNS(st.Lab, client.Name)
			if err != nil {
				return err
			}
			defer cns.Close()
			sns, err := openNodeNS(st.Lab, server.Name)
			if err != nil {
				return err
			}
			defer sns.Close()
			if expect == 0 {
				cs, err := netcfg.ReadMPTCP(cns)
				if err != nil {
					return fmt.Errorf("%s: %w", client.Name, err)
				}
				ss, err := netcfg.ReadMPTCP(sns)
				if err != nil {
					return fmt.Errorf("%s: %w", server.Name, err)
				}
				expect = netcfg.ExpectedSubflows(cs, ss, dst)
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
			defer stop()
			res, cerr := netcfg.CheckMPTCP(ctx, cns, sns, netcfg.CheckOptions{Server: dst, Duration: duration, Expect: expect, CC: cc})
			if res != nil {
				if asJSON {
					if err := writeJSON(os.Stdout, res); err != nil {
						return err
					}
				} else {
					printCheck(client.Name, server.Name, res)
				}
			}
			return cerr
		},
	}
	addLabFlag(cmd, &lab, false)
	cmd.Flags().StringVar(&addr, "addr", "", "server address to connect to (default: the server's first address)")
	cmd.Flags().IntVar(&expect, "expect", 0, "subflows that must be established at once, the first included (default: derived from both nodes' MPTCP settings)")
	cmd.Flags().DurationVar(&duration, "duration", 2*time.Second, "how long to send")
	cmd.Flags().StringVar(&cc, "cc", "", "congestion control of both sockets (default: the nodes' own)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// serverAddr picks the address to connect to: the one given (it must be
// the server's), else the server's first address, IPv4 first.
func serverAddr(n *topo.Node, given string) (netip.Addr, error) {
	var all []netip.Addr
	for _, ifc := range n.Interfaces {
		for _, p := range ifc.Addrs {
			all = append(all, p.Addr())
		}
	}
	if given != "" {
		a, err := netip.ParseAddr(given)
		if err != nil {
			return a, fmt.Errorf("--addr %q is not an IP address", given)
		}
		for _, x := range all {
			if x == a {
				return a, nil
			}
		}
		return a, fmt.Errorf("--addr %s is not an address of %s (its addresses: %v)", a, n.Name, all)
	}
	for _, a := range all {
		if a.Is4() {
			return a, nil
		}
	}
	if len(all) > 0 {
		return all[0], nil
	}
	return netip.Addr{}, fmt.Errorf("%s has no address", n.Name)
}

func openNodeNS(lab, node string) (netns.NsHandle, error) {
	return netns.GetFromPath(filepath.Join(golab.NetnsDir, topo.Namespace(lab, node)))
}

func printCheck(client, server string, r *netcfg.CheckResult) {
	kind := "MPTCP"
	if !r.MPTCP {
		kind = "plain TCP (MPTCP fell back)"
	}
	fmt.Printf("%s %s (%s) -> %s (%s): %d of %d expected subflows established, %.2f Mbit/s over %v (cc %s)\n",
		kind, client, r.Local, server, r.Remote, r.MaxSubflows, r.Expect, r.Goodput/1e6, r.Duration.Round(time.Millisecond), r.CC)
	if len(r.Subflows) == 0 {
		return
	}
	var total uint64
	for _, s := range r.Subflows {
		total += s.BytesAcked
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tLOCAL\tIFACE\tREMOTE\tSTATE\tBYTES ACKED\tSHARE\tRTT\tCWND")
	for _, s := range r.Subflows {
		state := "up"
		if !s.Established {
			state = "not up"
		}
		share := 0.0
		if total > 0 {
			share = 100 * float64(s.BytesAcked) / float64(total)
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%d\t%.1f%%\t%.2fms\t%d\n", s.ID, s.Local, s.Interface, s.Remote, state, s.BytesAcked, share, float64(s.RTT)/1e6, s.Cwnd)
	}
	tw.Flush()
}
