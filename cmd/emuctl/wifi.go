package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	golab "github.com/emuctl/emuctl/lab"
	"github.com/spf13/cobra"
)

func newWiFiCmd() *cobra.Command {
	var lab string
	cmd := &cobra.Command{
		Use:   "wifi",
		Short: "A running lab's Wi-Fi medium: show each radio's counters, move a node, override a pair's SNR",
	}
	addLabFlag(cmd, &lab, true)
	cmd.AddCommand(newWiFiShowCmd(&lab), newWiFiMoveCmd(&lab), newWiFiPairCmd(&lab), newWiFiLinkDownCmd(&lab), newWiFiMobilityCmd(&lab))
	return cmd
}

func newWiFiShowCmd(lab *string) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "show",
		Short: "Each AP and station: association, channel, and the medium's counters (airtime share, retries, collisions, PER, rate, SNR to each peer)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := resolveLab(*lab)
			if err != nil {
				return err
			}
			ws := golab.WiFiStatus(st)
			if ws == nil {
				return fmt.Errorf("lab %s has no Wi-Fi nodes", st.Lab)
			}
			if asJSON {
				out := map[string]any{"lab": st.Lab, "wifi": ws}
				if st.Medium != nil {
					out["backend"] = st.Medium.Backend
					if ms, err := golab.MediumStats(st.Lab); err == nil {
						out["medium"] = ms
					}
				}
				if mob, err := golab.Mobility(st.Lab); err == nil {
					out["mobility"] = mob
				}
				return writeJSON(os.Stdout, out)
			}
			if st.Medium != nil {
				fmt.Printf("lab %s: Wi-Fi backend %s, medium in %s\n", st.Lab, st.Medium.Backend, st.Medium.Netns)
				if ms, err := golab.MediumStats(st.Lab); err == nil {
					fmt.Printf("medium: up %v, %d frames in, %d deliveries, late mean %.0f µs max %.0f µs\n",
						ms.Uptime.Round(1e6), ms.FramesIn, ms.Deliveries, ms.LateMeanUs, ms.LateMaxUs)
				}
			} else {
				fmt.Printf("lab %s: Wi-Fi on mac80211_hwsim's instant medium (no airtime)\n", st.Lab)
			}
			printWiFi(ws)
			if mob, err := golab.Mobility(st.Lab); err == nil {
				printMobility(mob)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

func newWiFiLinkDownCmd(lab *string) *cobra.Command {
	return &cobra.Command{
		Use:   "link-down <ap> <link-id>",
		Short: "Take one link of a multi-link AP down (802.11be multi-link reconfiguration): its stations keep the other links",
		Long: `Take one link of a multi-link AP down while the lab runs: hostapd announces
the link's removal in its beacons, then removes it, and each station MLD
drops its side of the link; traffic goes on over the remaining links.
Needs a hostapd with LINK_REMOVE (built with CONFIG_TESTING_OPTIONS); the
link stays down until the lab is brought up again.`,
		Example:           `  sudo emuctl wifi link-down ap1 1`,
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: completeWiFiNodes(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := resolveLab(*lab)
			if err != nil {
				return err
			}
			id, err := strconv.Atoi(args[1])
			if err != nil {
				return fmt.Errorf("link id %q is not a number (links are numbered from 0 in the order of links:)", args[1])
			}
			took, err := golab.WiFiLinkDown(st, args[0], id)
			if err != nil {
				return err
			}
			fmt.Printf("%s: link %d down (AP and stations) after %v\n", args[0], id, took.Round(time.Millisecond))
			return nil
		},
	}
}

func newWiFiMoveCmd(lab *string) *cobra.Command {
	return &cobra.Command{
		Use:   "move <node> <x,y[,z]>",
		Short: "Move an AP or station to a new position (metres): its links see the new path loss at once",
		Example: `  sudo emuctl wifi move sta1 40,0        # 40 m from an AP at the origin
  sudo emuctl wifi move sta1 5000,0,0    # out of range: its frames no longer arrive`,
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: completeWiFiNodes(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := resolveLab(*lab)
			if err != nil {
				return err
			}
			pos, err := parsePosition(args[1])
			if err != nil {
				return err
			}
			if err := checkWiFiNode(st, args[0]); err != nil {
				return err
			}
			if err := golab.SetMediumPosition(st.Lab, args[0], pos); err != nil {
				return err
			}
			fmt.Printf("%s moved to %g,%g,%g\n", args[0], pos[0], pos[1], pos[2])
			return nil
		},
	}
}

func newWiFiPairCmd(lab *string) *cobra.Command {
	var snr, loss string
	var clear bool
	cmd := &cobra.Command{
		Use:   "pair <a> <b> (--snr DB | --loss DB | --clear)",
		Short: "Fix the SNR between two Wi-Fi nodes, add loss to their path, or remove the override (both directions)",
		Example: `  sudo emuctl wifi pair sta1 ap1 --snr 12dB
  sudo emuctl wifi pair sta2 ap1 --loss 20dB
  sudo emuctl wifi pair sta1 ap1 --clear`,
		Args:              cobra.ExactArgs(2),
		ValidArgsFunction: completeWiFiNodes(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := resolveLab(*lab)
			if err != nil {
				return err
			}
			set := 0
			for _, b := range []bool{snr != "", loss != "", clear} {
				if b {
					set++
				}
			}
			if set != 1 {
				return fmt.Errorf("give exactly one of --snr, --loss or --clear")
			}
			for _, n := range args {
				if err := checkWiFiNode(st, n); err != nil {
					return err
				}
			}
			var ps, pl *float64
			if snr != "" {
				v, err := parseDB(snr, -20, 100)
				if err != nil {
					return fmt.Errorf("--snr: %w", err)
				}
				ps = &v
			}
			if loss != "" {
				v, err := parseDB(loss, 0, 200)
				if err != nil {
					return fmt.Errorf("--loss: %w", err)
				}
				pl = &v
			}
			return golab.SetMediumPair(st.Lab, args[0], args[1], ps, pl)
		},
	}
	cmd.Flags().StringVar(&snr, "snr", "", "fixed SNR in dB (−20 .. 100), e.g. 12dB")
	cmd.Flags().StringVar(&loss, "loss", "", "extra path loss in dB (0 .. 200), e.g. 20dB")
	cmd.Flags().BoolVar(&clear, "clear", false, "remove the pair's override")
	return cmd
}

func checkWiFiNode(st *golab.State, name string) error {
	if st.Medium == nil {
		return fmt.Errorf("lab %s has no Wi-Fi medium (hwsim's instant medium has no positions or SNR)", st.Lab)
	}
	var names []string
	for _, r := range st.Medium.Radios {
		if r.Gone {
			continue // removed while the lab ran
		}
		if r.Node == name {
			return nil
		}
		names = append(names, r.Node)
	}
	return fmt.Errorf("lab %s has no Wi-Fi node %q (Wi-Fi nodes: %s)", st.Lab, name, strings.Join(names, ", "))
}

// parsePosition reads "x,y" or "x,y,z" in metres within ±100 km.
func parsePosition(s string) ([3]float64, error) {
	var p [3]float64
	parts := strings.Split(s, ",")
	if len(parts) < 2 || len(parts) > 3 {
		return p, fmt.Errorf("position %q: want x,y or x,y,z in metres, e.g. 10,0,1.5", s)
	}
	for i, f := range parts {
		v, err := strconv.ParseFloat(strings.TrimSuffix(strings.TrimSpace(f), "m"), 64)
		if err != nil || v < -100000 || v > 100000 {
			return p, fmt.Errorf("position %q: coordinate %q is not a number of metres within ±100000", s, f)
		}
		p[i] = v
	}
	return p, nil
}

// parseDB reads "12dB", "12 dB" or "12" within [lo, hi].
func parseDB(s string, lo, hi float64) (float64, error) {
	t := strings.TrimSpace(strings.TrimSuffix(strings.TrimSuffix(strings.TrimSpace(s), "dB"), "db"))
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v < lo || v > hi {
		return 0, fmt.Errorf("%q: want a value in dB from %g to %g", s, lo, hi)
	}
	return v, nil
}
