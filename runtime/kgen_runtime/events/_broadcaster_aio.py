"""Writing Events through async clients (the asyncio side of :mod:`._broadcaster`).

Recording stays :class:`~kgen_runtime.controller.EventBroadcaster`'s: ``recorder.event(...)``
never blocks nor awaits (safe on the event loop), and each watcher has its queue and thread,
its correlator and retries. Only the writes differ: an :class:`AsyncEventSink` (e.g.
:class:`AsyncClientEventSink` over an ``AsyncClientset``'s Event clients) is awaited on the
event loop that owns its connections, submitted from the watcher's thread
(:class:`LoopEventSink`); the :class:`~kgen_runtime.controller.AsyncManager` does this for the
sink it is given::

    manager = AsyncManager(event_sink=AsyncClientEventSink(clientset.core_v1.events))
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from kgen_runtime.api.core.v1.models import Event
from kgen_runtime.rest import PatchBody, PatchType

__all__ = ["AsyncClientEventSink", "AsyncEventClient", "AsyncEventSink", "LoopEventSink"]


class AsyncEventSink(Protocol):
    """Where Events are written, awaited (the twin of ``EventSink``)."""

    async def create(self, event: Event) -> Event: ...

    async def patch(self, event: Event, patch: Mapping[str, Any]) -> Event: ...


class AsyncEventClient(Protocol):
    """The verbs :class:`AsyncClientEventSink` uses of an async core/v1 Event client."""

    async def create(self, obj: Event) -> Event: ...

    async def patch(
        self, name: str, patch: PatchBody, *, patch_type: PatchType = "merge"
    ) -> Event: ...


class AsyncClientEventSink:
    """An :class:`AsyncEventSink` over an async Event client per namespace, e.g.
    ``AsyncClientEventSink(async_clientset.core_v1.events)``."""

    def __init__(self, events_for: Callable[[str], AsyncEventClient]) -> None:
        self._events_for = events_for

    async def create(self, event: Event) -> Event:
        return await self._events_for(event.metadata.namespace or "default").create(event)

    async def patch(self, event: Event, patch: Mapping[str, Any]) -> Event:
        client = self._events_for(event.metadata.namespace or "default")
        return await client.patch(event.metadata.name or "", patch, patch_type="merge")


class LoopEventSink:
    """An ``EventSink`` for the broadcaster's threads: each write is awaited on ``loop``.

    Called from a thread other than ``loop``'s (it blocks until the write is done). Once
    the loop is closed, writes fail with ``RuntimeError`` (logged by the broadcaster).
    """

    def __init__(self, sink: AsyncEventSink, loop: asyncio.AbstractEventLoop) -> None:
        self._sink = sink
        self._loop = loop

    def create(self, event: Event) -> Event:
        return asyncio.run_coroutine_threadsafe(self._sink.create(event), self._loop).result()

    def patch(self, event: Event, patch: Mapping[str, Any]) -> Event:
        return asyncio.run_coroutine_threadsafe(
            self._sink.patch(event, patch), self._loop).result()
