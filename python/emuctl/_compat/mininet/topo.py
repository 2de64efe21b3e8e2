"""Mininet's topology templates (``mininet.topo``): Topo and the simple ones."""

from __future__ import annotations

from typing import Any, Iterator, Optional

from mininet.util import irange, natural, naturalSeq


class MultiGraph:
    """A small multigraph: nodes with attributes, parallel edges with keys."""

    def __init__(self) -> None:
        self.node: dict[str, dict[str, Any]] = {}
        self.edge: dict[str, dict[str, dict[int, dict[str, Any]]]] = {}

    def add_node(self, node: str, attr_dict: Optional[dict[str, Any]] = None, **attrs: Any) -> None:
        """Add a node with attributes."""
        a = dict(attr_dict or {})
        a.update(attrs)
        self.node[node] = a

    def add_edge(self, src: str, dst: str, key: Optional[int] = None,
                 attr_dict: Optional[dict[str, Any]] = None, **attrs: Any) -> int:
        """Add an edge (src, dst) and return its key."""
        a = dict(attr_dict or {})
        a.update(attrs)
        self.node.setdefault(src, {})
        self.node.setdefault(dst, {})
        self.edge.setdefault(src, {})
        self.edge.setdefault(dst, {})
        self.edge[src].setdefault(dst, {})
        entry = self.edge[dst][src] = self.edge[src][dst]
        if key is None:
            keys = [k for k in entry if isinstance(k, int)]
            key = max(keys) + 1 if keys else 0
        entry[key] = a
        return key

    def nodes(self, data: bool = False) -> list[Any]:
        """The nodes (with their attributes when data)."""
        return list(self.node.items()) if data else list(self.node)

    def edges_iter(self, data: bool = False, keys: bool = False) -> Iterator[Any]:
        """Each edge once, as (src, dst[, key][, attrs])."""
        for src, entry in self.edge.items():
            for dst, es in entry.items():
                if src > dst:
                    continue
                for k, attrs in es.items():
                    if keys:
                        yield (src, dst, k, attrs) if data else (src, dst, k)
                    else:
                        yield (src, dst, attrs) if data else (src, dst)

    def edges(self, data: bool = False, keys: bool = False) -> list[Any]:
        """The edges as a list."""
        return list(self.edges_iter(data=data, keys=keys))

    def __getitem__(self, node: str) -> dict[str, Any]:
        return self.edge.get(node, {})

    def convertTo(self, cls: Any, data: bool = False, keys: bool = False) -> Any:
        """The graph as another graph class (e.g. networkx's)."""
        g = cls()
        g.add_nodes_from(self.nodes(data=data))
        g.add_edges_from(self.edges(data=(data or keys), keys=keys))
        return g


class Topo:
    """A topology template: nodes and links with their options, built by
    :class:`mininet.net.Mininet`. Subclasses override :meth:`build`."""

    def __init__(self, *args: Any, **params: Any) -> None:
        self.g = MultiGraph()
        self.hopts = params.pop("hopts", {})
        self.sopts = params.pop("sopts", {})
        self.lopts = params.pop("lopts", {})
        self.ports: dict[str, dict[int, tuple[str, int]]] = {}
        self.build(*args, **params)

    def build(self, *args: Any, **params: Any) -> None:
        """Override to add nodes and links."""

    def addNode(self, name: str, **opts: Any) -> str:
        """Add a node with options; return its name."""
        self.g.add_node(name, **opts)
        return name

    def addHost(self, name: str, **opts: Any) -> str:
        """Add a host (with hopts as defaults)."""
        if not opts and self.hopts:
            opts = self.hopts
        return self.addNode(name, **opts)

    def addSwitch(self, name: str, **opts: Any) -> str:
        """Add a switch (with sopts as defaults)."""
        if not opts and self.sopts:
            opts = self.sopts
        return self.addNode(name, isSwitch=True, **opts)

    def addLink(self, node1: str, node2: str, port1: Optional[int] = None, port2: Optional[int] = None,
                key: Optional[int] = None, **opts: Any) -> int:
        """Add a link (lopts as defaults); return its key."""
        if not opts and self.lopts:
            opts = self.lopts
        port1, port2 = self.addPort(node1, node2, port1, port2)
        opts = dict(opts)
        opts.update(node1=node1, node2=node2, port1=port1, port2=port2)
        return self.g.add_edge(node1, node2, key, opts)

    def nodes(self, sort: bool = True) -> list[str]:
        """Node names (in natural order when sort)."""
        ns = self.g.nodes()
        return sorted(ns, key=natural) if sort else ns

    def isSwitch(self, n: str) -> bool:
        """Whether n was added as a switch."""
        return bool(self.g.node[n].get("isSwitch", False))

    def switches(self, sort: bool = True) -> list[str]:
        """Switch names."""
        return [n for n in self.nodes(sort) if self.isSwitch(n)]

    def hosts(self, sort: bool = True) -> list[str]:
        """Host names."""
        return [n for n in self.nodes(sort) if not self.isSwitch(n)]

    def iterLinks(self, withKeys: bool = False, withInfo: bool = False) -> Iterator[Any]:
        """Each link as (src, dst[, key][, info]) in the order added."""
        for _src, _dst, key, info in self.g.edges_iter(data=True, keys=True):
            node1, node2 = info["node1"], info["node2"]
            if withKeys:
                yield (node1, node2, key, info) if withInfo else (node1, node2, key)
            else:
                yield (node1, node2, info) if withInfo else (node1, node2)

    def links(self, sort: bool = False, withKeys: bool = False, withInfo: bool = False) -> list[Any]:
        """The links, optionally sorted naturally."""
        links = list(self.iterLinks(withKeys, withInfo))
        if not sort:
            return links
        tupleSize = 3 if withKeys else 2
        return sorted(links, key=lambda l: naturalSeq(l[:tupleSize]))

    def addPort(self, src: str, dst: str, sport: Optional[int] = None, dport: Optional[int] = None) -> tuple[int, int]:
        """Number the ports of a new link (switch ports from 1, others from 0)."""
        ports = self.ports
        ports.setdefault(src, {})
        ports.setdefault(dst, {})
        if sport is None:
            src_base = 1 if self.isSwitch(src) else 0
            sport = len(ports[src]) + src_base
        if dport is None:
            dst_base = 1 if self.isSwitch(dst) else 0
            dport = len(ports[dst]) + dst_base
        ports[src][sport] = (dst, dport)
        ports[dst][dport] = (src, sport)
        return sport, dport

    def port(self, src: str, dst: str) -> Any:
        """The port numbers of the link(s) between src and dst."""
        found = [(p, d[1]) for p, d in self.ports.get(src, {}).items() if d[0] == dst]
        if not found:
            raise KeyError(f"no link between {src} and {dst}")
        return found[0] if len(found) == 1 else found

    def _linkEntry(self, src: str, dst: str, key: Optional[int] = None) -> tuple[dict[int, Any], int]:
        entry = self.g.edge[src][dst]
        if key is None:
            key = min(entry)
        return entry, key

    def linkInfo(self, src: str, dst: str, key: Optional[int] = None) -> dict[str, Any]:
        """The options of a link."""
        entry, key = self._linkEntry(src, dst, key)
        return entry[key]

    def setlinkInfo(self, src: str, dst: str, info: dict[str, Any], key: Optional[int] = None) -> None:
        """Replace a link's options."""
        entry, key = self._linkEntry(src, dst, key)
        entry[key] = info

    def nodeInfo(self, name: str) -> dict[str, Any]:
        """The options of a node."""
        return self.g.node[name]

    def setNodeInfo(self, name: str, info: dict[str, Any]) -> None:
        """Replace a node's options."""
        self.g.node[name] = dict(info)

    def convertTo(self, cls: Any, data: bool = False, keys: bool = False) -> Any:
        """The topology's graph as another graph class."""
        return self.g.convertTo(cls, data=data, keys=keys)

    @staticmethod
    def sorted(items: list[Any]) -> list[Any]:
        """items in natural order."""
        return sorted(items, key=natural)


class SingleSwitchTopo(Topo):
    """k hosts on one switch."""

    def build(self, k: int = 2, **_opts: Any) -> None:
        self.k = k
        switch = self.addSwitch("s1")
        for h in irange(1, k):
            host = self.addHost("h%s" % h)
            self.addLink(host, switch)


class SingleSwitchReversedTopo(Topo):
    """k hosts on one switch, ports in reverse order."""

    def build(self, k: int = 2) -> None:
        self.k = k
        switch = self.addSwitch("s1")
        for h in irange(1, k):
            host = self.addHost("h%s" % h)
            self.addLink(host, switch, port1=0, port2=(k - h + 1))


class MinimalTopo(SingleSwitchTopo):
    """Two hosts on one switch."""

    def build(self, **_opts: Any) -> None:
        super().build(k=2)


class LinearTopo(Topo):
    """k switches in a line, n hosts on each."""

    def build(self, k: int = 2, n: int = 1, **_opts: Any) -> None:
        self.k = k
        self.n = n
        if n == 1:
            def genHostName(i: int, _j: int) -> str:
                return "h%s" % i
        else:
            def genHostName(i: int, j: int) -> str:
                return "h%ss%d" % (j, i)
        lastSwitch = None
        for i in irange(1, k):
            switch = self.addSwitch("s%s" % i)
            for j in irange(1, n):
                host = self.addHost(genHostName(i, j))
                self.addLink(host, switch)
            if lastSwitch:
                self.addLink(switch, lastSwitch)
            lastSwitch = switch
