package main

import (
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/emuctl/emuctl/analysis"
	"github.com/emuctl/emuctl/units"
	"github.com/spf13/cobra"
)

func newModelCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "model",
		Short: "Analytic models (no network needed)",
		Args:  cobra.NoArgs,
	}
	cmd.AddCommand(newModelTackCmd(), newModelWifiCmd())
	return cmd
}

func newModelTackCmd() *cobra.Command {
	var (
		bws, rtts []string
		p         = analysis.DefaultTACK
		jsonOut   bool
		format    string
		sweep     bool
		out       string
	)
	cmd := &cobra.Command{
		Use:   "tack",
		Short: "TACK ACK-frequency model: f_tack = min(bw/(L·MSS), β/RTT_min) against per-packet and delayed ACK",
		Long: `Evaluates the TACK model (Li et al., SIGCOMM 2020; Journal of Software 2024,
Fig. 22): f_tack = min(bw/(L·MSS), β/RTT_min), the byte-counting frequencies
f_tcp(L=1) = bw/MSS (per-packet ACK) and f_tcp(L=2) = bw/(2·MSS) (delayed ACK
under load), the ratios, the regime and the pivot bandwidth β·L·MSS/RTT_min.
--bw and --rtt take comma-separated lists (every combination is evaluated).
With --sweep it prints Fig. 22-style curves as tables and writes log–log plots
(tack-rtt and tack-bw, SVG and PNG) into --out.`,
		Example: `  emuctl model tack --bw 200mbit --rtt 10ms
  emuctl model tack --bw 48mbit,200mbit --rtt 10ms,80ms,200ms --format csv
  emuctl model tack --bw 7.056mbit --rtt 10ms --json
  emuctl model tack --sweep --out plots/`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if jsonOut {
				format = "json"
			}
			if err := p.Validate(); err != nil {
				return err
			}
			bwv, err := parseList(bws, func(s string) (float64, error) {
				v, err := units.ParseBitRate(s)
				return float64(v), err
			})
			if err != nil {
				return err
			}
			rttv, err := parseList(rtts, func(s string) (float64, error) {
				d, err := units.ParseDelay(s)
				if err == nil && d <= 0 {
					err = fmt.Errorf("rtt %q must be > 0", s)
				}
				return d.Seconds(), err
			})
			if err != nil {
				return err
			}
			if sweep {
				return tackSweep(cmd.OutOrStdout(), cmd.ErrOrStderr(), p, bwv, rttv, format, out)
			}
			if len(bwv) == 0 || len(rttv) == 0 {
				return fmt.Errorf("give --bw and --rtt (e.g. --bw 200mbit --rtt 10ms), or --sweep")
			}
			var pts []analysis.TACKPoint
			for _, bw := range bwv {
				for _, r := range rttv {
					pts = append(pts, analysis.TACKModel(bw, r, p))
				}
			}
			w := cmd.OutOrStdout()
			switch {
			case format == "json" && len(pts) == 1:
				return writeJSON(w, pts[0])
			case format == "json":
				return writeJSON(w, pts)
			case format == "" && len(pts) == 1:
				return printTACKPoint(w, pts[0])
			}
			return analysis.TACKTable("TACK model", pts).Write(w, format)
		},
	}
	f := cmd.Flags()
	f.StringSliceVar(&bws, "bw", nil, "bottleneck bandwidth(s), e.g. 200mbit or 48mbit,200mbit")
	f.StringSliceVar(&rtts, "rtt", nil, "minimum RTT(s), e.g. 10ms or 10ms,80ms")
	f.Float64Var(&p.Beta, "beta", p.Beta, "TACKs per RTT_min (β ≥ 2)")
	f.Float64Var(&p.L, "L", p.L, "full-sized packets per ACK in byte-counting mode")
	f.Float64Var(&p.MSSBytes, "mss", p.MSSBytes, "segment size in bytes the model counts in")
	f.BoolVar(&jsonOut, "json", false, "print JSON (same as --format json)")
	f.StringVar(&format, "format", "", "table format: md, csv or json (default: text for one point, md otherwise)")
	f.BoolVar(&sweep, "sweep", false, "print Fig. 22-style curves and write their plots")
	f.StringVarP(&out, "out", "o", ".", "directory for the --sweep plots")
	completeFlag(cmd, "format", fixed("md", "csv", "json"))
	return cmd
}

func parseList(in []string, parse func(string) (float64, error)) ([]float64, error) {
	var out []float64
	for _, s := range in {
		v, err := parse(strings.TrimSpace(s))
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, nil
}

func printTACKPoint(w io.Writer, pt analysis.TACKPoint) error {
	n := analysis.FormatNumber
	p := pt.Params
	why := "bw/(L·MSS)"
	if pt.Regime == analysis.RegimePeriodic {
		why = "β/RTT_min"
	}
	_, err := fmt.Fprintf(w, `TACK model (β = %s, L = %s, MSS = %s B)
  bw            %s Mbit/s
  RTT_min       %s ms
  BDP           %s B (%s MSS)
  f_tack        %s Hz   (%s regime: %s)
  f_tcp(L=1)    %s Hz   per-packet ACK; f_tack is %s %% of it
  f_tcp(L=2)    %s Hz   delayed ACK;    f_tack is %s %% of it
  pivot         %s Mbit/s at this RTT_min (byte counting below, periodic at or above)
`, n(p.Beta, 4), n(p.L, 4), n(p.MSSBytes, 6),
		n(pt.BwBps/1e6, 6), n(pt.RTTMinS*1000, 6),
		n(pt.BDPBytes, 6), n(pt.BDPBytes/p.MSSBytes, 4),
		n(pt.FTackHz, 4), pt.Regime, why,
		n(pt.FTCP1Hz, 5), n(pt.RatioL1*100, 3),
		n(pt.FTCP2Hz, 5), n(pt.RatioL2*100, 3),
		n(pt.PivotBps/1e6, 4))
	return err
}

// Default Fig. 22 curves (experiments.md §6.5).
var (
	sweepBws  = []float64{0.1e6, 100e6, 1000e6}
	sweepRTTs = []float64{0.001, 0.010, 0.080, 0.200, 0.400}
)

func tackSweep(w, logw io.Writer, p analysis.TACKParams, bws, rtts []float64, format, out string) error {
	if len(bws) == 0 {
		bws = sweepBws
	}
	if len(rtts) == 0 {
		rtts = sweepRTTs
	}
	if format == "" {
		format = "md"
	}
	// Tables at decade points; plots with 200 log-spaced points.
	rttDecades := []float64{1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1}
	bwDecades := []float64{1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 3e9}
	a := analysis.SweepRTT(bws, rttDecades, p)
	b := analysis.SweepBw(rtts, bwDecades, p)
	if format == "json" {
		if err := writeJSON(w, []analysis.TACKSweep{a, b}); err != nil {
			return err
		}
	} else {
		for _, sw := range []analysis.TACKSweep{a, b} {
			title := "Fig. 22(a): ACK frequency vs RTT_min"
			if sw.Axis == "bw" {
				title = "Fig. 22(b): ACK frequency vs bandwidth"
			}
			var pts []analysis.TACKPoint
			for _, c := range sw.Curves {
				pts = append(pts, c.Points...)
			}
			if err := analysis.TACKTable(title, pts).Write(w, format); err != nil {
				return err
			}
			fmt.Fprintln(w)
		}
	}
	params := fmt.Sprintf("β=%s, L=%s, MSS=%s B", analysis.FormatNumber(p.Beta, 4), analysis.FormatNumber(p.L, 4), analysis.FormatNumber(p.MSSBytes, 6))
	figs := []struct {
		name, title string
		sw          analysis.TACKSweep
	}{
		{"tack-rtt", "ACK frequency vs RTT_min (" + params + ")", analysis.SweepRTT(bws, analysis.LogSpace(1e-6, 0.1, 200), p)},
		{"tack-bw", "ACK frequency vs bandwidth (" + params + ")", analysis.SweepBw(rtts, analysis.LogSpace(1e3, 3e9, 200), p)},
	}
	for _, fg := range figs {
		pl, err := analysis.TACKPlot(fg.sw, fg.title, nil)
		if err != nil {
			return err
		}
		files, err := analysis.SavePlot(pl, filepath.Join(out, fg.name))
		if err != nil {
			return err
		}
		fmt.Fprintf(logw, "wrote %s\n", strings.Join(files, ", "))
	}
	return nil
}
