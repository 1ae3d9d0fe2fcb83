"""Async clients behind a blocking face, so the conformance tests run unchanged over them.

An :class:`EventLoopThread` runs one event loop in a thread; :class:`Blocking` wraps an async
client so that each call submits its coroutine to that loop and waits for the result, and
a watch becomes a :class:`BlockingWatch` whose iteration awaits the async watcher's events on
the loop. Every request therefore goes through the async client, the async transport (or
the async fake) and the async watcher; only the test's own thread blocks.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
from collections.abc import Coroutine, Iterator
from types import TracebackType
from typing import Any, TypeVar

from kgen_runtime.rest import AsyncStreamWatcher
from kgen_runtime.watch import WatchEvent

__all__ = ["Blocking", "BlockingWatch", "EventLoopThread"]

R = TypeVar("R")


class EventLoopThread:
    """One event loop running in a daemon thread until :meth:`close`."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()

    def run(self, coroutine: Coroutine[Any, Any, R]) -> R:
        """Run ``coroutine`` on the loop and return its result (or raise its error)."""
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result()

    def close(self) -> None:
        self.run(self.loop.shutdown_asyncgens())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        self.loop.close()


async def _awaited(awaitable: Any) -> Any:
    return await awaitable


class Blocking:
    """``target``'s methods, called from a plain thread: awaitables are run on ``runner``'s
    loop, watchers become :class:`BlockingWatch`, other results are wrapped again (so
    ``dynamic.resource(gvr).namespace(ns)`` chains work)."""

    def __init__(self, target: Any, runner: EventLoopThread) -> None:
        self._target = target
        self._runner = runner

    def __getattr__(self, name: str) -> Any:
        attribute = getattr(self._target, name)
        if not callable(attribute):  # a property: plain data, or another client to wrap
            plain = attribute is None or isinstance(attribute, str | int | float | tuple | list)
            return attribute if plain else Blocking(attribute, self._runner)

        def call(*args: Any, **kwargs: Any) -> Any:
            result = attribute(*args, **kwargs)
            if isinstance(result, AsyncStreamWatcher):
                return BlockingWatch(self._runner.run(_awaited(result)), self._runner)
            if inspect.isawaitable(result):
                value = self._runner.run(_awaited(result))
                # A transport's response has awaitable methods (read) of its own.
                return Blocking(value, self._runner) if _is_response(value) else value
            return Blocking(result, self._runner)

        return call


def _is_response(value: Any) -> bool:
    return hasattr(value, "aiter_lines") and hasattr(value, "status")


class BlockingWatch:
    """An opened :class:`AsyncStreamWatcher` iterated from a plain thread."""

    def __init__(self, watcher: AsyncStreamWatcher[Any], runner: EventLoopThread) -> None:
        self._watcher = watcher
        self._events = watcher.__aiter__()
        self._runner = runner

    def __iter__(self) -> Iterator[WatchEvent[Any]]:
        while True:
            try:
                yield self._runner.run(_awaited(self._events.__anext__()))
            except StopAsyncIteration:
                return

    def stop(self) -> None:
        self._runner.loop.call_soon_threadsafe(self._watcher.stop)

    def __enter__(self) -> BlockingWatch:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()
