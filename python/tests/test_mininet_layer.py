"""The Mininet layer's mapping, without root: Mininet's names, ports and
addresses, TCLink parameters → emuctl link keys, topology → the lab's
document, and the refusals that name what emuctl cannot honour. The
root tier is ``make test-mininet`` (Mininet's own example tests) and
test_mininet_root.py."""

import shutil
from pathlib import Path

import pytest

from conftest import COMPAT

import mininet  # noqa: E402
from mininet._emu import CompatError  # noqa: E402
from mininet.link import TCLink, tcKeys  # noqa: E402
from mininet.net import Mininet  # noqa: E402
from mininet.node import NOX, Controller, OVSBridge, OVSSwitch, RemoteController  # noqa: E402
from mininet.nodelib import NAT, LinuxBridge  # noqa: E402
from mininet.topo import LinearTopo, SingleSwitchTopo, Topo  # noqa: E402
from mininet.topolib import TorusTopo, TreeTopo  # noqa: E402
from mininet.util import custom, ipAdd, irange, netParse, natural, splitArgs  # noqa: E402


def test_the_layer_is_ours():
    assert Path(mininet.__file__).resolve().parent == COMPAT / "mininet"


pytestmark = pytest.mark.usefixtures("no_lab")


def test_util():
    assert ipAdd(1) == "10.0.0.1" and ipAdd(258, 8, 0x0a000000) == "10.0.1.2"
    assert netParse("192.168.1.0/24") == (0xc0a80100, 24)
    assert list(irange(1, 3)) == [1, 2, 3]
    assert sorted(["h10", "h2", "h1"], key=natural) == ["h1", "h2", "h10"]
    assert splitArgs("tree,2,fanout=3") == ("tree", [2], {"fanout": 3})
    f = custom(dict, a=1)
    assert f(b=2) == {"a": 1, "b": 2} and f(a=3) == {"a": 3}


def test_topologies():
    t = SingleSwitchTopo(3)
    assert t.hosts() == ["h1", "h2", "h3"] and t.switches() == ["s1"]
    assert t.port("h1", "s1") == (0, 1) and t.port("h3", "s1") == (0, 3)
    t = LinearTopo(k=3, n=2)
    assert t.hosts() == ["h1s1", "h1s2", "h1s3", "h2s1", "h2s2", "h2s3"]
    assert len(t.links()) == 8
    t = TreeTopo(depth=2, fanout=3)
    assert len(t.hosts()) == 9 and len(t.switches()) == 4 and len(t.links()) == 12
    assert len(TorusTopo(3, 3).links()) == 9 + 18


def test_tclink_keys():
    keys, desc = tcKeys(bw=10, delay="5ms", jitter="1ms", loss=2, max_queue_size=100)
    assert keys == {"rate": "10mbit", "delay": "5ms", "jitter": "1ms", "loss": "2%", "queue": 100}
    assert desc == "10.00Mbit 5ms delay 1ms jitter 2.00000% loss"
    assert tcKeys(bw=0.5)[0] == {"rate": "0.5mbit"}
    assert tcKeys(enable_ecn=True, max_queue_size=50)[0] == {"queue": "red limit 50 ecn"}
    assert tcKeys(enable_red=True)[0] == {"queue": "red"}
    for bad in ({"bw": -1}, {"bw": "10"}, {"loss": 200}, {"max_queue_size": 0}):
        with pytest.raises(CompatError) as e:
            tcKeys(**bad)
        assert list(bad)[0] in str(e.value)


def test_document_has_mininets_names_and_addresses():
    net = Mininet(topo=SingleSwitchTopo(2), build=False)
    net.buildFromTopo(net.topo)
    doc = net.session.document()
    assert doc["routing"] == "none" and doc["addressing"] == {"auto": False}
    # Mininet's default switch: Open vSwitch with the script's names, secure
    # (only its controller's flows), where Open vSwitch is installed
    ovs = {"kind": "switch", "type": "ovs", "names": "topology", "fail_mode": "secure"}
    bridge = {"kind": "switch", "type": "linux-bridge"}
    assert doc["nodes"] == {"h1": {"kind": "host"}, "h2": {"kind": "host"},
                            "s1": ovs if shutil.which("ovs-vswitchd") else bridge}
    net = Mininet(topo=SingleSwitchTopo(2), build=False, switch=LinuxBridge)
    net.buildFromTopo(net.topo)
    assert net.session.document()["nodes"]["s1"] == bridge
    net = Mininet(topo=SingleSwitchTopo(2), build=False, switch=OVSBridge)
    net.buildFromTopo(net.topo)
    if shutil.which("ovs-vswitchd"):
        assert net.session.document()["nodes"]["s1"] == dict(ovs, fail_mode="standalone")
    with pytest.raises(CompatError, match="failMode"):
        OVSSwitch("s9", failMode="open")
    assert doc["links"] == [
        {"endpoints": ["h1:h1-eth0", "s1:s1-eth1"], "ip": {"h1": "10.0.0.1/8"}},
        {"endpoints": ["h2:h2-eth0", "s1:s1-eth2"], "ip": {"h2": "10.0.0.2/8"}},
    ]
    assert net["h1"].IP() == "10.0.0.1" and net["s1"].intfNames() == ["lo", "s1-eth1", "s1-eth2"]
    assert [n for n in net] == ["h1", "h2", "s1", "c0"]


def test_tclink_params_become_directions():
    class T(Topo):
        def build(self):
            h1, h2 = self.addHost("h1", ip="192.168.0.1/24"), self.addHost("h2")
            self.addLink(h1, h2, cls=TCLink, bw=10, delay="5ms", params2={"loss": 1})
            self.addLink(h1, h2, cls=TCLink, port1=7, intfName2="h2-up")
    net = Mininet(topo=T(), build=False)
    net.buildFromTopo(net.topo)
    l1, l2 = net.session.document()["links"]
    assert l1["endpoints"] == ["h1:h1-eth0", "h2:h2-eth0"]
    assert l1["ip"] == {"h1": "192.168.0.1/24", "h2": "10.0.0.2/8"}
    assert l1["link"] == {"a->b": {"rate": "10mbit", "delay": "5ms"},
                          "b->a": {"rate": "10mbit", "delay": "5ms", "loss": "1%"}}
    assert l2["endpoints"] == ["h1:h1-eth7", "h2:h2-up"] and "link" not in l2


def test_refusals_name_what_is_not_honoured():
    net = Mininet(build=False)
    with pytest.raises(CompatError, match="NOX"):
        NOX("c1")
    with pytest.raises(CompatError, match="inNamespace=True"):
        Controller("c2", inNamespace=True)
    assert RemoteController("c3", ip="127.0.0.1", port=6999).target() == "tcp:127.0.0.1:6999"
    with pytest.raises(CompatError, match="inNamespace=False"):
        NAT("nat0", inNamespace=False)
    h = net.addHost("h1")
    root = net.addHost("root", inNamespace=False)
    net.addLink(h, root)  # a node of kind root: its end in the machine's namespace
    doc = net.session.document()
    assert doc["nodes"]["root"] == {"kind": "root"} and doc["nodes"]["h1"] == {"kind": "host"}
    assert {"endpoints": ["h1:h1-eth0", "root:root-eth0"], "ip": {"h1": "10.0.0.1/8", "root": "10.0.0.2/8"}} in doc["links"]
    with pytest.raises(CompatError, match="host's namespace"):
        net.addLink(h, Controller("c4", port=6998))  # a controller is a program, not a node
    with pytest.raises(CompatError, match="exists already"):
        net.addHost("h1")
    with pytest.raises(CompatError, match="15"):
        net.addLink(h, net.addSwitch("s1"), intfName1="a-very-long-interface-name")
    with pytest.raises(CompatError, match="speedup"):
        net.addLink(h, net.addSwitch("s2"), cls=TCLink, speedup=2)
    with pytest.raises(CompatError, match="xterms"):
        Mininet(xterms=True)
