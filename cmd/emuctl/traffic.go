package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/emuctl/emuctl/analysis"
	"github.com/emuctl/emuctl/traffic"
	"github.com/emuctl/emuctl/units"
	"github.com/spf13/cobra"
)

func newTrafficCmd() *cobra.Command {
	var (
		lab, flowsFile, jsonOut, outFile, dst string
		udpPackets                            bool
		captures                              []string
		capFilter                             string
		snaplen                               int
		f                                     traffic.Flow
	)
	cmd := &cobra.Command{
		Use:   "traffic [--lab LAB] --from NODE --to NODE [--proto tcp|mptcp|udp] ... | --flows FILE [--json] [-o FILE]",
		Short: "Run TCP, MPTCP or UDP flows between nodes with per-interval samples (an iperf-like generator)",
		Long: `Runs flows between nodes and prints a summary. The result — the versioned
JSON that 'emuctl report' and the analysis read, every sample and the
conditions — goes to stdout instead with --json (the summary then goes to
stderr), and to a file with -o FILE. --json FILE, the form --json had
first, is -o FILE.`,
		Example: `  sudo emuctl traffic --from h1 --to h2 --proto tcp --cc cubic --time 20s -o out.json
  sudo emuctl traffic --from h1 --to h2 --time 5s --json | jq '.summary[0].goodput_bps'
  sudo emuctl traffic --from cli --to srv --proto mptcp --reverse --time 30s
  sudo emuctl traffic --from h1 --to h2 --proto udp --rate 2M --size 160 --time 10s --probe icmp
  sudo emuctl traffic --flows flows.yaml -o out.json`,
		Args: func(cmd *cobra.Command, args []string) error {
			// --json FILE as typed before --json took no value: FILE
			// arrives as the one positional argument
			if len(args) == 1 && cmd.Flags().Changed("json") && jsonOut == "-" {
				return nil
			}
			return cobra.NoArgs(cmd, args)
		},
		ValidArgsFunction: func(cmd *cobra.Command, args []string, toComplete string) ([]cobra.Completion, cobra.ShellCompDirective) {
			if len(args) == 0 && cmd.Flags().Changed("json") {
				return nil, cobra.ShellCompDirectiveDefault // --json FILE
			}
			return nil, cobra.ShellCompDirectiveNoFileComp
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			toStdout, toFile := false, outFile
			switch {
			case len(args) == 1 && args[0] != "-":
				jsonOut = args[0]
				fallthrough
			case jsonOut != "" && jsonOut != "-":
				if toFile != "" && toFile != jsonOut {
					return fmt.Errorf("--json %s and -o %s: give the result file once", jsonOut, toFile)
				}
				toFile = jsonOut
			case jsonOut == "-":
				toStdout = true
			}
			var flows []traffic.Flow
			var capSpecs []traffic.CaptureSpec
			for _, c := range captures {
				cs, err := traffic.ParseCaptureSpec(c)
				if err != nil {
					return err
				}
				cs.Filter, cs.Snaplen = capFilter, snaplen
				capSpecs = append(capSpecs, cs)
			}
			if flowsFile != "" {
				for _, name := range []string{"from", "to", "dst", "proto", "engine", "name", "cc", "time", "interval", "reverse", "parallel",
					"port", "nodelay", "quickack", "sndbuf", "rcvbuf", "rate", "size", "udp-packets", "probe", "probe-rate"} {
					if cmd.Flags().Changed(name) {
						return fmt.Errorf("--%s and --flows exclude each other: put the setting in the flows file", name)
					}
				}
				ff, err := traffic.LoadFlowsFile(flowsFile)
				if err != nil {
					return err
				}
				if lab == "" {
					lab = ff.Lab
				}
				flows = ff.Flows
				capSpecs = ff.Captures
			} else {
				if f.Client == "" || f.Server == "" {
					return errors.New("give --from and --to (or --flows FILE)")
				}
				var err error
				if dst != "" {
					if f.Dst, err = netip.ParseAddr(dst); err != nil {
						return fmt.Errorf("--dst: %q is not an IP address", dst)
					}
				}
				if cmd.Flags().Changed("udp-packets") {
					f.KeepPackets = &udpPackets
				}
				flows = []traffic.Flow{f}
			}
			st, err := resolveLab(lab)
			if err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			resultDir := "."
			if toFile != "" {
				resultDir = filepath.Dir(toFile)
			}
			res, runErr := traffic.Run(ctx, st.Lab, flows, traffic.Options{Log: logger(), Captures: capSpecs, CaptureDir: resultDir, ResultDir: resultDir})
			if res == nil {
				return runErr
			}
			summary := io.Writer(os.Stdout)
			if toStdout {
				summary = os.Stderr
				if err := writeResult("-", res); err != nil {
					return err
				}
			}
			if toFile != "" {
				if err := writeResult(toFile, res); err != nil {
					return err
				}
			}
			traffic.WriteSummary(summary, res)
			if toFile != "" {
				fmt.Fprintf(summary, "result: %s\n", toFile)
			}
			if runErr != nil {
				return fmt.Errorf("interrupted: %w (partial result above)", runErr)
			}
			return nil
		},
	}
	fl := cmd.Flags()
	addLabFlag(cmd, &lab, false)
	fl.StringVar(&flowsFile, "flows", "", "run the flows declared in this YAML file")
	fl.StringVar(&f.Client, "from", "", "client node (sends, unless --reverse)")
	fl.StringVar(&f.Server, "to", "", "server node")
	fl.StringVar(&dst, "dst", "", "server address to use (default: the server node's first address)")
	fl.StringVar(&f.Proto, "proto", traffic.TCP, "tcp, mptcp or udp")
	fl.StringVar(&f.Engine, "engine", traffic.EngineNative, "native (emuctl's own sockets) or iperf3 (the installed iperf3, converted)")
	fl.StringVar(&f.Name, "name", "", "flow name in the result (default f1)")
	fl.StringVar(&f.Sock.CC, "cc", "", "congestion control set per socket (TCP_CONGESTION), read back and reported")
	f.Duration, f.Interval = traffic.DefaultDuration, traffic.DefaultInterval
	unitFlag(fl, (*units.DurationValue)(&f.Duration), "time", "t", "how long to send")
	unitFlag(fl, (*units.DurationValue)(&f.Interval), "interval", "i", "sampling interval (10ms .. --time)")
	fl.BoolVarP(&f.Reverse, "reverse", "R", false, "the server sends, the client receives")
	fl.IntVarP(&f.Parallel, "parallel", "P", 1, "parallel streams")
	fl.IntVarP(&f.Port, "port", "p", 0, "server port (0: a free one, chosen by the kernel)")
	fl.BoolVar(&f.Sock.NoDelay, "nodelay", false, "set TCP_NODELAY")
	fl.BoolVar(&f.Sock.QuickAck, "quickack", false, "set TCP_QUICKACK on the receiver after every read")
	unitFlag(fl, &f.Sock.SndBuf, "sndbuf", "", "SO_SNDBUF, e.g. 4MiB (default: kernel autotuning)")
	unitFlag(fl, &f.Sock.RcvBuf, "rcvbuf", "", "SO_RCVBUF, e.g. 4MiB (default: kernel autotuning)")
	unitFlag(fl, &f.Rate, "rate", "b", "sending rate of payload, e.g. 2M, 10mbit: UDP's (default 1mbit), or a TCP/MPTCP application that writes no faster (default: as fast as the socket takes)")
	fl.IntVarP(&f.Size, "size", "s", 0, fmt.Sprintf("UDP payload bytes per datagram (default %d)", traffic.DefaultUDPSize))
	fl.BoolVar(&udpPackets, "udp-packets", true, "record every received UDP datagram in the JSON result")
	fl.StringVar(&f.Probe, "probe", "", "echo probe alongside the flow: icmp or udp")
	fl.Float64Var(&f.ProbeRate, "probe-rate", traffic.DefaultProbeHz, "probes per second")
	fl.StringArrayVar(&captures, "capture", nil, "capture node:iface for the whole run into pcapng beside the result (repeatable); `emuctl capture acks` and `emuctl report` read it")
	fl.StringVar(&capFilter, "capture-filter", "", "filter for --capture, e.g. \"tcp and port 5201\"")
	fl.IntVar(&snaplen, "snaplen", 0, "bytes kept per captured packet (default 128: all headers)")
	fl.StringVar(&jsonOut, "json", "", "print the result (the analysis format, versioned JSON) on stdout, the summary on stderr; --json FILE is -o FILE")
	fl.Lookup("json").NoOptDefVal = "-"
	fl.StringVarP(&outFile, "out", "o", "", "write the result (the analysis format, versioned JSON) to this file")
	completeFlag(cmd, "from", completeNodeFlag(hostOrRouter))
	completeFlag(cmd, "to", completeNodeFlag(hostOrRouter))
	completeFlag(cmd, "proto", fixed(traffic.TCP, traffic.MPTCP, traffic.UDP))
	completeFlag(cmd, "engine", fixed(traffic.EngineNative, traffic.EngineIperf3))
	completeFlag(cmd, "probe", fixed(traffic.ProbeICMP, traffic.ProbeUDP))
	completeFlag(cmd, "cc", completeCC)
	completeFlag(cmd, "flows", yamlArgs)
	return cmd
}

// writeResult writes the result JSON atomically (or to stdout for "-").
func writeResult(path string, r *analysis.Result) error {
	if path == "-" {
		return analysis.Encode(os.Stdout, r)
	}
	tmp := fmt.Sprintf("%s.tmp%d", path, time.Now().UnixNano())
	f, err := os.Create(tmp)
	if err != nil {
		return err
	}
	if err := analysis.Encode(f, r); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	return os.Rename(tmp, path)
}
