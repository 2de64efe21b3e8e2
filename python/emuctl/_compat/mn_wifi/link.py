"""Mininet-WiFi's link classes (``mn_wifi.link``).

:class:`wmediumd` names the medium (emuctl's, always on); a station and an
access point joined by ``net.addLink(sta, ap)`` are an association, with
``bw``/``delay``/``loss``/``jitter`` shaping the station's wireless hop
as emuctl's ``wifi: {link: ...}`` does. ``net.addLink(sta, cls=adhoc,
ssid=..., mode=..., channel=...)`` joins the station to an ad hoc (IBSS)
network, and ``cls=mesh`` to an 802.11s mesh (mac80211_hwsim: the
kernel's mesh, which forwards). Wi-Fi Direct, 4-address, 802.11p and
physical links are refused, saying why.
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


class adhoc:
    """Ad hoc (IBSS): ``net.addLink(sta, cls=adhoc, intf='sta1-wlan0',
    ssid='adhocNet', mode='g', channel=1, ht_cap='')`` makes the station a
    member of the ad hoc network of that SSID (emuctl's ``wifi: {adhoc:
    ...}``; the kernel's IBSS on mac80211_hwsim, else emuctl's engine
    medium): members send to each other directly, as the medium lets them
    hear each other, and forward nothing. The first member's mode, channel
    and ``ht_cap`` make the network."""


class mesh:
    """802.11s mesh: ``net.addLink(sta, cls=mesh, intf='sta1-wlan0',
    ssid='meshNet', channel=5, ht_cap='HT40+')`` makes the station a mesh
    point of the mesh of that mesh ID (emuctl's ``wifi: {mesh: ...}``):
    mac80211's mesh on mac80211_hwsim radios, which peers with the mesh
    points it hears and forwards for the others (HWMP). It needs
    mac80211_hwsim: on the engine backend a mesh is refused, saying why."""


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

REFUSED = (ITSLink, WifiDirectLink, physicalMesh, _4address, PhysicalWifiDirectLink)
