#!/usr/bin/env python3
"""A lab in 20 lines: build, work inside, grow it, measure, take it down (run as root)."""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))  # in place from a checkout
from emuctl import Lab

topo = {"name": "py20", "addressing": {"p2p_prefix": 24}, "nodes": {"h1": {}, "h2": {}, "s1": {"kind": "switch"}},
        "links": [{"endpoints": ["h1", "s1"], "link": {"rate": "10mbit", "delay": "5ms"}}, {"endpoints": ["h2", "s1"]}]}
with Lab.up(topo) as lab:
    print(lab["h1"].cmd("hostname; ip -brief address show h1-eth0"), end="")
    print("ping h1 -> h2: %.2f ms (2 x 5 ms)" % min(lab.ping("h1", "h2", count=5)))
    lab.add_host("h3")                                       # while the lab runs
    lab.add_link("h3", "s1", rate=20, delay="1ms")
    res = lab.traffic(from_="h3", to="h1", duration="5s")
    g = res.summary[0]["steady_goodput_bps"]
    print("h3 -> h1: %.3f Mbit/s = %.3f x 10 Mbit/s x 1448/1514" % (g / 1e6, g / (10e6 * 1448 / 1514)))
    print(lab.topology())
