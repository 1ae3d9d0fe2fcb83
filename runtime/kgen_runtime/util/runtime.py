"""Crash protection and error reporting for background loops (apimachinery's util/runtime).

A worker thread that dies on an exception silently stops a controller. Loops therefore run
their body inside :func:`handle_crash`, which logs the traceback and lets the loop go on, and
report errors they handle themselves through :func:`handle_error`.

Unlike client-go's ``HandleCrash`` (which re-panics by default), :func:`handle_crash` swallows
the exception: Python has no process-wide panic to fall back on, and a loop that keeps running
is the behaviour every caller here wants. ``BaseException`` that is not an ``Exception``
(``KeyboardInterrupt``, ``SystemExit``, ``GeneratorExit``) is never swallowed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager

__all__ = ["handle_crash", "handle_error"]

_log = logging.getLogger("kgen_runtime.crash")


@contextmanager
def handle_crash(*handlers: Callable[[Exception], None]) -> Iterator[None]:
    """Run the ``with`` body; if it raises, log the traceback and call ``handlers`` in order.

    The exception does not propagate. A handler that raises is itself logged and the remaining
    handlers still run. Thread-safe (no shared state besides the logger).
    """
    try:
        yield
    except Exception as err:
        _log.error("observed a crash: %s: %s", type(err).__name__, err, exc_info=err)
        for handler in handlers:
            try:
                handler(err)
            except Exception as handler_err:
                _log.error("crash handler %r failed", handler, exc_info=handler_err)


def handle_error(err: BaseException, message: str = "unhandled error") -> None:
    """Log an error that a loop has chosen to handle (client-go's ``HandleError``)."""
    _log.error("%s: %s", message, err, exc_info=err)
