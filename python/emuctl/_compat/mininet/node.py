"""Mininet's nodes (``mininet.node``) on an emuctl lab.

Every Host/Node is an emuctl host (its own network, mount and UTS
namespaces); OVSSwitch/OVSBridge are emuctl ``type: ovs`` switches with the
script's names, under real controllers (Controller runs Open vSwitch's
test controller); the other switch classes are Linux bridges. A node's shell is one ``bash`` on a pty inside the node, started on first
use by ``emuctl exec`` (which execs in place: no emuctl process stays
behind per node); ``cmd()``, ``sendCmd()``, ``monitor()``, ``waitOutput()``
and ``sendInt()`` behave as Mininet documents them (output up to the
prompt sentinel, chr(127)). ``popen()`` runs a process in the namespaces
of the node's shell (nsenter), so it sees the node's private mounts.
"""

from __future__ import annotations

import fcntl
import math
import os
import pty
import re
import select
import shutil
import signal
import subprocess
import termios
from subprocess import PIPE
from typing import Any, Optional

from mininet._emu import CompatError, current, track, trackDir
from mininet.link import Intf, Link, TCIntf
from mininet.log import debug, error, info, warn
from mininet.util import callSetter, decode, encode, quietRun

SENTINEL = chr(127)


def _ctty() -> None:  # in the child, after setsid: the pty becomes its terminal
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class Node:
    """A node: a namespace of the lab with a shell in it."""

    portBase = 0  # the first port number (switches: 1)
    outToNode: dict[int, "Node"] = {}
    inToNode: dict[int, "Node"] = {}

    def __init__(self, name: str, inNamespace: bool = True, **params: Any) -> None:
        self.checkSetup()
        self.name = params.get("name", name)
        self.privateDirs = params.get("privateDirs", [])
        self.inNamespace = params.get("inNamespace", inNamespace)
        self.params = params
        self.intfs: dict[int, Intf] = {}
        self.ports: dict[Intf, int] = {}
        self.nameToIntf: dict[str, Intf] = {}
        self.shell: Optional[subprocess.Popen[bytes]] = None
        self._pid: Optional[int] = None
        self._stdin: Any = None
        self._stdout: Any = None
        self.master: Optional[int] = None
        self.pollOut: Any = None
        self.waiting = False
        self.readbuf = ""
        self.lastCmd: Optional[str] = None
        self.lastPid: Optional[int] = None
        self.execed = False
        self._deferred: list[tuple[tuple[Any, ...], dict[str, Any]]] = []
        if not re.fullmatch(r"[a-zA-Z][a-zA-Z0-9_-]*", self.name) or len(self.name) > 64:
            raise CompatError(f"node name {self.name!r}: emuctl takes a letter, then letters, digits, '_' "
                              "or '-', at most 64 bytes")
        self.session = current()
        self.session.addNode(self)

    @classmethod
    def checkSetup(cls) -> None:
        """Nothing to check: emuctl checks what it needs."""

    @classmethod
    def setup(cls) -> None:
        """Nothing to set up."""

    def isSwitchNode(self) -> bool:
        """Whether emuctl builds this node as a switch."""
        return False

    def inLab(self) -> bool:
        """Whether the node is a node of the lab: every host and switch
        (a host with inNamespace=False is an emuctl node of kind root, the
        machine's own namespace, where its link ends are made), not
        controllers, which are programs on the host."""
        return True

    def isRoot(self) -> bool:
        """Whether the node is the machine's own namespace
        (``inNamespace=False``; switches have namespaces of their own, or
        are Open vSwitch bridges)."""
        return not self.inNamespace and not self.isSwitchNode()

    def hostShell(self) -> bool:
        """Whether the node's shell runs in the host's namespaces: nodes
        of kind root and those outside the lab, and Open vSwitch switches
        (whose bridge and port devices are in the host's namespace, as
        under Mininet)."""
        return not self.inLab() or self.isRoot()

    def emuctlNode(self) -> dict[str, Any]:
        """The node's entry in the lab's topology document."""
        return {"kind": "root" if self.isRoot() else "host"}

    # the shell

    _ended = False

    @property
    def stdout(self) -> Any:
        """The shell's output (a file on the pty; the shell is started on first use)."""
        if self.shell is None and not self._ended:
            self.startShell()
        return self._stdout

    @property
    def stdin(self) -> Any:
        """The shell's input (the same pty)."""
        if self.shell is None and not self._ended:
            self.startShell()
        return self._stdin

    @property
    def pid(self) -> Optional[int]:
        """The pid of the node's shell (started if need be)."""
        if self.shell is None:
            self.startShell()
        return self._pid

    def startShell(self, mnopts: Any = None) -> None:
        """Start the node's shell: bash on a pty, inside the node."""
        if self.shell is not None:
            error(f"{self.name}: shell is already running\n")
            return
        self._spawnShell()
        self._awaitShell()

    def _spawnShell(self) -> None:
        """Start the shell's process (startShell's first half: many nodes'
        shells start at once, then each is waited for)."""
        argv = ["env", "PS1=" + SENTINEL, "bash", "--norc", "--noediting", "-is", "mininet:" + self.name]
        if self.inLab():
            self.session.realize()
            if not self.hostShell():
                argv = self.session.execArgv(self.name) + argv
        master, slave = pty.openpty()
        self.shell = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, close_fds=True,
                                      start_new_session=True, preexec_fn=_ctty)
        os.close(slave)
        self.master = master
        self._stdin = os.fdopen(master, "r")
        self._stdout = self._stdin
        self._pid = self.shell.pid
        self.pollOut = select.poll()
        self.pollOut.register(self.stdout, select.POLLIN)  # POLLIN only: monitor()'s timeout holds
        self.outToNode[self.stdout.fileno()] = self
        self.inToNode[self.stdin.fileno()] = self
        self.execed = False
        self.lastCmd = None
        self.lastPid = None
        self.readbuf = ""

    def _awaitShell(self) -> None:
        """Wait for the shell's first prompt and set it up (startShell's second half)."""
        while True:
            data = self.read(1024)
            if not data:
                raise CompatError(f"{self.name}: its shell ended before its first prompt "
                                  f"(exit status {self.shell.poll() if self.shell else None})")
            if data[-1] == SENTINEL:
                break
            self.pollOut.poll()
        self.waiting = False
        self.cmd("unset HISTFILE; stty -echo; set +m")
        self.mountPrivateDirs()

    def mountPrivateDirs(self) -> None:
        """Give the node its private directories (tmpfs, or a bind of another directory)."""
        for d in self.privateDirs:
            if isinstance(d, tuple):
                src = d[1] % self.__dict__
                dst = d[0]
                self.cmd("mkdir -p %s" % src)
                self.cmd("mkdir -p %s" % dst)
                self.cmd("mount --bind %s %s" % (src, dst))
            else:
                self.cmd("mkdir -p %s" % d)
                self.cmd("mount -n -t tmpfs tmpfs %s" % d)

    def unmountPrivateDirs(self) -> None:
        """Undo mountPrivateDirs (the mounts end with the shell's namespace anyway)."""
        for d in self.privateDirs:
            self.cmd("umount ", d[0] if isinstance(d, tuple) else d)

    def read(self, size: int = 1024) -> str:
        """Read up to size characters of the shell's output (blocking)."""
        count = len(self.readbuf)
        if count < size and (count == 0 or self.pollOut.poll(0)):  # what is buffered is not waited on
            try:
                data = os.read(self.stdout.fileno(), size - count)
            except OSError:
                data = b""
            self.readbuf += decode(data)
        if size >= len(self.readbuf):
            result, self.readbuf = self.readbuf, ""
        else:
            result, self.readbuf = self.readbuf[:size], self.readbuf[size:]
        return result

    def readline(self) -> Optional[str]:
        """Read one line of output (without its newline); None at EOF."""
        while "\n" not in self.readbuf:
            data = os.read(self.stdout.fileno(), 1024) if self.stdout else b""
            if not data:
                return None
            self.readbuf += decode(data)
        pos = self.readbuf.find("\n")
        line, self.readbuf = self.readbuf[:pos], self.readbuf[pos + 1:]
        return line

    def write(self, data: str) -> None:
        """Write to the shell's input."""
        os.write(self.stdin.fileno(), encode(data))

    def terminate(self) -> None:
        """End the shell and what runs in it."""
        if self.shell is not None:
            if self.shell.poll() is None:
                try:
                    os.killpg(self.shell.pid, signal.SIGHUP)
                except ProcessLookupError:
                    pass
                try:
                    self.shell.wait(timeout=2)
                except subprocess.TimeoutExpired:
                    os.killpg(self.shell.pid, signal.SIGKILL)
                    self.shell.wait()
            if self.stdout is not None:
                self.outToNode.pop(self.stdout.fileno(), None)
                self.inToNode.pop(self.stdin.fileno(), None)
                self.stdout.close()
            self.shell = None
            self._stdout = self._stdin = None
        self._ended = True
        self.cleanup()

    def cleanup(self) -> None:
        """Forget the shell (subclasses release more)."""

    def stop(self, deleteIntfs: bool = False) -> None:
        """Stop the node (and delete its links when deleteIntfs: then the
        node is gone, from the running lab too, and its name free again)."""
        if deleteIntfs:
            self.deleteIntfs()
        self.terminate()
        if deleteIntfs:
            self.session.removeNode(self)

    def waitReadable(self, timeoutms: Optional[int] = None) -> Any:
        """Wait until the shell has output; the poll() result (None if buffered)."""
        if self.shell is None:
            self.startShell()
        if len(self.readbuf) == 0:
            return self.pollOut.poll(timeoutms)
        return None

    def sendCmd(self, *args: Any, **kwargs: Any) -> None:
        """Send a command without waiting for it (waitOutput/monitor read it)."""
        if self.shell is None:
            self.startShell()
        assert not self.waiting, f"{self.name}: a command is still running (waitOutput first)"
        printPid = kwargs.get("printPid", False)
        if len(args) == 1 and isinstance(args[0], list):
            cmd: Any = args[0]
        else:
            cmd = args
        if not isinstance(cmd, str):
            cmd = " ".join(str(c) for c in cmd)
        if not re.search(r"\w", cmd):
            cmd = "echo -n"
        self.lastCmd = cmd
        if len(cmd) > 0 and cmd[-1] == "&":
            cmd += ' printf "\\001%d\\012" $! '
        elif printPid:
            cmd = "bash -c 'printf \"\\001%d\\012\" $$; exec " + cmd.replace("'", "'\\''") + "'"
        self.write(cmd + "\n")
        self.lastPid = None
        self.waiting = True

    def sendInt(self, intr: str = chr(3)) -> None:
        """Interrupt the running command (Ctrl-C)."""
        self.write(intr)

    def monitor(self, timeoutms: Optional[int] = None, findPid: bool = True) -> str:
        """Output so far of the running command; clears ``waiting`` when it ended."""
        ready = self.waitReadable(timeoutms)
        if not ready and ready is not None:
            return ""
        data = self.read(1024)
        pidre = r"\[\d+\] \d+\r\n"
        marker = chr(1) + r"\d+\r\n"
        if findPid and chr(1) in data:
            if re.findall(pidre, data):
                data = re.sub(pidre, "", data)
            while not re.findall(marker, data):
                more = self.read(1024)
                if not more:
                    break
                data += more
            markers = re.findall(marker, data)
            if markers:
                self.lastPid = int(markers[0][1:])
                data = re.sub(marker, "", data)
        if len(data) > 0 and data[-1] == SENTINEL:
            self.waiting = False
            data = data[:-1]
        elif SENTINEL in data:
            self.waiting = False
            data = data.replace(SENTINEL, "")
        if not data and self.shell is not None and self.shell.poll() is not None:
            self.waiting = False  # the shell is gone
        return data

    def waitOutput(self, verbose: bool = False, findPid: bool = True) -> str:
        """Wait for the running command to end; its output."""
        log = info if verbose else debug
        out = ""
        while self.waiting:
            data = self.monitor(findPid=findPid)
            out += data
            log(data)
        return out

    def cmd(self, *args: Any, **kwargs: Any) -> str:
        """Run a command in the node's shell; its output (stdout and stderr).

        While a Mininet declares its topology (the lab is built once it
        has all of it), a node's command is run when the lab is built
        instead, and returns "" (a constructor's configuration commands)."""
        if self.shell is None and self.inLab() and self.session.declaring and not self.session.running:
            self._deferred.append((args, kwargs))
            return ""
        verbose = kwargs.get("verbose", False)
        log = info if verbose else debug
        log(f"*** {self.name} : {args}\n")
        self.sendCmd(*args, **kwargs)
        return self.waitOutput(verbose)

    def cmdPrint(self, *args: Any) -> str:
        """cmd, printing the output as it comes."""
        return self.cmd(*args, **{"verbose": True})

    def _prefix(self) -> list[str]:
        if self.inLab():
            self.session.realize()
        if self.hostShell():
            return []
        if self.shell is not None and self.shell.poll() is None:
            return ["nsenter", "-t", str(self._pid), "-n", "-m", "-u", "--"]
        self.session.realize()
        return self.session.execArgv(self.name)

    def popen(self, *args: Any, **kwargs: Any) -> "subprocess.Popen[bytes]":
        """A process in the node: Popen(args) with stdout and stderr piped by default."""
        # unbuffered: a line read is all that leaves the pipe, so poll()
        # (pmonitor) still sees the lines after it
        defaults: dict[str, Any] = {"stdout": PIPE, "stderr": PIPE, "bufsize": 0}
        defaults.update(kwargs)
        shell = defaults.pop("shell", False)
        defaults.pop("mncmd", None)
        if len(args) == 1:
            if isinstance(args[0], list):
                cmd = args[0]
            elif isinstance(args[0], str):
                cmd = [args[0]] if shell else args[0].split()
            else:
                raise Exception("popen() requires a string or list")
        elif len(args) > 0:
            cmd = list(args)
        else:
            raise Exception("popen() requires a command")
        if shell:
            cmd = [os.environ.get("SHELL", "/bin/bash"), "-c", " ".join(str(c) for c in cmd)]
        return subprocess.Popen(self._prefix() + [str(c) for c in cmd], **defaults)

    def pexec(self, *args: Any, **kwargs: Any) -> tuple[str, str, int]:
        """Run a process in the node; (stdout, stderr, exit code)."""
        p = self.popen(*args, stdin=PIPE, stdout=PIPE, stderr=PIPE, **kwargs)
        out, err = p.communicate()
        return decode(out), decode(err), p.wait()

    # interfaces

    def newPort(self) -> int:
        """The next free port number."""
        if self.ports:
            return max(self.ports.values()) + 1
        return self.portBase

    def addIntf(self, intf: Intf, port: Optional[int] = None, moveIntfFn: Any = None) -> None:
        """Add an interface at port (the next free one by default)."""
        if port is None:
            port = self.newPort()
        self.intfs[port] = intf
        self.ports[intf] = port
        self.nameToIntf[intf.name] = intf
        debug(f"added intf {intf} ({port}) to node {self.name}\n")

    def delIntf(self, intf: Intf) -> None:
        """Forget an interface."""
        port = self.ports.pop(intf, None)
        if port is not None:
            self.intfs.pop(port, None)
        self.nameToIntf.pop(intf.name, None)

    def afterLink(self, intf: Intf) -> None:
        """A link was added on the running lab: finish its interface here."""
        intf._applied = (intf.ip, intf.prefixLen)  # type: ignore[attr-defined]
        if isinstance(intf, TCIntf):
            intf.applyOffloads()

    def defaultIntf(self) -> Optional[Intf]:
        """The interface with the lowest port."""
        if self.intfs:
            return self.intfs[min(self.intfs)]
        warn(f"*** defaultIntf: warning: {self.name} has no interfaces\n")
        return None

    def intf(self, intf: Any = None) -> Any:
        """An interface by name or object; the default one when None."""
        if not intf:
            return self.defaultIntf()
        if isinstance(intf, str):
            return self.nameToIntf[intf]
        return intf

    def connectionsTo(self, node: "Node") -> list[tuple[Intf, Intf]]:
        """(mine, theirs) for each link to node."""
        out = []
        for intf in self.intfList():
            link = intf.link
            if link:
                node1, node2 = link.intf1.node, link.intf2.node
                if node1 == self and node2 == node:
                    out.append((link.intf1, link.intf2))
                elif node1 == node and node2 == self:
                    out.append((link.intf2, link.intf1))
        return out

    def deleteIntfs(self, checkName: bool = True) -> None:
        """Delete every link of the node."""
        for intf in list(self.intfs.values()):
            if intf.link is not None:
                intf.link.delete()
            elif intf.name != "lo":
                self.delIntf(intf)

    def setARP(self, ip: str, mac: str) -> str:
        """Add a static ARP entry."""
        return self.cmd("arp", "-s", ip, mac)

    def setHostRoute(self, ip: str, intf: Any) -> str:
        """Route to one host through intf."""
        return self.cmd("route add -host", ip, "dev", intf)

    def setDefaultRoute(self, intf: Any = None) -> str:
        """Set the default route: an interface, or 'via GW' / 'dev X' text."""
        if isinstance(intf, str) and " " in intf:
            params = intf
        else:
            params = "dev %s" % (intf or self.defaultIntf())
        return self.cmd("ip route del default; ip route add default", params)

    def setMAC(self, mac: str, intf: Any = None) -> Any:
        """Set an interface's MAC (the default interface's by default)."""
        return self.intf(intf).setMAC(mac)

    def setIP(self, ip: str, prefixLen: int = 8, intf: Any = None, **kwargs: Any) -> Any:
        """Set an interface's address ('a.b.c.d/N', or an address and prefixLen)."""
        if "/" not in ip:
            ip = f"{ip}/{prefixLen}"
        i = self.intf(intf)
        if i is None:
            return None
        return i.setIP(ip)

    def IP(self, intf: Any = None) -> Optional[str]:
        """An interface's address (the default interface's by default)."""
        i = self.intf(intf)
        return i.IP() if i is not None else None

    def MAC(self, intf: Any = None) -> Optional[str]:
        """An interface's MAC."""
        i = self.intf(intf)
        return i.MAC() if i is not None else None

    def intfIsUp(self, intf: Any = None) -> bool:
        """Whether an interface is up."""
        return bool(self.intf(intf).isUp())

    def setParam(self, results: dict[str, Any], method: str, **param: Any) -> Any:
        """Call a set* method with one parameter if given."""
        return callSetter(self, results, method, **param)

    def config(self, mac: Optional[str] = None, ip: Optional[str] = None, defaultRoute: Any = None,
               lo: str = "up", **_params: Any) -> dict[str, Any]:
        """Configure the node: MAC, address, default route, loopback."""
        r: dict[str, Any] = {}
        self.setParam(r, "setMAC", mac=mac)
        self.setParam(r, "setIP", ip=ip)
        self.setParam(r, "setDefaultRoute", defaultRoute=defaultRoute)
        if lo != "up":  # emuctl brings lo up in every node
            self.cmd("ifconfig lo " + lo)
        return r

    def configDefault(self, **moreParams: Any) -> dict[str, Any]:
        """config() with the node's parameters."""
        self.params.update(moreParams)
        return self.config(**self.params)

    def linkTo(self, node: "Node", link: Any = Link) -> Any:
        """Link this node to another."""
        return link(self, node)

    def intfList(self) -> list[Intf]:
        """Interfaces in port order."""
        return [self.intfs[p] for p in sorted(self.intfs)]

    def intfNames(self) -> list[str]:
        """Interface names in port order."""
        return [str(i) for i in self.intfList()]

    def __repr__(self) -> str:
        intfs = ",".join(f"{i.name}:{i.IP()}" for i in self.intfList())
        pid = self._pid
        if pid is None and not self._ended:
            try:
                pid = self.pid  # Mininet's nodes have their shell from the start
            except Exception:
                pid = None
        return f"<{self.__class__.__name__} {self.name}: {intfs} pid={pid}> "

    def __str__(self) -> str:
        return self.name


class Host(Node):
    """A host."""


class CPULimitedHost(Host):
    """A host whose processes share a CPU limit, in a cgroup of its own:
    ``sched='cfs'`` CPU bandwidth (cgroup v2 ``cpu.max``, v1
    ``cpu.cfs_quota_us``), ``sched='rt'`` real-time bandwidth (v1
    ``cpu.rt_runtime_us``, the shell and what it starts at SCHED_RR
    priority 20; RT bandwidth is per CPU, so the host is confined with a
    v1 cpuset to ceil(cpu x cores) CPUs, each giving it cpu x cores / n:
    cpu of the whole machine; refused where the kernel has no RT group
    scheduling, as Mininet refuses it). The CPU time it used is read from the group
    (``cpuacct.usage``, or v2 ``cpu.stat``): ``cpuUsage()``."""

    _root: dict[str, str] = {}   # hierarchy ("cpu", "cpuacct" or "v2") → the layer's group in it
    rtprio = 20

    def __init__(self, name: str, sched: str = "cfs", period_us: int = 100000, **kwargs: Any) -> None:
        if sched not in ("cfs", "rt"):
            raise CompatError(f"CPULimitedHost({name}, sched={sched!r}): sched is 'cfs' or 'rt'")
        if sched == "rt" and not os.path.exists("/sys/fs/cgroup/cpu/cpu.rt_runtime_us"):
            raise CompatError(f"CPULimitedHost({name}, sched='rt'): this kernel has no RT group scheduling "
                              "(cgroup v1 cpu.rt_runtime_us; CONFIG_RT_GROUP_SCHED)")
        super().__init__(name, **kwargs)
        self.sched = sched
        self.period_us = period_us
        self.groups: dict[str, str] = {}
        self.cgroup = ""

    @staticmethod
    def _v2() -> bool:
        c = "/sys/fs/cgroup/cgroup.controllers"
        return os.path.exists(c) and "cpu" in open(c).read().split()

    @classmethod
    def _layerGroup(cls, hier: str) -> str:
        if hier not in cls._root:
            base = "/sys/fs/cgroup" if hier == "v2" else f"/sys/fs/cgroup/{hier}"
            if not os.path.isdir(base):
                raise CompatError(f"CPULimitedHost: no cgroup {hier} hierarchy at {base}")
            if hier == "v2":
                _write(base + "/cgroup.subtree_control", "+cpu")
            g = os.path.join(base, f"emuctl-mininet-{os.getpid()}")
            os.makedirs(g, exist_ok=True)
            if hier == "v2":
                _write(g + "/cgroup.subtree_control", "+cpu")
            cls._root[hier] = g
        return cls._root[hier]

    def _hierarchies(self) -> list[str]:
        return ["v2"] if self._v2() else ["cpu", "cpuacct"]

    def _ensureGroup(self) -> str:
        if not self.groups:
            for h in self._hierarchies():
                g = os.path.join(self._layerGroup(h), self.name)
                os.makedirs(g, exist_ok=True)
                self.groups[h] = g
            self.cgroup = self.groups.get("v2") or self.groups["cpu"]
        return self.cgroup

    def _join(self, pid: int) -> None:
        self._ensureGroup()
        for g in self.groups.values():
            _write(os.path.join(g, "cgroup.procs"), str(pid))

    def cgroupSet(self, param: str, value: Any, resource: str = "cpu") -> str:
        """Write one of the host's group files (``resource.param``)."""
        self._ensureGroup()
        g = self.groups.get("v2") or self.groups[resource]
        _write(os.path.join(g, f"{resource}.{param}"), str(value))
        return str(value)

    def cgroupGet(self, param: str, resource: str = "cpu") -> str:
        """Read one of the host's group files."""
        self._ensureGroup()
        g = self.groups.get("v2") or self.groups[resource]
        with open(os.path.join(g, f"{resource}.{param}")) as f:
            return f.read().strip()

    def cpuUsage(self) -> float:
        """CPU seconds the host's processes have used."""
        self._ensureGroup()
        if "v2" in self.groups:
            for line in open(os.path.join(self.groups["v2"], "cpu.stat")):
                k, v = line.split()
                if k == "usage_usec":
                    return int(v) / 1e6
            return 0.0
        return int(self.cgroupGet("usage", "cpuacct")) / 1e9

    def setCPUFrac(self, f: float, sched: Optional[str] = None) -> None:
        """Limit the host to fraction f of the whole machine (cfs: f ≤ 0 lifts the limit)."""
        sched = sched or self.sched
        cores = os.cpu_count() or 1
        period = int(self.period_us)
        self._ensureGroup()
        if sched == "rt":
            if not f or f <= 0:
                raise CompatError(f"{self.name}.setCPUFrac({f}): sched='rt' needs a positive CPU fraction")
            # RT bandwidth is wall-clock time per CPU: f of the whole
            # machine is the host confined (cpuset) to n = ceil(f x cores)
            # CPUs, with f x cores / n of each (one busy loop on two
            # cores at cpu=.1: a fifth of one CPU, a tenth of the machine;
            # per-CPU runtime alone would give it a twentieth)
            n = max(1, math.ceil(f * cores - 1e-9))
            quota = min(int(period * f * cores / n), int(period * 0.9))
            self._pinRt(n, cores)
            root = self._layerGroup("cpu")
            # the layer's group must hold what its hosts' groups take
            if int(open(root + "/cpu.rt_runtime_us").read()) < 900000:
                _write(root + "/cpu.rt_period_us", "1000000")
                _write(root + "/cpu.rt_runtime_us", "900000")
            self.cgroupSet("rt_period_us", period)
            self.cgroupSet("rt_runtime_us", quota)
        else:
            quota = int(period * f * cores) if f > 0 else -1  # CFS quota is CPU time per period
            if 0 < quota < 1000:
                quota, period = 1000, int(1000 / f / cores)
            if "v2" in self.groups:
                _write(os.path.join(self.groups["v2"], "cpu.max"), f"{'max' if quota < 0 else quota} {period}")
            else:
                self.cgroupSet("cfs_period_us", period)
                self.cgroupSet("cfs_quota_us", quota)
        if self.shell is not None:
            self._join(self.shell.pid)
            if sched == "rt":
                self.chrt()
        info(f"({f if f > 0 else 'no limit'} {sched} {quota}us/{period}us) ")

    _nextCpu = 0  # rt hosts are spread over the CPUs in turn

    def _pinRt(self, n: int, cores: int) -> None:
        """Confine the host to n CPUs (cgroup v1 cpuset), the next in turn."""
        cpus = [(CPULimitedHost._nextCpu + i) % cores for i in range(n)]
        CPULimitedHost._nextCpu = (CPULimitedHost._nextCpu + n) % cores
        base = self._layerGroup("cpuset")
        for f in ("cpuset.cpus", "cpuset.mems"):  # a cpuset takes tasks once both are set
            if not open(os.path.join(base, f)).read().strip():
                _write(os.path.join(base, f), open(os.path.join("/sys/fs/cgroup/cpuset", f)).read().strip())
        g = os.path.join(base, self.name)
        os.makedirs(g, exist_ok=True)
        _write(os.path.join(g, "cpuset.cpus"), ",".join(str(c) for c in cpus))
        _write(os.path.join(g, "cpuset.mems"), open(os.path.join(base, "cpuset.mems")).read().strip())
        self.groups["cpuset"] = g

    def chrt(self) -> str:
        """Put the shell at SCHED_RR (what it starts inherits it)."""
        quietRun(f"chrt -r -p {self.rtprio} {self._pid}")
        out = quietRun(f"chrt -p {self._pid}")
        if "SCHED_RR" not in out:
            error(f"*** error: could not assign SCHED_RR to {self.name}: {out.strip()}\n")
            return ""
        return "SCHED_RR"

    def setCPUs(self, cores: Any, mems: int = 0) -> None:
        """Pinning to cores (cpuset) is not modelled: refused, named."""
        raise CompatError(f"{self.name}.setCPUs({cores!r}): CPU pinning (cpuset) is not modelled by emuctl's Mininet layer")

    def _awaitShell(self) -> None:
        """Set the shell up, inside the host's CPU group."""
        super()._awaitShell()
        if self.groups and self.shell is not None:
            self._join(self.shell.pid)
            if self.sched == "rt":
                self.chrt()

    def popen(self, *args: Any, **kwargs: Any) -> "subprocess.Popen[bytes]":
        """A process in the node and its CPU group."""
        p = super().popen(*args, **kwargs)
        if self.groups:
            try:
                self._join(p.pid)
                if self.sched == "rt":
                    quietRun(f"chrt -r -p {self.rtprio} {p.pid}")
            except OSError:
                pass
        return p

    def config(self, cpu: float = -1, cores: Any = None, **params: Any) -> dict[str, Any]:
        """Configure the host and its CPU share (cpu: fraction of the machine)."""
        r = Node.config(self, **params)
        if cpu is not None and cpu > 0:
            if self.shell is None:
                self.startShell()
            self.setCPUFrac(cpu)
        if cores is not None:
            self.setCPUs(cores)
        return r

    def cleanup(self) -> None:
        """Remove the host's CPU groups (and the layer's, once empty)."""
        for g in list(self.groups.values()) + list(type(self)._root.values()):
            if os.path.isdir(g):
                try:
                    os.rmdir(g)  # a cgroup directory goes once it holds no process or group
                except OSError:
                    pass

    @classmethod
    def init(cls) -> None:
        """Nothing to initialise."""


def _write(path: str, value: str) -> None:
    with open(path, "w") as f:
        f.write(value)


class Switch(Node):
    """A switch: an emuctl switch (a Linux bridge in its own namespace)."""

    portBase = 1
    dpidLen = 16

    def __init__(self, name: str, dpid: Any = None, opts: str = "", listenPort: Any = None, **params: Any) -> None:
        super().__init__(name, **params)
        self.dpid = self.defaultDpid(dpid)
        self.opts = opts
        self.listenPort = listenPort
        self.controlIntf = None
        Intf("lo", node=self, port=0)

    def isSwitchNode(self) -> bool:
        """Switches are built as emuctl switches."""
        return True

    def emuctlNode(self) -> dict[str, Any]:
        """A Linux bridge (spanning tree when the switch has ``stp``)."""
        e: dict[str, Any] = {"kind": "switch", "type": "linux-bridge"}
        if getattr(self, "stp", False):
            e["stp"] = True
        return e

    def defaultDpid(self, dpid: Any = None) -> str:
        """The datapath id: given, else the digits of the name."""
        if dpid:
            dpid = str(dpid).replace(":", "")
            return "0" * (self.dpidLen - len(dpid)) + dpid
        nums = re.findall(r"\d+", self.name)
        if nums:
            dpid = hex(int(nums[0]))[2:]
            return "0" * (self.dpidLen - len(dpid)) + dpid
        raise Exception("Unable to derive default datapath ID - please either specify a dpid or use a "
                        "canonical switch name such as s23.")

    def defaultIntf(self) -> Optional[Intf]:
        """A switch's default interface is its first port."""
        ports = [p for p in self.intfs if p > 0]
        return self.intfs[min(ports)] if ports else None

    _stopped = False

    def start(self, controllers: list[Any]) -> None:
        """Start forwarding: the bridge forwards from up on; a stopped one's ports come up again."""
        if self.session.running and self._stopped:
            self.cmd("for i in $(ls /sys/class/net); do ip link set dev $i up; done")
        self._stopped = False

    def stop(self, deleteIntfs: bool = True) -> None:
        """Stop the switch: its ports go down."""
        if self.session.running:
            self.cmd("for i in $(ls /sys/class/net); do [ $i = lo ] || ip link set dev $i down; done")
            self._stopped = True
        super().stop(deleteIntfs=False)

    def connected(self) -> bool:
        """A learning bridge needs no controller: always connected."""
        return True

    def attach(self, intf: Any) -> None:
        """Ports are attached as links are added."""

    def detach(self, intf: Any) -> None:
        """Ports are detached as links are removed."""

    def dpctl(self, *args: Any) -> str:
        """OpenFlow tables exist on OVS switches only."""
        raise CompatError(f"{self.name}.dpctl: {self.name} is a Linux bridge under emuctl's Mininet layer; "
                          "it has no OpenFlow table")


_ovsWarned = False


def ovsAvailable() -> bool:
    """Whether emuctl can build Open vSwitch bridges here: a system Open
    vSwitch answers, or its daemons are installed (emuctl starts its own)."""
    if os.path.exists("/run/openvswitch/db.sock") or os.environ.get("EMUCTL_OVS_DB"):
        return True
    return bool(shutil.which("ovs-vswitchd") and shutil.which("ovsdb-server"))


class OVSSwitch(Switch):
    """Mininet's Open vSwitch switch: an emuctl ``type: ovs`` switch whose
    bridge and ports carry the script's names (``names: topology``), in
    the host's namespace as under Mininet, so ``ovs-vsctl``/``ovs-ofctl``
    in its shell see ``s1`` and ``s1-eth1``. ``failMode`` (``secure`` by
    default: only the controllers' flows), ``datapath`` (``user`` is OVS's
    ``netdev``; Mininet's default ``kernel`` is used where the kernel has
    the openvswitch module, else emuctl takes ``netdev`` and says so),
    ``protocols`` and ``stp`` are the bridge's. Controllers are set at
    ``start(controllers)``, as Mininet does. Without Open vSwitch on the
    machine the switch is a Linux bridge, with a warning."""

    def __init__(self, name: str, failMode: str = "secure", datapath: Optional[str] = None, inband: bool = False,
                 protocols: Any = None, reconnectms: int = 1000, stp: bool = False, batch: bool = False,
                 **params: Any) -> None:
        # set before Node.__init__: on a running network it adds the
        # switch to the lab at once, as emuctlNode() describes it
        if failMode not in ("secure", "standalone"):
            raise CompatError(f"{type(self).__name__}({name}, failMode={failMode!r}): Open vSwitch takes "
                              "'secure' or 'standalone'")
        if datapath not in (None, "kernel", "user"):
            raise CompatError(f"{type(self).__name__}({name}, datapath={datapath!r}): 'kernel' or 'user'")
        if inband:
            raise CompatError(f"{type(self).__name__}({name}, inband=True): in-band control is not modelled; "
                              "controllers are reached on the host's loopback")
        self.failMode, self.datapath, self.inband = failMode, datapath or "kernel", inband
        self._datapathGiven = datapath is not None
        self.protocols, self.reconnectms, self.stp, self.batch = protocols, reconnectms, stp, batch
        self.real = ovsAvailable()
        self.controllers: list[str] = []
        super().__init__(name, **params)
        if not self.real:
            global _ovsWarned
            if not _ovsWarned:
                warn("*** emuctl: Open vSwitch is not installed (apt-get install openvswitch-switch): "
                     "OVS switches are Linux bridges that learn, and controllers are not used\n")
                _ovsWarned = True

    def hostShell(self) -> bool:
        """An OVS switch's shell is in the host's namespace, where its
        bridge and port devices are (as under Mininet)."""
        return self.real

    def emuctlNode(self) -> dict[str, Any]:
        """A ``type: ovs`` switch with the script's names."""
        if not self.real:
            return super().emuctlNode()
        e: dict[str, Any] = {"kind": "switch", "type": "ovs", "names": "topology", "fail_mode": self.failMode}
        if self.datapath == "user":
            e["datapath"] = "netdev"
        elif self._datapathGiven:
            e["datapath"] = "kernel"
        if self.protocols:
            e["protocols"] = [p.strip() for p in str(self.protocols).split(",") if p.strip()]
        if self.stp:
            e["stp"] = True
        return e

    @classmethod
    def setup(cls) -> None:
        """Nothing to set up: emuctl starts Open vSwitch when a lab needs it."""

    @classmethod
    def isOldOVS(cls) -> bool:
        """Whether the installed Open vSwitch is older than 1.10 (never, for one emuctl runs)."""
        return False

    @classmethod
    def batchStartup(cls, switches: list[Any], run: Any = None) -> list[Any]:
        """Start several switches."""
        for s in switches:
            s.start([])
        return switches

    @classmethod
    def batchShutdown(cls, switches: list[Any], run: Any = None) -> list[Any]:
        """Stop several switches."""
        for s in switches:
            s.stop()
        return switches

    def vsctl(self, *args: Any, **kwargs: Any) -> str:
        """Run ovs-vsctl on this switch's Open vSwitch."""
        if not self.real:
            raise CompatError(f"{self.name}.vsctl: {self.name} is a Linux bridge (Open vSwitch is not installed)")
        return self.cmd("ovs-vsctl", *args, **kwargs)

    def dpctl(self, *args: Any) -> str:
        """Run ovs-ofctl on this switch: ``dpctl('dump-flows')``."""
        if not self.real:
            return super().dpctl(*args)
        if not args:
            raise CompatError(f"{self.name}.dpctl: give an ovs-ofctl command, e.g. dump-flows")
        return self.cmd("ovs-ofctl", args[0], self, *args[1:])

    def start(self, controllers: list[Any]) -> None:
        """Connect the bridge to its controllers (``ovs-vsctl set-controller``, as Mininet does)."""
        if not self.real:
            return super().start(controllers)
        self.session.realize()
        if self._stopped:
            self._ports("up")
            self._stopped = False
        targets = []
        for c in controllers:
            if c is None:
                continue
            targets.append(c.target(self))
        self.controllers = targets
        # interfaces given to the switch that no link of the lab made
        # (Intf('eth1', node=s1): hwintf.py's real adapter) become ports,
        # with their port numbers, as Mininet's start adds them
        for port, intf in sorted(self.intfs.items()):
            if port > 0 and intf.link is None and intf.name != "lo":
                out = self.vsctl("--may-exist", "add-port", self, intf, "--", "set", "Interface", intf,
                                 f"ofport_request={port}")
                if out.strip():
                    raise CompatError(f"{self.name}.start: adding {intf.name}: ovs-vsctl: {out.strip()}")
        if targets:
            out = self.vsctl("set-controller", self, *targets)
        else:
            out = self.vsctl("del-controller", self)
        if out.strip():
            raise CompatError(f"{self.name}.start: ovs-vsctl: {out.strip()}")

    def _ports(self, state: str) -> None:
        names = [i.name for p, i in self.intfs.items() if p > 0]
        if names:
            self.cmd("; ".join(f"ip link set dev {n} {state}" for n in names))

    def stop(self, deleteIntfs: bool = True) -> None:
        """Stop forwarding: the bridge's ports go down (the bridge stays
        emuctl's until the network stops)."""
        if not self.real:
            return super().stop(deleteIntfs)
        if self.session.running and not self._ended:
            self._ports("down")
            self._stopped = True
        Node.stop(self, deleteIntfs=False)

    def connected(self) -> bool:
        """Whether the bridge is connected to one of its controllers
        (always, in standalone fail mode or without controllers)."""
        if not self.real or self.failMode == "standalone" or not self.controllers:
            return True
        out = quietRun(["ovs-vsctl", "--", "--columns=target,is_connected", "list", "Controller"])
        connected = set()
        target = None
        for line in out.splitlines():
            k, _, v = line.partition(":")
            k, v = k.strip(), v.strip().strip('"')
            if k == "target":
                target = v
            elif k == "is_connected" and v == "true" and target:
                connected.add(target)
        return any(t in connected for t in self.controllers)

    def attach(self, intf: Any) -> None:
        """Put an interface on the bridge (``ovs-vsctl add-port``; one emuctl attached already stays)."""
        if not self.real:
            return
        self.vsctl("--may-exist", "add-port", self, intf)

    def detach(self, intf: Any) -> None:
        """Take an interface off the bridge (``ovs-vsctl del-port``)."""
        if not self.real:
            return
        self.vsctl("del-port", self, intf)


OVSKernelSwitch = OVSSwitch


class OVSBridge(OVSSwitch):
    """An OVS switch in standalone mode without a controller: a learning bridge."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.update(failMode="standalone")
        super().__init__(*args, **kwargs)

    def start(self, controllers: list[Any]) -> None:
        """Start without controllers."""
        super().start([])


class UserSwitch(Switch):
    """Mininet's user-space switch (ofdatapath, not packaged for Debian): a learning bridge here."""


class IVSSwitch(Switch):
    """Indigo Virtual Switch (not packaged for Debian): a learning bridge here."""


# Mininet's reference controller is not packaged for Debian; Open vSwitch's
# test controller (openvswitch-testcontroller) is the learning controller
# every name of it stands for.
_CONTROLLER_NAMES = ("controller", "ovs-controller", "test-controller", "ovs-testcontroller")


def _controllerBinary(command: str) -> Optional[str]:
    if shutil.which(command):
        return command
    if command in _CONTROLLER_NAMES:
        for c in _CONTROLLER_NAMES:
            if shutil.which(c):
                return c
    return None


def _listening(ip: str, port: int) -> bool:
    import socket
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex((ip, port)) == 0


def _dieWithScript() -> Any:
    """A preexec_fn that has the kernel send the child SIGTERM when the
    script's thread that starts it ends (PR_SET_PDEATHSIG), so that a
    controller does not outlive a script killed with SIGKILL (pexpect's
    close sends SIGHUP, then SIGKILL 0.1 s later) and hold its port
    against the next run. Only from the main thread, which lives as long
    as the script; None elsewhere."""
    import threading
    if threading.current_thread() is not threading.main_thread():
        return None

    def die() -> None:
        import ctypes
        ctypes.CDLL(None).prctl(1, int(signal.SIGTERM), 0, 0, 0)  # PR_SET_PDEATHSIG
    return die


class Controller(Node):
    """An OpenFlow controller on the host: Mininet's ``controller`` is
    Open vSwitch's test controller here (``ovs-testcontroller``, a
    learning controller; Debian's openvswitch-testcontroller) speaking
    OpenFlow 1.0 as the reference controller does, run with ``cargs``
    (``ptcp:PORT``, listening on 127.0.0.1 only) and logged to
    /tmp/NAME.log, as Mininet logs it; stopped by pid with the network.

    ovs-testcontroller serves at most 16 switches (Mininet's installer
    patches its reference controller for more): the 17th switch and on
    are given further instances, on free loopback ports, 16 switches
    each. Its learning is per switch, so a switch cannot tell."""

    PER_INSTANCE = 16  # ovs-testcontroller's MAX_SWITCHES

    def __init__(self, name: str, inNamespace: bool = False, command: str = "controller",
                 cargs: str = "ptcp:%d", cdir: Optional[str] = None, ip: str = "127.0.0.1",
                 port: int = 6653, protocol: str = "tcp", **params: Any) -> None:
        if inNamespace:
            raise CompatError(f"{type(self).__name__}({name}, inNamespace=True): controllers run on the host "
                              "(a control network is not modelled)")
        self.command, self.cargs, self.cdir = command, cargs, cdir
        self.ip, self.port, self.protocol = ip, port, protocol
        self.process: Optional[subprocess.Popen[bytes]] = None
        self.extra: list[tuple[int, subprocess.Popen[bytes]]] = []  # (port, process) beyond the first 16 switches
        self.assigned: dict[str, int] = {}  # switch → the port of the instance that serves it
        self.rundir: Optional[str] = None
        super().__init__(name, inNamespace=False, **params)

    def inLab(self) -> bool:
        """Controllers are programs on the host, not nodes of the lab."""
        return False

    def target(self, switch: Any = None) -> str:
        """The controller target a switch connects to: tcp:IP:PORT."""
        port = self.port
        if switch is not None and self.process is not None and self._sharded():
            port = self._portFor(switch.name)
        return "%s:%s:%d" % (self.protocol, self.IP(), port)

    def _sharded(self) -> bool:
        return os.path.basename(self._binary or "") == "ovs-testcontroller"

    def _portFor(self, switch: str) -> int:
        if switch in self.assigned:
            return self.assigned[switch]
        ports = [self.port] + [p for p, _ in self.extra]
        for port in ports:
            if sum(1 for v in self.assigned.values() if v == port) < self.PER_INSTANCE:
                self.assigned[switch] = port
                return port
        port = self._run(0)
        self.assigned[switch] = port
        return port

    def checkListening(self) -> None:
        """Refuse to start where something listens on the port already."""
        if _listening(self.ip if self.ip != "0.0.0.0" else "127.0.0.1", self.port):
            raise CompatError(f"{self.name}: something listens on {self.ip}:{self.port} already; shut that "
                              f"controller down, or give {self.name} another port")

    _binary: Optional[str] = None

    def start(self) -> None:
        """Run the controller (and wait until it listens)."""
        if self.process is not None and self.process.poll() is None:
            return
        self._binary = _controllerBinary(self.command)
        if self._binary is None:
            raise CompatError(f"{self.name}: no {self.command!r} here; Mininet's controllers are Open vSwitch's "
                              "test controller under emuctl: apt-get install openvswitch-testcontroller")
        self.checkListening()
        self.assigned = {}
        self._run(self.port)

    def _run(self, port: int) -> int:
        """Start one instance on port (0: a free loopback port); the port."""
        import tempfile
        import time
        binary = self._binary
        assert binary is not None
        if port == 0:
            import socket
            with socket.socket() as sock:
                sock.bind(("127.0.0.1", 0))
                port = sock.getsockname()[1]
        args = self.cargs % port if "%" in self.cargs else self.cargs
        if re.fullmatch(r"ptcp:\d+", args) and self.ip in ("127.0.0.1", "localhost"):
            args += ":127.0.0.1"  # the switches reach it on loopback; nothing beyond it does
        if binary != self.command and not re.search(r"(^|\s)(-O|--protocols)", args):
            # standing in for Mininet's reference controller, which speaks
            # OpenFlow 1.0 only: a table miss then goes to the controller
            # even after `dpctl del-flows` (from 1.3 on it is dropped)
            args = "-O OpenFlow10 " + args
        if self.rundir is None:  # its control socket (OVS's default run directory may not exist)
            # named with the script's pid: mininet.clean.cleanup() removes
            # those of scripts that are gone (one killed outright)
            self.rundir = tempfile.mkdtemp(prefix="emuctl-mn-%s-%d-" % (self.name, os.getpid()))
            trackDir(self.rundir)  # gone at exit even when the script never stops its controller
        log = open("/tmp/%s.log" % self.name, "ab" if self.process is not None else "wb")
        try:
            p = subprocess.Popen([binary] + args.split(), stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                 cwd=self.cdir, start_new_session=True, env=dict(os.environ, OVS_RUNDIR=self.rundir),
                                 preexec_fn=_dieWithScript())
        finally:
            log.close()
        track(p)
        if self.process is None:
            self.process = p
        else:
            self.extra.append((port, p))
        host = "127.0.0.1" if self.ip in ("0.0.0.0", "localhost") else self.ip
        for _ in range(100):
            if _listening(host, port):
                return port
            if p.poll() is not None:
                raise CompatError(f"{self.name}: {binary} {args} ended at once (exit status {p.returncode}); "
                                  f"see /tmp/{self.name}.log")
            time.sleep(0.05)
        raise CompatError(f"{self.name}: {binary} {args} did not listen on {host}:{port} within 5 s")

    def stop(self, *args: Any, **kwargs: Any) -> None:
        """Stop the controller's instances (by pid) and the node's shell."""
        procs = ([self.process] if self.process is not None else []) + [p for _, p in self.extra]
        self.process, self.extra, self.assigned = None, [], {}
        for p in procs:
            if p.poll() is None:
                p.terminate()
        for p in procs:
            try:
                p.wait(timeout=3)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        if self.rundir is not None:
            shutil.rmtree(self.rundir, ignore_errors=True)
            self.rundir = None
        self.terminate()

    def IP(self, intf: Any = None) -> str:
        """The controller's address."""
        return self.ip

    def __repr__(self) -> str:
        pid = self.process.pid if self.process is not None else self._pid
        return f"<{self.__class__.__name__} {self.name}: {self.IP()}:{self.port} pid={pid}> "

    @classmethod
    def isAvailable(cls) -> bool:
        """Whether a controller program is installed."""
        return _controllerBinary("controller") is not None


class OVSController(Controller):
    """ovs-testcontroller: Open vSwitch's learning controller."""

    def __init__(self, name: str, command: str = "ovs-controller", **kwargs: Any) -> None:
        super().__init__(name, command=command, **kwargs)


class NOX(Controller):
    """NOX: not available."""

    def __init__(self, name: str, *args: Any, **kwargs: Any) -> None:
        raise CompatError(f"NOX({name}): NOX is not packaged for Debian; use Controller (ovs-testcontroller) "
                          "or RemoteController")


class Ryu(Controller):
    """Ryu: not available."""

    def __init__(self, name: str, *args: Any, **kwargs: Any) -> None:
        raise CompatError(f"Ryu({name}): Ryu is not packaged for Debian 12; run ryu-manager yourself and use "
                          "RemoteController")


class RemoteController(Controller):
    """A controller that runs elsewhere (started by the user): the
    switches connect to ``ip:port``; nothing is started or stopped."""

    def __init__(self, name: str, inNamespace: bool = False, ip: str = "127.0.0.1", port: Optional[int] = None,
                 **kwargs: Any) -> None:
        super().__init__(name, ip=ip, port=port if port is not None else 6653, **kwargs)

    def start(self) -> None:
        """Nothing to start; warn when nothing listens at ip:port (as Mininet does)."""
        if not _listening(self.ip, self.port):
            warn(f"Unable to contact the remote controller at {self.ip}:{self.port}\n")

    def checkListening(self) -> None:
        """A remote controller is expected to listen."""

    @classmethod
    def isAvailable(cls) -> bool:
        """Always."""
        return True


DefaultControllers = (Controller, OVSController)


def findController(controllers: Any = DefaultControllers) -> Any:
    """The first available controller class (Controller when none is: its start() says what to install)."""
    for c in controllers:
        if c.isAvailable():
            return c
    return controllers[0]


def DefaultController(name: str, controllers: Any = DefaultControllers, **kwargs: Any) -> Controller:
    """The default controller."""
    return findController(controllers)(name, **kwargs)


def NullController(*_args: Any, **_kwargs: Any) -> None:
    """No controller."""
    return None


def isShellBuiltin(cmd: str) -> bool:
    """Whether cmd's first word is a bash builtin."""
    return quietRun("bash -c 'type -t %s'" % cmd.split()[0], shell=True).strip() == "builtin"
