package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/emuctl/emuctl/emu"
	"github.com/emuctl/emuctl/topo"
	"github.com/spf13/cobra"
	"github.com/vishvananda/netlink"
)

func newCLICmd() *cobra.Command {
	var lab string
	cmd := &cobra.Command{
		Use:               "cli [--lab LAB | LAB]",
		ValidArgsFunction: completeLabArg,
		Short:             "Mininet-style prompt: `h1 ping -c1 h2`, pingall, nodes, net, links, dump, exit",
		Args:              cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name, err := labArg(lab, args)
			if err != nil {
				return err
			}
			st, err := resolveLab(name)
			if err != nil {
				return err
			}
			return runCLI(st, os.Stdin, os.Stdout)
		},
	}
	addLabFlag(cmd, &lab, false)
	return cmd
}

const cliHelp = `Commands:
  <node> <command line>   run a shell command line inside a node (e.g. h1 ping -c1 h2)
  pingall                 ping between every pair of hosts
  nodes                   list nodes
  net                     list each node's interfaces and what they connect to
  links                   list links with the state of both ends
  dump                    nodes with kind, interfaces, addresses and namespace
  help                    this text
  exit | quit | ^D        leave the prompt (the lab keeps running)
`

func runCLI(st *emu.State, in io.Reader, out io.Writer) error {
	// ^C at the prompt must not kill the CLI; a running node command gets
	// it from the terminal.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT)
	defer signal.Stop(sigs)
	go func() {
		for range sigs {
		}
	}()
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for {
		fmt.Fprintf(out, "emuctl(%s)> ", st.Lab)
		if !sc.Scan() {
			fmt.Fprintln(out)
			return sc.Err()
		}
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		word, rest, _ := strings.Cut(line, " ")
		rest = strings.TrimSpace(rest)
		switch word {
		case "exit", "quit", "EOF":
			return nil
		case "help", "?":
			fmt.Fprint(out, cliHelp)
		case "nodes":
			fmt.Fprintln(out, "available nodes are:")
			var names []string
			for _, n := range st.Spec.Nodes {
				names = append(names, n.Name)
			}
			fmt.Fprintln(out, strings.Join(names, " "))
		case "net":
			cliNet(st.Spec, out)
		case "links":
			cliLinks(st, out)
		case "dump":
			cliDump(st, out)
		case "pingall":
			cliPingAll(st, out)
		default:
			if st.Spec.Node(word) == nil {
				fmt.Fprintf(out, "*** Unknown command: %s (type help)\n", line)
				continue
			}
			if rest == "" {
				fmt.Fprintf(out, "*** Enter a command for node: %s <cmd>\n", word)
				continue
			}
			err := runInNode(st.Lab, word, []string{"/bin/sh", "-c", rest}, nil)
			var ee exitError
			if err != nil && !errors.As(err, &ee) {
				fmt.Fprintf(out, "*** %v\n", err)
			}
		}
	}
}

func cliNet(s *topo.Spec, out io.Writer) {
	for _, n := range s.Nodes {
		var parts []string
		if n.Kind == topo.KindSwitch {
			parts = append(parts, "lo:")
		}
		for _, ifc := range n.Interfaces {
			peer := ifc.Peer
			if ifc.External != nil {
				peer = "host:" + ifc.External.HostName
			}
			if ifc.Wireless { // Wi-Fi: the BSS it is part of
				if n.AP != nil {
					peer = "wifi:" + n.AP.SSID
				} else if n.Station != nil {
					peer = "wifi:" + n.Station.SSID
				}
			}
			if i := strings.IndexByte(peer, ':'); i >= 0 && ifc.External == nil && !ifc.Wireless {
				peer = peer[i+1:]
			}
			parts = append(parts, ifc.Name+":"+peer)
		}
		fmt.Fprintf(out, "%s %s\n", n.Name, strings.Join(parts, " "))
	}
}

// operState reads the state of an interface inside a node.
func operState(lab, node, iface string) string {
	h, err := emuHandle(lab, node)
	if err != nil {
		return "MISSING"
	}
	defer h.Close()
	l, err := h.LinkByName(iface)
	if err != nil {
		return "MISSING"
	}
	if l.Attrs().OperState == netlink.OperUp {
		return "OK"
	}
	return strings.ToUpper(l.Attrs().OperState.String())
}

func cliLinks(st *emu.State, out io.Writer) {
	for _, l := range st.Spec.Links {
		fmt.Fprintf(out, "%s<->%s (%s %s)\n", l.A.Iface, l.B.Iface,
			operState(st.Lab, l.A.Node, l.A.Iface), operState(st.Lab, l.B.Node, l.B.Iface))
	}
}

func cliDump(st *emu.State, out io.Writer) {
	for _, n := range st.Spec.Nodes {
		kind := map[topo.NodeKind]string{topo.KindHost: "Host", topo.KindRouter: "Router", topo.KindSwitch: "Switch"}[n.Kind]
		var parts []string
		for _, ifc := range n.Interfaces {
			a := "None"
			if len(ifc.Addrs) > 0 {
				var s []string
				for _, p := range ifc.Addrs {
					s = append(s, p.String())
				}
				a = strings.Join(s, ",")
			}
			parts = append(parts, ifc.Name+":"+a)
		}
		fmt.Fprintf(out, "<%s %s: %s netns=%s>\n", kind, n.Name, strings.Join(parts, ","), topo.Namespace(st.Lab, n.Name))
	}
}

func cliPingAll(st *emu.State, out io.Writer) {
	fmt.Fprintln(out, "*** Ping: testing ping reachability")
	res := emu.PingAll(context.Background(), st, 2, time.Second)
	byFrom := map[string][]emu.PingResult{}
	for _, r := range res {
		byFrom[r.From] = append(byFrom[r.From], r)
	}
	sent, got := 0, 0
	for _, n := range st.Spec.Hosts() {
		rs := byFrom[n.Name]
		var cells []string
		for _, r := range rs {
			sent++
			if r.OK {
				got++
				cells = append(cells, r.To)
			} else {
				cells = append(cells, "X")
			}
		}
		fmt.Fprintf(out, "%s -> %s\n", n.Name, strings.Join(cells, " "))
	}
	drop := 0.0
	if sent > 0 {
		drop = 100 * float64(sent-got) / float64(sent)
	}
	fmt.Fprintf(out, "*** Results: %.0f%% dropped (%d/%d received)\n", drop, got, sent)
}
