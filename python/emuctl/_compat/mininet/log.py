"""Mininet's logging: ``setLogLevel``, ``info``, ``output``, ``warn``, ``error``, ``debug``.

As in Mininet, messages carry their own newlines and are written as they
come (no prefix, no added newline); the default level is ``output``.
"""

from __future__ import annotations

import logging
import sys
from typing import Any

LEVELS = {"debug": logging.DEBUG, "info": logging.INFO, "output": 25,
          "warning": logging.WARNING, "warn": logging.WARNING,
          "error": logging.ERROR, "critical": logging.CRITICAL}
LEVELDEFAULT = "output"
logging.addLevelName(25, "OUTPUT")


class _Handler(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes the message as is and flushes (Mininet's StreamHandlerNoNewline)."""

    terminator = ""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            stream = sys.stdout
            stream.write(record.getMessage())
            stream.flush()
        except Exception:  # pragma: no cover - as logging does
            self.handleError(record)


class MininetLogger(logging.Logger):
    """A logger with Mininet's ``output`` level and ``setLogLevel``."""

    def __init__(self, name: str = "mininet") -> None:
        super().__init__(name)
        self.ch = _Handler()
        self.addHandler(self.ch)
        self.setLogLevel()

    def setLogLevel(self, levelname: str | None = None) -> None:
        """Set the level by name (debug, info, output, warning, error, critical)."""
        if levelname is not None and levelname not in LEVELS:
            raise Exception(f"setLogLevel: unknown level {levelname!r} (valid: {', '.join(LEVELS)})")
        level = LEVELS[levelname or LEVELDEFAULT]
        self.setLevel(level)
        self.ch.setLevel(level)
        self._cache.clear()  # not in logging's registry, so not cleared for us

    def _say(self, level: int, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        if self.isEnabledFor(level):
            self._log(level, " ".join(str(a) for a in args), (), **kwargs)

    # Mininet's log calls take several arguments, joined by spaces
    def debug(self, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        """Log at debug level."""
        self._say(logging.DEBUG, args, kwargs)

    def info(self, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        """Log at info level."""
        self._say(logging.INFO, args, kwargs)

    def output(self, *args: Any, **kwargs: Any) -> None:
        """Log at the ``output`` level (printed by default)."""
        self._say(25, args, kwargs)

    def warning(self, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        """Log at warning level."""
        self._say(logging.WARNING, args, kwargs)

    warn = warning

    def error(self, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        """Log at error level."""
        self._say(logging.ERROR, args, kwargs)

    def critical(self, *args: Any, **kwargs: Any) -> None:  # type: ignore[override]
        """Log at critical level."""
        self._say(logging.CRITICAL, args, kwargs)


lg = MininetLogger()
info, output, warning, warn = lg.info, lg.output, lg.warning, lg.warning
error, debug, critical = lg.error, lg.debug, lg.critical
setLogLevel = lg.setLogLevel
