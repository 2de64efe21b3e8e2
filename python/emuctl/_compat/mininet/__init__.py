"""Mininet's Python API on emuctl (the compatibility layer).

Importable as ``mininet`` only under ``emuctl mininet`` (which puts this
package's parent directory first on ``sys.path``), so a real Mininet
installed on the machine is never shadowed. Written from Mininet's
documented API; the lab behind it is an emuctl lab built and changed
through ``emuctl api`` (see :mod:`mininet.net`).
"""

VERSION = "2.3.0"  # the Mininet API this layer follows


def _report_uncaught() -> None:
    """Under a test runner ($EMUCTL_MININET_REPORT), a script's uncaught
    exception is also appended to that file, so a test that would pass on
    an example's silent crash can be judged by it."""
    import os
    import sys
    import traceback

    path = os.environ.get("EMUCTL_MININET_REPORT")
    if not path:
        return
    previous = sys.excepthook

    def hook(kind, value, tb):  # type: ignore[no-untyped-def]
        if not issubclass(kind, (KeyboardInterrupt, SystemExit)):
            with open(path, "a") as f:
                f.write(f"== {' '.join(sys.argv)} (pid {os.getpid()})\n")
                f.write("".join(traceback.format_exception(kind, value, tb)))
        previous(kind, value, tb)

    sys.excepthook = hook


_report_uncaught()
