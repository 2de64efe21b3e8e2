#!/usr/bin/env python3
"""MPTCP over asymmetric 10 + 2 Mbit/s paths with bounded queues (20 and 10
packets): mainline defaults vs a tuned sender (tcp_notsent_lowat 16 KiB, or
subflow send buffers from 1 MiB), as in asym-mptcp's mptcp-qm scenarios.
Run as root: sudo python3 examples/python/asym_mptcp_tuned.py [seconds]"""
import sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))  # in place from a checkout
from emuctl import Lab

SECONDS = sys.argv[1] if len(sys.argv) > 1 else "15"
PAIR = 12e6 * 1448 / 1514  # the two paths' TCP capacity: 11.48 Mbit/s
SENDERS = {
    "defaults": {"mptcp": {"enabled": True}},
    "notsent_lowat 16 KiB": {"mptcp": {"enabled": True}, "sysctls": {"net.ipv4.tcp_notsent_lowat": 16384}},
    "wmem[1] 1 MiB": {"mptcp": {"enabled": True}, "tcp": {"wmem": [4096, 1048576, 4194304]}},
}


def topology(cli):
    path = lambda rate, q: {"rate": rate, "delay": "5ms", "queue": q}  # noqa: E731
    return {"name": "pympt", "nodes": {"cli": cli, "srv": {"mptcp": {"endpoints": "auto"}},
                                       "s1": {"kind": "switch"}, "s2": {"kind": "switch"}},
            "links": [{"endpoints": ["cli", "s1"], "ip": {"cli": "10.1.0.1/24"}},
                      {"endpoints": ["s1", "srv"], "ip": {"srv": "10.1.0.2/24"}, "link": path("10mbit", 20)},
                      {"endpoints": ["cli", "s2"], "ip": {"cli": "10.2.0.1/24"}},
                      {"endpoints": ["s2", "srv"], "ip": {"srv": "10.2.0.2/24"}, "link": path("2mbit", 10)}]}


print("%-22s %14s %10s %12s" % ("sender", "goodput", "of pair", "limited by"))
for name, cli in SENDERS.items():
    with Lab.up(topology(cli)) as lab:
        res = lab.traffic(flows=[{"from": "cli", "to": "srv", "dst": "10.1.0.2", "proto": "mptcp",
                                  "cc": "cubic", "duration": SECONDS + "s"}])
        s = res.summary[0]
        causes = {k: v for k, v in (s.get("limited_by") or {}).items() if k in ("network", "rwnd", "sndbuf", "app")}
        top = max(causes, key=causes.get) if causes else "-"
        print("%-22s %9.3f Mbit/s %9.1f %% %12s" % (name, s["steady_goodput_bps"] / 1e6,
                                                   100 * s["steady_goodput_bps"] / PAIR, top))
