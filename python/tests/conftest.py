"""The tests use the package in place and the checkout's bin/emuctl (make build)."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "python"))
os.environ.setdefault("EMUCTL", str(ROOT / "bin" / "emuctl"))
# the layers (mininet, mn_wifi), importable as emuctl mininet makes them
COMPAT = ROOT / "python" / "emuctl" / "_compat"
sys.path.insert(0, str(COMPAT))


@pytest.fixture
def no_lab(monkeypatch):
    """For the layers' no-root tests: building a lab (realize(), which
    needs root) fails the test; netem is taken as present."""
    from mininet import _emu
    monkeypatch.setattr(_emu.Session, "netem", property(lambda self: True))

    def refuse(self):
        raise AssertionError("a no-root test tried to build a lab")
    monkeypatch.setattr(_emu.Session, "realize", refuse)
    yield
    _emu._sessions.clear()


def run_script(tmp_path, text, name="script.py", timeout=180):
    """Run a script under emuctl mininet; its output and the JSON object
    its last line prints."""
    script = tmp_path / name
    script.write_text(text)
    r = subprocess.run([os.environ["EMUCTL"], "mininet", str(script)], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=timeout)
    assert r.returncode == 0, r.stdout
    return r.stdout, json.loads(r.stdout.strip().splitlines()[-1])
