"""Mininet's topology library (``mininet.topolib``): trees and tori."""

from __future__ import annotations

from typing import Any

from mininet.net import Mininet
from mininet.node import OVSKernelSwitch
from mininet.topo import Topo
from mininet.util import irange


class TreeTopo(Topo):
    """A tree of depth switches levels, each with fanout children; hosts at the leaves."""

    def build(self, depth: int = 1, fanout: int = 2) -> None:
        self.hostNum = 1
        self.switchNum = 1
        self.addTree(depth, fanout)

    def addTree(self, depth: int, fanout: int) -> str:
        """Add a subtree; return its root."""
        isSwitch = depth > 0
        if isSwitch:
            node = self.addSwitch("s%s" % self.switchNum)
            self.switchNum += 1
            for _ in range(fanout):
                child = self.addTree(depth - 1, fanout)
                self.addLink(node, child)
        else:
            node = self.addHost("h%s" % self.hostNum)
            self.hostNum += 1
        return node


def TreeNet(depth: int = 1, fanout: int = 2, **kwargs: Any) -> Mininet:
    """A Mininet network on a TreeTopo."""
    topo = TreeTopo(depth, fanout)
    return Mininet(topo, **kwargs)


class TorusTopo(Topo):
    """An x × y torus of switches, n hosts on each (needs STP to avoid loops)."""

    def build(self, x: int, y: int, n: int = 1) -> None:
        if x < 3 or y < 3:
            raise Exception("Please use 3x3 or greater for compatibility with 2.1")
        if n == 1:
            def genHostName(loc: str, _k: int) -> str:
                return "h%s" % loc
        else:
            def genHostName(loc: str, k: int) -> str:
                return "h%sx%d" % (loc, k)
        hosts, switches, dpid = {}, {}, 0
        for i in range(0, x):
            for j in range(0, y):
                loc = "%dx%d" % (i + 1, j + 1)
                dpid = ((i + 1) << 8) | (j + 1)
                switch = switches[i, j] = self.addSwitch("s" + loc, dpid="%x" % dpid)
                for k in range(0, n):
                    host = hosts[i, j, k] = self.addHost(genHostName(loc, k + 1))
                    self.addLink(host, switch)
        for i in range(0, x):
            for j in range(0, y):
                sw1 = switches[i, j]
                sw2 = switches[i, (j + 1) % y]
                sw3 = switches[(i + 1) % x, j]
                self.addLink(sw1, sw2)
                self.addLink(sw1, sw3)


__all__ = ["TreeTopo", "TreeNet", "TorusTopo", "OVSKernelSwitch", "irange"]
