package main

import (
	"fmt"
	"os"
	"sort"
	"strings"
	"text/tabwriter"

	golab "github.com/emuctl/emuctl/lab"
)

// printOVS prints a lab's Open vSwitch part under `emuctl ls LAB`: the
// daemons and socket, each bridge, and each port with its QoS, queues and
// counters.
func printOVS(info *golab.OVSInfo, warning string) {
	if info == nil {
		return
	}
	who := "system Open vSwitch"
	if info.Embedded {
		who = "emuctl's embedded Open vSwitch"
	}
	fmt.Printf("\nOVS: %s, db %s\n", who, info.DB)
	if info.ExecRunDir != "" {
		fmt.Printf("     inside a switch OVS_RUNDIR=%s: emuctl exec s1 -- ovs-ofctl dump-flows s1\n", info.ExecRunDir)
	}
	if warning != "" {
		fmt.Println("     warning: " + warning)
	}
	if info.Error != "" {
		fmt.Println("     error: " + info.Error)
		return
	}
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SWITCH\tBRIDGE\tDATAPATH\tDPID\tFAIL_MODE\tPROTOCOLS\tSTP\tCONTROLLERS")
	for _, b := range info.Bridges {
		stp := "-"
		if b.STP {
			stp = "stp"
		} else if b.RSTP {
			stp = "rstp"
		}
		var ctrls []string
		for _, c := range b.Controllers {
			s := c.Target
			if c.Connected {
				s += " (connected)"
			} else {
				s += " (not connected)"
			}
			ctrls = append(ctrls, s)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", b.Node, b.Name, b.Datapath, b.DatapathID, b.FailMode,
			orDash(strings.Join(b.Protocols, ",")), stp, orDash(strings.Join(ctrls, ", ")))
	}
	tw.Flush()
	fmt.Println()
	tw = tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PORT\tDEVICE\tOFPORT\tQOS\tRX_PKTS\tTX_PKTS\tTX_DROPPED\tSTATE")
	for _, b := range info.Bridges {
		for _, p := range b.Ports {
			qos := orDash(p.QoS)
			if p.MaxRate > 0 {
				qos += " " + p.MaxRate.String()
			}
			state := orDash(p.LinkState)
			if p.STPState != "" {
				state += " stp:" + p.STPState
			}
			if p.RSTPState != "" {
				state += " rstp:" + p.RSTPRole + "/" + p.RSTPState
			}
			if p.Error != "" {
				state += " error: " + p.Error
			}
			fmt.Fprintf(tw, "%s:%s\t%s\t%d\t%s\t%d\t%d\t%d\t%s\n", b.Node, p.Iface, p.Name, p.OFPort, qos,
				p.Stats["rx_packets"], p.Stats["tx_packets"], p.Stats["tx_dropped"], state)
		}
	}
	tw.Flush()
	if len(info.Queues) == 0 {
		return
	}
	fmt.Println()
	var ports []string
	for p := range info.Queues {
		ports = append(ports, p)
	}
	sort.Strings(ports)
	tw = tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "QUEUE\tCLASS\tSENT_PKTS\tSENT_BYTES\tLEAF\tLIMIT\tBACKLOG_PKTS\tDROPS")
	for _, p := range ports {
		for _, q := range info.Queues[p] {
			leaf := orDash(q.Leaf)
			limit := "default"
			if q.LeafLimit > 0 {
				limit = fmt.Sprint(q.LeafLimit)
				if !q.LeafByEmu {
					limit += " (missing!)"
				}
			}
			fmt.Fprintf(tw, "%s q%d\t%s\t%d\t%d\t%s\t%s\t%d\t%d\n", p, q.Queue, q.Class, q.Packets, q.Bytes, leaf, limit, q.QLen, q.LeafDrops)
		}
	}
	tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
