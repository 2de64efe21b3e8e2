package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/emuctl/emuctl/analysis"
	"github.com/emuctl/emuctl/capture"
	"github.com/emuctl/emuctl/capture/packet"
	golab "github.com/emuctl/emuctl/lab"
	"github.com/spf13/cobra"
)

func newCaptureCmd() *cobra.Command {
	var (
		lab, filter, out string
		snaplen, count   int
		duration         time.Duration
	)
	cmd := &cobra.Command{
		Use:   "capture [--lab LAB] <node>:<iface>|medium -w FILE.pcapng",
		Short: "Capture packets on a node's interface to a pcapng file (no tcpdump needed)",
		Long: `Captures packets on an interface inside a node's network namespace and writes
them as pcapng (Wireshark and tshark open it), with kernel nanosecond
timestamps and the packet direction. Stops at --count packets, after
--duration, or on Ctrl-C. "-w -" writes to stdout, e.g. for
"| wireshark -k -i -".

--filter takes terms joined by "and": tcp, udp, icmp, icmp6, port N, host ADDR
(repeating port or host means any of them). --snaplen 128 keeps all headers
of TCP/IPv4 packets and keeps long captures small.

"emuctl capture medium" records the lab's Wi-Fi medium instead, as a
monitor on its channels would: every PPDU with a radiotap header (rate or
MCS, channel, signal, A-MPDU grouping; frames that did not arrive carry the
bad-FCS flag) and each ACK or Block Ack, timestamped in medium time. On the
engine backend the data frames are the nodes' Ethernet frames as 802.11
data frames (no management frames exist there). --filter does not apply.

"emuctl capture acks FILE..." reports ACK frequency from captures.`,
		Example: `  sudo emuctl capture h2:h2-eth0 --filter "tcp and port 5201" --snaplen 128 -w h2.pcapng
  sudo emuctl capture --lab demo r1:r1-eth1 --duration 10s -w r1.pcapng
  sudo emuctl capture medium --duration 5s -w air.pcapng
  emuctl capture acks h2.pcapng`,
		Args:              cobra.ExactArgs(1),
		ValidArgsFunction: completeCaptureTarget,
		RunE: func(cmd *cobra.Command, args []string) error {
			if args[0] == "medium" {
				return captureMedium(cmd, lab, out, snaplen, duration, filter, count)
			}
			node, iface, ok := strings.Cut(args[0], ":")
			if !ok || node == "" || iface == "" {
				return fmt.Errorf("%q: want <node>:<iface>, e.g. h1:h1-eth0, or medium", args[0])
			}
			if out == "" {
				return fmt.Errorf("missing -w FILE.pcapng (or -w - for stdout)")
			}
			flt, err := packet.ParseFilter(filter)
			if err != nil {
				return err
			}
			st, err := resolveLab(lab)
			if err != nil {
				return err
			}
			if st.Spec != nil && st.Spec.Node(node) == nil {
				var names []string
				for _, n := range st.Spec.Nodes {
					names = append(names, n.Name)
				}
				return fmt.Errorf("lab %s has no node %q (nodes: %s)", st.Lab, node, strings.Join(names, ", "))
			}
			w, closeOut, err := captureOutput(cmd, out)
			if err != nil {
				return err
			}
			defer closeOut()
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			o := capture.Options{Snaplen: snaplen, Count: count, Duration: duration, Filter: flt,
				Ready: func() {
					fmt.Fprintf(cmd.ErrOrStderr(), "capturing on %s:%s (%s), Ctrl-C to stop\n", node, iface, describe(flt))
				}}
			// wherever the node runs (a lab over several machines: on its machine)
			stats, err := golab.CaptureNode(ctx, st, node, iface, o, w)
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "%d packets written to %s, %d filtered out, %d dropped by the kernel\n",
				stats.Written, out, stats.Filtered, stats.KernelDrops)
			return nil
		},
	}
	f := cmd.Flags()
	addLabFlag(cmd, &lab, false)
	f.StringVarP(&filter, "filter", "f", "", `capture filter, e.g. "tcp and port 5201" or "udp host 10.0.0.2"`)
	f.IntVarP(&snaplen, "snaplen", "s", capture.DefaultSnaplen, "bytes kept per packet")
	f.IntVarP(&count, "count", "c", 0, "stop after N packets (0: no limit)")
	f.DurationVarP(&duration, "duration", "d", 0, "stop after this long (0: until Ctrl-C)")
	f.StringVarP(&out, "write", "w", "", "pcapng file to write (- for stdout)")
	cmd.AddCommand(newCaptureAcksCmd())
	return cmd
}

// captureMedium records a lab's Wi-Fi medium (pcapng, radiotap).
func captureMedium(cmd *cobra.Command, lab, out string, snaplen int, duration time.Duration, filter string, count int) error {
	if out == "" {
		return fmt.Errorf("missing -w FILE.pcapng (or -w - for stdout)")
	}
	if filter != "" || count != 0 {
		return fmt.Errorf("capture medium takes --duration and --snaplen; --filter and --count apply to interface captures")
	}
	st, err := resolveLab(lab)
	if err != nil {
		return err
	}
	if st.Medium == nil {
		return fmt.Errorf("lab %s has no Wi-Fi medium to capture (hwsim's instant medium: capture a node's wireless interface instead)", st.Lab)
	}
	w, closeOut, err := captureOutput(cmd, out)
	if err != nil {
		return err
	}
	defer closeOut()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, duration)
		defer cancel()
	}
	cw := &countingWriter{w: w}
	fmt.Fprintf(cmd.ErrOrStderr(), "capturing lab %s's Wi-Fi medium (%s backend), Ctrl-C to stop\n", st.Lab, st.Medium.Backend)
	if err := golab.CaptureMedium(ctx, st.Lab, cw, snaplen); err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "%d bytes of pcapng written to %s\n", cw.n, out)
	return nil
}

// captureOutput opens -w: a file, or stdout for "-".
func captureOutput(cmd *cobra.Command, out string) (io.Writer, func() error, error) {
	if out == "-" {
		return cmd.OutOrStdout(), func() error { return nil }, nil
	}
	f, err := os.Create(out)
	if err != nil {
		return nil, nil, err
	}
	return f, f.Close, nil
}

type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

func describe(f packet.Filter) string {
	if f.Empty() {
		return "all packets"
	}
	return "filter " + f.String()
}

func newCaptureAcksCmd() *cobra.Command {
	var (
		format string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "acks FILE.pcapng...",
		Short: "ACK frequency per TCP connection in captures: pure ACKs/s and ACKs per data packet",
		Long: `Reads pcapng or pcap files and, for every TCP connection that carried data,
counts the receiver's pure ACKs (ACK set, no payload, no SYN/FIN/RST) against
the sender's data packets, and reports ACKs per second and per data packet
(and per MSS-sized segment, which differs when the capture saw GSO/GRO
super-packets).`,
		Args: cobra.MinimumNArgs(1),
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			return []cobra.Completion{"pcapng", "pcap"}, cobra.ShellCompDirectiveFilterFileExt
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			w := cmd.OutOrStdout()
			if asJSON {
				format = "json"
			}
			type fileReport struct {
				File string `json:"file"`
				*analysis.ACKReport
			}
			var all []fileReport
			for i, path := range args {
				rep, err := analysis.ACKFrequencyFile(path)
				if err != nil {
					return fmt.Errorf("%s: %w", path, err)
				}
				if format == "json" {
					all = append(all, fileReport{path, rep})
					continue
				}
				if i > 0 {
					fmt.Fprintln(w)
				}
				t := analysis.ACKTable(fmt.Sprintf("%s: %d packets, %d TCP, %.3f s", path, rep.Packets, rep.TCPPackets, rep.DurationS), rep)
				if err := t.Write(w, format); err != nil {
					return err
				}
			}
			switch {
			case format != "json":
				return nil
			case len(all) == 1: // one file: its report, as always
				return writeJSON(w, all[0])
			}
			return writeJSON(w, all) // several: one array, one document
		},
	}
	cmd.Flags().StringVar(&format, "format", "md", "output format: md, csv or json (several files: one JSON array)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (same as --format json)")
	completeFlag(cmd, "format", fixed("md", "csv", "json"))
	return cmd
}
