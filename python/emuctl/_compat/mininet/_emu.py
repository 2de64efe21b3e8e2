"""The emuctl lab behind a Mininet network (private to the layer).

A :class:`Session` collects the nodes and links a script declares; the
first time one must exist (``net.build()``/``start()``, or a node's shell)
it brings them up as one lab with ``emuctl api``'s ``up``, from a topology
document written out in full: every interface name, port and address
Mininet would choose, ``addressing: {auto: false}`` and ``routing: none``
(Mininet leaves routes to the script). Whatever is declared after that is
added to the running lab (``node.add``/``link.add``), and removed with
``node.del``/``link.del``. One lab per network, named ``mn`` (``mn-<pid>``
when a lab ``mn`` runs already); taken down by ``net.stop()``, at exit,
and on SIGTERM/SIGHUP — except the lab of nodes made without a
``Mininet`` object, which outlives the script as Mininet's low-level nodes
do (:func:`keptAtExit`).
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import signal
import subprocess
import sys
from typing import Any, Optional

from emuctl import Lab
from emuctl._client import Client, find_emuctl
from emuctl.errors import EmuctlError


class CompatError(Exception):
    """Something a Mininet script asks for that emuctl cannot honour, named."""


_sessions: list["Session"] = []


def current() -> "Session":
    """The session new low-level nodes join: the newest network's, else a default one."""
    if not _sessions:
        Session()
    return _sessions[-1]


def _labs(emuctl: str) -> set[str]:
    c = Client(emuctl)
    try:
        return {d["lab"] for d in c.call("labs")}
    finally:
        c.close()


class Session:
    """The nodes and links of one network and the lab that holds them."""

    def __init__(self) -> None:
        self.emuctl = find_emuctl()
        self.nodes: dict[str, Any] = {}     # name → Node, in declaration order
        self.links: list[Any] = []           # Link objects, in declaration order
        self.lab: Optional[Lab] = None
        self.name = ""
        self.info: dict[str, dict[str, Any]] = {}  # node → its emuctl record
        self._netem: Optional[bool] = None
        # while a Mininet builds its topology the lab does not exist yet:
        # commands nodes run meanwhile (in their constructors) wait for it
        self.declaring = False
        # nodes made without a Mininet object (Host('h1'), h1.linkTo(...))
        # outlive the script, as under Mininet: see keptAtExit
        self.standalone = True
        self.cpu0 = (0, 0)
        # top-level keys of the topology document besides nodes and links
        # (mn_wifi's wifi: block: backend, the medium's path loss)
        self.extra: dict[str, Any] = {}
        _sessions.append(self)

    # declaration

    def addNode(self, node: Any) -> None:
        """Declare a node; on a running lab, add it now."""
        if node.name in self.nodes:
            raise CompatError(f"addHost/addSwitch: a node named {node.name!r} exists already")
        self.nodes[node.name] = node
        if self.lab is not None and node.inLab() and hasattr(node, "apiAdd"):
            self.call("node.add", **node.apiAdd(self.name))  # a node of its own kind (mn_wifi's stations)
        elif self.lab is not None and node.inLab():
            kind = "switch" if node.isSwitchNode() else "host"
            params: dict[str, Any] = {"lab": self.name, "name": node.name, "kind": kind}
            if node.isRoot():
                params["node"], params["allow_external"] = {"kind": "root"}, True
            if kind == "switch":
                # the switch as up would have built it: its type, names
                # and every other key (an OVS switch's fail mode, datapath,
                # protocols)
                e = dict(node.emuctlNode())
                e.pop("kind", None)
                params["switch_type"] = e.pop("type", "linux-bridge")
                if e.get("names"):
                    params["names"] = e.pop("names")
                if e:
                    params["node"] = e
            self.call("node.add", **params)

    def addLink(self, link: Any) -> None:
        """Declare a link; on a running lab, add it now."""
        for intf in (link.intf1, link.intf2):
            if not intf.node.inLab():
                raise CompatError(f"Link({link.intf1.node.name}, {link.intf2.node.name}): {intf.node.name} runs in the host's "
                                  "namespace (inNamespace=False); emuctl links join nodes of a lab only")
        self.links.append(link)
        if self.lab is not None:
            self.call("link.add", lab=self.name, **self._linkEntry(link, api=True))
            self.refresh()
        elif self.standalone:
            # without a Mininet object a Link is made at once, as Mininet
            # makes its veth pair: another program may look for its ends
            # (hwintf's test hands t1-eth0 to the example)
            self.realize()

    def removeLink(self, link: Any) -> None:
        """Remove a link (from the lab, when running)."""
        if link in self.links:
            self.links.remove(link)
            if self.lab is not None:
                self.call("link.del", lab=self.name, link=f"{link.intf1.node.name}:{link.intf1.name}")

    def removeNode(self, node: Any) -> None:
        """Remove a node and its links (once: a node removed already is left alone)."""
        if self.nodes.get(node.name) is not node:
            return
        for link in [l for l in self.links if node in (l.intf1.node, l.intf2.node)]:
            self.links.remove(link)
        self.nodes.pop(node.name, None)
        if self.lab is not None and node.inLab():
            if not any(n.inLab() for n in self.nodes.values()):
                # the last node: a lab has at least one, so it goes (the
                # session stays, and builds anew if nodes come back)
                lab, self.lab = self.lab, None
                try:
                    lab.down()
                finally:
                    lab.close()
                return
            self.call("node.del", lab=self.name, name=node.name)

    # the lab

    @property
    def netem(self) -> bool:
        """Whether the kernel has sch_netem (emuctl doctor), so that a link
        built unshaped can be shaped later in place; without it a TCLink is
        built on emuctl's link engine, which changes in place."""
        if self._netem is None:
            out = subprocess.run([self.emuctl, "doctor", "--json"], stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL, check=False).stdout
            try:
                caps = json.loads(out or b"{}").get("capabilities") or []
            except ValueError:
                caps = []
            self._netem = any(c.get("name") == "qdisc/netem" and c.get("ok") for c in caps)
        return self._netem

    @property
    def running(self) -> bool:
        """Whether the lab is up."""
        return self.lab is not None

    def document(self) -> dict[str, Any]:
        """The topology document of everything declared."""
        nodes: dict[str, Any] = {}
        for n in self.nodes.values():
            if not n.inLab():
                continue
            nodes[n.name] = n.emuctlNode()
        if not nodes:
            raise CompatError("the network has no node to build")
        doc = {"name": self.name, "addressing": {"auto": False}, "routing": "none", "nodes": nodes,
               "links": [self._linkEntry(l) for l in self.links]}
        doc.update(self.extra)
        return doc

    def _linkEntry(self, link: Any, api: bool = False) -> dict[str, Any]:
        a, b = link.intf1, link.intf2
        ends = [f"{a.node.name}:{a.name}", f"{b.node.name}:{b.name}"]
        ip: dict[str, list[str]] = {}
        for intf in (a, b):
            if intf.ip and not intf.node.isSwitchNode():
                ip.setdefault(intf.node.name, []).append(f"{intf.ip}/{intf.prefixLen}")
        keys = link.emuctlKeys()
        if api:
            e: dict[str, Any] = {"a": ends[0], "b": ends[1]}
            if ip:
                e["ip"] = ip
            if keys:
                e["link"] = keys
            return e
        e = {"endpoints": ends}
        if ip:
            e["ip"] = {k: v[0] if len(v) == 1 else v for k, v in ip.items()}
        if keys:
            e["link"] = keys
        return e

    def realize(self) -> None:
        """Bring the declared network up as a lab (once)."""
        if self.lab is not None:
            return
        taken = _labs(self.emuctl)
        self.name = "mn" if "mn" not in taken else f"mn-{os.getpid()}"
        doc = self.document()
        # nodes of kind root (inNamespace=False) put link ends in the
        # machine's own namespace, as under Mininet: up's --allow-external
        root = any(e.get("kind") == "root" for e in doc["nodes"].values())
        try:
            self.lab = Lab.up(doc, name=self.name, emuctl=self.emuctl, allow_external=root)
        except EmuctlError as e:
            raise CompatError(f"building the network: {e.message}") from e
        _watch(self)
        self.cpu0 = _cpu()
        self.refresh()
        if any(n.emuctlNode().get("type") == "ovs" for n in self.nodes.values() if n.inLab()):
            self.ovsEnv()

    def ovsEnv(self) -> None:
        """Point Open vSwitch's tools, in this process and every shell and
        program it starts, at the Open vSwitch that serves the lab (emuctl's
        own when the machine runs none): ``OVS_RUNDIR``."""
        out = subprocess.run([self.emuctl, "inspect", "-l", self.name], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, check=False)
        try:
            live = (json.loads(out.stdout or b"{}").get("ovs_live") or {})
        except ValueError:
            live = {}
        rundir = live.get("run_dir")
        if not rundir:
            raise CompatError(f"lab {self.name}: emuctl inspect names no Open vSwitch run directory "
                              f"({out.stderr.decode(errors='replace').strip() or 'no ovs_live'})")
        os.environ["OVS_RUNDIR"] = rundir

    def keptUp(self) -> str:
        """One line: did the emulation keep up while the network ran? The
        link engines' worst lateness (frames sent after their due time) and
        how busy the machine was since the network was built."""
        if self.lab is None:
            return ""
        busy = _busy(self.cpu0, _cpu())
        worst, where = 0.0, ""
        try:
            links = self.call("links", lab=self.name) or []  # a lab of no links (an ad hoc network) has none
        except CompatError:
            links = []
        for l in links:
            st = l.get("engine_stats") or {}
            for d, name in (("AToB", "a->b"), ("BToA", "b->a")):
                late = (st.get(d) or {}).get("LateMax", 0) / 1e6
                if late > worst:
                    worst, where = late, f"{l['a']}<->{l['b']} {name}"
        machine = f"machine {busy:.0f} % busy" if busy is not None else "machine load unknown"
        if worst > LATE_MS or (busy is not None and busy > 95):
            what = f"link {where} sent frames up to {worst:.1f} ms late" if worst > LATE_MS else "the machine had no CPU to spare"
            return f"*** emuctl: the emulation did NOT keep up: {what}; {machine} — results may be off\n"
        tail = f"link engines at most {worst:.1f} ms late, " if where else ""
        return f"*** emuctl: the emulation kept up ({tail}{machine})\n"

    def verify(self) -> list[dict[str, Any]]:
        """Measure every shaped link in both directions (emuctl verify)."""
        return list(self.call("verify", lab=self.name))

    def refresh(self) -> None:
        """Read the lab's nodes back (interface MACs and addresses)."""
        if self.lab is None:
            return
        self.info = {n["name"]: n for n in self.call("nodes", lab=self.name)}

    def call(self, method: str, **params: Any) -> Any:
        """One ``emuctl api`` request on the running lab."""
        assert self.lab is not None, "the network is not built yet"
        try:
            return self.lab._c.call(method, **params)
        except EmuctlError as e:
            raise CompatError(f"{method}: {e.message}") from e

    def intfMAC(self, node: str, intf: str) -> Optional[str]:
        """The MAC emuctl gave an interface."""
        for i in self.info.get(node, {}).get("interfaces") or []:
            if i.get("name") == intf:
                return i.get("mac") or None
        return None

    def execArgv(self, node: str) -> list[str]:
        """The command prefix that runs argv inside a node."""
        return [self.emuctl, "exec", "-l", self.name, node, "--"]

    def stop(self) -> None:
        """Take the lab down (idempotent)."""
        lab, self.lab = self.lab, None
        if lab is not None:
            try:
                lab.down()
            finally:
                lab.close()
        if self in _sessions:
            _sessions.remove(self)


LATE_MS = 5.0  # a link engine's frame this late: the emulation lagged


def _cpu() -> tuple[int, int]:
    """(busy, total) jiffies of the machine (/proc/stat)."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)
    return sum(fields) - idle, sum(fields)


def _busy(a: tuple[int, int], b: tuple[int, int]) -> Optional[float]:
    if b[1] <= a[1]:
        return None
    return 100.0 * (b[0] - a[0]) / (b[1] - a[1])


_watched: list[Session] = []
_processes: list["subprocess.Popen[bytes]"] = []  # programs the layer runs on the host (controllers)


def track(p: "subprocess.Popen[bytes]") -> None:
    """Stop p (by pid) at exit and on SIGTERM/SIGHUP, if it still runs then."""
    _arm()
    _processes.append(p)


_dirs: list[str] = []  # directories the layer made for them (a controller's run directory)


def trackDir(path: str) -> None:
    """Remove the directory path at exit and on SIGTERM/SIGHUP, after the
    programs are stopped, if it is still there then."""
    _arm()
    _dirs.append(path)


def _stopProcesses() -> None:
    for p in list(_processes):
        if p.poll() is None:
            p.terminate()
            try:
                p.wait(timeout=3)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        _processes.remove(p)
    for d in list(_dirs):
        shutil.rmtree(d, ignore_errors=True)
        _dirs.remove(d)


def keptAtExit(s: "Session") -> bool:
    """Whether a lab stays up when the script ends: one of nodes made
    without a Mininet object that still has nodes, as under Mininet, whose
    low-level nodes outlive the script that made them (baresshd.py leaves
    sshd serving in h1) until ``mininet.clean.cleanup()``, ``emuctl mn -c``
    or ``emuctl down``. Said on stderr."""
    if not s.standalone or s.lab is None or not any(n.inLab() for n in s.nodes.values()):
        return False
    try:
        print(f"*** emuctl: lab {s.name} stays up (nodes made without a Mininet object outlive the script, as "
              f"under Mininet): `sudo emuctl down -l {s.name}`, `sudo emuctl mn -c` or mininet.clean.cleanup()",
              file=sys.stderr)
    except OSError:
        pass  # the terminal is gone (a signal from pexpect's close)
    return True


def _cleanupAll() -> None:
    _stopProcesses()
    for s in list(_watched):
        for n in list(s.nodes.values()):
            try:
                n.terminate()
            except Exception:
                pass
        if keptAtExit(s):
            _watched.remove(s)
            continue
        try:
            s.stop()
        except Exception as e:  # at exit: say it, do not raise
            print(f"*** emuctl: taking lab {s.name} down failed: {e}; run `sudo emuctl down -l {s.name}`",
                  file=sys.stderr)
        _watched.remove(s)


def _onSignal(signum: int, _frame: Any) -> None:
    """SIGTERM/SIGHUP: each lab is taken down by an `emuctl down` in a
    session of its own, started first, so that it finishes even when a
    SIGKILL follows (pexpect's close() sends SIGHUP, then SIGKILL 0.1 s
    later); then the shells end and the signal takes its course."""
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, signal.SIG_IGN)
    for p in _processes:  # the controllers first: a SIGKILL may follow at once
        if p.poll() is None:
            p.terminate()
    downs = []
    for s in list(_watched):
        if s.lab is not None and not keptAtExit(s):
            downs.append(subprocess.Popen([s.emuctl, "down", "-l", s.name], stdin=subprocess.DEVNULL,
                                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                          start_new_session=True))
            s.lab = None  # taken down by that process
        for n in list(s.nodes.values()):
            try:
                n.terminate()
            except Exception:
                pass
    _stopProcesses()
    for p in downs:
        try:
            p.wait(timeout=30)
        except subprocess.TimeoutExpired:
            pass
    signal.signal(signum, signal.SIG_DFL)
    os.kill(os.getpid(), signum)


_armed = False


def _arm() -> None:
    """Clean up at exit and on SIGTERM/SIGHUP: set once."""
    global _armed
    if _armed:
        return
    _armed = True
    atexit.register(_cleanupAll)
    for sig in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(sig) in (signal.SIG_DFL, None):
            signal.signal(sig, _onSignal)


def _watch(s: Session) -> None:
    _arm()
    _watched.append(s)
