package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	golab "github.com/emuctl/emuctl/lab"
	"github.com/emuctl/emuctl/tc"
	"github.com/emuctl/emuctl/tc/engine"
	"github.com/emuctl/emuctl/topo"
	"github.com/emuctl/emuctl/units"
	"github.com/spf13/cobra"
)

func newLinkCmd() *cobra.Command {
	var lab string
	cmd := &cobra.Command{
		Use:   "link",
		Short: "Show, change, add and remove links of a running lab: show, set, up, down, add, del",
	}
	addLabFlag(cmd, &lab, true)
	cmd.AddCommand(newLinkShowCmd(&lab), newLinkSetCmd(&lab), newLinkUpDownCmd(&lab, true), newLinkUpDownCmd(&lab, false),
		newLinkAddCmd(&lab), newLinkDelCmd(&lab))
	return cmd
}

func newLinkShowCmd(lab *string) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Every link: backend, parameters in force per direction, state, engine counters or qdiscs",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := resolveLab(*lab)
			if err != nil {
				return err
			}
			links, err := golab.ShowLinks(st.Lab)
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(os.Stdout, links)
			}
			tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "LINK\tA\tB\tSTATE\tBACKEND\tA->B\tB->A\tENGINE (a->b / b->a: out, loss drops, queue drops[, aqm drops, marks, sojourn p50])")
			for _, l := range links {
				eng := ""
				if s := l.Stats; s != nil {
					eng = engineCounters(s.AToB) + " / " + engineCounters(s.BToA)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s/%s\t%s\t%s\t%s\t%s\n", linkLabel(l), l.A, l.B, l.StateA, l.StateB, l.Backend,
					dirOrDash(l.AtoB), dirOrDash(l.BtoA), eng)
			}
			tw.Flush()
			for _, l := range links {
				if l.Warning != "" {
					fmt.Printf("warning: link %s: %s\n", linkLabel(l), l.Warning)
				}
				for _, q := range l.Qdiscs {
					fmt.Printf("link %s %s\n", linkLabel(l), q)
				}
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// engineCounters is one direction's engine counters for link show.
func engineCounters(s engine.DirStats) string {
	out := fmt.Sprintf("%d,%d,%d", s.OutPackets, s.LossDrops, s.QueueDrops)
	if s.Discipline != "" && s.Discipline != tc.DropTail {
		out += fmt.Sprintf(",%d,%d,%v", s.AQMDrops, s.Marks, s.Sojourn.P50.Round(10*time.Microsecond))
	}
	return out
}

func dirOrDash(d tc.Dir) string {
	if d.IsZero() && d.QueuePackets == 0 && d.QueueBytes == 0 {
		return "-"
	}
	return d.String()
}

func newLinkSetCmd(lab *string) *cobra.Command {
	var (
		dir, queue         string
		rate               units.BitRate
		delay, jitter      time.Duration
		loss, dup, corrupt units.Percent
	)
	cmd := &cobra.Command{
		Use:   "set <link> [--dir a->b|b->a] [--rate R] [--delay D] [--jitter J] [--loss P] [--queue Q]",
		Short: "Change a link's shaping while the lab runs (only the given keys change)",
		Long: `<link> is an index (see 'emuctl link show'), one end (h1:h1-eth0) or the two
nodes (h1-s1). Values use the topology syntax: --rate 10mbit --delay 5ms
--loss 1% --queue 100 (packets) or 150kB. --queue replaces the queue,
discipline included: a plain limit is a drop-tail queue, and a
discipline is written as in the topology's string form, e.g. --queue
"codel limit 1000 target 5ms ecn" or --queue "fq_codel" (the link's
backend must run it: a kernel-shaped link needs the kernel's qdisc, the
link engine runs drophead, codel, fq_codel, pie and red, not cake).
--dir limits the change to one direction (a is the link's first
endpoint). A station's wireless hop is
named by the station (sta1, sta1-ap1 or sta1:sta1-wlan0); a->b is its
uplink, b->a its downlink.`,
		Example: `  sudo emuctl link set h1-s1 --rate 5mbit --delay 20ms
  sudo emuctl link set 0 --dir b->a --loss 2%
  sudo emuctl link set s1-s2 --dir a->b --queue "fq_codel limit 1000"
  sudo emuctl link set sta1 --dir b->a --delay 30ms --loss 5%`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeLinks(true),
		RunE: func(cmd *cobra.Command, args []string) error {
			l, _, stop, err := openLab(*lab)
			if err != nil {
				return err
			}
			defer stop()
			// the flags are typed (units): a bad value was refused while
			// parsing them; only the flags given change the link, through
			// the one table of run-time keys (lab.SetLinkKeys)
			keys := map[string]string{}
			for _, k := range golab.RunKeys() {
				if f := cmd.Flags().Lookup(k); f != nil && f.Changed {
					keys[k] = f.Value.String()
				}
			}
			if len(keys) == 0 {
				return errors.New("nothing to change: give at least one of --rate, --delay, --jitter, --loss, --duplicate, --corrupt, --queue")
			}
			ch, err := l.SetLinkKeys(args[0], dir, keys)
			if err != nil {
				return err
			}
			if ch.Index < 0 {
				fmt.Printf("wireless hop %s: uplink (a->b) %s; downlink (b->a) %s\n", ch.Name, dirOrDash(ch.AtoB), dirOrDash(ch.BtoA))
				return nil
			}
			fmt.Printf("link %d (%s, %s): a->b %s; b->a %s\n", ch.Index, ch.Name, ch.Backend, dirOrDash(ch.AtoB), dirOrDash(ch.BtoA))
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&dir, "dir", "", "a->b, b->a, or both (default)")
	completeFlag(cmd, "dir", fixed("a->b", "b->a"))
	unitFlag(f, &rate, "rate", "", "rate, e.g. 10mbit")
	unitFlag(f, (*units.DelayValue)(&delay), "delay", "", "one-way delay, e.g. 5ms")
	unitFlag(f, (*units.DelayValue)(&jitter), "jitter", "", "jitter, e.g. 1ms")
	unitFlag(f, &loss, "loss", "", "loss, e.g. 1%")
	unitFlag(f, &dup, "duplicate", "", "duplication, e.g. 0.1%")
	unitFlag(f, &corrupt, "corrupt", "", "corruption, e.g. 0.1%")
	f.StringVar(&queue, "queue", "", `queue: a drop-tail limit, packets (100) or bytes (150kB), or a discipline ("codel limit 1000 ecn")`)
	return cmd
}

func newLinkUpDownCmd(lab *string, up bool) *cobra.Command {
	use, short := "down <link>", "Take a link down (both node-side ends), like pulling the cable"
	if up {
		use, short = "up <link>", "Bring a link back up"
	}
	return &cobra.Command{
		Use:               use,
		Short:             short,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeLinks(false),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := resolveLab(*lab)
			if err != nil {
				return err
			}
			i, err := golab.FindLink(st.Spec, args[0])
			if err != nil {
				return err
			}
			if err := golab.SetLinkState(st.Lab, i, up); err != nil {
				return err
			}
			fmt.Printf("link %d %s\n", i, strings.Fields(use)[0])
			return nil
		},
	}
}

// linkLabel is a link's index, with "(wifi)" for a station's wireless hop.
func linkLabel(l golab.LinkInfo) string {
	if l.Kind == "wifi" {
		return strconv.Itoa(l.Index) + " (wifi)"
	}
	return strconv.Itoa(l.Index)
}

func newLinkAddCmd(lab *string) *cobra.Command {
	var (
		name, ips, params string
		mtu               int
	)
	// the flags are the one table of link add keys (lab.AddLinkKeys),
	// spelt with dashes: --uplink-trace is uplink_trace
	keys := golab.AddKeys()
	vals := make([]string, len(keys))
	flagOf := func(k string) string { return strings.ReplaceAll(k, "_", "-") }
	cmd := &cobra.Command{
		Use:   "add A B [--rate R] [--delay D] [--jitter J] [--loss P] [--queue Q] [--trace FILE] [--ip A=CIDR,B=CIDR]",
		Short: "Join two nodes of a running lab with a new (shaped or traced) link",
		Long: `A and B are nodes ("h1") or a node's new interface ("h1:eth5"); without a
name, an end is the node's next <node>-ethN. Addresses come from the lab's
plan (the switch's subnet for a host joining a switch, a new subnet from
the pool for a point-to-point link) unless --ip gives them. Shaping uses
the topology's syntax and picks its backend as up does; --link takes the
whole --link string instead ("rate=10mbit,delay=5ms,loss=1%"). Routes
follow on every node (routing: auto); the new link is the lab's last.

--trace FILE replays a mahimahi delivery trace in both directions
(--uplink-trace and --downlink-trace: a->b and b->a alone; --trace-loop
false plays it once; --trace-offset starts that far in; --queue is then
mahimahi's drop-tail limit), or --mahimahi gives the whole link as a
mahimahi command line; a traced link runs on the userspace link engine
and its replay starts when the link comes up, as at up. A relative trace
path is taken from the working directory, else looked for as the
topology's are ($EMUCTL_TRACES, /usr/share/mahimahi/traces).`,
		Example: `  sudo emuctl link add h3 s1 --rate 10mbit --delay 5ms
  sudo emuctl link add r1 r2 --ip r1=10.9.0.1/30,r2=10.9.0.2/30
  sudo emuctl link add h3:eth1 r1 --link "rate=20mbit,delay=2ms,queue=50"
  sudo emuctl link add ue enb --trace 12mbps.trace --delay 20ms --queue 100
  sudo emuctl link add ue enb --uplink-trace up.trace --downlink-trace down.trace --trace-loop=false`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			given := map[string]string{}
			for i, k := range keys {
				if cmd.Flags().Changed(flagOf(k)) {
					given[k] = vals[i]
				}
			}
			var opts []golab.LinkOption
			if params != "" {
				// the --link string with the shaping flags, as one string
				parts := []string{params}
				for _, k := range keys {
					if v, ok := given[k]; ok {
						if !slices.Contains(golab.RunKeys(), k) && k != "backend" {
							return fmt.Errorf("--%s with --link: a --link string has no trace; give the shaping as flags (--rate, --delay, ...) beside the trace", flagOf(k))
						}
						parts = append(parts, k+"="+v)
					}
				}
				opts = append(opts, golab.LinkString(strings.Join(parts, ",")))
			} else {
				kopts, err := golab.AddLinkKeys(given)
				if err != nil {
					return err
				}
				opts = append(opts, kopts...)
			}
			l, ctx, stop, err := openLab(*lab)
			if err != nil {
				return err
			}
			defer stop()
			if mtu > 0 {
				opts = append(opts, golab.MTU(mtu))
			}
			if name != "" {
				opts = append(opts, golab.Name(name))
			}
			if ips != "" {
				byNode := map[string][]string{}
				for _, kv := range strings.Split(ips, ",") {
					node, addr, ok := strings.Cut(strings.TrimSpace(kv), "=")
					if !ok || node == "" || addr == "" {
						return fmt.Errorf("--ip %q: give NODE=CIDR pairs separated by commas, e.g. --ip h1=10.9.0.1/30,r1=10.9.0.2/30", ips)
					}
					byNode[node] = append(byNode[node], addr)
				}
				for node, addrs := range byNode {
					opts = append(opts, golab.IP(node, addrs...))
				}
			}
			i, err := l.AddLink(ctx, args[0], args[1], opts...)
			if err != nil {
				return topo.Named(err, "link add "+args[0]+" "+args[1])
			}
			info, err := l.Links()
			if err == nil && i < len(info) {
				fmt.Printf("link %d added to lab %s: %s <-> %s (%s)\n", i, l.Name(), info[i].A, info[i].B, info[i].Backend)
			}
			return err
		},
	}
	for i, k := range keys {
		cmd.Flags().StringVar(&vals[i], flagOf(k), "", golab.AddKeyDoc(k))
	}
	cmd.Flags().StringVar(&params, "link", "", "link parameters as one --link string (rate=10mbit,delay=5ms,...)")
	cmd.Flags().StringVar(&ips, "ip", "", "addresses per node: NODE=CIDR[,NODE=CIDR...]")
	cmd.Flags().IntVar(&mtu, "mtu", 0, "MTU of both ends (default 1500)")
	cmd.Flags().StringVar(&name, "name", "", "the link's name (for link set, schedules)")
	return cmd
}

func newLinkDelCmd(lab *string) *cobra.Command {
	return &cobra.Command{
		Use:               "del LINK",
		Aliases:           []string{"rm", "remove"},
		Short:             "Remove a link from a running lab (later links move down one index)",
		Long:              "LINK is an index (see 'emuctl link show'), its name, one end (h1:h1-eth0) or its two nodes (h1-s1 or h1:s1).",
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeLinks(false),
		RunE: func(cmd *cobra.Command, args []string) error {
			l, ctx, stop, err := openLab(*lab)
			if err != nil {
				return err
			}
			defer stop()
			if err := l.RemoveLink(ctx, args[0]); err != nil {
				return err
			}
			fmt.Printf("link %s removed from lab %s\n", args[0], l.Name())
			return nil
		},
	}
}
