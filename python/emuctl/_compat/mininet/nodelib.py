"""Mininet's node library (``mininet.nodelib``): LinuxBridge and NAT."""

from __future__ import annotations

from typing import Any

from mininet._emu import CompatError
from mininet.node import Node, Switch


class LinuxBridge(Switch):
    """A Linux bridge (emuctl's switches are Linux bridges)."""

    def __init__(self, name: str, stp: bool = False, prio: Any = None, **kwargs: Any) -> None:
        if stp:
            raise CompatError(f"LinuxBridge({name}, stp=True): give the lab's switch stp in a topology file; "
                              "the layer builds switches without spanning tree")
        self.stp, self.prio = stp, prio
        super().__init__(name, **kwargs)


class NAT(Node):
    """A node that masquerades a subnet behind its first interface (``inNamespace=True`` only:
    emuctl labs stay off the host's network)."""

    def __init__(self, name: str, subnet: str = "10.0/8", localIntf: Any = None, flush: bool = False,
                 inNamespace: bool = True, **params: Any) -> None:
        if not inNamespace:
            raise CompatError(f"NAT({name}, inNamespace=False): emuctl labs stay off the host's network; "
                              "a NAT between two lab networks (inNamespace=True) works")
        super().__init__(name, inNamespace=True, **params)
        self.subnet, self.localIntf, self.flush = subnet, localIntf, flush

    def config(self, **params: Any) -> dict[str, Any]:
        """Forward, and masquerade what leaves the first interface from inside (the other interfaces)."""
        r = super().config(**params)
        out = self.defaultIntf()
        self.cmd("sysctl -q net.ipv4.ip_forward=1")
        self.cmd("iptables -t nat -A POSTROUTING -o %s -s %s -j MASQUERADE" % (out, self.subnet))
        return r

    def terminate(self) -> None:
        """The rules go with the node's namespace."""
        super().terminate()
