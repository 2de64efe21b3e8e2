"""Mininet's utility functions (``mininet.util``), written from its documented behaviour."""

from __future__ import annotations

import functools
import os
import re
import select
import subprocess
import sys
import time
from typing import Any, Callable, Iterable, Iterator, Optional

from mininet.log import error, output

try:  # Mininet's tests import pexpect from here
    import pexpect as _pexpect
except ImportError:  # pragma: no cover - Debian's python3-pexpect
    _pexpect = None  # type: ignore[assignment]


class _Pexpect:
    """pexpect whose spawn() reads and writes str (UTF-8) unless told otherwise, as Mininet's util.pexpect."""

    @staticmethod
    def spawn(*args: Any, **kwargs: Any) -> Any:
        """pexpect.spawn, decoding as UTF-8."""
        if _pexpect is None:
            raise ImportError("pexpect is not installed (Debian: python3-pexpect)")
        kwargs.setdefault("encoding", "utf-8")
        return _pexpect.spawn(*args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        if _pexpect is None:
            raise ImportError("pexpect is not installed (Debian: python3-pexpect)")
        return getattr(_pexpect, name)


pexpect = _Pexpect()

BaseString = str
Python3 = True


def decode(s: Any) -> str:
    """bytes → str (UTF-8, replacing what does not decode); str unchanged."""
    return s.decode("utf-8", "replace") if isinstance(s, bytes) else s


def encode(s: Any) -> bytes:
    """str → bytes (UTF-8); bytes unchanged."""
    return s.encode("utf-8") if isinstance(s, str) else s


def _argv(cmd: Any) -> list[str]:
    if isinstance(cmd, str):
        return cmd.split(" ") if " " in cmd else [cmd]
    return [str(c) for c in cmd]


def run(cmd: Any) -> str:
    """Run a command (a string split on spaces, or a list); return its stdout."""
    return subprocess.run(_argv(cmd), stdout=subprocess.PIPE, check=False).stdout.decode()


def checkRun(cmd: Any) -> str:
    """Run a command; raise CalledProcessError when it fails; return its stdout."""
    return subprocess.check_output(_argv(cmd)).decode()


def oldQuietRun(*cmd: Any) -> str:
    """Run a command and return its output, stderr included."""
    return quietRun(list(cmd) if len(cmd) > 1 else cmd[0])


def errRun(*cmd: Any, **kwargs: Any) -> tuple[str, str, int]:
    """Run a command; return (stdout, stderr, exit code).

    ``shell=True`` runs a string with /bin/sh; ``stderr=STDOUT`` merges;
    ``echo=True`` prints the command first.
    """
    stderr = kwargs.get("stderr", subprocess.PIPE)
    shell = kwargs.get("shell", False)
    if len(cmd) == 1:
        cmd = cmd[0]
    if isinstance(cmd, str) and not shell:
        argv: Any = cmd.split(" ")
        argv = [a for a in argv if a]
    elif isinstance(cmd, (list, tuple)) and shell:
        argv = " ".join(str(c) for c in cmd)
    else:
        argv = [str(c) for c in cmd] if isinstance(cmd, (list, tuple)) else cmd
    if kwargs.get("echo"):
        output(f"{cmd}\n")
    try:
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=stderr, shell=shell)
    except OSError as e:
        return "", str(e), 127
    out, err = p.communicate()
    return decode(out or b""), decode(err or b""), p.returncode


def errFail(*cmd: Any, **kwargs: Any) -> tuple[str, str, int]:
    """errRun, raising an Exception when the command fails."""
    out, err, ret = errRun(*cmd, **kwargs)
    if ret:
        raise Exception(f"errFail: {cmd} failed with return code {ret}: {err}")
    return out, err, ret


def quietRun(cmd: Any, **kwargs: Any) -> str:
    """Run a command; return stdout and stderr together (Mininet's quietRun)."""
    return errRun(cmd, stderr=subprocess.STDOUT, **kwargs)[0]


def which(cmd: str, **kwargs: Any) -> Optional[str]:
    """The path of cmd on $PATH, or None."""
    import shutil
    return shutil.which(cmd)


def isShellBuiltin(cmd: str) -> bool:
    """Whether the first word of cmd is a bash builtin."""
    word = cmd.split(" ")[0]
    out = subprocess.run(["bash", "-c", f"type -t {word}"], stdout=subprocess.PIPE, check=False).stdout
    return out.strip() == b"builtin"


def moveIntf(intf: Any, dstNode: Any, printError: bool = True, retries: int = 3, delaySecs: float = 0.001) -> bool:
    """Moving an interface between namespaces by hand is not how emuctl changes a lab."""
    raise NotImplementedError("moveIntf: under emuctl interfaces move with the lab's run-time changes "
                              "(net.addLink / delLink, switch.attach / detach)")


def retry(retries: int, delaySecs: float, fn: Callable[..., Any], *args: Any, **keywords: Any) -> None:
    """Call fn until it returns true, at most retries times, delaySecs apart."""
    tries = 0
    while not fn(*args, **keywords) and tries < retries:
        time.sleep(delaySecs)
        tries += 1
    if tries >= retries:
        error(f"*** gave up after {retries} retries\n")
        sys.exit(1)


# addresses

def _colonHex(val: int, count: int) -> str:
    return ":".join("%02x" % ((val >> (8 * (count - 1 - i))) & 0xff) for i in range(count))


def macColonHex(mac: int) -> str:
    """A 48-bit integer as a colon-hex MAC address."""
    return _colonHex(mac, 6)


def ipStr(ip: int) -> str:
    """A 32-bit integer as a dotted quad."""
    return ".".join(str((ip >> s) & 0xff) for s in (24, 16, 8, 0))


def ipNum(w: int, x: int, y: int, z: int) -> int:
    """Four octets as a 32-bit integer."""
    return (w << 24) | (x << 16) | (y << 8) | z


def ipAdd(i: int, prefixLen: int = 8, ipBaseNum: int = 0x0a000000) -> str:
    """Host number i in the network ipBaseNum/prefixLen, as a dotted quad."""
    imax = 0xffffffff >> prefixLen
    if i > imax:
        raise Exception(f"ipAdd: host number {i} does not fit in a /{prefixLen} (at most {imax})")
    mask = 0xffffffff ^ imax
    return ipStr((ipBaseNum & mask) + i)


def ipParse(ip: str) -> int:
    """A dotted quad as a 32-bit integer."""
    args = [int(a) for a in ip.split(".")]
    while len(args) < 4:
        args.insert(len(args) - 1, 0)
    return ipNum(*args)


def netParse(ipstr: str) -> tuple[int, int]:
    """'10.0.0.0/8' → (ip as an integer, prefix length); a bare address is /24."""
    prefixLen = 0
    if "/" in ipstr:
        ip, pf = ipstr.split("/")
        prefixLen = int(pf)
    else:
        ip = ipstr
        prefixLen = 24
    return ipParse(ip), prefixLen


def checkInt(s: str) -> bool:
    """Whether s is a decimal integer."""
    try:
        int(s)
        return True
    except ValueError:
        return False


def checkFloat(s: str) -> bool:
    """Whether s is a float."""
    try:
        float(s)
        return True
    except ValueError:
        return False


def makeNumeric(s: str) -> Any:
    """s as an int, else a float, else itself."""
    if checkInt(s):
        return int(s)
    if checkFloat(s):
        return float(s)
    return s


# node and collection helpers

def callSetter(obj: Any, results: dict[str, Any], method: str, **param: Any) -> Any:
    """Mininet's setParam: call obj.method with the one parameter given
    (a list as arguments, a dict as keywords), unless it is None; the
    result is recorded in results under the parameter's name."""
    name, value = list(param.items())[0]
    f = getattr(obj, method, None)
    if not f or value is None:
        return None
    if isinstance(value, list):
        result = f(*value)
    elif isinstance(value, dict):
        result = f(**value)
    else:
        result = f(value)
    results[name] = result
    return result


def irange(start: int, end: int) -> range:
    """The inclusive range start..end."""
    return range(start, end + 1)


def natural(text: Any) -> list[Any]:
    """A sort key that orders 'h2' before 'h10'."""
    def num(s: str) -> Any:
        return int(s) if s.isdigit() else s
    return [num(s) for s in re.split(r"(\d+)", str(text))]


def naturalSeq(t: Iterable[Any]) -> list[Any]:
    """natural() over a sequence."""
    return [natural(x) for x in t]


def custom(cls: type, **params: Any) -> Callable[..., Any]:
    """A constructor of cls with params as defaults (overridable per call)."""
    def customized(*args: Any, **kwargs: Any) -> Any:
        kwargs = dict(kwargs)
        merged = dict(params)
        merged.update(kwargs)
        return cls(*args, **merged)
    customized.__name__ = f"custom({cls},{params})"
    return customized


def specialClass(cls: type, prepend: Optional[list[Any]] = None, append: Optional[list[Any]] = None,
                 defaults: Optional[dict[str, Any]] = None, override: Optional[dict[str, Any]] = None) -> type:
    """A subclass of cls whose constructor adds arguments and defaults."""
    prepend, append = prepend or [], append or []
    defaults, override = defaults or {}, override or {}

    class CustomClass(cls):  # type: ignore[valid-type, misc]
        def __init__(self, *args: Any, **params: Any) -> None:
            p = dict(defaults)
            p.update(params)
            p.update(override)
            cls.__init__(self, *(list(prepend) + list(args) + list(append)), **p)

    CustomClass.__name__ = f"{cls.__name__}{defaults}"
    return CustomClass


def splitArgs(argstr: str) -> tuple[str, list[Any], dict[str, Any]]:
    """'name,a,b,k=v' → ('name', [a, b], {'k': v}) with numbers made numeric."""
    split = argstr.split(",")
    fn = split[0]
    params = split[1:]
    args = [makeNumeric(s) for s in params if "=" not in s]
    kwargs = {}
    for s in [p for p in params if "=" in p]:
        key, val = s.split("=", 1)
        kwargs[key] = makeNumeric(val)
    return fn, args, kwargs


def customClass(classes: dict[str, Any], argStr: str) -> Any:
    """The class named by argStr's first word, customised by the rest."""
    cname, args, kwargs = splitArgs(argStr)
    cls = classes.get(cname)
    if not cls:
        raise Exception(f"error: {cname} is unknown - please specify one of {sorted(classes)}")
    if not args and not kwargs:
        return cls
    return specialClass(cls, append=args, defaults=kwargs)


def buildTopo(topos: dict[str, Any], topoStr: str) -> Any:
    """A topology object from a string such as 'tree,2,3'."""
    topo, args, kwargs = splitArgs(topoStr)
    if topo not in topos:
        raise Exception(f"Invalid topo name {topo}")
    return topos[topo](*args, **kwargs)


def ensureRoot() -> None:
    """Exit unless running as root."""
    if os.getuid() != 0:
        print("*** Mininet must run as root.")
        sys.exit(1)


def fixLimits() -> None:
    """Raise the open-file limit (many nodes hold many descriptors)."""
    import resource
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(max(soft, 65536), hard)
    if want > soft:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))


def numCores() -> int:
    """The number of CPU cores."""
    return os.cpu_count() or 1


def waitListening(client: Any = None, server: Any = "127.0.0.1", port: int = 80, timeout: Optional[float] = None) -> bool:
    """Wait until server listens on port, as seen from client (a node, or the host)."""
    serverIP = server if isinstance(server, str) else server.IP()
    cmd = f"echo A | telnet -e A {serverIP} {port}"
    runner = client.cmd if client is not None else (lambda c: quietRun(c, shell=True))
    start = time.time()
    while "Connected" not in runner(cmd):
        if timeout is not None and time.time() - start >= timeout:
            error(f"could not connect to {server} on port {port}\n")
            return False
        output(f"waiting for {server} to listen on port {port}\n")
        time.sleep(0.5)
    return True


def pmonitor(popens: dict[Any, subprocess.Popen], timeoutms: int = 500, readline: bool = True,
             readmax: int = 1024) -> Iterator[tuple[Any, str]]:
    """Yield (host, line) from a dict of Popen objects until every one ends;
    (None, '') when nothing came within timeoutms."""
    poller = select.poll()
    fdToHost = {}
    for host, popen in popens.items():
        fd = popen.stdout.fileno()  # type: ignore[union-attr]
        fdToHost[fd] = host
        poller.register(fd, select.POLLIN)
        if not readline:
            os.set_blocking(fd, False)
    while popens:
        fds = poller.poll(timeoutms)
        if fds:
            for fd, event in fds:
                host = fdToHost[fd]
                popen = popens[host]
                if event & select.POLLIN or event & select.POLLHUP:
                    while True:
                        try:
                            f = popen.stdout
                            line = f.readline() if readline else f.read(readmax)  # type: ignore[union-attr]
                        except OSError:
                            line = b""
                        if not line:
                            break
                        line = decode(line)
                        yield host, line
                        if readline:
                            break
                if event & select.POLLHUP:  # the writer is gone: what is left, then done
                    while readline:
                        try:
                            line = popen.stdout.readline()  # type: ignore[union-attr]
                        except OSError:
                            line = b""
                        if not line:
                            break
                        yield host, decode(line)
                    poller.unregister(fd)
                    del popens[host]
        else:
            yield None, ""


def dumpNodeConnections(nodes: Iterable[Any]) -> None:
    """Print each node's interfaces and what they connect to."""
    def dumpConnections(node: Any) -> None:
        output(node.name)
        for intf in node.intfList():
            output(" %s:" % intf)
            if intf.link:
                intfs = [intf.link.intf1, intf.link.intf2]
                intfs.remove(intf)
                output(intfs[0])
            else:
                output(" ")
        output("\n")
    for node in nodes:
        dumpConnections(node)


def dumpNetConnections(net: Any) -> None:
    """dumpNodeConnections over every node of net."""
    dumpNodeConnections(net.controllers + net.switches + net.hosts)


def dumpPorts(switches: Iterable[Any]) -> None:
    """Print each switch's ports and their numbers."""
    for switch in switches:
        output("%s " % switch.name)
        for intf in switch.intfList():
            port = switch.ports[intf]
            output("%s:%d " % (intf, port))
        output("\n")


def mountCgroups(cgroups: str = "cpu cpuacct cpuset") -> None:
    """cgroup v2 is mounted by the system; nothing to do."""


def sysctlTestAndSet(name: str, limit: int) -> None:
    """Raise a host sysctl to at least limit."""
    path = "/proc/sys/" + name.replace(".", "/")
    with open(path) as f:
        cur = f.read().split()
    if cur and cur[0].isdigit() and int(cur[0]) < limit:
        with open(path, "w") as f:
            f.write(str(limit))


def rlimitTestAndSet(name: int, limit: int) -> None:
    """Raise a resource limit to at least limit."""
    import resource
    soft, hard = resource.getrlimit(name)
    if soft < limit:
        resource.setrlimit(name, (limit, max(hard, limit)))


partial = functools.partial
