"""Mininet-WiFi's link classes (``mn_wifi.link``).

:class:`wmediumd` names the medium (emuctl's, always on); a station and an
access point joined by ``net.addLink(sta, ap)`` are an association, with
``bw``/``delay``/``loss``/``jitter`` shaping the station's wireless hop
as emuctl's ``wifi: {link: ...}`` does. Ad hoc (IBSS), mesh (802.11s),
Wi-Fi Direct, 4-address, 802.11p and physical links are refused, saying
so: emuctl's medium builds infrastructure networks (an access point and
its stations).
"""

from __future__ import annotations

from typing import Any

from mininet._emu import CompatError
from mininet.link import Intf, Link, TCLink


class wmediumd:
    """The medium between radios: emuctl's (always on in a Wi-Fi lab)."""


class WirelessLink:
    """Mininet-WiFi's default wireless link class (emuctl's medium carries it)."""


TCWirelessLink = WirelessLink
TCLinkWireless = WirelessLink


class _Refused:
    """A link kind emuctl does not build."""

    why = ""

    def __init__(self, node: Any = None, *args: Any, **params: Any) -> None:
        name = getattr(node, "name", node)
        raise CompatError(f"addLink({name}, cls={type(self).__name__}): {self.why}")


class adhoc(_Refused):
    """Ad hoc (IBSS) links."""

    why = ("ad hoc (IBSS) networks are not built: emuctl's medium carries infrastructure networks (an access "
           "point and its stations); join the stations to an access point")


class mesh(_Refused):
    """802.11s mesh links."""

    why = ("802.11s mesh networks are not built: emuctl's medium carries infrastructure networks (an access "
           "point and its stations); join the stations to an access point")


class ITSLink(_Refused):
    """802.11p (vehicular) links."""

    why = "802.11p (OCB) links are not built by emuctl"


class WifiDirectLink(_Refused):
    """Wi-Fi Direct (P2P) links."""

    why = "Wi-Fi Direct (P2P) groups are not built by emuctl"


class physicalMesh(_Refused):
    """A mesh on a real wireless card."""

    why = "emuctl's radios are emulated; a real card is not used"


class _4address(_Refused):
    """4-address (WDS) links."""

    why = "4-address (WDS) links are not built by emuctl"


class PhysicalWifiDirectLink(_Refused):
    """Wi-Fi Direct on a real card."""

    why = "emuctl's radios are emulated; a real card is not used"


__all__ = ["Intf", "Link", "TCLink", "wmediumd", "WirelessLink", "TCWirelessLink", "TCLinkWireless", "adhoc",
           "mesh", "ITSLink", "WifiDirectLink", "physicalMesh", "PhysicalWifiDirectLink", "REFUSED"]

REFUSED = (adhoc, mesh, ITSLink, WifiDirectLink, physicalMesh, _4address, PhysicalWifiDirectLink)
