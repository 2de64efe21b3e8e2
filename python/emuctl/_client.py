"""The connection to ``emuctl api``: JSON-RPC 2.0 over a child process's pipes.

One ``emuctl api`` process per :class:`Client`; requests may be sent from
several threads at once and are matched to their answers by id.
Notifications (events, suite progress) go to per-method queues.
"""

from __future__ import annotations

import json
import os
import queue
import shutil
import subprocess
import threading
from pathlib import Path
from typing import Any, Optional

from .errors import EmuctlError


def find_emuctl() -> str:
    """Return the emuctl binary to run.

    ``$EMUCTL`` when set; else the checkout's ``bin/emuctl`` when this
    package is used in place from a checkout (``make build`` puts it
    there); else ``emuctl`` on ``$PATH`` (``sudo make install``).
    """
    env = os.environ.get("EMUCTL")
    if env:
        return env
    checkout = Path(__file__).resolve().parents[2] / "bin" / "emuctl"
    if checkout.is_file() and os.access(checkout, os.X_OK):
        return str(checkout)
    found = shutil.which("emuctl")
    if found:
        return found
    raise EmuctlError(-1, "not-found", "emuctl not found: set $EMUCTL, run `make build` in the checkout, "
                      "or `sudo make install`")


class Client:
    """A running ``emuctl api`` and the requests sent to it."""

    def __init__(self, emuctl: Optional[str] = None, lab: Optional[str] = None) -> None:
        argv = [emuctl or find_emuctl(), "api"]
        if lab:
            argv += ["--lab", lab]
        self._proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                      stderr=None, text=True, encoding="utf-8", bufsize=1)
        self._lock = threading.Lock()   # ids, waiting callers, queues
        self._wlock = threading.Lock()  # one request written at a time
        self._next = 0
        self._waiting: dict[int, "queue.Queue[dict[str, Any]]"] = {}
        self._notes: dict[str, "queue.Queue[dict[str, Any]]"] = {}
        self._closed = False
        self._reader = threading.Thread(target=self._read, name="emuctl-api-reader", daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self._proc.stdout is not None
        for line in self._proc.stdout:
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if "id" in msg and msg["id"] is not None:
                with self._lock:
                    q = self._waiting.pop(msg["id"], None)
                if q is not None:
                    q.put(msg)
            elif "method" in msg:
                self.notifications(msg["method"]).put(msg.get("params") or {})
        # the server ended: every caller still waiting gets an error
        with self._lock:
            waiting, self._waiting = self._waiting, {}
        for q in waiting.values():
            q.put({"error": {"code": -1, "message": "emuctl api ended",
                             "data": {"kind": "failed"}}})

    def notifications(self, method: str) -> "queue.Queue[dict[str, Any]]":
        """The queue of notifications of one method ("event", "progress")."""
        with self._lock:
            q = self._notes.get(method)
            if q is None:
                q = self._notes[method] = queue.Queue()
            return q

    def call(self, method: str, **params: Any) -> Any:
        """Call one method and return its result; raise EmuctlError on error.

        Params that are None are left out.
        """
        clean = {k: v for k, v in params.items() if v is not None}
        q: "queue.Queue[dict[str, Any]]" = queue.Queue(maxsize=1)
        with self._lock:
            if self._closed:
                raise EmuctlError(-1, "failed", "the emuctl api connection is closed")
            self._next += 1
            rid = self._next
            self._waiting[rid] = q
        line = json.dumps({"jsonrpc": "2.0", "id": rid, "method": method, "params": clean})
        assert self._proc.stdin is not None
        # written outside the callers' lock: the reader thread, which takes
        # it for every answer, must go on draining the server meanwhile
        with self._wlock:
            try:
                self._proc.stdin.write(line + "\n")
                self._proc.stdin.flush()
            except (BrokenPipeError, OSError) as e:
                with self._lock:
                    self._waiting.pop(rid, None)
                raise EmuctlError(-1, "failed", f"emuctl api is gone: {e}") from e
        msg = q.get()
        err = msg.get("error")
        if err:
            raise EmuctlError.from_wire(err)
        return msg.get("result")

    def close(self) -> None:
        """End the connection: the server answers what runs, then exits."""
        with self._lock:
            if self._closed:
                return
            self._closed = True
        try:
            if self._proc.stdin:
                with self._wlock:
                    self._proc.stdin.close()
            self._proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.wait()
        self._reader.join(timeout=5)
        if self._proc.stdout and not self._reader.is_alive():
            self._proc.stdout.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
