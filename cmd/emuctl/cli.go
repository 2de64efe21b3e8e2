package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"unicode"

	golab "github.com/emuctl/emuctl/lab"
	"github.com/emuctl/emuctl/topo"
	"github.com/spf13/cobra"
	"github.com/vishvananda/netlink"
	"github.com/vishvananda/netns"
	"golang.org/x/sys/unix"
)

func newCLICmd() *cobra.Command {
	var lab string
	cmd := &cobra.Command{
		Use:               "cli [--lab LAB | LAB]",
		ValidArgsFunction: completeLabArg,
		Short:             "Mininet-style prompt: `h1 ping -c1 h2`, pingall, iperf, link, net, intfs, ports, xterm, ... (help lists them)",
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

// cliCommand is one command of the prompt. run returns true to leave it.
type cliCommand struct {
	names []string // the first is the one help shows
	usage string
	help  string
	run   func(c *cliSession, args string) bool
}

// cliCommands are the prompt's commands: Mininet's, under Mininet's names
// and with its output, as its users type them.
func cliCommands() []cliCommand {
	none := func(f func(c *cliSession)) func(*cliSession, string) bool {
		return func(c *cliSession, _ string) bool { f(c); return false }
	}
	with := func(f func(c *cliSession, args string)) func(*cliSession, string) bool {
		return func(c *cliSession, args string) bool { f(c, args); return false }
	}
	return []cliCommand{
		{[]string{"nodes"}, "nodes", "list nodes", none((*cliSession).nodes)},
		{[]string{"net"}, "net", "list each node's interfaces and what they connect to", none(func(c *cliSession) { cliNet(c.st.Spec, c.out) })},
		{[]string{"links"}, "links", "list links with the state of both ends", none(func(c *cliSession) { cliLinks(c.st, c.out) })},
		{[]string{"intfs"}, "intfs", "list each node's interfaces", none((*cliSession).intfs)},
		{[]string{"ports"}, "ports", "list each switch's ports with their numbers (OpenFlow ports on OVS)", none((*cliSession).ports)},
		{[]string{"dump"}, "dump", "nodes with kind, interfaces, addresses and namespace", none(func(c *cliSession) { cliDump(c.st, c.out) })},
		{[]string{"pingall"}, "pingall", "ping between every pair of hosts", none(func(c *cliSession) { c.ping(c.st.Spec.Hosts(), true, false) })},
		{[]string{"pingallfull"}, "pingallfull", "pingall, with each pair's rtt min/avg/max/mdev", none(func(c *cliSession) { c.ping(c.st.Spec.Hosts(), true, true) })},
		{[]string{"pingpair"}, "pingpair", "ping between the first two hosts", none(func(c *cliSession) { c.pingPair(false) })},
		{[]string{"pingpairfull"}, "pingpairfull", "pingpair, with rtt min/avg/max/mdev", none(func(c *cliSession) { c.pingPair(true) })},
		{[]string{"iperf"}, "iperf [HOST1 HOST2]", "TCP bandwidth from HOST1 to HOST2 for 5 s (default: first and last host); prints the server's and the client's rate", with(func(c *cliSession, a string) { c.iperf(a, false) })},
		{[]string{"iperfudp"}, "iperfudp [BW [HOST1 HOST2]]", "UDP at BW (default 10M) from HOST1 to HOST2 for 5 s; prints BW, the server's and the client's rate", with(func(c *cliSession, a string) { c.iperf(a, true) })},
		{[]string{"link"}, "link NODE1 NODE2 up|down", "bring every link between two nodes up or down (both ends)", with((*cliSession).link)},
		{[]string{"switch"}, "switch SWITCH start|stop", "bring every port of a switch up or down", with((*cliSession).switchCmd)},
		{[]string{"dpctl"}, "dpctl COMMAND [ARGS]", "ovs-ofctl COMMAND SWITCH ARGS on every Open vSwitch switch", with((*cliSession).dpctl)},
		{[]string{"sh"}, "sh COMMAND", "run a shell command line on the host (outside the lab)", with((*cliSession).sh)},
		{[]string{"noecho"}, "noecho NODE COMMAND", "run a command in a node with the terminal's echo off", with((*cliSession).noecho)},
		{[]string{"xterm"}, "xterm NODE...", "a shell in each node in a new window: tmux inside tmux, else xterm on an X display", with(func(c *cliSession, a string) { c.xterm(a, false) })},
		{[]string{"x"}, "x NODE [COMMAND]", "COMMAND (default: a shell) in a node in a new tmux or X window", with(func(c *cliSession, a string) { c.xterm(a, true) })},
		{[]string{"source"}, "source FILE", "run the commands of a file, one per line", with((*cliSession).source)},
		{[]string{"time"}, "time COMMAND", "run a command of this prompt and print how long it took", (*cliSession).timeCmd},
		{[]string{"py", "px"}, "py EXPRESSION", "Python: only under `emuctl mininet` (this prompt has no Python)", with((*cliSession).py)},
		{[]string{"help", "?"}, "help [COMMAND]", "this text, or one command's", with((*cliSession).help)},
		{[]string{"exit", "quit", "EOF"}, "exit | quit | ^D", "leave the prompt (the lab keeps running)", func(*cliSession, string) bool { return true }},
	}
}

// cliSession is one prompt on a lab.
type cliSession struct {
	st    *golab.State
	out   io.Writer
	cmds  []cliCommand
	byKey map[string]*cliCommand
	depth int // nesting of source
}

func newCLISession(st *golab.State, out io.Writer) *cliSession {
	c := &cliSession{st: st, out: out, cmds: cliCommands(), byKey: map[string]*cliCommand{}}
	for i := range c.cmds {
		for _, n := range c.cmds[i].names {
			c.byKey[n] = &c.cmds[i]
		}
	}
	return c
}

func runCLI(st *golab.State, in io.Reader, out io.Writer) error {
	// ^C at the prompt must not kill the CLI; a running node command gets
	// it from the terminal.
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, syscall.SIGINT)
	defer signal.Stop(sigs)
	go func() {
		for range sigs {
		}
	}()
	c := newCLISession(st, out)
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for {
		fmt.Fprintf(out, "emuctl(%s)> ", st.Lab)
		if !sc.Scan() {
			fmt.Fprintln(out)
			return sc.Err()
		}
		if c.onecmd(sc.Text()) {
			return nil
		}
	}
}

// onecmd runs one line; true means leave the prompt.
func (c *cliSession) onecmd(line string) bool {
	line = strings.TrimSpace(line)
	if line == "" || strings.HasPrefix(line, "#") {
		return false
	}
	// the lab may have changed since the last command (node add, link add)
	if st, err := golab.ReadState(c.st.Lab); err == nil {
		c.st = st
	}
	word, rest := splitWord(line)
	if cmd := c.byKey[word]; cmd != nil {
		return cmd.run(c, rest)
	}
	if c.st.Spec.Node(word) == nil {
		fmt.Fprintf(c.out, "*** Unknown command: %s\n", line)
		return false
	}
	c.inNode(word, rest)
	return false
}

// splitWord cuts a line at its first blank.
func splitWord(line string) (word, rest string) {
	i := strings.IndexFunc(line, unicode.IsSpace)
	if i < 0 {
		return line, ""
	}
	return line[:i], strings.TrimSpace(line[i:])
}

// inNode runs a shell command line inside a node, the terminal attached.
func (c *cliSession) inNode(node, cmdline string) {
	if cmdline == "" {
		fmt.Fprintf(c.out, "*** Enter a command for node: %s <cmd>\n", node)
		return
	}
	err := runInNode(c.st.Lab, node, []string{"/bin/sh", "-c", cmdline}, nil)
	var ee exitError
	if err != nil && !errors.As(err, &ee) {
		fmt.Fprintf(c.out, "*** %v\n", err)
	}
}

func (c *cliSession) help(args string) {
	if args != "" {
		cmd := c.byKey[args]
		if cmd == nil {
			fmt.Fprintf(c.out, "*** No help on %s\n", args)
			return
		}
		fmt.Fprintf(c.out, "%s\n  %s\n", cmd.usage, cmd.help)
		return
	}
	fmt.Fprintln(c.out, "Commands:")
	rows := [][2]string{{"<node> <command line>", "run a shell command line inside a node (e.g. h1 ping -c1 h2)"}}
	for _, cmd := range c.cmds {
		rows = append(rows, [2]string{cmd.usage, cmd.help})
	}
	w := 0
	for _, r := range rows {
		w = max(w, len(r[0]))
	}
	for _, r := range rows {
		fmt.Fprintf(c.out, "  %-*s  %s\n", w, r[0], r[1])
	}
}

func (c *cliSession) nodes() {
	fmt.Fprintln(c.out, "available nodes are:")
	var names []string
	for _, n := range c.st.Spec.Nodes {
		names = append(names, n.Name)
	}
	fmt.Fprintln(c.out, strings.Join(names, " "))
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

// operState reads the state of an interface of a node.
func operState(st *golab.State, node, iface string) string {
	h, name, err := endpointHandle(st, node, iface)
	if err != nil {
		return "MISSING"
	}
	defer h.Close()
	l, err := h.LinkByName(name)
	if err != nil {
		return "MISSING"
	}
	if l.Attrs().OperState == netlink.OperUp {
		return "OK"
	}
	return strings.ToUpper(l.Attrs().OperState.String())
}

// endpointHandle opens a netlink handle where a node's interface lives and
// returns the interface's name there: the node's namespace, except for an
// OVS switch's port, in the root namespace under its port name.
func endpointHandle(st *golab.State, node, iface string) (*netlink.Handle, string, error) {
	path, name := golab.EndpointNetns(st, node, iface)
	if path == filepath.Join(golab.NetnsDir, topo.Namespace(st.Lab, node)) {
		h, err := emuHandle(st.Lab, node)
		return h, name, err
	}
	ns, err := netns.GetFromPath(path)
	if err != nil {
		return nil, "", err
	}
	defer ns.Close()
	h, err := netlink.NewHandleAt(ns, unix.NETLINK_ROUTE)
	return h, name, err
}

func cliLinks(st *golab.State, out io.Writer) {
	for _, l := range st.Spec.Links {
		fmt.Fprintf(out, "%s<->%s (%s %s)\n", l.A.Iface, l.B.Iface,
			operState(st, l.A.Node, l.A.Iface), operState(st, l.B.Node, l.B.Iface))
	}
}

func cliDump(st *golab.State, out io.Writer) {
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
