"""Mininet's clean-up (``mininet.clean``): take down the labs this layer built.

``cleanup()`` takes down every lab named ``mn`` or ``mn-<pid>`` (the
labs ``emuctl mininet`` builds) with ``emuctl down``, which removes all
that each one made; nothing else on the machine is touched.
"""

from __future__ import annotations

import re
import subprocess
from typing import Any

from emuctl._client import Client, find_emuctl
from mininet.log import info


def sh(cmd: str) -> str:
    """Run a shell command on the host; its output."""
    info(cmd + "\n")
    result = subprocess.run(cmd, shell=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, check=False)
    return result.stdout.decode(errors="replace")


def cleanCgroups() -> None:
    """Remove the CPU groups of CPULimitedHosts whose script is gone
    (emuctl-mininet-PID, PID no longer running), empty ones only."""
    import glob
    import os
    for root in glob.glob("/sys/fs/cgroup/emuctl-mininet-*") + glob.glob("/sys/fs/cgroup/*/emuctl-mininet-*"):
        pid = root.rsplit("-", 1)[-1]
        if pid.isdigit() and _running(pid):
            continue
        for d in sorted(glob.glob(root + "/*/"), reverse=True) + [root]:
            try:
                os.rmdir(d)
                info(f"{d} ")
            except OSError:
                pass


def _running(pid: str) -> bool:
    """Whether process pid runs (a zombie does not: it is gone but for
    its exit status)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[-1].split()[0] != "Z"
    except OSError:
        return False


def cleanRundirs() -> None:
    """Remove the controllers' run directories of scripts that are gone
    (emuctl-mn-NAME-PID-XXXX in the temporary directory, PID no longer
    running): a script killed outright cannot remove its own."""
    import glob
    import os
    import shutil
    import tempfile
    for d in glob.glob(os.path.join(tempfile.gettempdir(), "emuctl-mn-*-*-*")):
        pid = os.path.basename(d).rsplit("-", 2)[-2]
        if pid.isdigit() and not _running(pid) and os.path.isdir(d):
            shutil.rmtree(d, ignore_errors=True)
            info(f"{d} ")


def killprocs(pattern: str) -> None:
    """Killing processes by name is not done: emuctl stops what it started, by pid."""


class Cleanup:
    """Mininet's Cleanup, as a class with ``cleanup()``."""

    callbacks: list[Any] = []

    @classmethod
    def cleanup(cls) -> None:
        """Take down the labs of emuctl's Mininet layer."""
        info("*** Removing emuctl labs of Mininet scripts\n")
        c = Client(find_emuctl())
        try:
            for lab in c.call("labs"):
                name = lab["lab"]
                if re.fullmatch(r"mn(-\d+)?", name):
                    info(f"{name} ")
                    c.call("down", lab=name)
        finally:
            c.close()
        cleanCgroups()
        cleanRundirs()
        for callback in cls.callbacks:
            callback()
        info("\n*** Cleanup complete.\n")

    @classmethod
    def addCleanupCallback(cls, callback: Any) -> None:
        """Run callback at cleanup."""
        if callback not in cls.callbacks:
            cls.callbacks.append(callback)


cleanup = Cleanup.cleanup
addCleanupCallback = Cleanup.addCleanupCallback
