package main

import (
	"cmp"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	golab "github.com/emuctl/emuctl/lab"
	"github.com/emuctl/emuctl/topo"
	"github.com/spf13/cobra"
)

type labRow struct {
	Lab     string    `json:"lab"`
	Status  string    `json:"status"`
	Nodes   int       `json:"nodes"`
	Links   int       `json:"links"`
	Source  string    `json:"source"`
	Created time.Time `json:"created"`
}

type nodeRow struct {
	Node       string   `json:"node"`
	Kind       string   `json:"kind"`
	Netns      string   `json:"netns"`
	Interfaces []string `json:"interfaces"`
}

type linkRow struct {
	A string `json:"a"`
	B string `json:"b"`
}

func newLsCmd() *cobra.Command {
	var (
		asJSON bool
		lab    string
	)
	cmd := &cobra.Command{
		Use:               "ls [--lab LAB | LAB]",
		ValidArgsFunction: completeLabArg,
		Short:             "List labs; with a lab, its nodes, links, OVS and Wi-Fi state",
		Example: `  sudo emuctl ls
  sudo emuctl ls --lab demo --json
  sudo emuctl ls demo`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := labArg(lab, args)
			if err != nil {
				return err
			}
			if name != "" {
				st, err := resolveLab(name)
				if err != nil {
					return err
				}
				return printLab(st, asJSON)
			}
			labs, err := golab.Labs()
			if err != nil {
				return err
			}
			rows := []labRow{}
			for _, st := range labs {
				r := labRow{Lab: st.Lab, Status: st.Status, Created: st.Created}
				if st.Spec != nil {
					r.Nodes, r.Links, r.Source = len(st.Spec.Nodes), len(st.Spec.Links), st.Spec.Source
				}
				rows = append(rows, r)
			}
			if asJSON {
				return writeJSON(os.Stdout, rows)
			}
			if len(rows) == 0 {
				fmt.Println("no labs")
				return nil
			}
			tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "LAB\tSTATUS\tNODES\tLINKS\tAGE\tSOURCE")
			for _, r := range rows {
				fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\n", r.Lab, r.Status, r.Nodes, r.Links, time.Since(r.Created).Round(time.Second), r.Source)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	addLabFlag(cmd, &lab, false)
	return cmd
}

func addrList(ifc topo.Interface) string {
	var a []string
	for _, p := range ifc.Addrs {
		a = append(a, p.String())
	}
	if len(a) == 0 {
		return ifc.Name
	}
	return ifc.Name + "=" + strings.Join(a, ",")
}

func printLab(st *golab.State, asJSON bool) error {
	var nodes []nodeRow
	var links []linkRow
	for _, n := range st.Spec.Nodes {
		r := nodeRow{Node: n.Name, Kind: n.DisplayKind(), Netns: topo.Namespace(st.Lab, n.Name)}
		if n.Kind == topo.KindRoot {
			r.Netns = "(the machine's)"
		}
		switch {
		case n.AP != nil:
			r.Kind += "/" + n.AP.Mode + " " + n.AP.SSID
		case n.Station != nil && n.Station.Adhoc != "":
			r.Kind += " adhoc " + n.Station.Adhoc
		case n.Station != nil:
			r.Kind += " -> " + n.Station.AP
		case n.Kind == topo.KindSwitch:
			r.Kind += "/" + n.SwitchType
		}
		for _, ifc := range n.Interfaces {
			r.Interfaces = append(r.Interfaces, addrList(ifc))
		}
		nodes = append(nodes, r)
	}
	for _, l := range st.Spec.Links {
		links = append(links, linkRow{A: l.A.String(), B: l.B.String()})
	}
	ovsInfo := golab.InspectOVS(st)  // OVS: bridges, ports, QoS, queues (nil without ovs switches)
	wifiInfo := golab.WiFiStatus(st) // Wi-Fi: association, BSSID, frequency, peers (nil without Wi-Fi)
	if asJSON {
		out := map[string]any{"lab": st.Lab, "status": st.Status, "nodes": nodes, "links": links}
		if ovsInfo != nil {
			out["ovs"] = ovsInfo
		}
		if wifiInfo != nil {
			out["wifi"] = wifiInfo
		}
		return writeJSON(os.Stdout, out)
	}
	fmt.Printf("lab %s (%s)\n\n", st.Lab, st.Status)
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "NODE\tKIND\tNETNS\tINTERFACES")
	for _, r := range nodes {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Node, r.Kind, r.Netns, strings.Join(r.Interfaces, " "))
	}
	tw.Flush()
	fmt.Println()
	tw = tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "LINK\tA\tB")
	for i, l := range links {
		fmt.Fprintf(tw, "%d\t%s\t%s\n", i, l.A, l.B)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if st.OVS != nil {
		printOVS(ovsInfo, st.OVS.Warning)
	}
	if wifiInfo != nil {
		printWiFi(wifiInfo)
	}
	return nil
}

// printWiFi prints the Wi-Fi table of `emuctl ls LAB`.
func printWiFi(ws []golab.WiFiNodeStatus) {
	fmt.Println()
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WIFI	ROLE	IFACE	DAEMON	STATE	SSID	BSSID	FREQ	PEERS")
	for _, w := range ws {
		daemon := w.Daemon
		switch {
		case w.GaveUp:
			daemon += " (gave up: see its log)"
		case !w.Running:
			daemon += " (not running)"
		}
		if w.Starts > 1 {
			daemon += fmt.Sprintf(" (restarted %d×)", w.Starts-1)
		}
		var peers []string
		for _, p := range w.Peers {
			peers = append(peers, fmt.Sprintf("%s %d dBm %.1f Mbit/s", p.MAC, p.SignalDBm, float64(p.TxBitrateKbps)/1000))
		}
		state := w.State
		if w.Error != "" {
			state += " (" + w.Error + ")"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%d MHz %s\t%s\n", w.Node, w.Role, w.Iface, daemon, state, w.SSID, w.BSSID, w.FreqMHz, w.Width, strings.Join(peers, "; "))
		if m := w.MLD; m != nil {
			// the MLD, then one row per link: its channel, BSSID and state
			ap := ""
			if m.APAddr != "" {
				ap = " with AP MLD " + m.APAddr
			}
			fmt.Fprintf(tw, "  MLD %s%s\t\t\t\t\t\t\t\t\n", m.Addr, ap)
			for _, l := range m.Links {
				extra := ""
				if w.Role == "ap" {
					extra = fmt.Sprintf("%d stations", l.Stations)
				} else if l.Addr != "" {
					extra = "own " + l.Addr
				}
				fmt.Fprintf(tw, "  link %d\t\t\t\t%s\t\t%s\t%d MHz %s\t%s\n", l.ID, l.State, l.BSSID, l.FreqMHz, l.Width, extra)
			}
		}
	}
	tw.Flush()
	printMedium(ws)
	printRoaming(ws)
	printAdhoc(ws)
}

// printAdhoc prints each ad hoc member's reach to the other members of
// its network: SNR, and the rate of its unicast (where the medium picks
// it) or "out of range"; a mesh point's peer links and paths too.
func printAdhoc(ws []golab.WiFiNodeStatus) {

	head := false
	for _, w := range ws {
		if w.Adhoc == "" {
			continue
		}
		if !head {
			fmt.Println()
			head = true
		}
		var peers []string
		for _, p := range w.AdhocPeers {
			r := p.Rate
			if !p.InRange {
				r = "out of range"
			}
			if r == "" {
				peers = append(peers, fmt.Sprintf("%s %.1f dB", p.Node, p.SNRdB))
				continue
			}
			peers = append(peers, fmt.Sprintf("%s %.1f dB (%s)", p.Node, p.SNRdB, r))
		}
		if len(peers) == 0 {
			peers = []string{"none"}
		}
		if !w.Mesh {
			fmt.Printf("%s in ad hoc network %s (no AP, no forwarding): %s\n", w.Node, w.Adhoc, strings.Join(peers, ", "))
			continue
		}
		fmt.Printf("%s in mesh %s (the kernel's 802.11s: peers and forwards): %s\n", w.Node, w.Adhoc, strings.Join(peers, ", "))
		for _, p := range w.Peers {
			fmt.Printf("  peer link %s %s, %d dBm\n", p.MAC, cmp.Or(p.PlinkState, "-"), p.SignalDBm)
		}
		for _, p := range w.MeshPaths {
			fmt.Printf("  path to %s via %s, %d hop(s), metric %d\n", p.Dst, p.NextHop, p.HopCount, p.Metric)
		}
	}
}

// printRoaming prints, for each station of a network of several access
// points, its access point now and every handover so far.
func printRoaming(ws []golab.WiFiNodeStatus) {
	for _, w := range ws {
		if len(w.Network) < 2 {
			continue
		}
		fmt.Printf("\n%s roams in %s (%s): on %s now, %d handover(s)\n", w.Node, w.SSID, strings.Join(w.Network, ", "), w.AP, len(w.Handovers))
		for _, h := range w.Handovers {
			state := fmt.Sprintf("off the air %v", h.OffAir.Round(10*time.Microsecond))
			if !h.Done {
				state = "off the air now"
			}
			fmt.Printf("  %s  %s → %s  SNR %.1f → %.1f dB  %s, %d frames held, %d dropped\n",
				h.Time.Local().Format("15:04:05.000"), h.From, h.To, h.FromSNRdB, h.ToSNRdB, state, h.Held, h.Dropped)
		}
	}
}

// printMedium prints each radio as the lab's medium sees it.
func printMedium(ws []golab.WiFiNodeStatus) {
	any := false
	for _, w := range ws {
		any = any || w.Medium != nil
	}
	if !any {
		return
	}
	fmt.Println()
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "MEDIUM\tPOSITION\tDATA RATE\tAIRTIME\tFRAMES\tRETRIES\tCOLLISIONS\tPER\tFAILED\tDROPPED\tSNR TO")
	for _, w := range ws {
		m := w.Medium
		if m == nil {
			continue
		}
		var snr []string
		for _, l := range m.Links {
			snr = append(snr, fmt.Sprintf("%s %.1f dB", l.To, l.SNRdB))
		}
		rate := m.LastDataRate
		if rate == "" {
			rate = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%.1f %%\t%d\t%d\t%d\t%.3f\t%d\t%d\t%s\n", w.Node, posString(m.Position),
			rate, 100*m.AirtimeShare, m.Frames, m.Retries, m.Collisions, m.PER, m.Failed, m.Dropped, strings.Join(snr, ", "))
		// a multi-link radio: each link on its own channel timeline
		for _, c := range m.Channels {
			r := c.LastDataRate
			if r == "" {
				r = "-"
			}
			fmt.Fprintf(tw, "  %d MHz\t\t%s\t%.1f %%\t%d\t%d\t%d\t%.3f\t%d\t%d\t\n", c.FreqMHz, r, 100*c.AirtimeShare,
				c.Frames, c.Retries, c.Collisions, c.PER, c.Failed, c.Dropped)
		}
	}
	tw.Flush()
}

func newInspectCmd() *cobra.Command {
	var (
		lab            string
		asJSON, asTopo bool
	)
	cmd := &cobra.Command{
		Use:               "inspect [--lab LAB | LAB] [--topology]",
		ValidArgsFunction: completeLabArg,
		Short:             "Print a lab's full recorded state (resolved topology, namespaces, processes) as JSON",
		Long: `Prints the lab's whole recorded state as one JSON document: the resolved
topology, namespaces, processes and real adapters, with the live OVS and
Wi-Fi views. JSON is inspect's only output; --json is accepted, as on every
command that prints a result.

--topology prints instead the lab as it stands now — nodes and links added
or removed at run time included, every link's interface names and
addresses written out — as a topology file 'emuctl up' accepts.`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := labArg(lab, args)
			if err != nil {
				return err
			}
			st, err := resolveLab(name)
			if err != nil {
				return err
			}
			if asTopo {
				l, err := golab.Open(st.Lab)
				if err != nil {
					return err
				}
				doc, err := l.Topology()
				if err != nil {
					return err
				}
				_, err = os.Stdout.Write(doc)
				return err
			}
			// the live views beside the record: OVS (socket path, bridges,
			// queue counters) and Wi-Fi (association, BSSID, signal, bitrate)
			return writeJSON(os.Stdout, struct {
				*golab.State
				OVSLive *golab.OVSInfo         `json:"ovs_live,omitempty"`
				WiFi    []golab.WiFiNodeStatus `json:"wifi,omitempty"`
			}{st, golab.InspectOVS(st), golab.WiFiStatus(st)})
		},
	}
	addLabFlag(cmd, &lab, false)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON (inspect's only output: accepted for uniformity)")
	cmd.Flags().BoolVar(&asTopo, "topology", false, "print the lab as it stands as a topology file (YAML) that up accepts")
	return cmd
}

// posString prints a position in metres to the centimetre ("13.49,0,0"):
// moving nodes are placed between whole metres.
func posString(p [3]float64) string {
	f := func(x float64) string { return strconv.FormatFloat(math.Round(x*100)/100, 'f', -1, 64) }
	return f(p[0]) + "," + f(p[1]) + "," + f(p[2])
}
