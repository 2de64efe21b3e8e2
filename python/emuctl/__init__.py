"""emuctl from Python: labs of real kernel networking, driven through ``emuctl api``.

    from emuctl import Lab

    with Lab.up("topo.yaml") as lab:          # or a dict, YAML text, "tree,2,2"
        print(lab.node("h1").cmd("ping -c1 h2"))
        lab.add_host("h3")
        lab.add_link("h3", "s1", rate=10, delay="5ms")
        res = lab.traffic(from_="h1", to="h3", duration="5s")
        print(res.summary[0]["steady_goodput_bps"])

Standard library only; the ``emuctl`` binary does the work (as root).
"""

from .errors import BadInput, Conflict, EmuctlError, NotFound, NotSupported, Problem
from .lab import Lab, Link, Node, Result, Shell, WiFi
from ._client import Client, find_emuctl

__all__ = ["Lab", "Node", "Link", "Shell", "WiFi", "Result", "Client", "find_emuctl",
           "EmuctlError", "NotFound", "BadInput", "Conflict", "NotSupported", "Problem"]

__version__ = "0.1.0"
