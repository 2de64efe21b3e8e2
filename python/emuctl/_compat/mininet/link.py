"""Mininet's links and interfaces (``mininet.link``) on emuctl's links.

A :class:`Link` is one emuctl link; its interfaces keep the names Mininet
gives them (``<node>-eth<port>``). :class:`TCLink` shapes it with emuctl's
shaping (the kernel's or emuctl's link engine, whichever the machine
has): each interface's parameters shape what leaves it, so ``params1``
is the a->b direction and ``params2`` b->a. ``TCIntf.config()`` on a
running network changes the link in place (``emuctl link set``).
"""

from __future__ import annotations

from typing import Any, Optional

from mininet._emu import CompatError
from mininet.log import info, warn
from mininet.util import callSetter

# TCIntf.config's parameters that are how Mininet builds its tc tree, not
# what the link does: emuctl picks its own shaper for the same rate
_SHAPER_CHOICE = ("use_hfsc", "use_tbf", "use_htb")
_NOT_MODELLED = {"speedup": "emuctl does not scale time", "latency_ms": "emuctl's TBF sizes its own latency"}


class Intf:
    """A network interface of a node (one end of a link)."""

    def __init__(self, name: str, node: Any = None, port: Optional[int] = None, link: Any = None,
                 mac: Optional[str] = None, **params: Any) -> None:
        self.node = node
        self.name = name
        self.link = link
        self.mac = mac
        self.ip: Optional[str] = None
        self.prefixLen: Optional[int] = None
        self.tc: dict[str, Any] = {}      # what shapes this interface's egress (emuctl keys)
        self.offloads: dict[str, bool] = {}
        if self.name == "lo":
            self.ip, self.prefixLen = "127.0.0.1", 8
        if node is not None:
            node.addIntf(self, port=port)
        self.params = params
        self.config(**params)

    # state

    def running(self) -> bool:
        """Whether the interface exists in a running lab."""
        return self.node is not None and self.node.session.running and (
            self.link is None or self.link in self.node.session.links)

    def cmd(self, *args: Any, **kwargs: Any) -> str:
        """Run a command in the interface's node."""
        return self.node.cmd(*args, **kwargs)

    def ifconfig(self, *args: Any) -> str:
        """Configure the interface with ifconfig (in its node)."""
        return self.cmd("ifconfig", self.name, *args)

    def setIP(self, ipstr: str, prefixLen: Optional[int] = None) -> Optional[str]:
        """Set the address ('10.0.0.1/8', or an address and prefixLen)."""
        if "/" in ipstr:
            self.ip, pl = ipstr.split("/")
            self.prefixLen = int(pl)
        else:
            if prefixLen is None:
                raise Exception(f"setIP({ipstr!r}): no prefix length (give 'a.b.c.d/N' or prefixLen)")
            self.ip, self.prefixLen = ipstr, prefixLen
        if self.running() and getattr(self, "_applied", None) != (self.ip, self.prefixLen):
            self._applied = (self.ip, self.prefixLen)
            return self.ifconfig(f"{self.ip}/{self.prefixLen}", "up")
        return None

    def setMAC(self, macstr: str) -> Optional[str]:
        """Set the MAC address."""
        self.mac = macstr
        if self.running():
            return self.ifconfig("down") + self.ifconfig("hw", "ether", macstr) + self.ifconfig("up")
        return None

    def IP(self) -> Optional[str]:
        """The IPv4 address (no prefix)."""
        return self.ip

    def MAC(self) -> Optional[str]:
        """The MAC address."""
        if self.mac is None and self.node is not None and self.node.session.running:
            self.mac = self.node.session.intfMAC(self.node.name, self.name)
        return self.mac

    def prefix(self) -> Optional[int]:
        """The prefix length."""
        return self.prefixLen

    def updateIP(self) -> Optional[str]:
        """Read the address back from the node."""
        out = self.cmd("ip -4 -o addr show dev", self.name)
        for word in out.split():
            if "/" in word and word[0].isdigit():
                self.ip, pl = word.split("/")
                self.prefixLen = int(pl)
                break
        return self.ip

    def updateMAC(self) -> Optional[str]:
        """Read the MAC back from the node."""
        self.mac = self.cmd("cat /sys/class/net/%s/address" % self.name).strip() or None
        return self.mac

    def updateAddr(self) -> tuple[Optional[str], Optional[str]]:
        """Read both back."""
        return self.updateIP(), self.updateMAC()

    def isUp(self, setUp: bool = False) -> bool:
        """Whether the interface is up (setUp: bring it up first)."""
        if setUp:
            self.ifconfig("up")
        return "UP" in self.cmd("ip -o link show dev", self.name).split("<")[-1].split(">")[0].split(",")

    def rename(self, newname: str) -> str:
        """Interfaces keep the names the lab gave them."""
        raise CompatError(f"{self.name}.rename({newname!r}): emuctl names interfaces when the link is made; "
                          "give intfName1/intfName2 to addLink instead")

    def setParam(self, results: dict[str, Any], method: str, **param: Any) -> Any:
        """Call a set* method with one parameter if it is given."""
        return callSetter(self, results, method, **param)

    def config(self, mac: Optional[str] = None, ip: Optional[str] = None, ifconfig: Any = None,
               up: bool = True, **_params: Any) -> dict[str, Any]:
        """Set the MAC and address (a plain Intf ignores shaping parameters, as Mininet's does)."""
        shaping = sorted(k for k in _params if k in _TC_KEYS)
        if shaping and type(self) is Intf:
            warn(f"*** {self.name}: {', '.join(shaping)} not applied: a plain Link/Intf does not shape "
                 "(use link=TCLink or intf=TCIntf)\n")
        r: dict[str, Any] = {}
        self.setParam(r, "setMAC", mac=mac)
        self.setParam(r, "setIP", ip=ip)
        if self.running():  # emuctl brings every interface up; these act on a running one
            if not up:
                self.ifconfig("down")
            self.setParam(r, "ifconfig", ifconfig=ifconfig)
        return r

    def delete(self) -> None:
        """Remove the interface (with its link)."""
        if self.link is not None:
            self.link.delete()
        elif self.node is not None:
            self.node.delIntf(self)

    def status(self) -> str:
        """'OK' if the interface exists in its node, else 'MISSING'."""
        if self.node is None or not self.running():
            return "MISSING"
        return "OK" if self.name in self.cmd("ls /sys/class/net") else "MISSING"

    def __repr__(self) -> str:
        return f"<{self.__class__.__name__} {self.name}>"

    def __str__(self) -> str:
        return self.name


_TC_KEYS = ("bw", "delay", "jitter", "loss", "max_queue_size", "enable_ecn", "enable_red", "gro", "txo", "rxo",
            "speedup", "use_hfsc", "use_tbf", "use_htb", "latency_ms")


def tcKeys(bw: Any = None, delay: Any = None, jitter: Any = None, loss: Any = None, max_queue_size: Any = None,
           enable_ecn: bool = False, enable_red: bool = False, where: str = "TCLink") -> tuple[dict[str, Any], str]:
    """Mininet's TCIntf parameters as emuctl link keys, and Mininet's
    one-line description of them. Raises CompatError for values emuctl
    cannot honour, naming them."""
    keys: dict[str, Any] = {}
    desc = []
    if bw is not None:
        if not isinstance(bw, (int, float)) or bw <= 0 or bw > 100000:
            raise CompatError(f"{where}: bw={bw!r} must be a number of Mbit/s, above 0 and at most 100000")
        keys["rate"] = f"{bw:g}mbit"
        desc.append("%.2fMbit" % bw)
    for name, v in (("delay", delay), ("jitter", jitter)):
        if v is None or v == "" or v == 0:
            continue
        keys[name] = f"{v:g}ms" if isinstance(v, (int, float)) else str(v)
        desc.append(f"{v} {name}")
    if loss is not None and loss != 0:
        if not isinstance(loss, (int, float)) or not 0 <= loss <= 100:
            raise CompatError(f"{where}: loss={loss!r} must be a percentage, 0 to 100")
        keys["loss"] = f"{loss:g}%"
        desc.append("%.5f%% loss" % loss)
    if enable_red or enable_ecn:
        q = "red"
        if max_queue_size:
            q += f" limit {int(max_queue_size)}"
        if enable_ecn:
            q += " ecn"
            desc.append("ECN")
        else:
            desc.append("RED")
        keys["queue"] = q
    elif max_queue_size is not None:
        if not isinstance(max_queue_size, int) or max_queue_size < 1:
            raise CompatError(f"{where}: max_queue_size={max_queue_size!r} must be a whole number of packets, at least 1")
        keys["queue"] = max_queue_size
    return keys, " ".join(desc)


class TCIntf(Intf):
    """An interface whose egress is shaped (emuctl link keys of its direction)."""

    def config(self, bw: Any = None, delay: Any = None, jitter: Any = None, loss: Any = None,
               gro: Optional[bool] = False, txo: Optional[bool] = True, rxo: Optional[bool] = True,
               speedup: Any = 0, use_hfsc: bool = False, use_tbf: bool = False, latency_ms: Any = None,
               enable_ecn: bool = False, enable_red: bool = False, max_queue_size: Any = None,
               **params: Any) -> dict[str, Any]:
        """Shape this interface's egress (at once on a running network) and set its addresses."""
        result = Intf.config(self, **params)
        for name, v in (("speedup", speedup), ("latency_ms", latency_ms)):
            if v:
                raise CompatError(f"{self.name}.config({name}={v!r}): not honoured — {_NOT_MODELLED[name]}")
        keys, desc = tcKeys(bw, delay, jitter, loss, max_queue_size, enable_ecn, enable_red, where=f"{self.name}.config")
        self.offloads = {"gro": bool(gro), "tx": bool(txo), "rx": bool(rxo)}
        old, self.tc = self.tc, keys
        if desc:
            info("(" + desc + ") ")
        if self.running() and self.link is not None:
            self.link.applyTC(self, old)
        if self.running():
            self.applyOffloads()
        result["tcoutputs"] = []
        return result

    def applyOffloads(self) -> None:
        """Turn off the offloads Mininet's parameters turn off (gro is off by default)."""
        off = [k for k, on in self.offloads.items() if not on]
        if off and self.node is not None:
            self.cmd("ethtool -K", self.name, " ".join(f"{k} off" for k in off), ">/dev/null 2>&1")


class Link:
    """A link between two nodes: a veth pair with Mininet's interface names,
    shaped when its interfaces are TCIntf."""

    def __init__(self, node1: Any, node2: Any, port1: Optional[int] = None, port2: Optional[int] = None,
                 intfName1: Optional[str] = None, intfName2: Optional[str] = None,
                 addr1: Optional[str] = None, addr2: Optional[str] = None,
                 intf: Any = Intf, cls1: Any = None, cls2: Any = None,
                 params1: Optional[dict[str, Any]] = None, params2: Optional[dict[str, Any]] = None,
                 fast: bool = True, **params: Any) -> None:
        params1 = dict(params1 or {})
        params2 = dict(params2 or {})
        if port1 is not None:
            params1["port"] = port1
        if port2 is not None:
            params2["port"] = port2
        if "port" not in params1:
            params1["port"] = node1.newPort()
        if "port" not in params2:
            params2["port"] = node2.newPort()
        if not intfName1:
            intfName1 = self.intfName(node1, params1["port"])
        if not intfName2:
            intfName2 = self.intfName(node2, params2["port"])
        for n, name in ((node1, intfName1), (node2, intfName2)):
            if len(name) > 15:
                raise CompatError(f"Link({node1.name}, {node2.name}): interface name {name!r} is {len(name)} bytes; "
                                  "Linux allows 15 (shorter node names, or intfName1/intfName2)")
            if name in n.nameToIntf:
                raise CompatError(f"Link({node1.name}, {node2.name}): {n.name} has an interface {name!r} already")
        params1.update(params)
        params2.update(params)
        cls1 = cls1 or intf
        cls2 = cls2 or intf
        self.fast = fast
        self._declaring = True
        self.intf1 = cls1(name=intfName1, node=node1, link=self, mac=addr1, **params1)
        self.intf2 = cls2(name=intfName2, node=node2, link=self, mac=addr2, **params2)
        self._declaring = False
        for i in (self.intf1, self.intf2):  # a host's ip parameter is its default interface's address
            n = i.node
            ip = n.params.get("ip") if hasattr(n, "params") else None
            if ip and i.ip is None and not n.isSwitchNode() and n.defaultIntf() is i:
                i.ip, pl = (ip.split("/") + ["8"])[:2]
                i.prefixLen = int(pl)
        node1.session.addLink(self)
        for i in (self.intf1, self.intf2):
            if i.running():
                i.node.afterLink(i)

    @staticmethod
    def intfName(node: Any, n: int) -> str:
        """Mininet's interface name: <node>-eth<port>."""
        return node.name + "-eth" + repr(n)

    def intfs(self) -> tuple[Intf, Intf]:
        """Both interfaces."""
        return self.intf1, self.intf2

    def emuctlKeys(self) -> dict[str, Any]:
        """The link's shaping as emuctl link keys (symmetric when both ends agree)."""
        a, b = self.intf1.tc, self.intf2.tc
        if a == b:
            out = dict(a)
        else:
            out = {}
            if a:
                out["a->b"] = dict(a)
            if b:
                out["b->a"] = dict(b)
        if self.shapeable() and not self.intf1.node.session.netem:
            out["backend"] = "userspace"  # shaped in place later (TCIntf.config) without sch_netem
        return out

    def shapeable(self) -> bool:
        """Whether the link's interfaces shape (TCIntf)."""
        return isinstance(self.intf1, TCIntf) or isinstance(self.intf2, TCIntf)

    def ref(self) -> str:
        """The link as emuctl names it (its first end)."""
        return f"{self.intf1.node.name}:{self.intf1.name}"

    def applyTC(self, intf: Intf, old: dict[str, Any]) -> None:
        """Change one direction of the running link to intf's parameters."""
        if self._declaring:
            return
        d = "a->b" if intf is self.intf1 else "b->a"
        change = dict(intf.tc)
        # keys the new parameters no longer set go back to unshaped
        for k in old:
            if k not in change:
                change[k] = "none"
        if change:
            intf.node.session.call("link.set", lab=intf.node.session.name, link=self.ref(), dir=d, set=change)

    def delete(self) -> None:
        """Remove the link (from the running lab too)."""
        session = self.intf1.node.session
        session.removeLink(self)
        for i in (self.intf1, self.intf2):
            i.node.delIntf(i)

    def stop(self) -> None:
        """Remove the link."""
        self.delete()

    def status(self) -> str:
        """Both interfaces' status."""
        return f"({self.intf1.status()} {self.intf2.status()})"

    def __str__(self) -> str:
        return f"{self.intf1}<->{self.intf2}"

    def __repr__(self) -> str:
        return f"<{self.__class__.__name__} {self}>"


class TCLink(Link):
    """A link whose interfaces are shaped (bw, delay, jitter, loss, max_queue_size, ...)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("cls1", TCIntf)
        kwargs.setdefault("cls2", TCIntf)
        kwargs.setdefault("intf", TCIntf)
        super().__init__(*args, **kwargs)


class TCULink(TCLink):
    """A TCLink (Mininet's variant for user-space switches; the same here)."""


class OVSIntf(Intf):
    """An OVS internal interface: emuctl's switches are Linux bridges here."""


class OVSLink(Link):
    """Mininet's OVS patch link; between switches here a veth pair like any link."""
