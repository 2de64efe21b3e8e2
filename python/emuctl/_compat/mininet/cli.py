"""Mininet's command line (``mininet.cli.CLI``): ``mininet>`` and its commands.

Reads commands from stdin (or a script), as Mininet's does: ``help``,
``nodes``, ``net``, ``links``, ``dump``, ``intfs``, ``ports``,
``pingall``, ``pingpair``, ``pingallfull``, ``pingpairfull``, ``iperf``,
``iperfudp``, ``link A B up|down``, ``sh``, ``py``, ``px``, ``source``,
``time``, ``noecho``, ``switch NAME start|stop``, ``dpctl``, ``x``/``xterm``
(refused: no X terminals; ``emuctl shell`` instead), ``exit``; and
``NODE CMD...`` runs CMD in NODE's shell, node names in it replaced by
their addresses.
"""

from __future__ import annotations

import cmd
import os
import sys
import time
from select import POLLIN, poll
from subprocess import call
from typing import Any, Optional

from mininet._emu import CompatError
from mininet.log import error, info, output
from mininet.util import dumpNodeConnections, dumpPorts, quietRun


class CLI(cmd.Cmd):
    """The command line of a running network."""

    prompt = "mininet> "

    def __init__(self, mininet: Any, stdin: Any = sys.stdin, script: Optional[str] = None, **kwargs: Any) -> None:
        self.mn = mininet
        self.locals: dict[str, Any] = {"net": mininet}
        self.inputFile = script
        self.inPoller = poll()
        self.inPoller.register(stdin)
        cmd.Cmd.__init__(self, stdin=stdin, **kwargs)
        self.use_rawinput = stdin is sys.stdin
        info("*** Starting CLI:\n")
        if self.inputFile:
            self.do_source(self.inputFile)
            return
        self.run()

    def run(self) -> None:
        """Read and run commands until exit or end of input."""
        while True:
            try:
                if self.isatty():
                    quietRun("stty echo sane intr ^C")
                self.cmdloop()
                break
            except KeyboardInterrupt:
                output("\nInterrupt\n")

    def emptyline(self) -> bool:
        """An empty line does nothing."""
        return False

    def getLocals(self) -> dict[str, Any]:
        """The names `py` sees: the network and its nodes."""
        self.locals.update(self.mn)  # type: ignore[arg-type]
        return {**{n: self.mn[n] for n in self.mn}, "net": self.mn}

    helpStr = (
        "You may also send a command to a node using:\n"
        "  <node> command {args}\n"
        "For example:\n"
        "  mininet> h1 ifconfig\n"
        "\n"
        "The interpreter automatically substitutes IP addresses\n"
        "for node names when a node is the first arg, so commands\n"
        "like\n"
        "  mininet> h2 ping h3\n"
        "should work.\n"
        "\n"
        "Some character-oriented interactive commands require\n"
        "noecho:\n"
        "  mininet> noecho h2 vi foo.py\n"
        "However, starting up an xterm/gterm is generally better:\n"
        "  mininet> xterm h2\n\n")

    def do_help(self, line: str) -> None:  # type: ignore[override]
        """Describe available CLI commands."""
        cmd.Cmd.do_help(self, line)
        if line == "":
            output(self.helpStr)

    def do_nodes(self, _line: str) -> None:
        """List all nodes."""
        nodes = " ".join(sorted(self.mn))
        output("available nodes are: \n%s\n" % nodes)

    def do_ports(self, _line: str) -> None:
        """Display ports and interfaces for each switch."""
        dumpPorts(self.mn.switches)

    def do_net(self, _line: str) -> None:
        """List network connections."""
        dumpNodeConnections(self.mn.values())

    def do_sh(self, line: str) -> None:
        """Run an external shell command: sh [cmd args]."""
        assert self
        call(line, shell=True)

    def do_py(self, line: str) -> None:
        """Evaluate a Python expression (nodes are local names): py h1.IP()."""
        try:
            result = eval(line, globals(), self.getLocals())
            if result is None:
                return
            elif isinstance(result, str):
                output(result + "\n")
            else:
                output(repr(result) + "\n")
        except Exception as e:
            output(str(e) + "\n")

    def do_px(self, line: str) -> None:
        """Execute a Python statement: px print(h1.IP())."""
        try:
            exec(line, globals(), self.getLocals())
        except Exception as e:
            output(str(e) + "\n")

    def do_pingall(self, line: str) -> None:
        """Ping between all hosts."""
        self.mn.pingAll(line or None)

    def do_pingpair(self, _line: str) -> None:
        """Ping between the first two hosts."""
        self.mn.pingPair()

    def do_pingallfull(self, _line: str) -> None:
        """Ping between all hosts, with RTTs."""
        self.mn.pingAllFull()

    def do_pingpairfull(self, _line: str) -> None:
        """Ping between the first two hosts, with RTTs."""
        self.mn.pingPairFull()

    def do_iperf(self, line: str) -> None:
        """TCP bandwidth between two hosts: iperf [host1 host2]."""
        args = line.split()
        if not args:
            self.mn.iperf()
        elif len(args) == 2:
            hosts = []
            for arg in args:
                if arg not in self.mn:
                    error("node '%s' not in network\n" % arg)
                    return
                hosts.append(self.mn[arg])
            self.mn.iperf(hosts)
        else:
            error("invalid number of args: iperf src dst\n")

    def do_iperfudp(self, line: str) -> None:
        """UDP bandwidth between two hosts: iperfudp bw [host1 host2]."""
        args = line.split()
        if not args:
            self.mn.iperf(l4Type="UDP")
        elif len(args) == 3:
            udpBw = args[0]
            hosts = []
            for arg in args[1:3]:
                if arg not in self.mn:
                    error("node '%s' not in network\n" % arg)
                    return
                hosts.append(self.mn[arg])
            self.mn.iperf(hosts, l4Type="UDP", udpBw=udpBw)
        else:
            error("invalid number of args: iperfudp bw src dst\nbw examples: 10M\n")

    def do_intfs(self, _line: str) -> None:
        """List interfaces."""
        for node in self.mn.values():
            output("%s: %s\n" % (node.name, ",".join(node.intfNames())))

    def do_dump(self, _line: str) -> None:
        """Dump node info."""
        for node in self.mn.values():
            output("%s\n" % repr(node))

    def do_link(self, line: str) -> None:
        """Bring a link up or down: link node1 node2 [up/down]."""
        args = line.split()
        if len(args) != 3:
            error("invalid number of args: link end1 end2 [up down]\n")
        elif args[2] not in ["up", "down"]:
            error("invalid type: link end1 end2 [up down]\n")
        else:
            self.mn.configLinkStatus(*args)

    def do_xterm(self, line: str, term: str = "xterm") -> None:
        """X terminals are not opened: `emuctl shell -l LAB NODE` in a terminal instead."""
        args = line.split()
        if not args:
            error("usage: %s node1 node2 ...\n" % term)
            return
        for arg in args:
            if arg not in self.mn:
                error("node '%s' not in network\n" % arg)
        error("*** %s: emuctl opens no X terminals; in another terminal run: sudo emuctl shell -l %s %s\n"
              % (term, self.mn.session.name, args[0]))

    def do_x(self, line: str) -> None:
        """Open an X terminal: refused (see xterm)."""
        self.do_xterm(line, term="x")

    def do_gterm(self, line: str) -> None:
        """Open a gnome-terminal: refused (see xterm)."""
        self.do_xterm(line, term="gterm")

    def do_exit(self, _line: str) -> bool:
        """Exit."""
        assert self
        return True

    def do_quit(self, line: str) -> bool:
        """Exit."""
        return self.do_exit(line)

    def do_EOF(self, line: str) -> bool:
        """Exit."""
        output("\n")
        return self.do_exit(line)

    def isatty(self) -> bool:
        """Whether our input is a terminal."""
        return bool(self.stdin.isatty())

    def do_noecho(self, line: str) -> None:
        """Run an interactive command with echoing turned off: noecho [cmd args]."""
        if self.isatty():
            quietRun("stty -echo")
        self.default(line)
        if self.isatty():
            quietRun("stty echo")

    def do_source(self, line: str) -> None:
        """Read commands from an input file: source <file>."""
        args = line.split()
        if len(args) != 1:
            error("usage: source <file>\n")
            return
        try:
            with open(args[0]) as f:
                for cmdline in f:
                    cmdline = cmdline.strip()
                    if cmdline == "" or cmdline.startswith("#"):
                        continue
                    output("*** %s\n" % cmdline)
                    self.onecmd(cmdline)
        except OSError:
            error("error reading file %s\n" % args[0])

    def do_dpctl(self, line: str) -> None:
        """Run dpctl (ovs-ofctl) command on all switches.
        Usage: dpctl command [arg1] [arg2] ..."""
        args = line.split()
        if len(args) < 1:
            error("usage: dpctl command [arg1] [arg2] ...\n")
            return
        for sw in self.mn.switches:
            output("*** " + sw.name + " " + ("-" * 72) + "\n")
            try:
                output(sw.dpctl(*args))
            except CompatError as e:
                error("*** %s\n" % e)

    def do_time(self, line: str) -> None:
        """Measure time taken for any command in Mininet."""
        start = time.time()
        self.onecmd(line)
        elapsed = time.time() - start
        output("*** Elapsed time: %0.6f secs\n" % elapsed)

    def do_links(self, _line: str) -> None:
        """Report on links."""
        for link in self.mn.links:
            output(link, link.status(), "\n")

    def do_switch(self, line: str) -> None:
        """Start or stop a switch: switch <name> start|stop."""
        args = line.split()
        if len(args) != 2:
            error("invalid number of args: switch <switch name>{start, stop}\n")
            return
        sw, command = args
        if sw not in self.mn or self.mn.get(sw) not in self.mn.switches:
            error("invalid switch: %s\n" % args[1])
        elif command == "start":
            self.mn.get(sw).start(self.mn.controllers)
        elif command == "stop":
            self.mn.get(sw).stop(deleteIntfs=False)
        else:
            error("invalid command: switch <switch name> {start, stop}\n")

    def do_wait(self, _line: str) -> None:
        """Wait until all switches have connected to a controller."""
        self.mn.waitConnected()

    def default(self, line: str) -> bool:  # type: ignore[override]
        """Run a command on a node: NODE CMD ARGS (node names become addresses)."""
        first, args, line = self.parseline(line)
        if first in self.mn:
            if not args:
                error("*** Please enter a command for node: %s <cmd>\n" % first)
                return False
            node = self.mn[first]
            rest = args.split(" ")
            hops = [self.mn[arg].defaultIntf().IP() if arg in self.mn and self.mn[arg].defaultIntf() is not None
                    and self.mn[arg].defaultIntf().IP() else arg for arg in rest]
            node.sendCmd(" ".join(hops))
            self.waitForNode(node)
        else:
            error("*** Unknown command: %s\n" % line)
        return False

    def waitForNode(self, node: Any) -> None:
        """Print the node's output until its command ends, passing our input to it."""
        nodePoller = poll()
        nodePoller.register(node.stdout)
        bothPoller = poll()
        bothPoller.register(self.stdin, POLLIN)
        bothPoller.register(node.stdout, POLLIN)
        if self.isatty():
            quietRun("stty -icanon min 1")
        while True:
            try:
                bothPoller.poll()
                if isReadable(self.inPoller):
                    key = os.read(self.stdin.fileno(), 1024)
                    node.write(key.decode(errors="replace"))
                if isReadable(nodePoller):
                    data = node.monitor()
                    output(data)
                if not node.waiting:
                    break
            except KeyboardInterrupt:
                node.sendInt()
            except OSError:
                break
        if self.isatty():
            quietRun("stty icanon")

    def precmd(self, line: str) -> str:
        """Allow for comments in the cli."""
        if "#" in line:
            line = line.split("#")[0]
        return line


def isReadable(poller: Any) -> bool:
    """Whether poller reports input now."""
    fdmask = poller.poll(0)
    for fdm in fdmask:
        mask = fdm[1]
        if mask & POLLIN:
            return True
    return False
