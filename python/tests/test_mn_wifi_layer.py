"""The Mininet-WiFi layer's mapping, without root: Mininet-WiFi's
defaults, names and addresses, associations, mobility and propagation →
the lab's document (checked by ``emuctl validate`` where the binary is
built), and the refusals that name what emuctl cannot honour. The root
tier is test_mn_wifi_root.py."""

import json
import math
import os
import subprocess
from pathlib import Path

import pytest

from conftest import COMPAT

import mn_wifi  # noqa: E402
from mininet import _emu  # noqa: E402
from mininet._emu import CompatError  # noqa: E402
from mininet.node import Host  # noqa: E402
from mn_wifi.link import adhoc, mesh, wmediumd  # noqa: E402
from mn_wifi.net import Mininet_wifi  # noqa: E402
from mn_wifi.node import OVSKernelAP, Station  # noqa: E402
from mn_wifi.topo import Topo  # noqa: E402
from mn_wifi.wmediumdConnector import error_prob, interference  # noqa: E402


def test_the_layer_is_ours():
    assert Path(mn_wifi.__file__).resolve().parent == COMPAT / "mn_wifi"


pytestmark = pytest.mark.usefixtures("no_lab")


def document(net):
    """What build() would bring up."""
    net.writeWifi()
    net.session.name = "mnw"
    return net.session.document()


def validate(doc, tmp_path):
    """emuctl validate on the document, when the binary is there."""
    emuctl = os.environ.get("EMUCTL")
    if not emuctl:
        return
    p = tmp_path / "mnw.json"
    p.write_text(json.dumps(doc))
    r = subprocess.run([emuctl, "validate", str(p)], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert r.returncode == 0, r.stdout


def friis1m(mhz):
    return 20 * math.log10(4 * math.pi * mhz * 1e6 / 299792458.0)


def test_defaults_names_and_propagation(tmp_path):
    net = Mininet_wifi(link=wmediumd, wmediumd_mode=interference)
    ap1 = net.addAccessPoint("ap1", ssid="new-ssid", mode="g", channel="1", position="50,50,0",
                             mac="00:00:00:00:00:01", failMode="standalone")
    sta1 = net.addStation("sta1", mac="00:00:00:00:00:02", position="30,60,0")
    net.addStation("sta2", ip="10.0.0.9/8", position="70,30,0", txpower=20, antennaGain=2)
    h1 = net.addHost("h1")
    net.setPropagationModel(model="logDistance", exp=4.5)
    net.configureNodes()
    link = net.addLink(ap1, h1)
    doc = document(net)
    assert doc["nodes"]["ap1"] == {"kind": "ap", "position": [50.0, 50.0, 0.0], "wifi": {
        "ssid": "new-ssid", "mode": "g", "channel": 1, "band": "2.4", "security": "open", "txpower": "14dBm",
        "antenna_gain": "5dBi", "mac": "00:00:00:00:00:01"}}
    assert doc["nodes"]["sta1"] == {"kind": "station", "position": [30.0, 60.0, 0.0], "wifi": {
        "txpower": "14dBm", "antenna_gain": "5dBi", "mac": "00:00:00:00:00:02", "ap": "ap1",
        "ip": ["10.0.0.1/8"]}}
    assert doc["nodes"]["sta2"]["wifi"] == {"antenna_gain": "2dBi", "ap": "ap1", "ip": ["10.0.0.9/8"]}
    # Mininet-WiFi's wired port numbers: the AP's wireless interface is port 1
    assert link.intf1.name == "ap1-eth2" and doc["links"][0]["endpoints"] == ["ap1:ap1-eth2", "h1:h1-eth0"]
    assert doc["links"][0]["ip"] == {"h1": "10.0.0.3/8"}
    pl = doc["wifi"]["medium"]["path_loss"]
    assert pl["model"] == "logdistance" and pl["exponent"] == 4.5 and pl["ref_distance"] == "1m"
    assert abs(float(pl["ref_loss"][:-2]) - friis1m(2412)) < 1e-3  # 40.09 dB: free space at 1 m, channel 1
    # Mininet-WiFi's noise threshold -91 dBm = kTB (-100.99 dBm) + 9.99 dB
    assert doc["wifi"]["medium"]["noise_figure"] == "9.99dB"
    assert sta1.IP() == "10.0.0.1" and sta1.wintfs[0].name == "sta1-wlan0" and ap1.wintfs[0].name == "ap1-wlan0"
    assert sta1.wintfs[0].txpower == 14 and sta1.wintfs[0].antennaGain == 5
    assert sta1.get_distance_to(ap1) == round(math.dist((30, 60), (50, 50)), 2)
    assert isinstance(sta1, Host) and sta1 in net.hosts and ap1 in net.switches
    validate(doc, tmp_path)


def test_bands_and_security(tmp_path):
    net = Mininet_wifi()
    a = net.addAccessPoint("ap1", ssid="a", mode="a", channel=36, position="0,0,0")
    b = net.addAccessPoint("ap2", ssid="b", mode="ax", channel=21, encrypt="wpa3", passwd="123456789a",
                           ieee80211w="2", position="500,0,0")
    c = net.addAccessPoint("ap3", ssid="c", mode="ax5", channel=40, passwd="123456789a", position="1000,0,0")
    d = net.addAccessPoint("ap4", ssid="d", mode="n", channel=6, band=40, encrypt="wpa2", passwd="123456789a",
                           position="1500,0,0")
    s1 = net.addSwitch("s1")
    for ap in (a, b, c, d):  # one wired segment (one subnet, 10.0.0.0/8)
        net.addLink(ap, s1)
    assert (a.band(), a.freqMHz()) == ("5", 5180)
    assert (b.band(), b.freqMHz()) == ("6", 6055)  # Mininet-WiFi's ax is 6 GHz
    assert (c.band(), c.freqMHz(), c.mode) == ("5", 5200, "ax")
    assert (d.band(), d.freqMHz(), d.width) == ("2.4", 2437, 40)
    for ap in (a, b, c, d):
        net.addLink(net.addStation("s" + ap.name, position=ap.position), ap)
    doc = document(net)
    assert doc["nodes"]["ap2"]["wifi"]["security"] == "wpa3" and doc["nodes"]["ap3"]["wifi"]["security"] == "wpa2"
    assert doc["nodes"]["ap4"]["wifi"]["width"] == 40
    validate(doc, tmp_path)


def test_associations(tmp_path):
    # one AP: every station joins it
    net = Mininet_wifi()
    ap = net.addAccessPoint("ap1", position="0,0,0")
    net.addStation("sta1", position="5,0,0")
    assert document(net)["nodes"]["sta1"]["wifi"]["ap"] == "ap1" and ap.ssid == "new-ssid"
    _emu._sessions.clear()
    # several APs of several SSIDs (Mininet-WiFi's handover example): the
    # station roams between all of them, keeping its AP while it hears it
    net = Mininet_wifi()
    ap1 = net.addAccessPoint("ap1", ssid="ssid-ap1", channel="1", position="15,30,0")
    ap2 = net.addAccessPoint("ap2", ssid="ssid-ap2", channel="6", position="55,30,0")
    sta1 = net.addStation("sta1", position="20,30,0")
    sta2 = net.addStation("sta2", position="50,30,0")
    net.addLink(ap1, ap2)
    net.addLink(sta2, ap2, bw=10, delay="2ms")
    doc = document(net)
    assert doc["nodes"]["sta1"]["wifi"]["ssid"] == ["ssid-ap1", "ssid-ap2"]
    assert doc["nodes"]["sta1"]["wifi"]["roaming"] == {"hysteresis": "40dB"}
    assert doc["nodes"]["sta2"]["wifi"]["ap"] == "ap2"
    assert doc["nodes"]["sta2"]["wifi"]["link"] == {"rate": "10mbit", "delay": "2ms"}
    assert sta1.currentAP() is None and sta2.currentAP() is ap2  # before build: what the script said
    assert doc["wifi"]["backend"] == "engine"  # several SSIDs: the engine medium decides the handovers
    validate(doc, tmp_path)
    _emu._sessions.clear()
    # one SSID, strongest signal first
    net = Mininet_wifi(ac_method="ssf")
    for i in (1, 2):
        net.addAccessPoint(f"ap{i}", ssid="one", position=f"{60 * i},0,0")
    net.addLink("ap1", "ap2")
    net.addStation("sta1", position="70,0,0", bgscan_threshold=-60, s_inverval=5, l_interval=10)
    w = document(net)["nodes"]["sta1"]["wifi"]
    assert w["ssid"] == "one" and w["roaming"] == {"hysteresis": "0dB", "bgscan": "simple:5:-60:10"}
    with pytest.raises(CompatError, match="'ssf' .* and 'llf'"):
        net.associationControl("lff")


def test_association_control_llf(tmp_path):
    # least loaded first: every roaming station's association policy, on
    # the engine medium (its decision); a linked station keeps its AP
    for how in ("method", "kwarg"):
        _emu._sessions.clear()
        net = Mininet_wifi(ac_method="llf") if how == "kwarg" else Mininet_wifi()
        if how == "method":
            net.associationControl("llf")
        for i in (1, 2):
            net.addAccessPoint(f"ap{i}", ssid="one", position=f"{40 * i},0,0")
        net.addLink("ap1", "ap2")
        for i in (1, 2, 3):
            net.addStation(f"sta{i}", position=f"{40 + 2 * i},0,0")
        net.addStation("sta4", position="45,0,0")
        net.addLink("sta4", "ap2")
        doc = document(net)
        for i in (1, 2, 3):
            w = doc["nodes"][f"sta{i}"]["wifi"]
            assert w["ssid"] == "one" and w["roaming"] == {"association": "llf"}
        assert doc["nodes"]["sta4"]["wifi"]["ap"] == "ap2" and "roaming" not in doc["nodes"]["sta4"]["wifi"]
        assert doc["wifi"]["backend"] == "engine"
        validate(doc, tmp_path)


def test_mobility_paths_and_models(tmp_path):
    net = Mininet_wifi()
    net.addAccessPoint("ap1", position="45,40,0")
    sta1 = net.addStation("sta1")
    sta2 = net.addStation("sta2")
    net.addStation("sta3", min_x=10, max_x=30, min_y=50, max_y=70, min_v=5, max_v=10)
    net.addStation("sta4", position="1,1,0")  # placed: never moves
    net.startMobility(time=0, mob_rep=2, reverse=True)
    net.mobility(sta1, "start", time=1, position="40.0,30.0,0.0")
    net.mobility(sta1, "stop", time=12, position="31.0,10.0,0.0")
    sta2.coord = ["40.0,40.0,0.0", "55.0,31.0,0.0", "55.0,81.0,0.0"]
    net.mobility(sta2, "start", time=2)
    net.mobility(sta2, "stop", time=22)
    net.stopMobility(time=23)
    net.setMobilityModel(time=0, model="RandomDirection", max_x=100, max_y=100, seed=20)
    doc = document(net)
    n = doc["nodes"]
    assert n["sta1"]["position"] == [40.0, 30.0, 0.0]
    # there and back (mob_rep=2, reverse): 11 s each way
    assert n["sta1"]["mobility"] == {"waypoints": [{"t": "1s", "pos": [40.0, 30.0, 0.0]},
                                                   {"t": "12s", "pos": [31.0, 10.0, 0.0]},
                                                   {"t": "23s", "pos": [40.0, 30.0, 0.0]}]}
    # through every coord, evenly in time
    w2 = n["sta2"]["mobility"]["waypoints"]
    assert [p["t"] for p in w2[:3]] == ["2s", "12s", "22s"] and w2[1]["pos"] == [55.0, 31.0, 0.0]
    # a model for the station without a position (and not on a path)
    assert n["sta3"]["mobility"] == {"model": "random-direction", "bounds": [[10.0, 50.0], [30.0, 70.0]],
                                     "speed": [5.0, 10.0], "seed": 20001}
    assert "mobility" not in n["sta4"]
    assert doc["schedules"] == [{"name": "mobility", "steps": [{"at": "23s", "mobility": "stop", "node": "sta3"}]}]
    validate(doc, tmp_path)
    _emu._sessions.clear()
    net = Mininet_wifi()
    net.addAccessPoint("ap1", position="50,50,0")
    net.addStation("sta1")
    net.setMobilityModel(model="RandomWayPoint", max_x=100, max_y=100, min_v=0.5, max_v=0.5, seed=20)
    m = document(net)["nodes"]["sta1"]["mobility"]
    # Mininet-WiFi draws pauses in [min_wt, max_wt] (1-5 s); emuctl pauses their mean
    assert m["model"] == "random-waypoint" and m["pause"] == "3s" and m["speed"] == [0.5, 0.5]


def test_topo():
    class T(Topo):
        def build(self):
            s, a, h = self.addStation("sta1", position="1,0,0"), self.addAccessPoint("ap1", ssid="t"), self.addHost("h1")
            self.addLink(s, a)
            self.addLink(a, h)
    t = T()
    assert t.stations() == ["sta1"] and t.aps() == ["ap1"] and t.hosts() == ["h1"] and t.switches() == []
    net = Mininet_wifi(topo=t, build=False)
    net.buildFromTopo(t)
    assert [s.name for s in net.stations] == ["sta1"] and [a.name for a in net.aps] == ["ap1"]
    doc = document(net)
    assert doc["nodes"]["sta1"]["wifi"]["ap"] == "ap1" and doc["links"][0]["endpoints"] == ["ap1:ap1-eth2", "h1:h1-eth0"]


@pytest.mark.parametrize("make,what", [
    (lambda n: n.addLink(n.addStation("s1"), cls=adhoc, ssid="x", passwd="123456789a"), "IBSS-RSN"),
    (lambda n: n.addLink(n.addStation("s1"), cls=adhoc, ssid="x", proto="olsrd"), "forward nothing"),
    (lambda n: n.addLink(n.addStation("s1"), cls=adhoc, ssid="x", ht_cap="VHT80"), "ht_cap"),
    (lambda n: n.addLink(n.addAccessPoint("ap1"), cls=adhoc, ssid="x"), "only stations"),
    (lambda n: n.addLink(n.addStation("s1"), cls=mesh, ssid="x", passwd="123456789a"), "SAE"),
    (lambda n: n.addStation("s1", wlans=2), "wlans"),
    (lambda n: n.addStation("s1", nvif=2), "nvif"),
    (lambda n: n.addStation("s1", range=-5), "range"),
    (lambda n: n.addAccessPoint("ap1", client_isolation=True), "client_isolation"),
    (lambda n: n.addAccessPoint("ap1", ssid="a,b"), "one wireless interface"),
    (lambda n: n.addAccessPoint("ap1", encrypt="wep", passwd="12345"), "WEP"),
    (lambda n: n.addAccessPoint("ap1", mode="p"), "mode"),
    (lambda n: n.addAccessPoint("ap1", encrypt="wpa2", passwd="123456789a", ieee80211w=1), "ieee80211w"),
    (lambda n: n.setPropagationModel(model="ITU", nFloors=2), "logDistance and friis"),
    (lambda n: n.setPropagationModel(model="logDistance", exp=3, variance=2), "variance"),
    (lambda n: n.setMobilityModel(model="TruncatedLevyWalk"), "TruncatedLevyWalk"),
    (lambda n: n.addCar("car1"), "vehicular"),
])
def test_refusals_name_what_is_not_honoured(make, what):
    net = Mininet_wifi()
    with pytest.raises(CompatError, match=what):
        make(net)


def test_net_refusals_and_passwords():
    for kw, what in (({"wmediumd_mode": error_prob}, "error_prob"), ({"fading_cof": 3}, "fading"),
                     ({"cca_th": -80}, "carrier sense"), ({"noise_th": -120}, "noise_th")):
        with pytest.raises(CompatError, match=what):
            net = Mininet_wifi(**kw)
            net.addAccessPoint("ap1")
            net.addStation("sta1")
            document(net)
        _emu._sessions.clear()
    net = Mininet_wifi()
    net.addAccessPoint("ap1", encrypt="wpa2", passwd="123456789a")
    net.addStation("sta1", encrypt="wpa2", passwd="other-password")
    with pytest.raises(CompatError, match="passwd differs"):
        document(net)
    _emu._sessions.clear()
    # management frame protection: WPA3's (as the network's default too), refused on a station of a WPA2 AP
    net = Mininet_wifi(ieee80211w="2", encrypt="wpa3", passwd="123456789a")
    assert net.addAccessPoint("ap1").security == "wpa3"
    _emu._sessions.clear()
    net = Mininet_wifi()
    net.addAccessPoint("ap1", encrypt="wpa2", passwd="123456789a")
    net.addStation("sta1", ieee80211w="2")
    with pytest.raises(CompatError, match="WPA3's here"):
        document(net)
    _emu._sessions.clear()
    net = Mininet_wifi(autoAssociation=False)
    net.addAccessPoint("ap1")
    net.addStation("sta1")
    with pytest.raises(CompatError, match="autoAssociation=False"):
        document(net)
    assert OVSKernelAP.__mro__[1].__name__ == "AP" and issubclass(Station, Host)


def test_range_sets_tx_power_as_mininet_wifi_does(tmp_path):
    net = Mininet_wifi()
    ap1 = net.addAccessPoint("ap1", position="0,0,0", range=30)
    net.addStation("sta1", position="29,0,0")
    net.setPropagationModel(model="logDistance", exp=5)
    doc = document(net)
    # the power whose signal at 30 m is the noise threshold (-91 dBm):
    # ceil(40.09 + 50 log10 30 - 91 - 2 x 5) = 13 dBm
    pl30 = friis1m(2412) + 50 * math.log10(30)
    assert ap1.txpower == math.ceil(pl30 - 91 - 10) == 13
    assert doc["nodes"]["ap1"]["wifi"]["txpower"] == "13dBm" and ap1.wintfs[0].txpower == 13
    assert -91 <= 13 + 10 - pl30 < -90
    validate(doc, tmp_path)
    _emu._sessions.clear()
    net = Mininet_wifi()
    net.addAccessPoint("ap1", range=5000)
    net.addStation("sta1")
    with pytest.raises(CompatError, match="up to 30 dBm"):
        document(net)


def test_adhoc_networks(tmp_path):
    """addLink(sta, cls=adhoc, ...): the first member's mode, channel and
    ht_cap make the network (HT40 makes it 802.11n, 40 MHz); members join
    it by SSID; a member on another channel is refused; the lab runs on
    the engine backend; ip6= goes into the document (link-local ones are
    set once the lab is up); the path loss's reference is the network's
    channel when there is no access point."""
    net = Mininet_wifi(link=wmediumd, wmediumd_mode=interference)
    s1 = net.addStation("sta1", ip6="fd00::1", position="10,10,0")
    s2 = net.addStation("sta2", ip6="fe80::2", position="50,10,0")
    s3 = net.addStation("sta3", position="90,10,0")
    net.setPropagationModel(model="logDistance", exp=4)
    net.addLink(s1, cls=adhoc, intf="sta1-wlan0", ssid="adhocNet", mode="g", channel=5, ht_cap="HT40+")
    net.addLink(s2, cls=adhoc, intf="sta2-wlan0", ssid="adhocNet", mode="g", channel=5)
    with pytest.raises(CompatError, match="one channel"):
        net.addLink(s3, cls=adhoc, ssid="adhocNet", channel=6)
    with pytest.raises(CompatError, match="wireless interface is sta3-wlan0"):
        net.addLink(s3, cls=adhoc, ssid="adhocNet", channel=5, intf="sta3-wlan1")
    net.addLink(s3, cls=adhoc, ssid="adhocNet", channel=5)
    with pytest.raises(CompatError, match="joined to adhocNet already"):
        net.addLink(s3, cls=adhoc, ssid="other")
    doc = document(net)
    assert doc["wifi"]["adhoc"] == {"adhocNet": {"mode": "n", "band": "2.4", "channel": 5, "width": 40}}
    assert "backend" not in doc["wifi"]  # the kernel's IBSS on hwsim, else the engine's
    assert [doc["nodes"][n]["wifi"]["adhoc"] for n in ("sta1", "sta2", "sta3")] == ["adhocNet"] * 3
    assert doc["nodes"]["sta1"]["wifi"]["ip"] == ["10.0.0.1/8", "fd00::1/64"]
    assert doc["nodes"]["sta2"]["wifi"]["ip"] == ["10.0.0.2/8"] and s2.ip6 == "fe80::2/64"
    assert abs(float(doc["wifi"]["medium"]["path_loss"]["ref_loss"][:-2]) - friis1m(2432)) < 1e-3
    assert s1.wintfs[0].associatedTo == "adhoc"
    validate(doc, tmp_path)


def test_mesh_networks(tmp_path):
    """addLink(sta, cls=mesh, ...): members join a mesh by its mesh ID
    (wifi: {mesh: ...}, the backend left to the machine: the kernel's mesh
    on mac80211_hwsim); one name is one kind of network."""
    net = Mininet_wifi(link=wmediumd, wmediumd_mode=interference)
    s1 = net.addStation("sta1", position="10,10,0")
    s2 = net.addStation("sta2", position="50,10,0")
    s3 = net.addStation("sta3", position="90,10,0")
    net.addLink(s1, cls=mesh, intf="sta1-wlan0", ssid="meshNet", channel=5, ht_cap="HT40+")
    net.addLink(s2, cls=mesh, ssid="meshNet", channel=5)
    with pytest.raises(CompatError, match="one network is one kind"):
        net.addLink(s3, cls=adhoc, ssid="meshNet", channel=5)
    net.addLink(s3, cls=mesh, ssid="meshNet", channel=5)
    doc = document(net)
    assert doc["wifi"]["mesh"] == {"meshNet": {"mode": "n", "band": "2.4", "channel": 5, "width": 40}}
    assert "adhoc" not in doc["wifi"] and "backend" not in doc["wifi"]
    assert [doc["nodes"][n]["wifi"]["mesh"] for n in ("sta1", "sta2", "sta3")] == ["meshNet"] * 3
    assert s1.wintfs[0].associatedTo == "mesh"
    validate(doc, tmp_path)
