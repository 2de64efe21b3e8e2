"""``emuctl mn``: Mininet's ``mn`` command on emuctl's Mininet layer.

Written from ``mn``'s documented options (``mn --help``, Mininet's
walkthrough): ``--topo``, ``--switch``, ``--host``, ``--controller``,
``--link``, ``--mac``, ``--arp``, ``--ipbase``, ``--test``, ``--custom``,
``--pre``/``--post``, ``-c``, ``-v``, ``--version``. Without ``--test`` it
starts the network and its CLI; the network is an emuctl lab.
"""

from __future__ import annotations

import optparse
import sys
import time
from typing import Any, Callable

from mininet import VERSION
from mininet._emu import CompatError
from mininet.clean import cleanup
from mininet.cli import CLI
from mininet.link import Link, OVSLink, TCLink, TCULink
from mininet.log import LEVELS, error, info, lg, output
from mininet.net import Mininet
from mininet.node import (NOX, CPULimitedHost, DefaultController, Host, IVSSwitch, NullController,
                          OVSBridge, OVSController, OVSSwitch, RemoteController, Ryu, UserSwitch)
from mininet.nodelib import LinuxBridge
from mininet.topo import LinearTopo, MinimalTopo, SingleSwitchReversedTopo, SingleSwitchTopo
from mininet.topolib import TorusTopo, TreeTopo
from mininet.util import buildTopo, customClass, specialClass

TOPOS: dict[str, Any] = {"minimal": MinimalTopo, "linear": LinearTopo, "reversed": SingleSwitchReversedTopo,
                         "single": SingleSwitchTopo, "tree": TreeTopo, "torus": TorusTopo}
SWITCHES: dict[str, Any] = {"user": UserSwitch, "ovs": OVSSwitch, "ovsbr": OVSBridge, "ovsk": OVSSwitch,
                            "ivs": IVSSwitch, "lxbr": LinuxBridge, "default": OVSSwitch}
HOSTS: dict[str, Any] = {"proc": Host, "rt": specialClass(CPULimitedHost, defaults=dict(sched="rt")),
                         "cfs": specialClass(CPULimitedHost, defaults=dict(sched="cfs"))}
CONTROLLERS: dict[str, Any] = {"ref": OVSController, "ovsc": OVSController, "nox": NOX, "remote": RemoteController,
                               "ryu": Ryu, "default": DefaultController, "none": NullController}
LINKS: dict[str, Any] = {"default": Link, "tc": TCLink, "tcu": TCULink, "ovs": OVSLink}
TESTS: dict[str, Callable[[Mininet], Any]] = {
    "pingall": lambda net: net.pingAll(), "pingpair": lambda net: net.pingPair(),
    "pingallfull": lambda net: net.pingAllFull(), "pingpairfull": lambda net: net.pingPairFull(),
    "iperf": lambda net: net.iperf(), "iperfudp": lambda net: net.iperf(l4Type="UDP"),
    "all": lambda net: (net.pingAll(), net.iperf()),
}


def dictOption(parser: optparse.OptionParser, choices: dict[str, Any], default: str, name: str, **kw: Any) -> None:
    """An option whose value names an entry of choices (with ,args)."""
    helpStr = "|".join(sorted(choices)) + "[,param=value...]"
    parser.add_option("--" + name, type="string", default=default, help=helpStr, **kw)


def parse(argv: list[str]) -> optparse.Values:
    """mn's options."""
    p = optparse.OptionParser(usage="emuctl mn [options]\n(type emuctl mn -h for details)",
                              description="Creates a Mininet network (an emuctl lab) from the command line.")
    dictOption(p, SWITCHES, "default", "switch")
    dictOption(p, HOSTS, "proc", "host")
    p.add_option("--controller", type="string", default=[], action="append",
                 help="|".join(sorted(CONTROLLERS)) + "[,param=value...]")
    dictOption(p, LINKS, "default", "link")
    dictOption(p, TOPOS, "minimal", "topo")
    p.add_option("--clean", "-c", action="store_true", default=False, help="clean and exit")
    p.add_option("--custom", type="string", default=[], action="append", help="read custom classes or params from .py file(s)")
    p.add_option("--test", default=[], action="append", help="|".join(sorted(list(TESTS) + ["build", "none"])))
    p.add_option("--xterms", "-x", action="store_true", default=False, help="spawn xterms for each node")
    p.add_option("--ipbase", "-i", type="string", default="10.0.0.0/8", help="base IP address for hosts")
    p.add_option("--mac", action="store_true", default=False, help="automatically set host MACs")
    p.add_option("--arp", action="store_true", default=False, help="set all-pairs ARP entries")
    p.add_option("--verbosity", "-v", type="choice", choices=list(LEVELS), default="info",
                 help="|".join(LEVELS))
    p.add_option("--innamespace", action="store_true", default=False, help="sw and ctrl in namespace?")
    p.add_option("--listenport", type="int", default=6654, help="base port for passive switch listening")
    p.add_option("--nolistenport", action="store_true", default=False, help="don't use passive listening port")
    p.add_option("--pre", type="string", default=None, help="CLI script to run before tests")
    p.add_option("--post", type="string", default=None, help="CLI script to run after tests")
    p.add_option("--pin", action="store_true", default=False, help="pin hosts to CPU cores")
    p.add_option("--nat", action="store_true", default=False, help="[option=val...] adds a NAT to the default namespace")
    p.add_option("--version", action="store_true", default=False, help="prints the version and exits")
    p.add_option("--wait", "-w", action="store_true", default=False, help="wait for switches to connect")
    p.add_option("--twait", "-t", action="store", type="int", dest="wait", help="timed wait (s) for switches")
    opts, args = p.parse_args(argv)
    if args:
        p.error(f"unexpected arguments: {' '.join(args)} (options only; see emuctl mn -h)")
    return opts


def custom(path: str) -> None:
    """Merge a --custom file's topos, switches, hosts, controllers, links and tests."""
    g: dict[str, Any] = {}
    with open(path) as f:
        exec(compile(f.read(), path, "exec"), g, g)
    for name, table in (("topos", TOPOS), ("switches", SWITCHES), ("hosts", HOSTS),
                        ("controllers", CONTROLLERS), ("links", LINKS), ("tests", TESTS)):
        table.update(g.get(name, {}))


def main(argv: list[str]) -> int:
    """Run mn."""
    opts = parse(argv)
    if opts.version:
        print(f"{VERSION} (emuctl's Mininet layer)")
        return 0
    lg.setLogLevel(opts.verbosity)
    if opts.clean:
        cleanup()
        return 0
    for path in opts.custom:
        custom(path)
    for name, bad in (("--xterms", opts.xterms), ("--innamespace", opts.innamespace), ("--pin", opts.pin),
                      ("--nat", opts.nat)):
        if bad:
            error(f"*** {name}: not offered by emuctl's Mininet layer (see README, Mininet scripts)\n")
            return 2
    start = time.time()
    try:
        topo = buildTopo(TOPOS, opts.topo)
        switch = customClass(SWITCHES, opts.switch)
        host = customClass(HOSTS, opts.host)
        controller = [customClass(CONTROLLERS, c) for c in opts.controller] or DefaultController
        if opts.controller == ["none"]:
            controller = NullController
        link = customClass(LINKS, opts.link)
        tests = [t for t in opts.test]
        for t in tests:
            if t not in TESTS and t not in ("build", "none"):
                error(f"*** unknown test {t!r} (valid: {', '.join(sorted(list(TESTS) + ['build', 'none']))})\n")
                return 2
        net = Mininet(topo=topo, switch=switch, host=host, controller=controller, link=link,
                      ipBase=opts.ipbase, autoSetMacs=opts.mac, autoStaticArp=opts.arp,
                      listenPort=None if opts.nolistenport else opts.listenport, waitConnected=bool(opts.wait))
        if tests == ["build"]:
            net.build()
            info("*** Test: build\n")
            net.stop()
        else:
            net.start()
            if opts.pre:
                CLI(net, script=opts.pre)
            if not tests:
                CLI(net)
            for t in tests:
                if t in TESTS:
                    TESTS[t](net)
            if opts.post:
                CLI(net, script=opts.post)
            net.stop()
    except CompatError as e:
        error(f"*** {e}\n")
        return 1
    except Exception as e:
        error(f"*** {type(e).__name__}: {e}\n")
        raise
    output(f"completed in {time.time() - start:0.3f} seconds\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

