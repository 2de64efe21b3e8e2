"""Mininet's Python API on emuctl (the compatibility layer).

Importable as ``mininet`` only under ``emuctl mininet`` (which puts this
package's parent directory first on ``sys.path``), so a real Mininet
installed on the machine is never shadowed. Written from Mininet's
documented API; the lab behind it is an emuctl lab built and changed
through ``emuctl api`` (see :mod:`mininet.net`).
"""

VERSION = "2.3.0"  # the Mininet API this layer follows
