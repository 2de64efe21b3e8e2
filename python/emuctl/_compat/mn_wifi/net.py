"""Mininet-WiFi's network object (``mn_wifi.net``) on one emuctl lab.

``Mininet_wifi`` is :class:`mininet.net.Mininet` with access points and
stations. At ``build()`` the layer writes what the script declared as one
emuctl topology:

- **Association.** A station the script links to an access point
  (``net.addLink(sta, ap)``) stays with it. The others roam, as
  Mininet-WiFi associates them: between every access point of the network
  (their SSIDs listed in the station's ``wifi: {ssid: [...]}``), starting
  on the one heard best, handing over when they lose it — or, under
  ``associationControl('ssf')`` (strongest signal first), whenever another
  is heard better; under ``associationControl('llf')`` (least loaded
  first) starting on the one with the fewest stations among those heard
  and leaving it for one with two fewer — as emuctl's medium decides
  (engine backend).
- **Mobility.** ``net.mobility(sta, 'start'|'stop', time=, position=)``
  between ``startMobility`` and ``stopMobility`` becomes a waypoint path
  (through ``sta.coord`` when set, ``mob_rep`` times, back and forth with
  ``reverse``); ``setMobilityModel`` gives every station declared without
  a position emuctl's model of the same name (RandomWalk, RandomWayPoint,
  RandomDirection, GaussMarkov) with the network's or the station's
  bounds and speeds and a seed per station from the network's. The lab's
  supervisor places moving stations 20 times a second from ``build()`` on.
- **Propagation.** ``setPropagationModel(model='logDistance', exp=N)``
  (and ``friis``: exponent 2) is emuctl's log-distance path loss with
  Mininet-WiFi's reference: free space at 1 m for the first access
  point's channel, times the system loss ``sL``; ``noise_th`` sets the
  noise floor. Nodes get Mininet-WiFi's 14 dBm and 5 dBi antennas unless
  they say otherwise.
"""

from __future__ import annotations

import math
import os
import re
import shutil
import subprocess
import time
from typing import Any, Optional

from mininet._emu import CompatError, track
from mininet.link import Link, tcKeys
from mininet.log import info, warn
from mininet.net import Mininet
from mininet.util import ipAdd, macColonHex
from mn_wifi.link import REFUSED, WirelessLink, _Refused, adhoc, mesh, wmediumd
from mn_wifi.node import _REFUSED, AP, MODES, Car, OVSKernelAP, Station, bandOf, freqOf, parsePosition
from mn_wifi.wmediumdConnector import error_prob, interference, snr

# Mininet-WiFi's mobility models and emuctl's names for them
MODELS = {"RandomWalk": "random-walk", "RandomWayPoint": "random-waypoint",
          "RandomDirection": "random-direction", "GaussMarkov": "gauss-markov"}
# kTB over 20 MHz at 290 K, dBm: the noise floor's part emuctl adds its noise figure to
KTB_20MHZ = -174 + 10 * math.log10(20e6)
C = 299792458.0


class WiFiView:
    """The running lab's Wi-Fi as ``emuctl wifi show`` reports it:
    positions, signal, associations (read at most every 0.2 s)."""

    def __init__(self, net: "Mininet_wifi") -> None:
        self.net = net
        self._at = 0.0
        self._show: dict[str, Any] = {}

    def show(self) -> dict[str, Any]:
        """The lab's wifi.show answer (cached 0.2 s)."""
        if time.monotonic() - self._at > 0.2:
            s = self.net.session
            self._show = s.call("wifi.show", lab=s.name) or {}
            self._at = time.monotonic()
        return self._show

    def position(self, node: str) -> Optional[list[float]]:
        """Where the medium has a node now."""
        p = ((self.show().get("medium") or {}).get("positions") or {}).get(node)
        return [round(float(v), 2) for v in p] if p is not None else None

    def signal(self, tx: str, rx: str) -> Optional[float]:
        """What rx hears of tx (dBm) in the medium now."""
        for l in (self.show().get("medium") or {}).get("links") or []:
            if l.get("from") == tx and l.get("to") == rx:
                return round(float(l.get("rx_dbm", 0)), 2)
        return None

    def apOf(self, station: str) -> Optional[str]:
        """A station's access point now."""
        assoc = (self.show().get("medium") or {}).get("assoc") or {}
        if station in assoc:
            return assoc[station] or None
        for n in self.show().get("nodes") or []:
            if n.get("node") == station:
                return n.get("ap") or None
        sta = self.net.nameToNode.get(station)
        return sta.ap.name if sta is not None and sta.ap is not None else None

    def node(self, name: str) -> Any:
        """A node of the network by name."""
        return self.net.nameToNode.get(name)


class Association:
    """A station joined to an access point by ``net.addLink(sta, ap)``."""

    def __init__(self, sta: Station, ap: AP) -> None:
        self.sta, self.ap = sta, ap
        self.intf1, self.intf2 = sta.wintfs[0], ap.wintfs[0]

    def intfs(self) -> tuple[Any, Any]:
        """The station's and the access point's wireless interfaces."""
        return self.intf1, self.intf2

    def delete(self) -> None:
        """A station's association is the lab's until it stops."""
        raise CompatError(f"delLink({self.sta.name}, {self.ap.name}): a station's association is set at build")

    def __str__(self) -> str:
        return f"{self.intf1}<->{self.intf2}"

    def __repr__(self) -> str:
        return f"<Association {self}>"


class Mininet_wifi(Mininet):
    """A Wi-Fi network (access points, stations) and its wired part on
    one emuctl lab."""

    def __init__(self, topo: Any = None, accessPoint: Any = OVSKernelAP, station: Any = Station, car: Any = Car,
                 link: Any = WirelessLink, ssid: str = "new-ssid", mode: str = "g", encrypt: Any = "",
                 passwd: Any = None, ieee80211w: Any = None, channel: Any = 1, freq: Any = 2.4, band: Any = 20,
                 wmediumd_mode: Any = snr, fading_cof: float = 0, autoAssociation: bool = True,
                 allAutoAssociation: bool = True, autoSetPositions: bool = False, configWiFiDirect: bool = False,
                 config4addr: bool = False, noise_th: float = -91, cca_th: float = -90,
                 disable_tcp_checksum: bool = False, ifb: bool = False, client_isolation: bool = False,
                 plot: bool = False, plot3d: bool = False, docker: bool = False, rec_rssi: bool = False,
                 json_file: Any = None, ac_method: Any = None, build: bool = True, **kwargs: Any) -> None:
        refused = {"configWiFiDirect": (configWiFiDirect, "Wi-Fi Direct is not built"),
                   "config4addr": (config4addr, "4-address (WDS) links are not built"),
                   "docker": (docker, "containers are not used: emuctl's nodes are network namespaces"),
                   "ifb": (ifb, "the wireless hop is shaped by emuctl (addLink(sta, ap, bw=..., delay=...))"),
                   "rec_rssi": (rec_rssi, "emuctl's medium computes each frame's signal itself"),
                   "json_file": (json_file, "P4 switches are not built"),
                   "plot3d": (plot3d, "the map is 2-D (emuctl ui)"),
                   "fading_cof": (fading_cof, "emuctl's medium models no fading"),
                   "client_isolation": (client_isolation, "client isolation is not built"),
                   "disable_tcp_checksum": (disable_tcp_checksum, "checksums are the kernel's"),
                   "autoSetPositions": (autoSetPositions, "give each node its position=")}
        for k, (v, why) in refused.items():
            if v:
                raise CompatError(f"Mininet_wifi({k}={v!r}): {why}")
        if wmediumd_mode is error_prob:
            raise CompatError("Mininet_wifi(wmediumd_mode=error_prob): per-link error probabilities are not "
                              "offered; emuctl's medium derives errors from positions (interference mode)")
        if cca_th != -90:
            raise CompatError(f"Mininet_wifi(cca_th={cca_th!r}): emuctl's carrier sense is ns-3's (-82 dBm "
                              "preamble detection, -62 dBm energy)")
        self.autoAssociation = autoAssociation and allAutoAssociation
        self.wmediumd_mode = interference if wmediumd_mode in (interference, snr) else wmediumd_mode
        wired = link if isinstance(link, type) and issubclass(link, Link) else Link
        super().__init__(topo=topo, link=wired, build=False, **kwargs)
        self.accessPoint, self.station, self.car = accessPoint, station, car
        self.ssid, self.mode, self.encrypt, self.passwd = ssid, mode, encrypt, passwd
        self.ieee80211w = ieee80211w  # the access points' default (WPA3 only)
        self.channel, self.freq, self.band = channel, freq, band
        self.noise_th = noise_th
        self.ac_method: Optional[str] = None
        if ac_method is not None:
            self.associationControl(ac_method)
        self.stations: list[Station] = []
        self.aps: list[AP] = []
        self.cars: list[Any] = []
        self.wlinks: list[Association] = []
        self.adhocNets: dict[str, dict[str, Any]] = {}  # ad hoc networks by SSID (addLink(sta, cls=adhoc))
        self.ppm: dict[str, Any] = {"model": "logDistance", "exp": 3, "sL": 1}
        # mobility, as Mininet-WiFi keeps it
        self.mob_model: Optional[str] = None
        self.mob_start_time: float = 0
        self.mob_stop_time: float = 0
        self.mob_rep = 1
        self.reverse = False
        self.seed = 1
        self.min_x, self.max_x, self.min_y, self.max_y = 0.0, 100.0, 0.0, 100.0
        self.min_v, self.max_v, self.min_wt, self.max_wt = 1.0, 10.0, 1.0, 5.0
        self.velocity_mean, self.alpha, self.variance = -1.0, -1.0, -1.0
        self.moves: dict[str, dict[str, Any]] = {}  # station -> {start: (t, pos), stop: (t, pos)}
        self.draw = plot
        self.plotArgs: dict[str, Any] = {}
        self.wifi = WiFiView(self)
        self.session.wifi = self.wifi  # type: ignore[attr-defined]
        if topo and build:
            self.build()

    # nodes

    def addStation(self, name: str, cls: Any = None, **params: Any) -> Station:
        """Add a station (address from ipBase unless ``ip`` is given)."""
        defaults: dict[str, Any] = {"ip": ipAdd(self.nextIP, ipBaseNum=self.ipBaseNum, prefixLen=self.prefixLen)
                                    + "/%s" % self.prefixLen}
        if self.autoSetMacs:
            defaults["mac"] = macColonHex(self.nextIP)
        if params.get("encrypt") is None and self.encrypt:
            defaults["encrypt"] = self.encrypt
        if params.get("passwd") is None and self.passwd:
            defaults["passwd"] = self.passwd
        self.nextIP += 1
        defaults.update(params)
        sta = (cls or self.station)(name, **defaults)
        self.stations.append(sta)
        self.hosts.append(sta)
        self.nameToNode[name] = sta
        return sta

    def addAccessPoint(self, name: str, cls: Any = None, **params: Any) -> AP:
        """Add an access point (the network's ssid, mode, channel and
        security unless given); on a running network it joins the lab's
        medium at once (refused, saying why, where a roaming station's
        network of that ssid would gain it)."""
        defaults: dict[str, Any] = {"ssid": self.ssid, "mode": self.mode, "channel": self.channel,
                                    "encrypt": self.encrypt, "passwd": self.passwd, "band": self.band,
                                    "ieee80211w": self.ieee80211w,
                                    "listenPort": self.listenPort, "inNamespace": self.inNamespace}
        if self.autoSetMacs:
            defaults["mac"] = macColonHex(self.nextIP)
            self.nextIP += 1
        defaults.update(params)
        ap = (cls or self.accessPoint)(name, **defaults)
        self.aps.append(ap)
        self.switches.append(ap)
        self.nameToNode[name] = ap
        return ap

    def addCar(self, name: str, cls: Any = None, **params: Any) -> Any:
        """Refused: vehicular networks are not built."""
        return Car(name, **params)

    def delStation(self, sta: Station) -> None:
        """Remove a station (from the running lab too)."""
        if sta in self.stations:
            self.stations.remove(sta)
        self.delHost(sta)

    # links

    def addLink(self, node1: Any, node2: Any = None, port1: Optional[int] = None, port2: Optional[int] = None,
                cls: Any = None, **params: Any) -> Any:
        """A wired link, or a station's association with an access point
        (its hop shaped by bw/delay/loss/jitter)."""
        node1 = node1 if not isinstance(node1, str) else self[node1]
        node2 = node2 if not isinstance(node2, str) else self[node2]
        if cls is adhoc or cls is mesh:
            return self._adhoc(node1, params, isMesh=cls is mesh)
        if isinstance(cls, type) and issubclass(cls, _Refused):
            return cls(node1, **params)
        if cls in REFUSED:
            return cls(node1, **params)
        if node2 is None:
            raise CompatError(f"addLink({node1.name}): a link of one node (ad hoc, mesh) is not built; join "
                              "stations to an access point: addLink(sta, ap)")
        sta, ap = (node1, node2) if isinstance(node1, Station) else (node2, node1)
        if isinstance(sta, Station) and isinstance(ap, AP):
            return self._associate(sta, ap, params)
        if isinstance(node1, Station) and isinstance(node2, Station):
            raise CompatError(f"addLink({node1.name}, {node2.name}): two stations are not joined without an "
                              "access point (ad hoc is not built)")
        if cls in (wmediumd, WirelessLink):
            cls = None
        return super().addLink(node1, node2, port1, port2, cls=cls, **params)

    def _associate(self, sta: Station, ap: AP, params: dict[str, Any]) -> Association:
        where = f"addLink({sta.name}, {ap.name})"
        if self.session.running:
            raise CompatError(f"{where}: a station is associated at build; a station added while the network "
                              "runs joins the access point it hears best")
        if sta.ap is not None and sta.ap is not ap:
            raise CompatError(f"{where}: {sta.name} is associated with {sta.ap.name} already (one wireless "
                              "interface per station)")
        extra = sorted(k for k in params if k not in ("bw", "delay", "jitter", "loss", "max_queue_size",
                                                        "intf", "cls", "link"))
        if extra:
            raise CompatError(f"{where}: {', '.join(extra)} not offered for a wireless hop (bw, delay, jitter, "
                              "loss, max_queue_size are)")
        keys, _ = tcKeys(params.get("bw"), params.get("delay"), params.get("jitter"), params.get("loss"),
                         params.get("max_queue_size"), where=where)
        sta.ap, sta.wlink = ap, keys
        a = Association(sta, ap)
        self.wlinks.append(a)
        return a

    def _adhoc(self, sta: Any, params: dict[str, Any], isMesh: bool = False) -> Any:
        """A station joins the ad hoc (IBSS) network of an SSID, or the
        mesh of a mesh ID (isMesh); its first member's mode, channel and
        ht_cap make the network (as the station that starts an IBSS sets
        it up)."""
        name = getattr(sta, "name", sta)
        kind = "mesh" if isMesh else "adhoc"
        where = f"addLink({name}, cls={kind})"
        if not isinstance(sta, Station):
            raise CompatError(f"{where}: only stations join an ad hoc network")
        if self.session.running:
            raise CompatError(f"{where}: stations join an ad hoc network at build (emuctl adds no member to a "
                              "running one)")
        if sta.ap is not None or sta.adhoc is not None:
            raise CompatError(f"{where}: {name} is joined to {sta.ap.name if sta.ap else sta.adhoc} already "
                              "(one wireless interface per station)")
        why = {"passwd": ("secured meshes (SAE, AMPE) are not built: emuctl's are open" if isMesh else
                          "secured ad hoc networks (IBSS-RSN) are not modelled: the engine's are open"),
               "proto": "MANET routing daemons are not run: ad hoc members forward nothing; route through a member "
                        "yourself (ip route, ip_forward)",
               "bitrates": "give the station's rate instead: emuctl's members send at the network's rate "
                           "(auto: the ideal one for each peer's signal)"}
        for k, w in why.items():
            if params.get(k):
                raise CompatError(f"{where}: {k}={params[k]!r}: {w}")
        if params.get("ibss") not in (None, "", "02:CA:FF:EE:BA:01"):
            raise CompatError(f"{where}: ibss={params['ibss']!r}: the network's BSSID is emuctl's")
        extra = sorted(k for k in params if k not in ("intf", "ssid", "mode", "channel", "ht_cap", "txpower",
                                                        "ibss", "passwd", "proto", "bitrates", "ap_scan"))
        if extra:
            raise CompatError(f"{where}: {', '.join(extra)} not offered (ssid, mode, channel, ht_cap, txpower are)")
        intf = params.get("intf")
        if intf not in (None, sta.wintfs[0].name):
            raise CompatError(f"{where}: intf={intf!r}: {name}'s wireless interface is {sta.wintfs[0].name}")
        ssid = str(params.get("ssid") or ("meshNet" if isMesh else "adhocNet"))
        if not 1 <= len(ssid.encode()) <= 32:
            raise CompatError(f"{where}: ssid={ssid!r}: 1 to 32 bytes")
        mode = str(params.get("mode") or "g")
        if mode not in MODES:
            raise CompatError(f"{where}: mode={mode!r}: emuctl's modes are {', '.join(MODES)}")
        try:
            channel = int(params.get("channel") or 1)
        except (TypeError, ValueError):
            raise CompatError(f"{where}: channel={params.get('channel')!r} is not a channel number") from None
        ht = str(params.get("ht_cap") or "")
        if ht not in ("", "HT20", "HT40+", "HT40-"):
            raise CompatError(f"{where}: ht_cap={ht!r}: HT20, HT40+ or HT40- (iw's ibss join)")
        # HT capabilities make an 802.11n IBSS of the mode's band
        eff, width = (("n" if mode in ("a", "b", "g") else mode), 40 if "40" in ht else 20) if ht else (mode, 20)
        if "txpower" in params:
            sta.setTxPower(params["txpower"])
        net = self.adhocNets.get(ssid)
        if net is None:
            band = bandOf(eff, channel)
            self.adhocNets[ssid] = net = {"mode": eff, "band": band, "channel": channel, "width": width,
                                          "creator": name, "freq": freqOf(band, channel), "mesh": isMesh}
        elif net["mesh"] != isMesh:
            raise CompatError(f"{where}: {ssid} is {'a mesh' if net['mesh'] else 'an ad hoc network'} "
                              f"({net['creator']} joined it with cls={'mesh' if net['mesh'] else 'adhoc'}): one "
                              "network is one kind")
        elif channel != net["channel"]:
            raise CompatError(f"{where}: channel {channel}: {ssid} is on channel {net['channel']} ({net['creator']} "
                              "started it); an ad hoc network has one channel")
        elif (eff, width) != (net["mode"], net["width"]):
            info(f"*** emuctl: {name} joins {ssid} as {net['creator']} started it (802.11{net['mode']}, "
                 f"{net['width']} MHz): emuctl's ad hoc network has one mode and width for its members\n")
        sta.adhoc, sta.adhocMesh = ssid, isMesh
        return None

    # radio settings

    def setPropagationModel(self, model: str = "logDistance", exp: float = 3, sL: float = 1,
                            **kwargs: Any) -> None:
        """emuctl's path loss: logDistance (exponent exp) or friis
        (exponent 2), from free space at 1 m times the system loss sL."""
        if model not in ("logDistance", "friis"):
            raise CompatError(f"setPropagationModel(model={model!r}): emuctl's medium has logDistance and friis "
                              "(its own friis, logdistance and itu-indoor through a topology file)")
        used = {"noise_th"}
        bad = sorted(k for k, v in kwargs.items() if k not in used and v not in (0, None))
        if bad:
            raise CompatError(f"setPropagationModel({', '.join(bad)}): not modelled by emuctl's {model}")
        if "noise_th" in kwargs:
            self.noise_th = kwargs["noise_th"]
        if sL <= 0:
            raise CompatError(f"setPropagationModel(sL={sL!r}): the system loss is a factor above 0")
        self.ppm = {"model": model, "exp": 2.0 if model == "friis" else float(exp), "sL": float(sL)}

    def refLossDB(self) -> float:
        """Free-space loss at 1 m for the first access point's channel,
        with the system loss (Mininet-WiFi's reference)."""
        first = next(iter(self.adhocNets.values()), None)
        f = (self.aps[0].freqMHz() if self.aps else first["freq"] if first else 2412) * 1e6
        return 20 * math.log10(4 * math.pi * f / C) + 10 * math.log10(self.ppm["sL"])

    def pathLossDB(self, d: float) -> float:
        """The layer's path loss at d metres (as the medium computes it)."""
        return self.refLossDB() + 10 * self.ppm["exp"] * math.log10(max(d, 0.1))

    def associationControl(self, ac: str) -> None:
        """'ssf' (strongest signal first): a station hands over as soon
        as another access point is heard better; 'llf' (least loaded
        first): a station associates with the access point that has the
        fewest stations among those it hears, and leaves its own for one
        with two fewer (Mininet-WiFi's rule) — the engine medium's
        decision (wifi: {roaming: {association: llf}})."""
        if ac not in ("ssf", "llf"):
            raise CompatError(f"associationControl({ac!r}): Mininet-WiFi's methods are 'ssf' (strongest signal "
                              "first) and 'llf' (least loaded first)")
        self.ac_method = ac

    def configureWifiNodes(self) -> None:
        """Nothing to do: emuctl configures the radios at build."""

    configureNodes = configureWifiNodes

    def plotGraph(self, **kwargs: Any) -> None:
        """Show the network's map: ``emuctl ui`` on the lab once it is
        built (its URL printed), when the ``ui`` command is there."""
        self.draw = True
        self.plotArgs = kwargs

    # mobility

    def setMobilityModel(self, time: float = 0, model: Optional[str] = None, **kwargs: Any) -> None:
        """A mobility model for every station declared without a position."""
        if model is not None and model not in MODELS:
            raise CompatError(f"setMobilityModel(model={model!r}): emuctl's models are "
                              f"{', '.join(MODELS)} (TruncatedLevyWalk, ReferencePoint groups, "
                              "TimeVariantCommunity and CRP are not built)")
        if time:
            raise CompatError(f"setMobilityModel(time={time!r}): models start when the network is built "
                              "(time=0); a later start is a schedule in a topology file")
        self.mob_model = model
        self._mobKeys(kwargs, "setMobilityModel")

    def _mobKeys(self, kwargs: dict[str, Any], where: str) -> None:
        known = {"min_x", "max_x", "min_y", "max_y", "min_v", "max_v", "min_wt", "max_wt", "seed",
                 "velocity_mean", "alpha", "variance", "mob_rep", "reverse", "ac_method", "min_z", "max_z"}
        for k, v in kwargs.items():
            if k not in known:
                raise CompatError(f"{where}({k}={v!r}): not offered (known: {', '.join(sorted(known))})")
            if k == "ac_method":
                if v:
                    self.associationControl(v)
            elif k in ("min_z", "max_z"):
                if v:
                    raise CompatError(f"{where}({k}={v!r}): mobility models move nodes in x and y")
            else:
                setattr(self, k, v)

    def startMobility(self, time: float = 0, **kwargs: Any) -> None:
        """When mobility starts (seconds after build)."""
        self.mob_start_time = time
        self._mobKeys(kwargs, "startMobility")

    def stopMobility(self, time: float = 0, **kwargs: Any) -> None:
        """When mobility stops (seconds after build)."""
        self.mob_stop_time = time
        self._mobKeys(kwargs, "stopMobility")

    def mobility(self, node: Any, stage: str, time: float = 0, position: Any = None, **kwargs: Any) -> None:
        """A station's path: where it is at its 'start' time and at its
        'stop' time (straight between them)."""
        node = node if not isinstance(node, str) else self[node]
        where = f"mobility({node.name}, {stage!r})"
        if stage not in ("start", "stop"):
            raise CompatError(f"{where}: stage is 'start' or 'stop'")
        if kwargs:
            raise CompatError(f"{where}: {', '.join(kwargs)} not offered (time=, position=)")
        if not isinstance(node, (Station, AP)):
            raise CompatError(f"{where}: only stations and access points move")
        if self.session.running:
            raise CompatError(f"{where}: paths are set before build (emuctl wifi move places a node at once)")
        coord = getattr(node, "coord", None)
        if position is None and not coord:
            raise CompatError(f"{where}: give position= (or set {node.name}.coord)")
        pos = parsePosition(position, where) if position is not None else None
        self.moves.setdefault(node.name, {})[stage] = (float(time), pos)

    def _paths(self) -> None:
        """Each station's emuctl mobility block (and the schedule that
        stops models at stopMobility's time)."""
        steps: list[dict[str, Any]] = []
        for name, m in self.moves.items():
            node = self.nameToNode[name]
            where = f"mobility({name})"
            if "start" not in m or "stop" not in m:
                raise CompatError(f"{where}: give both its 'start' and its 'stop'")
            (t0, p0), (t1, p1) = m["start"], m["stop"]
            if t1 <= t0:
                raise CompatError(f"{where}: stops at {t1:g} s, not after it starts ({t0:g} s)")
            coord = getattr(node, "coord", None)
            if coord:
                pts = [parsePosition(c, f"{name}.coord") for c in coord]
                pts[0] = p0 or pts[0]
                if p1 is not None:
                    pts[-1] = p1
            else:
                pts = [p0, p1]
            legs = len(pts) - 1
            way: list[dict[str, Any]] = []
            span = t1 - t0
            for rep in range(max(1, int(self.mob_rep))):
                seq = pts if not (self.reverse and rep % 2) else list(reversed(pts))
                base = t0 + rep * span
                for i, p in enumerate(seq):
                    t = base + span * i / legs
                    if way and i == 0:
                        if way[-1]["pos"] == p:
                            continue
                        t += 0.001  # a jump back to the start (mob_rep without reverse)
                    way.append({"t": f"{t:g}s", "pos": p})
            node._pos = pts[0]
            node.mobility = {"waypoints": way}
        if self.mob_model:
            i = 0
            for sta in self.stations:
                if sta.params.get("position") is not None or sta.name in self.moves:
                    continue
                i += 1
                p = sta.params

                def val(k: str) -> float:
                    return float(p.get(k, getattr(self, k)))

                block: dict[str, Any] = {"model": MODELS[self.mob_model],
                                         "bounds": [[val("min_x"), val("min_y")], [val("max_x"), val("max_y")]],
                                         "speed": [val("min_v"), val("max_v")],
                                         "seed": int(self.seed) * 1000 + i}
                if self.mob_model == "RandomWayPoint":
                    block["pause"] = f"{(val('min_wt') + val('max_wt')) / 2:g}s"
                if self.mob_model == "GaussMarkov":
                    if self.alpha != -1:
                        block["alpha"] = float(self.alpha)
                    if self.velocity_mean != -1:
                        block["mean_speed"] = float(self.velocity_mean)
                    if self.variance != -1:
                        raise CompatError("setMobilityModel(variance=...): emuctl's gauss-markov draws its own "
                                          "spread from the speed range")
                sta.mobility = block
                if self.mob_stop_time:
                    steps.append({"at": f"{self.mob_stop_time:g}s", "mobility": "stop", "node": sta.name})
        if steps:
            self.session.extra["schedules"] = [{"name": "mobility", "steps": steps}]

    # build

    def writeWifi(self) -> None:
        """Write what the script declared as emuctl's Wi-Fi: passwords
        checked, associations, paths, tx powers for ranges, the medium."""
        self._security()
        self._associations()
        self._paths()
        self._ranges()
        self._medium()

    def _declare(self, topo: Any) -> None:
        """Declare a topology's nodes and links: stations and access
        points (mn_wifi.topo.Topo) too."""
        stations = topo.stations() if hasattr(topo, "stations") else []
        aps = topo.aps() if hasattr(topo, "aps") else []
        for name in stations:
            self.addStation(name, **self._opts(topo, name, ("isStation",)))
        for name in aps:
            self.addAccessPoint(name, **self._opts(topo, name, ("isAP", "isSwitch")))
        super()._declare(topo)

    @staticmethod
    def _opts(topo: Any, name: str, drop: tuple[str, ...]) -> dict[str, Any]:
        return {k: v for k, v in topo.nodeInfo(name).items() if k not in drop}

    def _associations(self) -> None:
        """Stations the script did not link roam between every access point."""
        free = [s for s in self.stations if s.ap is None and s.adhoc is None]
        if not free:
            return
        if not self.aps:
            raise CompatError(f"station {free[0].name} has no access point to join (ad hoc is not built): "
                              "add one with net.addAccessPoint")
        if not self.autoAssociation:
            raise CompatError(f"Mininet_wifi(autoAssociation=False): station {free[0].name} is linked to no access "
                              "point; emuctl's stations are associated from build on: net.addLink(sta, ap)")
        ssids = list(dict.fromkeys(ap.ssid for ap in self.aps))
        for sta in free:
            if len(self.aps) == 1:
                sta.ap = self.aps[0]
                continue
            sta.network = ssids[0] if len(ssids) == 1 else ssids  # type: ignore[assignment]
            # Mininet-WiFi keeps an access point while in range; ssf
            # switches to a better one at once; llf picks by load
            if self.ac_method == "llf":
                sta.roaming = {"association": "llf"}
            else:
                sta.roaming = {"hysteresis": "0dB" if self.ac_method == "ssf" else "40dB"}
            if sta.bgscan:
                sta.roaming["bgscan"] = sta.bgscan

    def _security(self) -> None:
        for sta in self.stations:
            if sta.adhoc is not None:
                continue  # open: passwd was refused at addLink
            aps = [sta.ap] if sta.ap is not None else self.aps
            for ap in aps:
                if sta.params.get("ieee80211w") and ap.security != "wpa3":
                    raise CompatError(f"addStation({sta.name}): ieee80211w={sta.params['ieee80211w']!r} with "
                                      f"{ap.name}: {_REFUSED['ieee80211w']}")
                if sta.passwd and ap.passphrase and str(sta.passwd) != ap.passphrase:
                    raise CompatError(f"addStation({sta.name}): passwd differs from {ap.name}'s: it would never "
                                      "associate (emuctl's stations take their access point's passphrase)")

    def _ranges(self) -> None:
        """Nodes given a range get Mininet-WiFi's tx power for it: the
        signal at the range is the noise threshold (rounded up to a whole
        dBm, at least 1), under the path loss the medium will use."""
        for n in list(self.aps) + list(self.stations):
            if n.range is None:
                continue
            p = max(1, math.ceil(self.pathLossDB(n.range) + self.noise_th - 2 * n.antennaGain))
            if p > 30:
                raise CompatError(f"{n.name}: range={n.range:g} m needs {p} dBm under this path loss "
                                  "(Mininet-WiFi's rule: the signal there is noise_th); emuctl takes up to 30 dBm")
            n.txpower = p
            for i in n.wintfs.values():
                i.txpower = p
            info(f"*** {n.name}: range {n.range:g} m -> tx power {p} dBm (emuctl's receivers need -82 dBm: "
                 "emuctl wifi show lists the distance they hear it at)\n")

    def _medium(self) -> None:
        nf = self.noise_th - KTB_20MHZ
        if not 0 <= nf <= 30:
            raise CompatError(f"Mininet_wifi(noise_th={self.noise_th!r}): emuctl's noise floor is kTB + a noise "
                              "figure of 0 to 30 dB: noise_th from -101 to -71 dBm")
        bands = {ap.band() for ap in self.aps}
        if len(bands) > 1:
            warn("*** emuctl: the path loss's reference is free space at 1 m on %s's channel for every access "
                 "point (emuctl's medium has one path-loss model)\n" % self.aps[0].name)
        self.session.extra["wifi"] = {"medium": {
            "path_loss": {"model": "logdistance", "exponent": self.ppm["exp"],
                          "ref_loss": f"{self.refLossDB():.4f}dB", "ref_distance": "1m"},
            "noise_figure": f"{nf:.2f}dB"}}
        for key, isMesh in (("adhoc", False), ("mesh", True)):
            nets = {ssid: {k: n[k] for k in ("mode", "band", "channel")} | ({"width": n["width"]} if n["width"] != 20
                                                                              else {})
                    for ssid, n in self.adhocNets.items() if n["mesh"] == isMesh}
            if nets:
                self.session.extra["wifi"][key] = nets
        if any(not n["mesh"] for n in self.adhocNets.values()):
            info("*** emuctl: ad hoc members hear each other by position and forward nothing (the kernel's IBSS "
                 "on mac80211_hwsim, else emuctl's engine medium)\n")
        if any(n["mesh"] for n in self.adhocNets.values()):
            info("*** emuctl: mesh points peer with those they hear and forward for the others (the kernel's "
                 "802.11s mesh on mac80211_hwsim; refused on the engine backend)\n")
        if any(isinstance(s.network, list) for s in self.stations):
            # roaming between networks is the engine medium's decision
            # (wpa_supplicant on hwsim roams within one network)
            self.session.extra["wifi"]["backend"] = "engine"
            info("*** emuctl: stations roam between access points of several SSIDs: the lab's Wi-Fi runs on "
                 "emuctl's engine medium (wifi: {backend: engine})\n")
        elif any(s.roaming and s.roaming.get("association") == "llf" for s in self.stations):
            # least loaded first is the engine medium's decision too
            # (wpa_supplicant on hwsim picks by signal)
            self.session.extra["wifi"]["backend"] = "engine"
            info("*** emuctl: associationControl('llf'): the lab's Wi-Fi runs on emuctl's engine medium, "
                 "which associates by load (wifi: {backend: engine})\n")

    def build(self) -> None:
        """Declare the topology, write the Wi-Fi as emuctl's, bring the lab up."""
        topo, self.topo = self.topo, None
        if topo is not None:
            self.buildFromTopo(topo)  # here: the Wi-Fi is written from what it declares
        if not self.session.running and (self.stations or self.aps):
            self.writeWifi()
        try:
            super().build()
        finally:
            self.topo = topo
        for sta in self.stations:  # link-local ip6= (a lab's document takes none): set as Mininet-WiFi sets it
            if self.session.running and sta.ip6 and sta.ip6.lower().startswith("fe80"):
                sta.setIP6(sta.ip6)
        if self.draw and self.session.running:
            self._plot()

    def _plot(self) -> None:
        """Serve the lab's map with ``emuctl ui`` (a browser shows it)."""
        self.draw = False
        s = self.session
        try:
            p = subprocess.Popen([s.emuctl, "ui", "-l", s.name], stdout=subprocess.PIPE,
                                 stderr=subprocess.STDOUT, start_new_session=True)
        except OSError as e:
            warn(f"*** emuctl: plotGraph: emuctl ui did not start: {e}\n")
            return
        track(p)
        url = ""
        t0 = time.monotonic()
        assert p.stdout is not None
        while time.monotonic() - t0 < 10:
            line = p.stdout.readline().decode(errors="replace")
            if not line:
                break
            m = re.search(r"https?://\S+", line)
            if m:
                url = m.group(0)
                break
        if url:
            info(f"*** The network's map (emuctl ui): {url}\n")
            opener = shutil.which("xdg-open") if os.environ.get("DISPLAY") else None
            if opener:
                subprocess.Popen([opener, url], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        else:
            warn("*** emuctl: plotGraph: emuctl ui printed no address\n")

    def stop(self) -> None:
        """Stop everything and take the lab down."""
        info("*** Stopping %i access points and %i stations\n" % (len(self.aps), len(self.stations)))
        super().stop()

    def get_distance(self, src: Any, dst: Any) -> float:
        """Distance between two nodes (metres)."""
        src = self[src] if isinstance(src, str) else src
        dst = self[dst] if isinstance(dst, str) else dst
        return src.get_distance_to(dst)
