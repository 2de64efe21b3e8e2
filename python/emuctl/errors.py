"""Errors of emuctl's API as Python exceptions."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Optional


@dataclass
class Problem:
    """One problem of bad input, with its place where there is one."""

    message: str
    file: str = ""
    line: int = 0
    col: int = 0
    path: str = ""

    def __str__(self) -> str:
        where = self.file
        if self.line:
            where += f":{self.line}:{self.col}"
        parts = [p for p in (where, self.path, self.message) if p]
        return ": ".join(parts)


class EmuctlError(Exception):
    """An error answered by ``emuctl api``: its code, kind and message.

    ``code`` and ``kind`` are those of api/schema.json (1000 not-found,
    1001 bad-input, 1002 conflict, 1003 not-supported, 1004 failed,
    1005 needs-root, and JSON-RPC's own); ``problems`` lists each problem of
    bad input with its file, line, column and path.
    """

    def __init__(self, code: int, kind: str, message: str,
                 problems: Optional[list[Problem]] = None) -> None:
        super().__init__(message)
        self.code = code
        self.kind = kind
        self.message = message
        self.problems = problems or []

    @classmethod
    def from_wire(cls, err: dict[str, Any]) -> "EmuctlError":
        """Build the exception from a JSON-RPC error object."""
        data = err.get("data") or {}
        problems = [Problem(message=p.get("message", ""), file=p.get("file", ""), line=p.get("line", 0),
                            col=p.get("col", 0), path=p.get("path", ""))
                    for p in data.get("problems") or []]
        kind = data.get("kind", "")
        sub = _KINDS.get(kind, EmuctlError)
        return sub(int(err.get("code", -1)), kind, str(err.get("message", "")), problems)

    def __str__(self) -> str:
        return f"{self.message} [{self.kind or self.code}]"


class NotFound(EmuctlError):
    """No such lab, node, link, shell or subscription (1000)."""


class BadInput(EmuctlError):
    """A topology, change, link keys or flows that are not valid (1001)."""


class Conflict(EmuctlError):
    """The lab or node exists, or another process changes the lab (1002)."""


class NotSupported(EmuctlError):
    """Refused here: what this kernel, backend or lab cannot do (1003)."""


_KINDS: dict[str, type[EmuctlError]] = {
    "not-found": NotFound,
    "bad-input": BadInput,
    "conflict": Conflict,
    "not-supported": NotSupported,
}
