"""Decoding a watch stream into events (apimachinery's ``watch.StreamWatcher``)."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from types import TracebackType
from typing import Generic, TypeVar, cast, get_args

import orjson

from kgen_runtime.meta import KubeModel, Status, WireEventFilter
from kgen_runtime.meta._lazy import lazy_model
from kgen_runtime.rest._request import Response
from kgen_runtime.watch import OBJECT_EVENT_TYPES, EventType, WatchEvent

__all__ = ["EventDecoder", "StreamWatcher"]

T = TypeVar("T", bound=KubeModel)

_EVENT_TYPES: frozenset[str] = frozenset(get_args(EventType))


class EventDecoder(Generic[T]):
    """Turns the lines of a watch stream into events; shared by the sync and async watchers.

    Each line is decoded with ``orjson`` and built into ``model`` without validation
    (:meth:`~kgen_runtime.meta.KubeModel.model_from_wire`). ``ERROR`` events carry the
    server's :class:`~kgen_runtime.meta.Status` as their object. A line that cannot be decoded
    becomes a synthetic ``ERROR`` event (reason ``InternalError``) and :attr:`failed` is set:
    the watch must end there, as client-go's does.

    ``keep``, if given, is asked with the type and the wire object (the ``dict`` from
    ``orjson``) of each ``ADDED``, ``MODIFIED`` and ``DELETED`` event before the object is
    built; an event it rejects decodes to ``None`` and is skipped, never built. ``BOOKMARK``
    and ``ERROR`` events are not asked about, nor an object that is not a JSON object (it
    fails the build as before).

    With ``lazy`` the object of each of those events (a JSON object) stays its wire document
    until first touched (:func:`~kgen_runtime.meta._lazy.lazy_model`: what informers cache),
    so an object that does not build raises on that touch instead of failing the watch.
    """

    def __init__(self, model: type[T], keep: WireEventFilter | None = None, lazy: bool = False
                 ) -> None:
        self._model = model
        self._keep = keep
        self._lazy = lazy
        self.failed = False

    def decode(self, line: bytes) -> WatchEvent[T] | None:
        """The event of one line, ``None`` if ``keep`` rejected it (check :attr:`failed`
        afterwards)."""
        try:
            return self._decode(line)
        except ValueError as error:  # pydantic's ValidationError included
            self.failed = True
            return WatchEvent("ERROR", cast(T, _decode_failure(error)))

    def _decode(self, line: bytes) -> WatchEvent[T] | None:
        """Decode one line: ``orjson``, ``keep``, and the model's fast wire build (``ERROR``
        as Status)."""
        document = orjson.loads(line)
        if type(document) is not dict:
            raise ValueError("a watch event must be a JSON object")
        event_type, obj = document.get("type"), document.get("object")
        if event_type == "ERROR":
            return WatchEvent("ERROR", cast(T, Status.model_from_wire(obj)))
        if event_type not in _EVENT_TYPES:
            raise ValueError(f"unknown watch event type {event_type!r}")
        if obj.__class__ is dict and event_type in OBJECT_EVENT_TYPES:
            keep = self._keep
            if keep is not None and not keep(event_type, obj):
                return None
            if self._lazy:
                return WatchEvent(event_type, lazy_model(self._model, obj))
        return WatchEvent(event_type, self._model.model_from_wire(obj))


class StreamWatcher(Generic[T]):
    """Iterates the events of one watch response; a :class:`~kgen_runtime.watch.Watcher`.

    Each line of the stream is decoded with ``orjson`` and built into ``model`` without
    validation (:meth:`~kgen_runtime.meta.KubeModel.model_from_wire`). ``ERROR`` events
    carry the server's :class:`~kgen_runtime.meta.Status` as their object (typed as ``T`` by
    the shared ``WatchEvent`` contract; check ``event.type`` before using the object). A line
    that cannot be decoded ends the watch with a synthetic ``ERROR`` event (reason
    ``InternalError``), as client-go does.

    The iteration ends when the server closes the stream (or the connection breaks, as
    client-go treats an unexpected EOF) or after :meth:`stop`, which may be called from any
    thread and wakes a blocked read at once. It raises ``TimeoutError`` if the server sends
    nothing for the read timeout (``ConnectionError`` only from transports that report broken
    streams). Iterate once; usable as a context manager that stops on exit.

    ``keep``, if given, filters the object events before their objects are built
    (:class:`EventDecoder`): the events it rejects are skipped. ``lazy`` leaves their objects
    lazy (:class:`EventDecoder`).
    """

    def __init__(self, response: Response, model: type[T], keep: WireEventFilter | None = None,
                 lazy: bool = False) -> None:
        self._response = response
        self._decoder = EventDecoder(model, keep, lazy)
        self._stopped = threading.Event()

    @classmethod
    def opening(cls, open_: Callable[[], Response], model: type[T],
                keep: WireEventFilter | None = None, lazy: bool = False) -> StreamWatcher[T]:
        """The watcher of the response ``open_`` gives, called now: it returns once the server
        accepted the watch, and errors such as 410 Gone raise here."""
        return cls(open_(), model, keep, lazy)

    def __iter__(self) -> Iterator[WatchEvent[T]]:
        try:
            for line in self._response.iter_lines():
                if self._stopped.is_set():
                    return
                event = self._decoder.decode(line)
                if event is not None:
                    yield event
                if self._decoder.failed:
                    return
        except (TimeoutError, ConnectionError):
            if not self._stopped.is_set():
                raise
        finally:
            self._response.close()

    def stop(self) -> None:
        """End the iteration promptly, from any thread. Idempotent."""
        self._stopped.set()
        self._response.close()

    def __enter__(self) -> StreamWatcher[T]:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()


def _decode_failure(error: Exception) -> Status:
    return Status(
        status="Failure",
        code=500,
        reason="InternalError",
        message=f"unable to decode an event from the watch stream: {error}",
    )
