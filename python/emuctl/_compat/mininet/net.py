"""Mininet's network object (``mininet.net``) on one emuctl lab.

``Mininet(topo, ...)`` declares the topology's nodes and links with the
names, ports, addresses and MACs Mininet would give them; ``build()`` (or
``start()``) brings them up as one emuctl lab; nodes and links added or
deleted afterwards change the running lab. ``pingAll`` of every host runs
emuctl's parallel pingall (one ping per pair, as Mininet's); the other
measurements run the same tools Mininet runs (ping, iperf 2) in the
nodes' shells and print what Mininet prints.
"""

from __future__ import annotations

import math
import os
import random
import re
import select
import time
from typing import Any, Iterator, Optional

from mininet._emu import CompatError, Session
from mininet.link import Intf, Link
from mininet.log import debug, error, info, output, warn
from mininet.node import Controller, DefaultController, Host, OVSKernelSwitch, Switch
from mininet.util import ipAdd, macColonHex, netParse, waitListening

VERSION = "2.3.0"


class Mininet:
    """A network of hosts, switches, controllers and links on an emuctl lab."""

    def __init__(self, topo: Any = None, switch: Any = OVSKernelSwitch, host: Any = Host,
                 controller: Any = DefaultController, link: Any = Link, intf: Any = Intf,
                 build: bool = True, xterms: bool = False, cleanup: bool = False, ipBase: str = "10.0.0.0/8",
                 inNamespace: bool = False, autoSetMacs: bool = False, autoStaticArp: bool = False,
                 autoPinCpus: bool = False, listenPort: Optional[int] = None, waitConnected: bool = False) -> None:
        if xterms:
            raise CompatError("Mininet(xterms=True): emuctl opens no X terminals; use `emuctl shell -l LAB NODE`")
        if autoPinCpus:
            raise CompatError("Mininet(autoPinCpus=True): CPU pinning is not modelled by emuctl's Mininet layer")
        self.topo = topo
        self.switch, self.host, self.controller = switch, host, controller
        self.link, self.intf = link, intf
        self.ipBase = ipBase
        self.ipBaseNum, self.prefixLen = netParse(ipBase)
        hostIP = (0xffffffff >> self.prefixLen) & self.ipBaseNum
        self.nextIP = hostIP if hostIP > 0 else 1
        self.inNamespace = inNamespace
        self.xterms, self.cleanup = xterms, cleanup
        self.autoSetMacs, self.autoStaticArp = autoSetMacs, autoStaticArp
        self.numCores = os.cpu_count() or 1
        self.nextCore = 0
        self.listenPort = listenPort
        self.waitConn = waitConnected
        self.hosts: list[Any] = []
        self.switches: list[Any] = []
        self.controllers: list[Any] = []
        self.links: list[Any] = []
        self.nameToNode: dict[str, Any] = {}
        self.terms: list[Any] = []
        self.session = Session()
        self.session.standalone = False
        self.built = False
        self._configured: set[str] = set()
        if topo and build:
            self.build()

    # adding and removing

    def waitConnected(self, timeout: Optional[float] = None, delay: float = 0.5) -> bool:
        """Wait until every switch is connected to one of its controllers
        (Linux bridges and standalone OVS bridges are at once); True if
        they all are within timeout seconds (None: no limit)."""
        info("*** Waiting for switches to connect\n")
        t0 = time.time()
        remaining = list(self.switches)
        while True:
            for s in list(remaining):
                if s.connected():
                    info(s.name + " ")
                    remaining.remove(s)
            if not remaining:
                info("\n")
                return True
            if timeout is not None and time.time() - t0 >= timeout:
                break
            time.sleep(delay)
        warn("Timed out after %d seconds\n" % (time.time() - t0))
        for s in remaining:
            if not s.connected():
                warn("Warning: %s is not connected to a controller\n" % s.name)
            else:
                remaining.remove(s)
        return not remaining

    def addHost(self, name: str, cls: Any = None, **params: Any) -> Any:
        """Add a host (address from ipBase unless ``ip`` is given)."""
        defaults: dict[str, Any] = {"ip": ipAdd(self.nextIP, ipBaseNum=self.ipBaseNum, prefixLen=self.prefixLen)
                                    + "/%s" % self.prefixLen}
        if self.autoSetMacs:
            defaults["mac"] = macColonHex(self.nextIP)
        self.nextIP += 1
        defaults.update(params)
        if not cls:
            cls = self.host
        h = cls(name, **defaults)
        self.hosts.append(h)
        self.nameToNode[name] = h
        return h

    def delNode(self, node: Any, nodes: Optional[list[Any]] = None) -> None:
        """Delete a node and its links."""
        if nodes is None:
            nodes = (self.hosts if node in self.hosts else self.switches if node in self.switches
                     else self.controllers if node in self.controllers else [])
        for link in [l for l in self.links if node in (l.intf1.node, l.intf2.node)]:
            self.links.remove(link)
        node.stop(deleteIntfs=True)
        node.session.removeNode(node)
        if node in nodes:
            nodes.remove(node)
        self.nameToNode.pop(node.name, None)

    def delHost(self, host: Any) -> None:
        """Delete a host."""
        self.delNode(host, nodes=self.hosts)

    def addSwitch(self, name: str, cls: Any = None, **params: Any) -> Any:
        """Add a switch."""
        defaults: dict[str, Any] = {"listenPort": self.listenPort, "inNamespace": self.inNamespace}
        defaults.update(params)
        if not cls:
            cls = self.switch
        sw = cls(name, **defaults)
        if not self.inNamespace and self.listenPort:
            self.listenPort += 1
        self.switches.append(sw)
        self.nameToNode[name] = sw
        return sw

    def delSwitch(self, switch: Any) -> None:
        """Delete a switch."""
        self.delNode(switch, nodes=self.switches)

    def addController(self, name: Any = "c0", controller: Any = None, **params: Any) -> Any:
        """Add a controller (a placeholder: emuctl's switches learn by themselves)."""
        if not controller:
            controller = self.controller
        if isinstance(name, Controller):
            c = name
            name = c.name
        else:
            c = controller(name, **params)
        if c:
            self.controllers.append(c)
            self.nameToNode[name] = c
        return c

    def delController(self, controller: Any) -> None:
        """Delete a controller."""
        self.delNode(controller, nodes=self.controllers)

    def addNAT(self, name: str = "nat0", connect: bool = True, inNamespace: bool = False, **params: Any) -> Any:
        """A NAT to the host's network is not offered: emuctl labs do not reach the Internet."""
        raise CompatError(f"addNAT({name}): emuctl's labs stay off the host's network (a NAT node between "
                          "two lab networks works: mininet.nodelib.NAT with inNamespace=True)")

    def getNodeByName(self, *args: str) -> Any:
        """Nodes by name (one node for one name)."""
        if len(args) == 1:
            return self.nameToNode[args[0]]
        return [self.nameToNode[n] for n in args]

    def get(self, *args: str) -> Any:
        """Nodes by name."""
        return self.getNodeByName(*args)

    def __getitem__(self, key: str) -> Any:
        return self.nameToNode[key]

    def __delitem__(self, key: str) -> None:
        self.delNode(self.nameToNode[key])

    def __contains__(self, item: str) -> bool:
        return item in self.nameToNode

    def keys(self) -> list[str]:
        """Node names: hosts, switches, controllers."""
        return list(self)

    def values(self) -> list[Any]:
        """Nodes."""
        return [self[n] for n in self]

    def items(self) -> list[tuple[str, Any]]:
        """(name, node) pairs."""
        return list(zip(self.keys(), self.values()))

    def __iter__(self) -> Iterator[str]:
        for node in self.hosts + self.switches + self.controllers:
            yield node.name

    def __len__(self) -> int:
        return len(self.controllers) + len(self.switches) + len(self.hosts)

    @staticmethod
    def randMac() -> str:
        """A random locally administered unicast MAC."""
        return macColonHex(random.randint(1, 2 ** 48 - 1) & 0xfeffffffffff | 0x020000000000)

    def addLink(self, node1: Any, node2: Any, port1: Optional[int] = None, port2: Optional[int] = None,
                cls: Any = None, **params: Any) -> Any:
        """Add a link (at once on a running network)."""
        node1 = node1 if not isinstance(node1, str) else self[node1]
        node2 = node2 if not isinstance(node2, str) else self[node2]
        options = dict(params)
        if port1 is not None:
            options.setdefault("port1", port1)
        if port2 is not None:
            options.setdefault("port2", port2)
        if self.intf is not None:
            options.setdefault("intf", self.intf)
        cls = self.link if cls is None else cls
        link = cls(node1, node2, **options)
        self.links.append(link)
        return link

    def delLink(self, link: Any) -> None:
        """Remove a link."""
        link.delete()
        if link in self.links:
            self.links.remove(link)

    def linksBetween(self, node1: Any, node2: Any) -> list[Any]:
        """The links between two nodes."""
        return [l for l in self.links if (node1, node2) in ((l.intf1.node, l.intf2.node), (l.intf2.node, l.intf1.node))]

    def delLinkBetween(self, node1: Any, node2: Any, index: int = 0, allLinks: bool = False) -> Any:
        """Delete the index-th (or every) link between two nodes."""
        links = self.linksBetween(node1, node2)
        if not allLinks:
            links = [links[index]] if index < len(links) else []
        for link in links:
            self.delLink(link)
        return links

    def configHosts(self) -> None:
        """Configure each host (address, MAC, default route; subclasses' config())."""
        for host in self.hosts:
            if host.name in self._configured:
                continue
            info(host.name + " ")
            self._configured.add(host.name)
            if host.defaultIntf() is not None:
                host.configDefault()
            else:
                host.configDefault(ip=None, mac=None)
        info("\n")

    def buildFromTopo(self, topo: Any = None) -> None:
        """Declare the topology's nodes and links."""
        self.session.declaring = True
        try:
            self._declare(topo)
        finally:
            self.session.declaring = False

    def _declare(self, topo: Any) -> None:
        info("*** Creating network\n")
        if not self.controllers and self.controller:
            classes = self.controller if isinstance(self.controller, list) else [self.controller]
            for i, cls in enumerate(classes):
                if isinstance(cls, Controller):
                    self.addController(cls)
                else:
                    self.addController("c%d" % i, cls)
        info("*** Adding hosts:\n")
        for hostName in topo.hosts():
            self.addHost(hostName, **topo.nodeInfo(hostName))
            info(hostName + " ")
        info("\n*** Adding switches:\n")
        for switchName in topo.switches():
            self.addSwitch(switchName, **topo.nodeInfo(switchName))
            info(switchName + " ")
        info("\n*** Adding links:\n")
        for srcName, dstName, params in topo.links(sort=True, withInfo=True):
            self.addLink(**params)
            info("(%s, %s) " % (srcName, dstName))
        info("\n")

    def configureControlNetwork(self) -> None:
        """In-namespace controllers with a control network are not modelled."""
        raise CompatError("Mininet(inNamespace=True): a control network for controllers is not modelled")

    def build(self) -> None:
        """Build the network: declare the topology, bring the lab up, configure the hosts."""
        if self.topo:
            self.buildFromTopo(self.topo)
        if self.inNamespace:
            self.configureControlNetwork()
        if any(n.inLab() for n in self.session.nodes.values()):
            self._realize()
        self.built = True

    def _realize(self) -> None:
        fresh = [h for h in self.hosts if h.name not in self._configured]
        if self.session.running and not fresh:
            return
        if not self.session.running:
            self.session.realize()
            for link in self.session.links:
                for i in (link.intf1, link.intf2):
                    i._applied = (i.ip, i.prefixLen)
                    i.node.afterLink(i)
            startShells([n for n in self.session.nodes.values() if n._deferred and n.shell is None])
            runDeferred(list(self.session.nodes.values()))
        info("*** Configuring hosts\n")
        self.configHosts()
        if self.autoStaticArp:
            self.staticArp()

    def startTerms(self) -> None:
        """X terminals are not opened (see `emuctl shell`)."""
        raise CompatError("startTerms: emuctl opens no X terminals; use `emuctl shell -l LAB NODE`")

    def stopXterms(self) -> None:
        """No terminals to stop."""

    def staticArp(self) -> None:
        """Fill every host's ARP cache with every other host."""
        for src in self.hosts:
            cmds = []
            for dst in self.hosts:
                if src != dst and dst.IP() and dst.MAC():
                    cmds.append(f"ip neigh replace {dst.IP()} lladdr {dst.MAC()} dev {src.defaultIntf()} nud permanent")
            if cmds and src.defaultIntf() is not None:
                src.cmd("; ".join(cmds))

    def start(self) -> None:
        """Start the network (built first if need be), its controllers and switches."""
        if not self.built:
            self.build()
        self._realize()
        info("*** Starting controller\n")
        for controller in self.controllers:
            info(controller.name + " ")
            controller.start()
        info("\n")
        info("*** Starting %s switches\n" % len(self.switches))
        for switch in self.switches:
            info(switch.name + " ")
            switch.start(self.controllers)
        info("...\n")
        if self.waitConn:
            self.waitConnected(None if self.waitConn is True else self.waitConn)
        if os.environ.get("EMUCTL_VERIFY") == "1":
            self.verify()

    def verify(self) -> list[dict[str, Any]]:
        """Measure every shaped link, both directions, against its parameters
        (emuctl verify: rate, one-way delay, loss with raw probe frames that
        cross only that link); print one line each and return the results.
        Each result says ``ok`` when emuctl verify found no problem (rate
        and delay within 5 %, loss within 3σ of what the link was given)."""
        info("*** Verifying shaped links\n")
        out = []
        for r in self.session.verify():
            ok = not r.get("problems")  # emuctl verify's judgement (5 % rate and delay, loss 3σ)
            r = dict(r, ok=ok)
            out.append(r)
            rate = (f"rate {r['rate_bps'] / 1e6:.3f} of {r['want_rate_bps'] / 1e6:g} Mbit/s"
                    if r.get("want_rate_bps") else "unlimited")
            output("%s %s: %s, delay min %.3f ms of %g ms, loss %.2f %% of %g %%: %s\n" % (
                r["name"], r["dir"], rate, r.get("min_delay", 0) / 1e6, r.get("want_delay", 0) / 1e6,
                r.get("loss_pct", 0), r.get("want_loss_pct", 0), "OK" if ok else "OFF: " + "; ".join(r["problems"])))
        if not out:
            output("*** no shaped link to verify\n")
        return out

    def stop(self) -> None:
        """Stop everything and take the lab down."""
        info("*** Stopping %i controllers\n" % len(self.controllers))
        for controller in self.controllers:
            info(controller.name + " ")
            controller.stop()
        info("\n")
        if self.terms:
            info("*** Stopping %i terms\n" % len(self.terms))
        info("*** Stopping %i links\n" % len(self.links))
        for link in self.links:
            info(".")
        info("\n")
        info("*** Stopping %i switches\n" % len(self.switches))
        for switch in self.switches:
            info(switch.name + " ")
            switch.terminate()
        info("\n")
        info("*** Stopping %i hosts\n" % len(self.hosts))
        for host in self.hosts:
            info(host.name + " ")
            host.terminate()
        info("\n")
        if self.session.running:
            line = self.session.keptUp()
            (warn if "NOT" in line else output)(line)
            keep = os.environ.get("EMUCTL_MININET_KEPTUP")
            if keep and line:  # for a test runner: was this run's machine fast enough?
                with open(keep, "a") as f:
                    f.write(line)
        self.session.stop()
        info("*** Done\n")

    def run(self, test: Any, *args: Any, **kwargs: Any) -> Any:
        """start(), test(*args, **kwargs), stop(); test's result."""
        self.start()
        info("*** Running test\n")
        result = test(*args, **kwargs)
        self.stop()
        return result

    def monitor(self, hosts: Optional[list[Any]] = None, timeoutms: int = -1) -> Iterator[tuple[Any, str]]:
        """Yield (host, line) as the hosts' running commands print."""
        if hosts is None:
            hosts = self.hosts
        poller = select.poll()
        h1 = hosts[0]
        for host in hosts:
            poller.register(host.stdout)
        while True:
            ready = poller.poll(timeoutms)
            for fd, event in ready:
                host = h1.outToNode[fd]
                if event & select.POLLIN:
                    line = host.readline()
                    if line is not None:
                        yield host, line
            if not ready and timeoutms >= 0:
                yield None, None

    # measurements

    @staticmethod
    def _parsePing(pingOutput: str) -> tuple[int, int]:
        if "connect: Network is unreachable" in pingOutput:
            return 1, 0
        m = re.search(r"(\d+) packets transmitted, (\d+)( packets)? received", pingOutput)
        if m is None:
            error("*** Error: could not parse ping output: %s\n" % pingOutput)
            return 1, 0
        return int(m.group(1)), int(m.group(2))

    def ping(self, hosts: Optional[list[Any]] = None, timeout: Any = None) -> float:
        """Ping between every pair of hosts; the percentage dropped."""
        packets = lost = 0
        ploss: Optional[float] = None
        allHosts = hosts is None
        if hosts is None:
            hosts = self.hosts
            output("*** Ping: testing ping reachability\n")
        fast = self._pingAllFast(hosts) if allHosts and timeout is None else None
        opts = "-W %s" % timeout if timeout else ""
        for node in hosts:
            output("%s -> " % node.name)
            # what emuctl's pingall did not answer: pinged from the node's
            # shell one after the other, in Mininet's order, in one command
            # (one shell round trip per node, not per pair)
            todo = [d for d in hosts if d != node and d.intfs
                    and (fast is None or (node.name, d.name) not in fast)]
            shell: dict[str, str] = {}
            if todo:
                mark = "@@emuctl-ping "
                res = node.cmd("; ".join("echo '%s%s'; LANG=C ping -c1 %s %s" % (mark, d.name, opts, d.IP())
                                         for d in todo))
                for chunk in res.split(mark)[1:]:
                    name, _, rest = chunk.partition("\n")
                    shell[name.strip()] = rest
            for dest in hosts:
                if node == dest:
                    continue
                if fast is not None and (node.name, dest.name) in fast:
                    sent, received = 1, int(fast[(node.name, dest.name)])
                elif dest.intfs:
                    sent, received = self._parsePing(shell.get(dest.name, ""))
                else:
                    sent, received = 0, 0
                packets += sent
                if received > sent:
                    error("*** Error: received too many packets")
                    error("%s" % (node.name,))
                    node.cmdPrint("route")
                    exit(1)
                lost += sent - received
                output(("%s " % dest.name) if received else "X ")
            output("\n")
        if packets > 0:
            ploss = 100.0 * lost / packets
            received = packets - lost
            output("*** Results: %i%% dropped (%d/%d received)\n" % (ploss, received, packets))
        else:
            ploss = 0
            output("*** Warning: No packets sent\n")
        return ploss

    def _pingAllFast(self, hosts: list[Any]) -> Optional[dict[tuple[str, str], bool]]:
        """Every pair at once through emuctl's pingall (None: not possible)."""
        names = {h.name for h in hosts}
        if not self.session.running or not all(h.inLab() for h in hosts) or len(hosts) < 2:
            return None
        if any(getattr(s, "real", False) and s.controllers for s in self.switches):
            # a learning controller learns from the order of the pings
            # (after a host moved, its own pings teach where it is now):
            # Mininet's order, one ping at a time, from each node's shell
            return None
        try:
            r = self.session.call("pingall", lab=self.session.name, tries=1)
        except CompatError:
            return None
        # a pair that failed is left out: the node's shell pings it again,
        # as Mininet would (a host emuctl pings by another address, say)
        out = {}
        for p in r.get("results") or []:
            if p["from"] in names and p["to"] in names and p["ok"]:
                out[(p["from"], p["to"])] = True
        return out

    def pingAll(self, timeout: Any = None) -> float:
        """Ping between all hosts; the percentage dropped."""
        return self.ping(timeout=timeout)

    def pingPair(self) -> float:
        """Ping between the first two hosts."""
        return self.ping(hosts=self.hosts[:2])

    @staticmethod
    def _parsePingFull(pingOutput: str) -> tuple[int, int, float, float, float, float]:
        errorTuple = (1, 0, 0.0, 0.0, 0.0, 0.0)
        if re.search(r"[uU]nreachable", pingOutput) is not None:
            return errorTuple
        m = re.search(r"(\d+) packets transmitted, (\d+)( packets)? received", pingOutput)
        if m is None:
            return errorTuple
        sent, received = int(m.group(1)), int(m.group(2))
        m = re.search(r"rtt min/avg/max/mdev = ([\d.]+)/([\d.]+)/([\d.]+)/([\d.]+) ms", pingOutput)
        if m is None:
            return sent, received, 0.0, 0.0, 0.0, 0.0
        return sent, received, float(m.group(1)), float(m.group(2)), float(m.group(3)), float(m.group(4))

    def pingFull(self, hosts: Optional[list[Any]] = None, timeout: Any = None) -> list[Any]:
        """Ping between every pair of hosts; every result with its RTTs."""
        all_outputs = []
        if not hosts:
            hosts = self.hosts
            output("*** Ping: testing ping reachability\n")
        for node in hosts:
            output("%s -> " % node.name)
            for dest in hosts:
                if node != dest:
                    opts = "-W %s" % timeout if timeout else ""
                    result = node.cmd("LANG=C ping -c1 %s %s" % (opts, dest.IP()))
                    outputs = self._parsePingFull(result)
                    sent, received, _rttmin, _rttavg, _rttmax, _rttdev = outputs
                    all_outputs.append((node, dest, outputs))
                    output(("%s " % dest.name) if received else "X ")
            output("\n")
        output("*** Results: \n")
        for outputs in all_outputs:
            src, dest, ping_outputs = outputs
            sent, received, rttmin, rttavg, rttmax, rttdev = ping_outputs
            output(" %s->%s: %s/%s, " % (src, dest, sent, received))
            output("rtt min/avg/max/mdev %0.3f/%0.3f/%0.3f/%0.3f ms\n" % (rttmin, rttavg, rttmax, rttdev))
        return all_outputs

    def pingAllFull(self) -> list[Any]:
        """pingFull between all hosts."""
        return self.pingFull()

    def pingPairFull(self) -> list[Any]:
        """pingFull between the first two hosts."""
        return self.pingFull(hosts=self.hosts[:2])

    @staticmethod
    def _parseIperf(iperfOutput: str) -> str:
        m = re.findall(r"([\d\.]+ \w+/sec)", iperfOutput)
        if m:
            return m[-1]
        error('could not parse iperf output: ' + iperfOutput)
        return ""

    def iperf(self, hosts: Optional[list[Any]] = None, l4Type: str = "TCP", udpBw: str = "10M",
              fmt: Optional[str] = None, seconds: int = 5, port: int = 5001) -> list[str]:
        """iperf 2 between two hosts (the first and last by default); [server, client] rates."""
        hosts = hosts or [self.hosts[0], self.hosts[-1]]
        assert len(hosts) == 2
        client, server = hosts
        output("*** Iperf: testing", l4Type, "bandwidth between", client, "and", server, "\n")
        iperfArgs = "iperf -p %d " % port
        bwArgs = ""
        if l4Type == "UDP":
            iperfArgs += "-u "
            bwArgs = "-b " + udpBw + " "
        elif l4Type != "TCP":
            raise Exception("Unexpected l4 type: %s" % l4Type)
        if fmt:
            iperfArgs += "-f %s " % fmt
        server.sendCmd(iperfArgs + "-s")
        if l4Type == "TCP":
            if not waitListening(client, server.IP(), port):
                raise Exception("Could not connect to iperf on port %d" % port)
        cliout = client.cmd(iperfArgs + "-t %d -c " % seconds + server.IP() + " " + bwArgs)
        servout = ""
        # the server reports when the client's connection ends (iperf 2.1
        # prints one rate line for it; older ones two)
        deadline = time.time() + 5
        while not re.findall("/sec", servout) and time.time() < deadline:
            servout += server.monitor(timeoutms=500)
        server.sendInt()
        servout += server.waitOutput()
        result = [self._parseIperf(servout), self._parseIperf(cliout)]
        if l4Type == "UDP":
            result.insert(0, udpBw)
        output("*** Results: %s\n" % result)
        return result

    def runCpuLimitTest(self, cpu: float, duration: int = 5) -> list[float]:
        """Run busy loops in each host for duration seconds and return the
        CPU each got, per second, as a percentage of the whole machine
        (read from the host's CPU group: CPULimitedHost)."""
        info("*** Testing CPU %.0f%% bandwidth limit\n" % (cpu * 100))
        cores = os.cpu_count() or 1
        procs = int(math.ceil(cores * cpu))
        hosts = [h for h in self.hosts if hasattr(h, "cpuUsage")]
        for h in hosts:
            for _ in range(procs):
                h.cmd("while true; do a=1; done &")
        outputs: dict[Any, list[float]] = {h: [] for h in hosts}
        last = {h: h.cpuUsage() for h in hosts}
        t = time.time()
        for _ in range(duration):
            time.sleep(1)
            now = time.time()
            for h in hosts:
                used = h.cpuUsage()
                outputs[h].append((used - last[h]) / (now - t) / cores * 100)
                last[h] = used
            t = now
        for h in hosts:
            h.cmd("kill %while 2>/dev/null; wait 2>/dev/null")
        fractions = [pct for h in hosts for pct in outputs[h]]
        output("*** Results: %s\n" % fractions)
        return fractions

    def configLinkStatus(self, src: str, dst: str, status: str) -> None:
        """Bring the link(s) between two nodes up or down."""
        if src not in self.nameToNode:
            error("src not in network: %s\n" % src)
        elif dst not in self.nameToNode:
            error("dst not in network: %s\n" % dst)
        else:
            srcNode, dstNode = self.nameToNode[src], self.nameToNode[dst]
            connections = srcNode.connectionsTo(dstNode)
            if len(connections) == 0:
                error("src and dst not connected: %s %s\n" % (src, dst))
            for srcIntf, _dstIntf in connections:
                if status not in ("up", "down"):
                    error("link status must be up or down (got %s)\n" % status)
                    return
                self.session.call("link." + status, lab=self.session.name, link=srcIntf.link.ref())

    def interact(self) -> None:
        """start(), CLI, stop()."""
        from mininet.cli import CLI
        self.start()
        result = CLI(self)
        self.stop()
        return result

    inited = False

    @classmethod
    def init(cls) -> None:
        """Nothing to initialise."""
        cls.inited = True


def startShells(nodes: list[Any], batch: int = 64) -> None:
    """Start many nodes' shells: batch processes at once, then wait for each."""
    for i in range(0, len(nodes), batch):
        chunk = nodes[i:i + batch]
        for n in chunk:
            n._spawnShell()
        for n in chunk:
            n._awaitShell()


def runDeferred(nodes: list[Any], batch: int = 64) -> None:
    """Run the commands nodes deferred while the topology was declared:
    each node's in its order, one after the other, as its shell would have
    run them; batch nodes' shells at once (Mininet's tree1024 has each of
    1,024 hosts run 4 sysctl commands)."""
    todo = {n: n._deferred for n in nodes if n._deferred}
    for n in todo:
        n._deferred = []
    busy = [n for n in nodes if n in todo]
    for i in range(0, len(busy), batch):
        chunk = busy[i:i + batch]
        for step in range(max(len(todo[n]) for n in chunk)):
            active = [n for n in chunk if step < len(todo[n])]
            for n in active:
                args, kwargs = todo[n][step]
                debug(f"*** {n.name} : {args}\n")
                n.sendCmd(*args, **kwargs)
            for n in active:
                n.waitOutput(todo[n][step][1].get("verbose", False))


class MininetWithControlNet(Mininet):
    """A control network for controllers is not modelled."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise CompatError("MininetWithControlNet: a control network is not modelled by emuctl's Mininet layer")


__all__ = ["Mininet", "MininetWithControlNet", "VERSION", "Switch"]
