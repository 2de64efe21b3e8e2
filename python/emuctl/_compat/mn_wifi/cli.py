"""Mininet-WiFi's command line (``mn_wifi.cli``): Mininet's, plus
``distance A B``, ``stop`` (moving nodes stay where they are) and
``start`` (their paths start over: emuctl restarts a path, it does not
resume it)."""

from __future__ import annotations

from typing import Any

from mininet.cli import CLI as _CLI
from mininet.log import error, output


class CLI(_CLI):
    """The command line of a running Wi-Fi network."""

    prompt = "mininet-wifi> "

    def do_distance(self, line: str) -> None:
        """distance A B: the distance between two nodes (metres)."""
        args = line.split()
        if len(args) != 2:
            error("usage: distance sta1 ap1\n")
            return
        try:
            a, b = self.mn[args[0]], self.mn[args[1]]
            output("The distance between %s and %s is %s meters\n" % (a, b, a.get_distance_to(b)))
        except KeyError:
            error("node %s or/and node %s does not exist\n" % (args[0], args[1]))
        except Exception as e:
            error(f"{e}\n")

    def _mobility(self, action: str) -> None:
        s = self.mn.session
        rows: Any = s.call("wifi.mobility", lab=s.name) or []
        for r in rows:
            s.call("wifi.mobility", lab=s.name, action=action, node=r["node"])

    def do_stop(self, _line: str) -> None:
        """stop: moving nodes stay where they are."""
        self._mobility("stop")

    def do_start(self, _line: str) -> None:
        """start: moving nodes' paths start over."""
        self._mobility("start")


CLI_wifi = CLI
