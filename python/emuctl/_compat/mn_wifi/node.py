"""Mininet-WiFi's nodes (``mn_wifi.node``) as emuctl Wi-Fi nodes.

A :class:`Station` is an emuctl ``kind: station`` (a host with a wireless
interface ``<name>-wlan0``), an :class:`AP` (and ``OVSKernelAP``,
``OVSAP``, ``UserAP``) an emuctl ``kind: ap``: a bridging access point,
a Linux bridge that learns and joins its stations to its wired links (an
Open vSwitch bridge under a learning controller forwards the same way;
OpenFlow rules of the script's own are not offered). Their radio
parameters are Mininet-WiFi's, with Mininet-WiFi's defaults (802.11g,
channel 1, 14 dBm, 5 dBi antennas), carried into emuctl's medium: a link's
received power there is tx power + both antennas' gains − path loss, as
in Mininet-WiFi's propagation models.
"""

from __future__ import annotations

import math
from typing import Any, Optional

from mininet._emu import CompatError
from mininet.link import Intf
from mininet.log import warn
from mininet.node import Host, Switch

# Mininet-WiFi's defaults for a wireless interface (mn_wifi.link)
DEFAULT_TXPOWER = 14      # dBm
DEFAULT_GAIN = 5.0        # dBi
DEFAULT_MODE = "g"
MODES = ("a", "b", "g", "n", "ac", "ax", "be")


def parsePosition(pos: Any, where: str) -> Optional[list[float]]:
    """'x,y,z' (or a list) as three floats; None for None."""
    if pos is None:
        return None
    parts = pos.split(",") if isinstance(pos, str) else list(pos)
    try:
        xyz = [float(p) for p in parts]
    except (TypeError, ValueError):
        raise CompatError(f"{where}: position={pos!r} is not 'x,y,z' in metres") from None
    if not 2 <= len(xyz) <= 3 or any(math.isnan(v) or abs(v) > 100e3 for v in xyz):
        raise CompatError(f"{where}: position={pos!r}: give 'x,y' or 'x,y,z' in metres, within 100 km")
    return (xyz + [0.0])[:3]


def _number(v: Any, what: str, where: str) -> float:
    try:
        return float(v)
    except (TypeError, ValueError):
        raise CompatError(f"{where}: {what}={v!r} is not a number") from None


def _metres(v: Any, where: str) -> float:
    r = _number(v, "range", where)
    if not 0 < r <= 100e3:
        raise CompatError(f"{where}: range={v!r}: metres above 0, up to 100 km")
    return r


def _security(encrypt: Any, passwd: Any, where: str) -> tuple[str, Optional[str]]:
    """Mininet-WiFi's encrypt/passwd as emuctl's security and passphrase."""
    enc = (encrypt or "").lower()
    if isinstance(encrypt, (list, tuple)):
        raise CompatError(f"{where}: encrypt={encrypt!r}: one wireless interface, one security")
    if enc in ("", "none", "open"):
        if passwd:
            return "wpa2", str(passwd)  # Mininet-WiFi: a passphrase alone is WPA2
        return "open", None
    if enc in ("wpa2", "wpa3"):
        if not passwd or not 8 <= len(str(passwd)) <= 63:
            raise CompatError(f"{where}: encrypt={encrypt!r} needs passwd= of 8 to 63 characters")
        return enc, str(passwd)
    raise CompatError(f"{where}: encrypt={encrypt!r}: emuctl's access points are open, wpa2 (WPA2-PSK) or "
                      "wpa3 (SAE); WEP, WPA and 802.1X are not built")


# parameters of Mininet-WiFi emuctl does not build, and why
_REFUSED = {
    "nvif": "virtual wireless interfaces are not built: one wireless interface per station",
    "ieee80211w": "management frame protection is WPA3's here (encrypt='wpa3', where emuctl requires it); "
                  "not modelled otherwise",
    "client_isolation": "client isolation is not built: an emuctl access point relays between its stations, "
                        "as mac80211 does without ap_isolate",
    "wlans": "one wireless interface per node (wlans=1)",
}


def _refuse(params: dict[str, Any], where: str) -> None:
    for k in ("nvif", "client_isolation"):
        if params.get(k):
            raise CompatError(f"{where}: {k}={params[k]!r}: {_REFUSED[k]}")
    if int(params.get("wlans", 1) or 1) != 1:
        raise CompatError(f"{where}: wlans={params['wlans']!r}: {_REFUSED['wlans']}")


class WirelessIntf(Intf):
    """A node's wireless interface, with Mininet-WiFi's attributes: ``ssid``,
    ``channel``, ``mode``, ``freq`` (GHz), ``txpower`` (dBm),
    ``antennaGain`` (dBi), ``associatedTo`` (a station's access point now)
    and ``rssi`` (dBm: what the station hears of its access point, read
    from emuctl's medium while the network runs)."""

    def __init__(self, name: str, node: Any, port: int, txpower: float, antennaGain: float,
                 antennaHeight: float = 1.0) -> None:
        super().__init__(name, node=node, port=port)
        self.txpower = txpower
        self.antennaGain = antennaGain
        self.antennaHeight = antennaHeight
        self.id = 0

    def setMAC(self, macstr: str) -> Optional[str]:
        """A wireless MAC is the lab's from build on (mac= of addStation
        or addAccessPoint): the same one again changes nothing."""
        if self.mac and str(macstr).lower() == str(self.mac).lower():
            return None
        if self.running():
            raise CompatError(f"{self.name}.setMAC({macstr!r}): a wireless interface's MAC is set when the network "
                              "is built (mac= of addStation/addAccessPoint)")
        self.mac = self.node.wmac = macstr
        return None

    def _ap(self) -> Any:
        return self.node if isinstance(self.node, AP) else self.node.currentAP()

    @property
    def ssid(self) -> Optional[str]:
        ap = self._ap()
        return ap.ssid if ap is not None else None

    @property
    def channel(self) -> Optional[int]:
        ap = self._ap()
        return ap.channel if ap is not None else None

    @property
    def mode(self) -> Optional[str]:
        ap = self._ap()
        return ap.mode if ap is not None else None

    @property
    def freq(self) -> Optional[float]:
        ap = self._ap()
        return ap.freqMHz() / 1000 if ap is not None else None

    @property
    def associatedTo(self) -> Any:
        """The access point's wireless interface a station is associated
        with ('adhoc' for a member of an ad hoc network, 'mesh' for a
        mesh point, as Mininet-WiFi says; None for an access point's own)."""
        if isinstance(self.node, AP):
            return None
        if getattr(self.node, "adhoc", None) is not None:
            return "mesh" if getattr(self.node, "adhocMesh", False) else "adhoc"
        ap = self.node.currentAP()
        return ap.wintfs[0] if ap is not None else None

    @property
    def rssi(self) -> Optional[float]:
        """What a station hears of its access point (dBm), from the medium."""
        if isinstance(self.node, AP):
            return None
        ap = self.node.currentAP()
        if ap is None:
            return None
        return self.node.session_wifi().signal(ap.name, self.node.name)


def bandOf(mode: str, channel: int, fiveGHz: bool = False) -> str:
    """The band, as Mininet-WiFi picks it: 6 GHz for modes ax and be,
    5 GHz for a, ac, ax5 and n above channel 14, else 2.4 GHz."""
    if mode in ("ax", "be") and not fiveGHz:
        return "6"
    return "5" if mode in ("a", "ac") or fiveGHz or channel > 14 else "2.4"


def freqOf(band: str, channel: int) -> int:
    """A channel's centre frequency (MHz) in a band."""
    if band == "6":
        return 5950 + 5 * channel
    if band == "5":
        return 5000 + 5 * channel
    return 2484 if channel == 14 else 2407 + 5 * channel


class WifiNode:
    """What stations and access points share: position, radio parameters."""

    wintfs: dict[int, WirelessIntf]
    _pos: Optional[list[float]]
    name: str
    session: Any

    def _radio(self, params: dict[str, Any], where: str) -> None:
        _refuse(params, where)
        self._pos = parsePosition(params.get("position"), where)
        self.txpower = _number(params.get("txpower", DEFAULT_TXPOWER), "txpower", where)
        if not 0 <= self.txpower <= 30:
            raise CompatError(f"{where}: txpower={params['txpower']!r}: emuctl takes 0 to 30 dBm")
        self.antennaGain = _number(params.get("antennaGain", DEFAULT_GAIN), "antennaGain", where)
        if not -10 <= self.antennaGain <= 30:
            raise CompatError(f"{where}: antennaGain={params['antennaGain']!r}: emuctl takes -10 to 30 dBi")
        self.antennaHeight = _number(params.get("antennaHeight", 1), "antennaHeight", where)
        self.wmac = params.get("mac")
        # range: the tx power is made Mininet-WiFi's for it at build
        # (mn_wifi.net.Mininet_wifi._ranges), once the path loss is known
        self.range: Optional[float] = None
        if params.get("range") is not None:
            self.range = _metres(params["range"], where)

    def setIP6(self, ip: str, prefixLen: int = 64, intf: Any = None, **kwargs: Any) -> Any:
        """Set an interface's IPv6 address (the wireless one by default),
        as Mininet-WiFi does: its IPv6 addresses flushed, this one added
        (without duplicate address detection, so it answers at once); IPv6
        is turned on there first (emuctl turns it off on interfaces built
        without an IPv6 address). Before build, the address goes into the
        lab's document."""
        addr = ip if "/" in str(ip) else f"{ip}/{int(prefixLen)}"
        i = self.wintfs[0] if intf is None and getattr(self, "wintfs", None) else self.intf(intf)  # type: ignore[attr-defined]
        if not self.session.running:
            if not isinstance(self, Station):
                raise CompatError(f"{self.name}.setIP6: an access point's IPv6 address is not offered (its "
                                  "radio carries its stations' frames, not its own)")
            self.ip6 = addr
            return None
        name = getattr(i, "name", i)
        return self.cmd(f"sysctl -qw net.ipv6.conf.{name}.disable_ipv6=0; ip -6 addr flush dev {name}; "  # type: ignore[attr-defined]
                        f"ip -6 addr add {addr} dev {name} nodad")

    def session_wifi(self) -> Any:
        """The network's Wi-Fi view (mn_wifi.net's WiFiView)."""
        view = getattr(self.session, "wifi", None)
        if view is None:
            raise CompatError(f"{self.name}: not a node of a Mininet_wifi network")
        return view

    @property
    def position(self) -> Optional[list[float]]:
        """Where the node is now (metres): from the medium while the
        network runs (a moving node's place), else as declared."""
        if self.session.running and getattr(self.session, "wifi", None) is not None:
            p = self.session.wifi.position(self.name)
            if p is not None:
                return p
        return self._pos

    @position.setter
    def position(self, pos: Any) -> None:
        self.setPosition(pos)

    def setPosition(self, pos: Any) -> None:
        """Place the node ('x,y,z' metres); moved in the medium at once
        while the network runs (emuctl wifi move)."""
        xyz = parsePosition(pos, f"{self.name}.setPosition")
        self._pos = xyz
        if self.session.running:
            self.session.call("wifi.move", lab=self.session.name, node=self.name, pos=xyz)

    def get_distance_to(self, other: Any) -> float:
        """Distance to another node (metres), as the medium places them."""
        a, b = self.position, other.position
        if a is None or b is None:
            raise CompatError(f"get_distance_to: {self.name if a is None else other.name} has no position")
        return round(math.dist(a, b), 2)

    def _wifiKeys(self) -> dict[str, Any]:
        w: dict[str, Any] = {}
        if self.txpower != 20:  # emuctl's default
            w["txpower"] = f"{self.txpower:g}dBm"
        if self.antennaGain:
            w["antenna_gain"] = f"{self.antennaGain:g}dBi"
        if self.wmac:
            w["mac"] = str(self.wmac)
        return w

    def _running(self, what: str) -> None:
        if self.session.running:
            raise CompatError(f"{self.name}.{what}: not changed while the network runs "
                              "(emuctl sets radios at build; positions move at run time: setPosition)")

    def setTxPower(self, txpower: Any, intf: Any = None) -> None:
        """Set the tx power (dBm) before the network is built."""
        self._running("setTxPower")
        self.txpower = _number(txpower, "txpower", f"{self.name}.setTxPower")
        for i in self.wintfs.values():
            i.txpower = self.txpower

    def setAntennaGain(self, gain: Any, intf: Any = None) -> None:
        """Set the antenna gain (dBi) before the network is built."""
        self._running("setAntennaGain")
        self.antennaGain = _number(gain, "antennaGain", f"{self.name}.setAntennaGain")
        for i in self.wintfs.values():
            i.antennaGain = self.antennaGain

    def setRange(self, _range: Any, intf: Any = None) -> None:
        """The node's range (metres) before the network is built: its tx
        power becomes the one Mininet-WiFi computes for it — the power
        whose signal at that distance is the noise threshold (noise_th,
        -91 dBm) under the network's path loss."""
        self._running("setRange")
        self.range = _metres(_range, f"{self.name}.setRange")


class Station(WifiNode, Host):
    """A Wi-Fi station: an emuctl ``kind: station`` with ``<name>-wlan0``."""

    def __init__(self, name: str, **params: Any) -> None:
        where = f"addStation({name})"
        self._radio(params, where)
        self.passwd = params.get("passwd")
        self.encrypt = params.get("encrypt")
        for k in ("min_x", "max_x", "min_y", "max_y", "min_v", "max_v"):
            if k in params:
                _number(params[k], k, where)
        # wpa_supplicant's background scan (hwsim), as Mininet-WiFi writes it
        self.bgscan: Optional[str] = None
        if any(k in params for k in ("bgscan_threshold", "s_inverval", "l_interval", "bgscan_module")):
            module = str(params.get("bgscan_module", "simple"))
            if module not in ("simple", "learn"):
                raise CompatError(f"{where}: bgscan_module={module!r}: wpa_supplicant's simple or learn")
            self.bgscan = "%s:%d:%d:%d" % (module, int(_number(params.get("s_inverval", 2), "s_inverval", where)),
                                           int(_number(params.get("bgscan_threshold", -70), "bgscan_threshold",
                                                       where)),
                                           int(_number(params.get("l_interval", 30), "l_interval", where)))
        self.coord: Optional[list[str]] = None
        self.ap: Any = None           # the access point a script linked it to
        self.adhoc: Optional[str] = None  # or the ad hoc network (SSID) it joined (addLink(sta, cls=adhoc))
        self.adhocMesh = False  # that network is a mesh (addLink(sta, cls=mesh))
        self.ip6: Optional[str] = None  # an IPv6 address of its wireless interface (ip6=, setIP6)
        if params.get("ip6"):
            v6 = str(params["ip6"])
            self.ip6 = v6 if "/" in v6 else f"{v6}/64"
        self.network: Optional[str] = None  # or the SSID of the network it roams in
        self.mobility: Optional[dict[str, Any]] = None  # its emuctl mobility block
        self.roaming: Optional[dict[str, Any]] = None
        self.wlink: dict[str, Any] = {}  # its wireless hop's shaping (addLink(sta, ap, bw=...))
        super().__init__(name, **params)
        i = WirelessIntf(f"{name}-wlan0", node=self, port=0, txpower=self.txpower, antennaGain=self.antennaGain,
                         antennaHeight=self.antennaHeight)
        ip = params.get("ip")
        if ip:
            i.ip, pl = (str(ip).split("/") + ["8"])[:2]
            i.prefixLen = int(pl)
            i._applied = (i.ip, i.prefixLen)  # type: ignore[attr-defined]
        if self.wmac:
            i.mac = str(self.wmac)
        self.wintfs = {0: i}
        self.params.setdefault("wlan", [i.name])

    def currentAP(self) -> Any:
        """The access point the station is associated with now."""
        if not self.session.running or getattr(self.session, "wifi", None) is None:
            return self.ap
        name = self.session.wifi.apOf(self.name)
        return self.session.wifi.node(name) if name else None

    def emuctlNode(self) -> dict[str, Any]:
        """The station's entry in the lab's topology document."""
        e: dict[str, Any] = {"kind": "station"}
        if self._pos is not None:
            e["position"] = self._pos
        w = self._wifiKeys()
        if self.adhoc is not None:
            w["mesh" if self.adhocMesh else "adhoc"] = self.adhoc
        elif self.ap is not None:
            w["ap"] = self.ap.name
        elif self.network:
            w["ssid"] = self.network
            if self.roaming:
                w["roaming"] = self.roaming
        i = self.wintfs[0] if getattr(self, "wintfs", None) else None
        ip = self.params.get("ip")
        if i is not None and i.ip:
            w["ip"] = [f"{i.ip}/{i.prefixLen}"]
        elif ip:
            w["ip"] = [ip if "/" in str(ip) else f"{ip}/8"]
        if self.ip6 and not self.ip6.lower().startswith("fe80"):
            w.setdefault("ip", []).append(self.ip6)  # a link-local one is set once the lab is up (Mininet_wifi.build)
        if self.wlink:
            w["link"] = self.wlink
        e["wifi"] = w
        if self.mobility:
            e["mobility"] = self.mobility
        return e

    def apiAdd(self, lab: str) -> dict[str, Any]:
        """node.add's parameters for a station added while the network runs."""
        e = self.emuctlNode()
        w = dict(e.get("wifi") or {})
        params: dict[str, Any] = {"lab": lab, "name": self.name, "kind": "station"}
        if self.ap is not None:
            params["ap"] = w.pop("ap")
        w.pop("ssid", None)
        if e.get("position"):
            params["position"] = e["position"]
        node: dict[str, Any] = {}
        if w:
            node["wifi"] = w
        if e.get("mobility"):
            node["mobility"] = e["mobility"]
        if node:
            params["node"] = node
        return params

    def setAssociation(self, ap: Any, intf: Any = None) -> None:
        """Refused while the network runs: a station's access point is set at build."""
        raise CompatError(f"{self.name}.setAssociation: a station is associated at build (net.addLink(sta, ap)); "
                          "stations that name no access point roam between the access points of one SSID")


class Car(Station):
    """Vehicular nodes (802.11p, SUMO) are not built."""

    def __init__(self, name: str, **params: Any) -> None:
        raise CompatError(f"addCar({name}): vehicular networks (802.11p, SUMO) are not built by emuctl")


class AP(WifiNode, Switch):
    """An access point: an emuctl ``kind: ap`` that bridges its stations
    to its wired links (a Linux bridge that learns)."""

    _warned = False

    def __init__(self, name: str, ssid: Any = "new-ssid", mode: Any = DEFAULT_MODE, channel: Any = 1,
                 passwd: Any = None, encrypt: Any = "", failMode: str = "secure", datapath: Any = None,
                 band: Any = 20, freq: Any = None, protocols: Any = None, **params: Any) -> None:
        where = f"addAccessPoint({name})"
        self._radio(params, where)
        if isinstance(ssid, (list, tuple)) or (isinstance(ssid, str) and "," in ssid):
            raise CompatError(f"{where}: ssid={ssid!r}: {_REFUSED['wlans']}")
        self.ssid = str(ssid)
        if not 1 <= len(self.ssid.encode()) <= 32:
            raise CompatError(f"{where}: ssid={ssid!r}: 1 to 32 bytes")
        self.mode = str(mode)
        self.fiveGHz = self.mode == "ax5"  # Mininet-WiFi's 802.11ax on 5 GHz (its ax is 6 GHz)
        if self.fiveGHz:
            self.mode = "ax"
        if self.mode not in MODES:
            raise CompatError(f"{where}: mode={mode!r}: emuctl's modes are {', '.join(MODES)} (and ax5)")
        try:
            self.channel = int(channel)
        except (TypeError, ValueError):
            raise CompatError(f"{where}: channel={channel!r} is not a channel number") from None
        self.width = int(band or 20)
        if self.width not in (20, 40, 80, 160):
            raise CompatError(f"{where}: band={band!r}: a channel width of 20, 40, 80 or 160 MHz")
        self.security, self.passphrase = _security(encrypt, passwd, where)
        if params.get("ieee80211w") and self.security != "wpa3":
            raise CompatError(f"{where}: ieee80211w={params['ieee80211w']!r}: {_REFUSED['ieee80211w']}")
        self.failMode, self.datapath = failMode, datapath
        self.mobility: Optional[dict[str, Any]] = None  # its emuctl mobility block (net.mobility)
        super().__init__(name, **params)
        self.wintfs = {0: WirelessIntf(f"{name}-wlan0", node=self, port=1, txpower=self.txpower,
                                       antennaGain=self.antennaGain, antennaHeight=self.antennaHeight)}
        if self.wmac:
            self.wintfs[0].mac = str(self.wmac)
        self.params.setdefault("wlan", [self.wintfs[0].name])

    def band(self) -> str:
        """The band, as Mininet-WiFi picks it (bandOf)."""
        return bandOf(self.mode, self.channel, self.fiveGHz)

    def freqMHz(self) -> int:
        """The channel's centre frequency (MHz)."""
        return freqOf(self.band(), self.channel)

    def emuctlNode(self) -> dict[str, Any]:
        """The access point's entry in the lab's topology document."""
        w: dict[str, Any] = {"ssid": self.ssid, "mode": self.mode, "channel": self.channel, "band": self.band()}
        if self.width != 20:
            w["width"] = self.width
        w["security"] = self.security
        if self.passphrase:
            w["passphrase"] = self.passphrase
        w.update(self._wifiKeys())
        e: dict[str, Any] = {"kind": "ap", "wifi": w}
        if self._pos is not None:
            e["position"] = self._pos
        if self.mobility:
            e["mobility"] = self.mobility
        return e

    def apiAdd(self, lab: str) -> dict[str, Any]:
        """node.add's parameters for an access point added while the
        network runs."""
        e = self.emuctlNode()
        params: dict[str, Any] = {"lab": lab, "name": self.name, "kind": "ap"}
        if e.get("position"):
            params["position"] = e["position"]
        node: dict[str, Any] = {"wifi": e["wifi"]}
        if e.get("mobility"):
            node["mobility"] = e["mobility"]
        params["node"] = node
        return params

    def start(self, controllers: list[Any]) -> None:
        """The access point forwards from the start (a learning bridge);
        controllers are not used: said once."""
        if controllers and any(c is not None for c in controllers) and not AP._warned:
            AP._warned = True
            warn("*** emuctl: access points are Linux bridges that learn (as an Open vSwitch bridge under a "
                 "learning controller forwards); their controllers and OpenFlow rules are not used\n")
        Switch.start(self, controllers)


class OVSAP(AP):
    """Mininet-WiFi's Open vSwitch access point (an emuctl access point)."""


OVSKernelAP = OVSAP
OVSBridgeAP = OVSAP


class UserAP(AP):
    """Mininet-WiFi's user-space access point (an emuctl access point)."""


class physicalAP(AP):
    """A real wireless card as an access point is not offered."""

    def __init__(self, name: str, **params: Any) -> None:
        raise CompatError(f"physicalAP({name}): emuctl's access points are emulated; a real card is not used")
