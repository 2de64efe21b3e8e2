package main

// The prompt's commands that reach outside a node's shell: sh, source,
// time, noecho, dpctl, x/xterm, and py's answer.

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	golab "github.com/emuctl/emuctl/lab"
	"github.com/emuctl/emuctl/topo"
	"golang.org/x/sys/unix"
)

// maxSourceDepth bounds files that source files (a file sourcing itself).
const maxSourceDepth = 8

// sh runs a command line on the host, outside the lab.
func (c *cliSession) sh(args string) {
	if args == "" {
		fmt.Fprintln(c.out, "usage: sh COMMAND")
		return
	}
	cmd := exec.Command("/bin/sh", "-c", args)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, c.out, os.Stderr
	var ee *exec.ExitError
	if err := cmd.Run(); err != nil && !errors.As(err, &ee) {
		fmt.Fprintf(c.out, "*** sh: %v\n", err)
	}
}

// source runs the commands of a file. As in Mininet, exit in the file does
// not leave the prompt.
func (c *cliSession) source(args string) {
	a := strings.Fields(args)
	if len(a) != 1 {
		fmt.Fprintln(c.out, "usage: source <file>")
		return
	}
	if c.depth >= maxSourceDepth {
		fmt.Fprintf(c.out, "*** source %s: files sourced %d deep (does a file source itself?)\n", a[0], maxSourceDepth)
		return
	}
	f, err := os.Open(a[0])
	if err != nil {
		fmt.Fprintf(c.out, "error reading file %s: %v\n", a[0], err)
		return
	}
	defer f.Close()
	c.depth++
	defer func() { c.depth-- }()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		c.onecmd(sc.Text())
	}
	if err := sc.Err(); err != nil {
		fmt.Fprintf(c.out, "error reading file %s: %v\n", a[0], err)
	}
}

// timeCmd runs one command of the prompt and prints how long it took.
func (c *cliSession) timeCmd(args string) bool {
	t0 := time.Now()
	exit := c.onecmd(args)
	fmt.Fprintf(c.out, "*** Elapsed time: %0.6f secs\n", time.Since(t0).Seconds())
	return exit
}

// noecho runs a command in a node with the terminal's echo off (for
// programs that read a password or draw the screen themselves).
func (c *cliSession) noecho(args string) {
	node, rest := splitWord(args)
	if node == "" {
		fmt.Fprintln(c.out, "usage: noecho NODE COMMAND")
		return
	}
	if c.st.Spec.Node(node) == nil {
		fmt.Fprintf(c.out, "*** Unknown command: %s\n", args)
		return
	}
	fd := int(os.Stdin.Fd())
	if t, err := unix.IoctlGetTermios(fd, unix.TCGETS); err == nil { // a terminal
		old := *t
		t.Lflag &^= unix.ECHO
		if unix.IoctlSetTermios(fd, unix.TCSETS, t) == nil {
			defer unix.IoctlSetTermios(fd, unix.TCSETS, &old)
		}
	}
	c.inNode(node, rest)
}

// dpctl runs ovs-ofctl COMMAND SWITCH ARGS in every Open vSwitch switch
// (whose OVS_RUNDIR lets ovs-ofctl find the bridge by the node's name).
func (c *cliSession) dpctl(args string) {
	a := strings.Fields(args)
	if len(a) == 0 {
		fmt.Fprintln(c.out, "usage: dpctl command [arg1] [arg2] ...")
		return
	}
	var ovsSwitches, others []string
	for _, n := range c.st.Spec.Nodes {
		if n.Kind != topo.KindSwitch {
			continue
		}
		if n.SwitchType == topo.SwitchOVS {
			ovsSwitches = append(ovsSwitches, n.Name)
		} else {
			others = append(others, n.Name+" ("+n.SwitchType+")")
		}
	}
	if len(ovsSwitches) == 0 {
		what := "no switch"
		if len(others) > 0 {
			what = "no Open vSwitch switch, only " + strings.Join(others, ", ")
		}
		fmt.Fprintf(c.out, "*** dpctl runs ovs-ofctl on Open vSwitch switches, and lab %s has %s; bring it up with switches of type ovs (emuctl up --switch ovs, or type: ovs on a switch in the file)\n", c.st.Lab, what)
		return
	}
	for _, sw := range ovsSwitches {
		fmt.Fprintf(c.out, "*** %s %s\n", sw, strings.Repeat("-", 72))
		cmd, err := golab.NodeCommand(c.st.Lab, sw, append([]string{"ovs-ofctl", a[0], sw}, a[1:]...))
		if err != nil {
			fmt.Fprintf(c.out, "*** dpctl %s: %v\n", sw, err)
			continue
		}
		cmd.Stdout, cmd.Stderr = c.out, c.out
		var ee *exec.ExitError
		if err := cmd.Run(); err != nil && !errors.As(err, &ee) {
			fmt.Fprintf(c.out, "*** dpctl %s: %v\n", sw, err)
		}
	}
}

// xterm opens a window per node running a shell in it (x: one node, and
// the command given instead of the shell): a tmux window when the prompt
// runs inside tmux, else an xterm on the X display, else a refusal that
// says what is missing.
func (c *cliSession) xterm(args string, x bool) {
	name, usage := "xterm", "usage: xterm node1 node2 ..."
	if x {
		name, usage = "x", "usage: x node [cmd args]..."
	}
	nodes := strings.Fields(args)
	var cmdline string
	if x && len(nodes) > 0 {
		var node string
		node, cmdline = splitWord(args)
		nodes = []string{node}
	}
	if len(nodes) == 0 {
		fmt.Fprintln(c.out, usage)
		return
	}
	self, err := os.Executable()
	if err != nil {
		fmt.Fprintf(c.out, "*** %s: %v\n", name, err)
		return
	}
	for _, node := range nodes {
		if c.st.Spec.Node(node) == nil {
			fmt.Fprintf(c.out, "node '%s' not in network\n", node)
			continue
		}
		argv := []string{self, "shell", "-l", c.st.Lab, node}
		if cmdline != "" {
			argv = []string{self, "exec", "-l", c.st.Lab, node, "--", "/bin/sh", "-c", cmdline}
		}
		if err := openWindow(node, c.st.Lab, argv); err != nil {
			fmt.Fprintf(c.out, "*** %s %s: %v\n", name, node, err)
			continue
		}
	}
}

// openWindow starts argv in a new tmux window (inside tmux) or xterm (on
// an X display), without waiting for it.
func openWindow(node, lab string, argv []string) error {
	if os.Getenv("TMUX") != "" {
		tmux, err := exec.LookPath("tmux")
		if err != nil {
			return errors.New("$TMUX is set but tmux is not on PATH")
		}
		// -d: the prompt's window stays in front, as an xterm leaves it
		out, err := exec.Command(tmux, append([]string{"new-window", "-d", "-n", node, "--"}, argv...)...).CombinedOutput()
		if err != nil {
			return fmt.Errorf("tmux new-window: %v: %s", err, strings.TrimSpace(string(out)))
		}
		return nil
	}
	if os.Getenv("DISPLAY") != "" {
		xterm, err := exec.LookPath("xterm")
		if err != nil {
			return fmt.Errorf("$DISPLAY is set but xterm is not installed (apt-get install xterm), and $TMUX is not set; or open a terminal and run: sudo emuctl shell -l %s %s", lab, node)
		}
		cmd := exec.Command(xterm, append([]string{"-title", node + " (" + lab + ")", "-e"}, argv...)...)
		// its own process group: ^C at the prompt is not for it
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			return err
		}
		go cmd.Wait()
		return nil
	}
	return fmt.Errorf("no window to open: $TMUX is not set (this prompt is not inside tmux) and $DISPLAY is not set (no X display); "+
		"run emuctl cli inside tmux (sudo drops $TMUX: sudo --preserve-env=TMUX emuctl cli) or with an X display, or open a terminal and run: sudo emuctl shell -l %s %s", lab, node)
}

// py answers for the Python layer, which alone has an interpreter.
func (c *cliSession) py(string) {
	fmt.Fprintln(c.out, "*** py evaluates Python, and emuctl cli has no Python: py works in the CLI of a Mininet script run under `sudo emuctl mininet script.py` (Python); here, run commands in nodes: h1 ip addr")
}
