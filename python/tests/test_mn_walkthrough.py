"""Mininet's walkthrough (mininet.org/walkthrough), line by line, on
``emuctl mn`` (root tier): what a user types first, driven with pexpect as
Mininet's own tests drive its examples, with the output each step promises
and measured numbers where the walkthrough shapes a link."""

import os
import re
import subprocess
import time

import pytest
from conftest import retry_starved

pexpect = pytest.importorskip("pexpect", reason="needs Debian's python3-pexpect (make deps)")

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="root tier: needs root (CAP_NET_ADMIN) to build labs")

PROMPT = "mininet> "


def mn(*args: str, timeout: int = 120) -> subprocess.CompletedProcess:
    """emuctl mn ARGS, run to its end; stdout and stderr together."""
    return subprocess.run([os.environ["EMUCTL"], "mn", *args], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, timeout=timeout)


class Session:
    """An interactive ``emuctl mn`` at its prompt."""

    def __init__(self, *args: str) -> None:
        self.p = pexpect.spawn(os.environ["EMUCTL"], ["mn", *args], encoding="utf-8", timeout=90,
                               dimensions=(50, 200))
        self.banner = self.wait()

    def wait(self, timeout: int = 90) -> str:
        self.p.expect(PROMPT, timeout=timeout)
        return self.p.before

    def run(self, line: str, timeout: int = 90) -> str:
        """Type line; what it printed before the next prompt (the echo cut)."""
        self.p.sendline(line)
        out = self.wait(timeout).replace("\r\n", "\n")
        return out.split("\n", 1)[1] if "\n" in out else ""

    def exit(self) -> str:
        self.p.sendline("exit")
        self.p.expect(pexpect.EOF, timeout=90)
        self.p.close()
        assert self.p.exitstatus == 0, self.p.before
        return self.p.before.replace("\r\n", "\n")


def mbits(s: str) -> float:
    v, unit = s.split()[:2]
    return float(v) * {"Kbits/sec": 1e-3, "Mbits/sec": 1.0, "Gbits/sec": 1e3}[unit]


def test_part1_everyday_use():
    """Part 1: mn -h; mn and its CLI (nodes, net, dump, commands in hosts
    and switches, ping, pingall, a web server); exit; mn -c."""
    r = mn("-h")
    assert r.returncode == 0
    for opt in ("--topo", "--switch", "--controller", "--link", "--test", "--mac", "--arp", "--ipbase", "--clean"):
        assert opt in r.stdout, opt
    s = Session()
    assert "*** Starting CLI:" in s.banner
    assert s.run("nodes").split() == ["available", "nodes", "are:", "c0", "h1", "h2", "s1"]
    net = s.run("net")
    assert "h1 h1-eth0:s1-eth1" in net and "h2 h2-eth0:s1-eth2" in net
    assert "s1 lo:  s1-eth1:h1-eth0 s1-eth2:h2-eth0" in net
    dump = s.run("dump")
    assert re.search(r"<Host h1: h1-eth0:10\.0\.0\.1 pid=\d+>", dump), dump
    assert re.search(r"<OVSSwitch s1: lo:127\.0\.0\.1,s1-eth1:None,s1-eth2:None pid=\d+>", dump), dump
    assert re.search(r"<Controller c0: 127\.0\.0\.1:6653 pid=\d+>", dump), dump
    # a host has only its own interfaces; the switch runs in the machine's
    # namespace, as Mininet's does, and sees the machine's as well
    h1if = s.run("h1 ifconfig -a")
    assert "h1-eth0" in h1if and "inet 10.0.0.1" in h1if and "s1-eth1" not in h1if
    s1if = s.run("s1 ifconfig -a")
    assert "s1-eth1" in s1if and "s1-eth2" in s1if and "h1-eth0" not in s1if
    assert "PID" in s.run("h1 ps -a")
    # node names in a command are replaced by their addresses
    ping = s.run("h1 ping -c 1 h2")
    assert "PING 10.0.0.2" in ping and "1 packets transmitted, 1 received" in ping
    assert "*** Results: 0% dropped (2/2 received)" in s.run("pingall")
    # the walkthrough's web server in h1, fetched from h2
    s.run("h1 python3 -m http.server 80 &")
    page = ""
    for _ in range(50):
        page = s.run("h2 wget -O - h1")
        if "Directory listing" in page:
            break
        time.sleep(0.1)
    assert "Directory listing" in page, page
    s.run("h1 kill %python3")
    tail = s.exit()
    assert "*** Stopping 2 hosts" in tail and "completed in" in tail
    r = mn("-c")
    assert r.returncode == 0, r.stdout


def test_part2_startup_options(tmp_path):
    """Part 2: --test pingpair / iperf, other topologies, shaped links
    (measured), verbosity, a custom topology, --mac, --arp, --ipbase,
    other switch types; and what the layer refuses, saying so."""
    r = mn("--test", "pingpair")
    assert r.returncode == 0 and "*** Results: 0% dropped (2/2 received)" in r.stdout, r.stdout
    r = mn("--test", "iperf")
    assert r.returncode == 0, r.stdout
    rates = re.search(r"\*\*\* Results: \['([^']+)', '([^']+)'\]", r.stdout)
    assert rates and mbits(rates.group(1)) > 50, r.stdout
    r = mn("--test", "pingall", "--topo", "single,3")
    assert "*** Results: 0% dropped (6/6 received)" in r.stdout, r.stdout
    r = mn("--test", "pingall", "--topo", "linear,4")
    assert "*** Results: 0% dropped (12/12 received)" in r.stdout, r.stdout
    r = mn("--test", "pingall", "--topo", "tree,depth=2,fanout=2")
    assert "*** Results: 0% dropped (12/12 received)" in r.stdout, r.stdout
    # reversed: the hosts' switch ports numbered from the top
    r = mn("--topo", "reversed,3", "--pre", str(_script(tmp_path, "net\n")), "--test", "none")
    assert "h1 h1-eth0:s1-eth3" in r.stdout and "h3 h3-eth0:s1-eth1" in r.stdout, r.stdout

    # Link variations: 10 Mbit/s and 10 ms on each link (h1-s1, s1-h2)
    s = Session("--link", "tc,bw=10,delay=10ms")
    res = re.search(r"\*\*\* Results: \['([^']+)', '([^']+)'\]",
                    retry_starved(lambda: s.run("iperf", timeout=120), "iperf h1 h2"))
    assert res, "no iperf result"
    cap = 10 * 1448 / 1514
    server = mbits(res.group(1))
    assert 0.9 * cap <= server <= 1.02 * cap, res.group(0)
    ping = s.run("h1 ping -c10 h2")
    m = re.search(r"rtt min/avg/max/mdev = ([\d.]+)/([\d.]+)/", ping)
    assert m, ping
    # physics: 4 x 10 ms, plus each echo's serialisation at 10 Mbit/s
    assert 40.0 <= float(m.group(1)) <= 41.5, ping
    s.exit()

    # verbosity: output prints only what commands print
    r = mn("-v", "output", "--test", "pingall")
    assert "*** Creating network" not in r.stdout and "*** Results: 0% dropped" in r.stdout, r.stdout

    # a custom topology file, as the walkthrough's topo-2sw-2host.py
    topo = tmp_path / "topo-2sw-2host.py"
    topo.write_text(
        "from mininet.topo import Topo\n"
        "class MyTopo(Topo):\n"
        "    def build(self):\n"
        "        leftHost, rightHost = self.addHost('h1'), self.addHost('h2')\n"
        "        leftSwitch, rightSwitch = self.addSwitch('s3'), self.addSwitch('s4')\n"
        "        self.addLink(leftHost, leftSwitch)\n"
        "        self.addLink(leftSwitch, rightSwitch)\n"
        "        self.addLink(rightSwitch, rightHost)\n"
        "topos = {'mytopo': (lambda: MyTopo())}\n")
    r = mn("--custom", str(topo), "--topo", "mytopo", "--test", "pingall")
    assert "*** Results: 0% dropped (2/2 received)" in r.stdout and "s3 s4" in r.stdout, r.stdout

    # ID = MAC; static ARP; another address base
    s = Session("--mac", "--arp", "--ipbase", "10.1.0.0/16")
    h1if = s.run("h1 ifconfig h1-eth0")
    assert "ether 00:00:00:00:00:01" in h1if and "inet 10.1.0.1" in h1if and "netmask 255.255.0.0" in h1if, h1if
    neigh = s.run("h1 ip neigh show 10.1.0.2")
    assert "lladdr 00:00:00:00:00:02 PERMANENT" in neigh, neigh
    assert "02:00:00:00:00:02" not in neigh
    s.exit()

    # other switch types: the user switch and the kernel OVS switch
    for sw in ("user", "ovsk"):
        r = mn("--switch", sw, "--test", "iperf")
        res = re.search(r"\*\*\* Results: \['([^']+)', '([^']+)'\]", r.stdout)
        assert r.returncode == 0 and res and mbits(res.group(1)) > 50, (sw, r.stdout)

    # what the layer cannot do is refused, naming the option
    for opt, name in (("-x", "--xterms"), ("--innamespace", "--innamespace")):
        r = mn(opt, "--test", "none")
        assert r.returncode == 2 and f"{name}: not offered" in r.stdout, r.stdout
    r = mn("--test", "nonsense")
    assert r.returncode == 2 and "unknown test 'nonsense'" in r.stdout, r.stdout


def test_part3_cli():
    """Part 3: the CLI's py (expressions and node methods), link down and
    up (measured with ping), xterm's answer."""
    s = Session()
    assert s.run("py 'hello ' + 'world'").strip() == "hello world"
    assert "'h1'" in s.run("py locals()")
    assert "IP" in s.run("py dir(s1)")
    assert s.run("py h1.IP()").strip() == "10.0.0.1"
    s.run("link s1 h1 down")
    assert "1 received" not in s.run("h1 ping -c1 -W1 h2")
    s.run("link s1 h1 up")
    assert "1 packets transmitted, 1 received" in s.run("h1 ping -c1 h2")
    x = s.run("xterm h1")
    assert "emuctl shell" in x and "h1" in x, x
    s.exit()


def _script(tmp_path, text: str):
    p = tmp_path / "cli.txt"
    p.write_text(text)
    return p
