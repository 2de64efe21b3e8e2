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


def _cpus():
    """Per CPU (steal, total) jiffies from /proc/stat."""
    out = []
    with open("/proc/stat") as f:
        for line in f:
            p = line.split()
            if p and p[0].startswith("cpu") and p[0] != "cpu":
                v = [int(x) for x in p[1:9]]
                out.append((v[7], sum(v)))
    return out


def starved(fn):
    """Run fn (a timed measurement) and say whether it lacked CPU, as the
    Go tests' testutil.HostLoad.Starved does: the hypervisor stole over
    2 % of a CPU (less one tick), a 2 ms timer woke over 20 ms late, or
    stalls over 5 ms took over 2 % of the run. Returns (fn's result, why
    or "")."""
    import threading
    import time
    stop, worst, lost = threading.Event(), [0.0], [0.0]

    def watch():
        while not stop.is_set():
            t = time.monotonic()
            time.sleep(0.002)
            late = time.monotonic() - t - 0.002
            worst[0] = max(worst[0], late)
            if late > 0.005:
                lost[0] += late
    c0, t0 = _cpus(), time.monotonic()
    w = threading.Thread(target=watch, daemon=True)
    w.start()
    try:
        v = fn()
    finally:
        stop.set()
        w.join()
    dur, c1 = time.monotonic() - t0, _cpus()
    steal = max([(b[0] - a[0] - 1) / (b[1] - a[1]) for a, b in zip(c0, c1) if b[1] > a[1]] + [0.0])
    if steal > 0.02:
        return v, f"the hypervisor stole {100 * steal:.1f} % of a CPU"
    if worst[0] > 0.020:
        return v, f"a 2 ms timer woke {1000 * worst[0]:.1f} ms late"
    if lost[0] > 0.02 * dur:
        return v, f"stalls took {1000 * lost[0]:.0f} ms of the {dur:.1f} s run"
    return v, ""


def retry_starved(fn, what):
    """fn once more when its run lacked CPU; skipped when the second did too."""
    for attempt in (1, 2):
        v, why = starved(fn)
        if not why:
            return v
        print(f"{what}: invalid ({why}; it measured {v!r})")
        if attempt == 2:
            pytest.skip(f"{what}: invalid twice, not judged: {why}")
