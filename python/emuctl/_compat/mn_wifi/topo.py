"""Mininet-WiFi's topology templates (``mn_wifi.topo``): Mininet's
:class:`~mininet.topo.Topo` with stations and access points."""

from __future__ import annotations

from typing import Any

from mininet.topo import Topo as _Topo


class Topo(_Topo):
    """A topology of hosts, switches, stations and access points;
    subclasses override :meth:`build`."""

    def addStation(self, name: str, **opts: Any) -> str:
        """Add a station."""
        return self.addNode(name, isStation=True, **opts)

    def addAccessPoint(self, name: str, **opts: Any) -> str:
        """Add an access point."""
        return self.addNode(name, isAP=True, isSwitch=True, **opts)

    def isStation(self, n: str) -> bool:
        """Whether n was added as a station."""
        return bool(self.g.node[n].get("isStation", False))

    def isAP(self, n: str) -> bool:
        """Whether n was added as an access point."""
        return bool(self.g.node[n].get("isAP", False))

    def stations(self, sort: bool = True) -> list[str]:
        """Station names."""
        return [n for n in self.nodes(sort) if self.isStation(n)]

    def aps(self, sort: bool = True) -> list[str]:
        """Access point names."""
        return [n for n in self.nodes(sort) if self.isAP(n)]

    def hosts(self, sort: bool = True) -> list[str]:
        """Host names (stations are not hosts here)."""
        return [n for n in self.nodes(sort) if not self.isSwitch(n) and not self.isStation(n)]

    def switches(self, sort: bool = True) -> list[str]:
        """Switch names (access points are not switches here)."""
        return [n for n in self.nodes(sort) if self.isSwitch(n) and not self.isAP(n)]
