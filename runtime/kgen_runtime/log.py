"""Structured logging through the standard :mod:`logging` module (controller-runtime's
``pkg/log`` and its zap options, in Python idiom).

Loggers stay ``logging.getLogger(__name__)``; what this adds:

* **Key/value context** bound for the current thread (a :mod:`contextvars` variable, so
  asyncio tasks get their own too): :func:`log_context` binds values for a block, and a
  :class:`ContextFilter` on a handler copies them onto every record it handles as
  ``record.log_context``. Every :class:`~kgen_runtime.controller.Controller` binds
  ``controller``, ``namespace``, ``name`` and ``reconcileID`` (a fresh UUID) around each
  reconcile (:func:`reconcile_context`, controller-runtime's keys), so everything a
  reconciler and the runtime log while handling one key can be found by its reconcile id.
* **Formatters** that print the context and any ``extra={...}`` fields as key/value pairs:
  :class:`KeyValueFormatter` (text, the default) and :class:`JSONFormatter` (one JSON object
  per line, opt-in, for log collectors).
* :func:`configure_logging` for an operator's ``main``: one handler on the root logger, the
  level from a ``-v`` count (:func:`verbosity_level`), and third-party libraries (urllib3,
  kubernetes) held at WARNING unless ``-vv``, so ``-v`` does not bury the operator's own
  DEBUG lines under urllib3's "Converted retries value" and connection chatter.
"""

from __future__ import annotations

import logging
import sys
import uuid
from collections.abc import Hashable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from datetime import UTC, datetime
from types import MappingProxyType
from typing import IO, Any

import orjson

__all__ = [
    "THIRD_PARTY_LOGGERS",
    "ContextFilter",
    "JSONFormatter",
    "KeyValueFormatter",
    "configure_logging",
    "current_log_context",
    "log_context",
    "reconcile_context",
    "verbosity_level",
]

THIRD_PARTY_LOGGERS = ("urllib3", "kubernetes")
"""Loggers :func:`configure_logging` keeps at WARNING below verbosity 2."""

_CONTEXT: ContextVar[Mapping[str, object]] = ContextVar(
    "kgen_log_context", default=MappingProxyType({})
)

# What every LogRecord has: anything else on a record came from ``extra=`` and is printed.
_RECORD_ATTRIBUTES = frozenset(
    logging.LogRecord("", 0, "", 0, "", None, None).__dict__
) | {"message", "asctime", "log_context"}


@contextmanager
def log_context(**values: object) -> Iterator[None]:
    """Bind ``values`` (added to those already bound) to the records logged in the block."""
    token = _CONTEXT.set({**_CONTEXT.get(), **values})
    try:
        yield
    finally:
        _CONTEXT.reset(token)


def current_log_context() -> Mapping[str, object]:
    """The values bound for the current thread or task."""
    return _CONTEXT.get()


@contextmanager
def reconcile_context(controller: str, key: Hashable) -> Iterator[str]:
    """Bind controller-runtime's keys for one reconcile of ``key``; yields the reconcile id.

    A key with string ``namespace`` and ``name`` attributes (the builder's
    :class:`~kgen_runtime.controller.Request`) binds those; a ``"namespace/name"`` or
    ``"name"`` key (the keys of ``meta_namespace_key_func``) is split into them; another key
    is logged whole as ``name``.
    """
    reconcile_id = str(uuid.uuid4())
    namespace, name = _split_key(key)
    bound = {"controller": controller, "namespace": namespace, "name": name,
             "reconcileID": reconcile_id}
    token = _CONTEXT.set({**_CONTEXT.get(), **bound})
    try:
        yield reconcile_id
    finally:
        _CONTEXT.reset(token)


def _split_key(key: Hashable) -> tuple[str, str]:
    if isinstance(key, str):
        namespace, _, name = key.rpartition("/")
        return namespace, name
    # Read by attribute: log.py sits below kgen_runtime.controller, which imports it.
    key_namespace, key_name = getattr(key, "namespace", None), getattr(key, "name", None)
    if isinstance(key_namespace, str) and isinstance(key_name, str):
        return key_namespace, key_name
    return "", str(key)


class ContextFilter(logging.Filter):
    """Sets ``record.log_context`` to the values bound where the record was logged.

    Put it on a handler (a logger's filters see only records logged on that very logger).
    Never drops a record.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        if not hasattr(record, "log_context"):
            record.log_context = _CONTEXT.get()
        return True


def _fields(record: logging.LogRecord) -> dict[str, object]:
    """The record's bound context followed by its ``extra`` fields.

    A record that passed no :class:`ContextFilter` gets the context bound where it is being
    formatted, which is where it was logged unless a queue handler moved it to another thread.
    """
    context = getattr(record, "log_context", None)
    fields = dict(_CONTEXT.get() if context is None else context)
    for name, value in record.__dict__.items():
        if name not in _RECORD_ATTRIBUTES and not name.startswith("_"):
            fields[name] = value
    return fields


def _timestamp(record: logging.LogRecord) -> str:
    moment = datetime.fromtimestamp(record.created, UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


class KeyValueFormatter(logging.Formatter):
    """``2026-01-02T03:04:05.678Z INFO logger: message key=value …`` (values with spaces,
    quotes or ``=`` are JSON-quoted), then the traceback if any."""

    def format(self, record: logging.LogRecord) -> str:
        line = (
            f"{_timestamp(record)} {record.levelname} {record.name}: {record.getMessage()}"
        )
        pairs = " ".join(f"{k}={_quoted(v)}" for k, v in _fields(record).items())
        text = f"{line} {pairs}" if pairs else line
        if record.exc_info:
            text += "\n" + self.formatException(record.exc_info)
        if record.stack_info:
            text += "\n" + self.formatStack(record.stack_info)
        return text


def _quoted(value: object) -> str:
    text = str(value)
    if not text or any(c in text for c in ' "=\n\t'):
        return orjson.dumps(text).decode()
    return text


class JSONFormatter(logging.Formatter):
    """One JSON object per record, in zap's shape as controller-runtime writes it:
    ``{"ts": …, "level": "info", "logger": …, "msg": …, <context and extra fields>}``,
    with ``"error"`` and ``"stacktrace"`` when an exception is attached. Values that are not
    JSON types are written as ``str(value)``."""

    def format(self, record: logging.LogRecord) -> str:
        document: dict[str, Any] = {
            "ts": _timestamp(record),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
        }
        for key, value in _fields(record).items():
            document.setdefault(key, value)
        if record.exc_info and record.exc_info[1] is not None:
            document["error"] = str(record.exc_info[1]) or type(record.exc_info[1]).__name__
            document["stacktrace"] = self.formatException(record.exc_info)
        if record.stack_info:
            document["stack"] = self.formatStack(record.stack_info)
        return orjson.dumps(document, default=str).decode()


def verbosity_level(verbosity: int) -> int:
    """The level of a ``-v`` count: 0 → INFO, 1 or more → DEBUG."""
    return logging.INFO if verbosity <= 0 else logging.DEBUG


class _ConfiguredHandler(logging.StreamHandler[IO[str]]):
    """The handler :func:`configure_logging` installs (and replaces when called again)."""


def configure_logging(
    verbosity: int = 0, *, json: bool = False, stream: IO[str] | None = None
) -> logging.Handler:
    """Log to ``stream`` (stderr) from the root logger at the level of ``verbosity``.

    With ``verbosity`` below 2 the :data:`THIRD_PARTY_LOGGERS` stay at WARNING, at 2 or more
    they log DEBUG too. ``json`` selects :class:`JSONFormatter` over
    :class:`KeyValueFormatter`. Calling it again replaces the handler it installed before and
    leaves other handlers alone. Returns the handler.
    """
    root = logging.getLogger()
    for installed in [h for h in root.handlers if isinstance(h, _ConfiguredHandler)]:
        root.removeHandler(installed)
    handler = _ConfiguredHandler(stream if stream is not None else sys.stderr)
    handler.setFormatter(JSONFormatter() if json else KeyValueFormatter())
    handler.addFilter(ContextFilter())
    root.addHandler(handler)
    root.setLevel(verbosity_level(verbosity))
    third_party = logging.DEBUG if verbosity >= 2 else logging.WARNING
    for name in THIRD_PARTY_LOGGERS:
        logging.getLogger(name).setLevel(third_party)
    return handler
