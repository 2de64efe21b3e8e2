"""A running lab, its nodes, links, shells and Wi-Fi, over ``emuctl api``."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any, Iterator, Optional, Sequence, Union

from ._client import Client, find_emuctl
from .errors import EmuctlError

Topology = Union[str, os.PathLike, dict]


class Result(dict):
    """A traffic run's result: the JSON ``emuctl traffic --json`` writes.

    Plain data (a dict); :meth:`summary` lists the flows' summaries and
    :meth:`to_dataframe` turns the samples into a pandas DataFrame when
    pandas is installed.
    """

    @property
    def summary(self) -> list[dict[str, Any]]:
        """Per-flow summaries: goodput, steady goodput, retransmits, RTT, ..."""
        return list(self.get("summary") or [])

    def samples(self) -> list[dict[str, Any]]:
        """Every sample of every flow, flattened: flow, t_s, goodput_bps, srtt_us, cwnd_segs, ..."""
        rows: list[dict[str, Any]] = []
        for f in self.get("flows") or []:
            for s in f.get("samples") or []:
                row: dict[str, Any] = {"flow": f.get("id"), "t_s": s.get("t_s"), "goodput_bps": s.get("goodput_bps")}
                for k, v in (s.get("tcp") or {}).items():
                    row[k] = v
                rows.append(row)
        return rows

    def to_dataframe(self) -> Any:
        """The samples as a pandas DataFrame (needs pandas)."""
        try:
            import pandas  # type: ignore[import-not-found]
        except ImportError as e:
            raise RuntimeError("to_dataframe needs pandas (apt-get install python3-pandas); "
                               "samples() gives the same rows as dicts") from e
        return pandas.DataFrame(self.samples())


class Shell:
    """A long-lived bash inside a node: Mininet's ``h1.cmd()`` semantics.

    The working directory, variables and background jobs stay between
    commands; :meth:`interrupt` is Ctrl-C.
    """

    def __init__(self, lab: "Lab", node: str) -> None:
        self._lab = lab
        self.node = node
        r = lab._c.call("shell.open", lab=lab.name, node=node)
        self.id: str = r["shell"]
        self.pid: int = r["pid"]

    def cmd(self, line: str, timeout: Optional[float] = None) -> str:
        """Run one command line and return what it printed (stdout and stderr)."""
        return self.run(line, timeout)[0]

    def run(self, line: str, timeout: Optional[float] = None) -> tuple[str, int]:
        """Run one command line; return its output and exit status."""
        r = self._lab._c.call("shell.cmd", shell=self.id, line=line, timeout_s=timeout)
        return r["output"], r["code"]

    def send(self, line: str) -> None:
        """Write a command line without waiting (Mininet's sendCmd)."""
        self._lab._c.call("shell.send", shell=self.id, line=line)

    def wait(self, timeout: Optional[float] = None) -> str:
        """Read a sent command's output up to the prompt (Mininet's waitOutput)."""
        return self._lab._c.call("shell.wait", shell=self.id, timeout_s=timeout)["output"]

    def interrupt(self) -> None:
        """Send Ctrl-C to the command in the foreground."""
        self._lab._c.call("shell.interrupt", shell=self.id)

    def close(self) -> None:
        """End the shell and its jobs."""
        self._lab._c.call("shell.close", shell=self.id)


class Node:
    """A node of a running lab."""

    def __init__(self, lab: "Lab", name: str) -> None:
        self._lab = lab
        self.name = name
        self._shell: Optional[Shell] = None

    def __repr__(self) -> str:
        return f"<Node {self.name} of {self._lab.name}>"

    @property
    def info(self) -> dict[str, Any]:
        """The node as resolved: kind, interfaces (addresses, MACs), routes."""
        for n in self._lab._c.call("nodes", lab=self._lab.name):
            if n["name"] == self.name:
                return n
        raise EmuctlError(1000, "not-found", f"lab {self._lab.name} has no node {self.name!r}")

    def IP(self) -> Optional[str]:
        """The node's first IPv4 address (else IPv6), without prefix length."""
        v6 = None
        for ifc in self.info.get("interfaces") or []:
            for a in ifc.get("addrs") or []:
                addr = a.split("/")[0]
                if ":" not in addr:
                    return addr
                v6 = v6 or addr
        return v6

    @property
    def shell(self) -> Shell:
        """The node's persistent shell, started on first use."""
        if self._shell is None:
            self._shell = Shell(self._lab, self.name)
        return self._shell

    def cmd(self, line: str, timeout: Optional[float] = None) -> str:
        """Run a command line in the node's persistent shell; return its output."""
        return self.shell.cmd(line, timeout)

    def exec(self, argv: list[str], stdin: Optional[str] = None,
             timeout: Optional[float] = None) -> subprocess.CompletedProcess:
        """Run argv in the node (never through a shell) and wait for it."""
        r = self._lab._c.call("exec", lab=self._lab.name, node=self.name, argv=list(argv),
                              stdin=stdin, timeout_s=timeout)
        return subprocess.CompletedProcess(argv, r["code"], r["stdout"], r["stderr"])

    def popen(self, argv: list[str], **kwargs: Any) -> subprocess.Popen:
        """Start argv in the node as a subprocess.Popen (``emuctl exec``)."""
        return subprocess.Popen([self._lab._emuctl, "exec", "-l", self._lab.name, self.name, "--", *argv], **kwargs)


class Link:
    """A link of a running lab, named as ``emuctl link`` names it."""

    def __init__(self, lab: "Lab", ref: str) -> None:
        self._lab = lab
        self.ref = ref

    def __repr__(self) -> str:
        return f"<Link {self.ref} of {self._lab.name}>"

    @property
    def info(self) -> dict[str, Any]:
        """The link as ``link show`` shows it."""
        for li in self._lab.links:
            if self.ref in (str(li["index"]), li["a"], li["b"]) or self.ref in _pairs(li):
                return li
        raise EmuctlError(1000, "not-found", f"lab {self._lab.name} has no link {self.ref!r}")

    def set(self, dir: Optional[str] = None, **params: Any) -> dict[str, Any]:
        """Change the running link: rate, delay, jitter, loss, duplicate, corrupt, queue.

        Values in the topology's syntax ("10mbit", "5ms", "1%", "codel ecn");
        numbers are taken as Mbit/s (rate), ms (delay, jitter), % (loss) and
        packets (queue), as Mininet's TCLink takes them.
        """
        return self._lab._c.call("link.set", lab=self._lab.name, link=self.ref, dir=dir,
                                 set={k: _text(k, v) for k, v in params.items()})

    def up(self) -> None:
        """Bring both ends up."""
        self._lab._c.call("link.up", lab=self._lab.name, link=self.ref)

    def down(self) -> None:
        """Take both ends down (a cable pulled)."""
        self._lab._c.call("link.down", lab=self._lab.name, link=self.ref)

    def remove(self) -> None:
        """Remove the link from the lab."""
        self._lab._c.call("link.del", lab=self._lab.name, link=self.ref)


def _pairs(li: dict[str, Any]) -> list[str]:
    a, b = li["a"].split(":")[0], li["b"].split(":")[0]
    return [f"{a}-{b}", f"{b}-{a}", f"{a}:{b}", f"{b}:{a}"]


_UNITS = {"rate": "mbit", "delay": "ms", "jitter": "ms", "loss": "%", "duplicate": "%", "corrupt": "%"}


# add_link's trace keys: emuctl link add's (api link.add's keys)
_TRACE_KEYS = ("trace", "uplink_trace", "downlink_trace", "trace_loop", "trace_offset", "mahimahi")


def _text(key: str, v: Any) -> str:
    """A link parameter in the topology's syntax: numbers get Mininet's units."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return f"{v:g}{_UNITS.get(key, '')}"
    return str(v)


class WiFi:
    """The lab's Wi-Fi medium."""

    def __init__(self, lab: "Lab") -> None:
        self._lab = lab

    def show(self) -> dict[str, Any]:
        """Every Wi-Fi node's state and the medium's view (positions, SNR, rates, airtime)."""
        return self._lab._c.call("wifi.show", lab=self._lab.name)

    def move(self, node: str, x: float, y: float, z: float = 0.0) -> None:
        """Move an AP or station in the medium (meters)."""
        self._lab._c.call("wifi.move", lab=self._lab.name, node=node, pos=[x, y, z])

    def pair(self, a: str, b: str, snr_db: Optional[float] = None, loss: Optional[float] = None) -> None:
        """Fix the SNR or loss between two Wi-Fi nodes; neither: back to the medium's."""
        self._lab._c.call("wifi.pair", lab=self._lab.name, a=a, b=b, snr_db=snr_db, loss=loss)

    def mobility(self) -> list[dict[str, Any]]:
        """The nodes that move on their ``mobility:`` paths: path, state,
        position and how often the supervisor placed each (``rate_hz``)."""
        return self._lab._c.call("wifi.mobility", lab=self._lab.name) or []

    def start_mobility(self, node: str) -> None:
        """Start a node's path over from its beginning (its t0 is then now)."""
        self._lab._c.call("wifi.mobility", lab=self._lab.name, action="start", node=node)

    def stop_mobility(self, node: str = "") -> None:
        """Leave a moving node where it is ("" every moving node)."""
        self._lab._c.call("wifi.mobility", lab=self._lab.name, action="stop", node=node)


class Lab:
    """A running lab: build one with :meth:`up`, find one with :meth:`open`.

    As a context manager the lab is taken down at the end of the block.
    """

    def __init__(self, client: Client, name: str, emuctl: str) -> None:
        self._c = client
        self._emuctl = emuctl
        self.name = name
        self.wifi = WiFi(self)
        self._nodes: dict[str, Node] = {}

    @classmethod
    def up(cls, topology: Topology, name: Optional[str] = None, emuctl: Optional[str] = None,
           allow_external: bool = False) -> "Lab":
        """Build a lab from a topology file's path, YAML text, a dict, or a
        generator such as ``"tree,2,2"``, and return it once every link is up.
        ``allow_external`` is ``up --allow-external``: real adapters, and
        nodes of kind root (the machine's own namespace)."""
        exe = emuctl or find_emuctl()
        c = Client(exe)
        try:
            params: dict[str, Any] = {"name": name}
            if allow_external:
                params["allow_external"] = True
            if isinstance(topology, dict):
                params["document"] = json.dumps(topology)  # JSON is YAML
            elif isinstance(topology, os.PathLike):
                params["file"] = os.fspath(topology)
            elif "\n" in topology:
                params["document"] = topology
            elif Path(topology).suffix in (".yaml", ".yml") or Path(topology).is_file():
                params["file"] = topology
            else:
                params["generator"] = topology
            r = c.call("up", **params)
        except BaseException:
            c.close()
            raise
        return cls(c, r["lab"], exe)

    @classmethod
    def open(cls, name: str, emuctl: Optional[str] = None) -> "Lab":
        """A lab that runs already (``emuctl up`` or another program built it)."""
        exe = emuctl or find_emuctl()
        c = Client(exe)
        try:
            r = c.call("open", lab=name)
        except BaseException:
            c.close()
            raise
        return cls(c, r["lab"], exe)

    def __enter__(self) -> "Lab":
        return self

    def __exit__(self, *exc: object) -> None:
        try:
            self.down()
        finally:
            self.close()

    def __repr__(self) -> str:
        return f"<Lab {self.name}>"

    def close(self) -> None:
        """Close the connection; the lab keeps running."""
        self._c.close()

    def down(self) -> None:
        """Take the lab down (idempotent)."""
        self._c.call("down", lab=self.name)

    # what the lab holds

    @property
    def nodes(self) -> list[str]:
        """The node names, in declaration order."""
        return [n["name"] for n in self._c.call("nodes", lab=self.name)]

    def node(self, name: str) -> Node:
        """A node by name."""
        if name not in self._nodes:
            if name not in self.nodes:
                raise EmuctlError(1000, "not-found", f"lab {self.name} has no node {name!r} (nodes: {', '.join(self.nodes)})")
            self._nodes[name] = Node(self, name)
        return self._nodes[name]

    def __getitem__(self, name: str) -> Node:
        return self.node(name)

    @property
    def links(self) -> list[dict[str, Any]]:
        """Every link as ``emuctl link show --json`` shows it."""
        return list(self._c.call("links", lab=self.name))

    def link(self, a: str, b: Optional[str] = None) -> Link:
        """A link by reference: its index, an end, or its two nodes (``link("h1", "s1")``)."""
        return Link(self, a if b is None else f"{a}-{b}")

    def topology(self) -> str:
        """The lab as it stands, as a topology file ``emuctl up`` accepts."""
        return self._c.call("topology", lab=self.name)["yaml"]

    # changes while it runs

    def add_host(self, name: str, **keys: Any) -> Node:
        """Add a host (no link yet); ``keys`` are more of the node's keys
        as the topology file writes them (``sysctls={...}``, ``tcp={...}``)."""
        self._c.call("node.add", lab=self.name, name=name, kind="host", node=keys or None)
        return self.node(name)

    def add_router(self, name: str, **keys: Any) -> Node:
        """Add a router (IP forwarding on); ``keys`` as for :meth:`add_host`."""
        self._c.call("node.add", lab=self.name, name=name, kind="router", node=keys or None)
        return self.node(name)

    def add_switch(self, name: str, type: Optional[str] = None, names: Optional[str] = None, **keys: Any) -> Node:
        """Add a switch (linux-bridge by default); an ovs switch's device
        names on the host are unique ones unless ``names="topology"``;
        ``keys`` are more of its keys, the file's (``fail_mode="secure"``,
        ``protocols=["OpenFlow13"]``)."""
        self._c.call("node.add", lab=self.name, name=name, kind="switch", switch_type=type, names=names,
                     node=keys or None)
        return self.node(name)

    def add_station(self, name: str, ap: Optional[str] = None,
                    position: Optional[Sequence[float]] = None, **keys: Any) -> Node:
        """Add a Wi-Fi station that joins access point ``ap`` (default: the
        lab's only one) at ``position`` (metres); ``keys`` are more of its
        keys, the file's (``wifi={"rate": "54mbit"}``, ``mobility={...}``).
        Stations join running labs on both Wi-Fi backends (the change
        returns once the station is associated); an ad hoc or mesh member
        joins its network (``wifi={"adhoc": "near"}``, ``ap`` left out); a
        roaming or multi-link one is refused, the API's error saying why."""
        pos = None
        if position is not None:
            pos = [float(v) for v in position] + [0.0] * (3 - len(position))
        self._c.call("node.add", lab=self.name, name=name, kind="station", ap=ap, position=pos, node=keys or None)
        return self.node(name)

    def add_access_point(self, name: str, position: Optional[Sequence[float]] = None, **keys: Any) -> Node:
        """Add a Wi-Fi access point at ``position`` (metres): a bridge
        between its radio and the links :meth:`add_link` gives it;
        ``keys`` are more of its keys, the file's
        (``wifi={"ssid": "two", "mode": "g", "channel": 11}``). Access
        points join running labs on both Wi-Fi backends (on
        mac80211_hwsim the call returns once its BSS is up); one is removed
        (:meth:`remove_node`) once no station uses it. A multi-link one,
        or one a roaming station's network would gain, is refused, the
        API's error saying why."""
        pos = None
        if position is not None:
            pos = [float(v) for v in position] + [0.0] * (3 - len(position))
        self._c.call("node.add", lab=self.name, name=name, kind="ap", position=pos, node=keys or None)
        return self.node(name)

    def add_link(self, a: str, b: str, ip: Optional[dict[str, Union[str, list[str]]]] = None,
                 mtu: Optional[int] = None, name: Optional[str] = None, **params: Any) -> Link:
        """Join two nodes; params shape it (rate, delay, jitter, loss, queue, ...;
        numbers in Mininet's units) or replay a mahimahi trace on the link
        engine from when the link comes up (``trace="12mbps.trace"``,
        ``uplink_trace``/``downlink_trace`` for a->b/b->a alone,
        ``trace_loop=False``, ``trace_offset="30s"``, or ``mahimahi="mm-delay
        20 mm-link up.trace down.trace"``; a relative trace path is taken
        from the working directory when it is there); addresses from the
        lab's plan unless ``ip`` gives them."""
        link = {k: _text(k, v) for k, v in params.items() if k not in _TRACE_KEYS} or None
        keys = {k: _text(k, v) for k, v in params.items() if k in _TRACE_KEYS} or None
        for k in ("trace", "uplink_trace", "downlink_trace"):
            if keys and k in keys and os.path.exists(keys[k]):
                keys[k] = os.path.abspath(keys[k])
        ips = {k: [v] if isinstance(v, str) else list(v) for k, v in (ip or {}).items()} or None
        r = self._c.call("link.add", lab=self.name, a=a, b=b, link=link, keys=keys, ip=ips, mtu=mtu, name=name)
        return Link(self, str(r["index"]))

    def remove_node(self, name: str) -> None:
        """Remove a node and every link that ends on it."""
        self._c.call("node.del", lab=self.name, name=name)
        self._nodes.pop(name, None)

    def remove_link(self, a: str, b: Optional[str] = None) -> None:
        """Remove a link (by reference, or its two nodes)."""
        self.link(a, b).remove()

    # measuring

    def ping(self, a: str, b: str, count: int = 1) -> list[float]:
        """Round-trip times (ms) of count pings from a to b."""
        return list(self._c.call("ping", lab=self.name, **{"from": a, "to": b, "count": count})["rtt_ms"])

    def pingall(self, tries: int = 1) -> dict[str, Any]:
        """Every host and router pings every other; results and dropped_pct."""
        return self._c.call("pingall", lab=self.name, tries=tries)

    def traffic(self, flows: Optional[list[dict[str, Any]]] = None, **flow: Any) -> Result:
        """Run flows (a flows file's keys: from, to, proto, cc, duration, parallel, ...).

        ``lab.traffic(from_="h1", to="h2", duration="5s")`` runs one flow.
        """
        if flows is None:
            flows = [{k.rstrip("_"): v for k, v in flow.items()}]
        return Result(self._c.call("traffic", lab=self.name, flows=flows))

    def verify(self) -> list[dict[str, Any]]:
        """Measure every shaped link both ways against its parameters."""
        return list(self._c.call("verify", lab=self.name) or [])

    def verify_built(self) -> list[dict[str, Any]]:
        """Read every node back and compare it with the lab's topology.

        No traffic: namespaces, interfaces, MACs, MTUs, addresses, each
        switch's bridge and ports, OVS bridges and ports and the kernel
        settings a node's kind asks for, as ``emuctl verify --built``.
        Each node's ``problems`` is empty when it is as the topology says.
        """
        return list(self._c.call("verify.built", lab=self.name) or [])

    def events(self, interval_ms: int = 500, counters: bool = True) -> Iterator[dict[str, Any]]:
        """The lab's events as they come: changes, link states, counters."""
        sub = self._c.call("events.subscribe", lab=self.name, interval_ms=interval_ms, counters=counters)["subscription"]
        q = self._c.notifications("event")
        try:
            while True:
                ev = q.get()
                if ev.get("subscription") == sub:
                    yield ev
                    if ev.get("type") == "lab-down":
                        return
        finally:
            try:
                self._c.call("events.unsubscribe", subscription=sub)
            except EmuctlError:
                pass

    def test(self, suite: str, quick: bool = False, **options: Any) -> dict[str, Any]:
        """Run an experiment suite as ``emuctl test`` does (it builds its own labs)."""
        return self._c.call("test", suite=suite, quick=quick, **options)
