"""Mininet's own examples, run where they lie.

``python -m mininet.examples.X`` under ``emuctl mininet`` runs the example
file from ``$EMUCTL_MININET_EXAMPLES`` (the test runner points it at the
examples unpacked from Debian's ``mininet`` package), else from where a
Debian ``mininet`` package installed them. Nothing is copied here.
"""

import os

_dirs = [os.environ.get("EMUCTL_MININET_EXAMPLES", ""),
         "/usr/lib/python3/dist-packages/mininet/examples",
         "/usr/share/doc/mininet/examples"]
__path__ = [d for d in _dirs if d and os.path.isdir(d)]
