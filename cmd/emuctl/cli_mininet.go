package main

// The prompt's measuring and switching commands, printing what Mininet's
// CLI prints: pingall/pingpair (and their "full" forms), iperf/iperfudp,
// link, switch, intfs, ports.

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	golab "github.com/emuctl/emuctl/lab"
	"github.com/emuctl/emuctl/topo"
	"github.com/emuctl/emuctl/traffic"
	"github.com/emuctl/emuctl/units"
)

// iperfTime is how long iperf and iperfudp send, Mininet's default.
const iperfTime = 5 * time.Second

// ping pings between every ordered pair of hosts (two tries each, the first
// success counts) and prints Mininet's matrix and totals; full adds each
// pair's rtt line, as pingallfull does. all prints pingall's heading, which
// Mininet leaves out when it pings a given pair.
func (c *cliSession) ping(hosts []*topo.Node, all, full bool) {
	if all {
		fmt.Fprintln(c.out, "*** Ping: testing ping reachability")
	}
	var res []golab.PingResult
	for _, a := range hosts {
		for _, b := range hosts {
			if a == b {
				continue
			}
			r := golab.PingResult{From: a.Name, To: b.Name}
			r.Addr, _ = golab.PrimaryAddr(b)
			res = append(res, r)
		}
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, 16)
	for i := range res {
		if !res[i].Addr.IsValid() {
			continue // a host without an address: counted as lost
		}
		wg.Add(1)
		sem <- struct{}{}
		go func(r *golab.PingResult) {
			defer wg.Done()
			defer func() { <-sem }()
			for range 2 {
				if rtt, err := golab.PingAddr(context.Background(), c.st.Lab, r.From, r.Addr, time.Second); err == nil {
					r.RTT, r.OK = rtt, true
					return
				}
			}
		}(&res[i])
	}
	wg.Wait()
	sent, got, k := 0, 0, 0
	for _, a := range hosts {
		var cells []string
		for range len(hosts) - 1 {
			r := res[k]
			k++
			sent++
			if r.OK {
				got++
				cells = append(cells, r.To)
			} else {
				cells = append(cells, "X")
			}
		}
		fmt.Fprintf(c.out, "%s -> %s\n", a.Name, strings.Join(cells, " "))
	}
	if sent == 0 {
		fmt.Fprintln(c.out, "*** Warning: No packets sent")
		return
	}
	if full {
		fmt.Fprintln(c.out, "*** Results:")
		for _, r := range res {
			n, ms := 0, 0.0
			if r.OK {
				n, ms = 1, float64(r.RTT.Nanoseconds())/1e6
			}
			fmt.Fprintf(c.out, " %s->%s: 1/%d, rtt min/avg/max/mdev %.3f/%.3f/%.3f/%.3f ms\n", r.From, r.To, n, ms, ms, ms, 0.0)
		}
		return
	}
	drop := 100 * float64(sent-got) / float64(sent)
	fmt.Fprintf(c.out, "*** Results: %d%% dropped (%d/%d received)\n", int(drop), got, sent)
}

func (c *cliSession) pingPair(full bool) {
	hosts := c.st.Spec.Hosts()
	if len(hosts) < 2 {
		fmt.Fprintf(c.out, "*** pingpair needs two hosts; lab %s has %d\n", c.st.Lab, len(hosts))
		return
	}
	c.ping(hosts[:2], false, full)
}

// iperf measures TCP (or UDP at a given rate) from one host to another with
// emuctl's own traffic engine and prints Mininet's two lines: the rate the
// server received and the rate the client wrote (UDP: the rate asked first).
func (c *cliSession) iperf(args string, udp bool) {
	a := strings.Fields(args)
	proto, bw := "TCP", "10M"
	if udp {
		proto = "UDP"
		if len(a) == 1 || len(a) == 3 {
			bw, a = a[0], a[1:]
		} else if len(a) != 0 {
			fmt.Fprintln(c.out, "invalid number of args: iperfudp bw src dst\nbw examples: 10M")
			return
		}
	} else if len(a) != 0 && len(a) != 2 {
		fmt.Fprintln(c.out, "invalid number of args: iperf src dst")
		return
	}
	var client, server string
	if len(a) == 2 {
		client, server = a[0], a[1]
		bad := false
		for _, n := range a {
			if c.st.Spec.Node(n) == nil {
				fmt.Fprintf(c.out, "node '%s' not in network\n", n)
				bad = true
			}
		}
		if bad {
			return
		}
	} else {
		hosts := c.st.Spec.Hosts()
		if len(hosts) < 2 {
			fmt.Fprintf(c.out, "*** iperf needs two hosts; lab %s has %d\n", c.st.Lab, len(hosts))
			return
		}
		client, server = hosts[0].Name, hosts[len(hosts)-1].Name
	}
	f := traffic.Flow{Client: client, Server: server, Proto: traffic.TCP, Duration: iperfTime, Interval: traffic.DefaultInterval}
	if udp {
		rate, err := iperfBandwidth(bw)
		if err != nil {
			fmt.Fprintf(c.out, "*** iperfudp: %v\n", err)
			return
		}
		keep := false
		f.Proto, f.Rate, f.KeepPackets = traffic.UDP, rate, &keep
	}
	fmt.Fprintf(c.out, "*** Iperf: testing %s bandwidth between %s and %s\n", proto, client, server)
	res, err := traffic.Run(context.Background(), c.st.Lab, []traffic.Flow{f}, traffic.Options{Log: logger()})
	if err != nil {
		fmt.Fprintf(c.out, "*** iperf: %v\n", err)
		return
	}
	if len(res.Flows) != 1 {
		fmt.Fprintf(c.out, "*** iperf: %d streams measured, expected one\n", len(res.Flows))
		return
	}
	fl := res.Flows[0]
	var rx float64
	if d := fl.EndS - fl.StartS; d > 0 {
		rx = float64(fl.BytesReceived) * 8 / d
	}
	sendEnd := fl.SendEndS // when the client stopped writing (TCP)
	if sendEnd <= fl.StartS {
		sendEnd = fl.StartS + iperfTime.Seconds()
	}
	tx := float64(fl.BytesSent) * 8 / (sendEnd - fl.StartS)
	out := []string{iperfRate(rx), iperfRate(tx)}
	if udp {
		out = append([]string{bw}, out...)
	}
	fmt.Fprintf(c.out, "*** Results: ['%s']\n", strings.Join(out, "', '"))
}

// iperfBandwidth reads iperf's -b: a rate with a unit (10M, 500k, 1mbit)
// or a bare number of bits/s.
func iperfBandwidth(s string) (units.BitRate, error) {
	if n, err := strconv.ParseFloat(s, 64); err == nil && n > 0 {
		return units.ParseBitRate(strconv.FormatFloat(n, 'f', -1, 64) + "bit")
	}
	return units.ParseBitRate(s)
}

// iperfRate writes bits/s as iperf 2 does: decimal prefixes, three
// significant digits ("9.56 Mbits/sec", "94.1 Mbits/sec", "941 Mbits/sec").
func iperfRate(bps float64) string {
	prefixes := []string{"", "K", "M", "G", "T"}
	i := 0
	for bps >= 1000 && i < len(prefixes)-1 {
		bps /= 1000
		i++
	}
	f := "%.0f"
	switch {
	case bps < 9.995:
		f = "%.2f"
	case bps < 99.95:
		f = "%.1f"
	}
	return fmt.Sprintf(f+" %sbits/sec", bps, prefixes[i])
}

// link takes every link between two nodes up or down at both ends.
func (c *cliSession) link(args string) {
	a := strings.Fields(args)
	switch {
	case len(a) != 3:
		fmt.Fprintln(c.out, "invalid number of args: link end1 end2 [up down]")
		return
	case a[2] != "up" && a[2] != "down":
		fmt.Fprintln(c.out, "invalid type: link end1 end2 [up down]")
		return
	case c.st.Spec.Node(a[0]) == nil:
		fmt.Fprintf(c.out, "src not in network: %s\n", a[0])
		return
	case c.st.Spec.Node(a[1]) == nil:
		fmt.Fprintf(c.out, "dst not in network: %s\n", a[1])
		return
	}
	found := false
	for i, l := range c.st.Spec.Links {
		if !(l.A.Node == a[0] && l.B.Node == a[1] || l.A.Node == a[1] && l.B.Node == a[0]) {
			continue
		}
		found = true
		if err := golab.SetLinkState(c.st.Lab, i, a[2] == "up"); err != nil {
			fmt.Fprintf(c.out, "link %s:%s <-> %s:%s status change failed: %v\n", l.A.Node, l.A.Iface, l.B.Node, l.B.Iface, err)
		}
	}
	if !found {
		fmt.Fprintf(c.out, "src and dst not connected: %s %s\n", a[0], a[1])
	}
}

// switchCmd brings every port of a switch down (stop) or up (start): the
// switch's own end of each of its links, so the hosts keep their
// interfaces but lose carrier, as when a switch is switched off.
func (c *cliSession) switchCmd(args string) {
	a := strings.Fields(args)
	if len(a) != 2 {
		fmt.Fprintln(c.out, "invalid number of args: switch <switch name> {start, stop}")
		return
	}
	n := c.st.Spec.Node(a[0])
	if n == nil || n.Kind != topo.KindSwitch {
		fmt.Fprintf(c.out, "invalid switch: %s\n", a[0])
		return
	}
	if a[1] != "start" && a[1] != "stop" {
		fmt.Fprintln(c.out, "invalid command: switch <switch name> {start, stop}")
		return
	}
	for _, ifc := range n.Interfaces {
		if ifc.External != nil {
			continue // a real adapter: not ours to switch off
		}
		if err := setIfaceUp(c.st, n.Name, ifc.Name, a[1] == "start"); err != nil {
			fmt.Fprintf(c.out, "*** switch %s %s: %s: %v\n", a[0], a[1], ifc.Name, err)
		}
	}
}

// setIfaceUp sets one interface of a node up or down.
func setIfaceUp(st *golab.State, node, iface string, up bool) error {
	h, name, err := endpointHandle(st, node, iface)
	if err != nil {
		return err
	}
	defer h.Close()
	l, err := h.LinkByName(name)
	if err != nil {
		return err
	}
	if up {
		return h.LinkSetUp(l)
	}
	return h.LinkSetDown(l)
}

// intfs prints each node's interfaces, Mininet's way: a switch's loopback
// first ("s1: lo,s1-eth1,s1-eth2"), a host's without it.
func (c *cliSession) intfs() {
	for _, n := range c.st.Spec.Nodes {
		var names []string
		if n.Kind == topo.KindSwitch {
			names = append(names, "lo")
		}
		for _, ifc := range n.Interfaces {
			names = append(names, ifc.Name)
		}
		fmt.Fprintf(c.out, "%s: %s\n", n.Name, strings.Join(names, ","))
	}
}

// ports prints each switch's ports with their numbers: lo is 0; an OVS
// switch's ports have their OpenFlow numbers, a Linux bridge's are
// numbered 1, 2, ... in the order of its links, as Mininet numbers them.
func (c *cliSession) ports() {
	ofport := map[string]int{} // node:iface → OpenFlow port
	if c.st.OVS != nil {
		for _, b := range c.st.OVS.Bridges {
			for _, p := range b.Ports {
				ofport[b.Node+":"+p.Iface] = p.OFPort
			}
		}
	}
	for _, n := range c.st.Spec.Nodes {
		if n.Kind != topo.KindSwitch {
			continue
		}
		parts := []string{"lo:0"}
		for i, ifc := range n.Interfaces {
			no, ok := ofport[n.Name+":"+ifc.Name]
			if !ok {
				no = i + 1
			}
			parts = append(parts, fmt.Sprintf("%s:%d", ifc.Name, no))
		}
		fmt.Fprintf(c.out, "%s %s\n", n.Name, strings.Join(parts, " "))
	}
}
