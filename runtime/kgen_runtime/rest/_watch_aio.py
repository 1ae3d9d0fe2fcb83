"""The asyncio twin of :class:`~kgen_runtime.rest.StreamWatcher`; lines decode the same way."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Generator
from types import TracebackType
from typing import Any, Generic, TypeVar

from kgen_runtime.meta import KubeModel, WireEventFilter
from kgen_runtime.rest._request_aio import AsyncResponse
from kgen_runtime.rest._watch import EventDecoder
from kgen_runtime.watch import WatchEvent

__all__ = ["AsyncStreamWatcher"]

T = TypeVar("T", bound=KubeModel)


class AsyncStreamWatcher(Generic[T]):
    """The events of one watch, for ``async for``; what ``AsyncResourceClient.watch`` returns.

    Opened (the request sent, an error status such as 410 Gone raised) by whichever comes
    first of ``await watcher``, ``async with watcher`` or the first ``async for`` step, so all
    of these work::

        async for event in foos.watch(options): ...
        async with foos.watch(options) as watch:
            async for event in watch: ...
        watch = await foos.watch(options)          # raises here if the server refuses

    Events, ``ERROR`` events and decoding failures are as in the blocking
    :class:`~kgen_runtime.rest.StreamWatcher` (one :class:`EventDecoder` serves both). The
    iteration ends when the server closes the stream, the connection breaks, or after
    :meth:`stop` (from any task of the loop); it raises ``TimeoutError`` if the server stays
    silent for the read timeout. Cancelling the iterating task closes the response. Iterate
    once. ``keep`` filters the object events before their objects are built and ``lazy``
    leaves their objects lazy, as there.
    """

    def __init__(self, open_: Callable[[], Awaitable[AsyncResponse]], model: type[T],
                 keep: WireEventFilter | None = None, lazy: bool = False) -> None:
        self._open = open_
        self._response: AsyncResponse | None = None
        self._decoder = EventDecoder(model, keep, lazy)
        self._stopped = False

    @classmethod
    def opening(
        cls, open_: Callable[[], Awaitable[AsyncResponse]], model: type[T],
        keep: WireEventFilter | None = None,
        lazy: bool = False,
    ) -> AsyncStreamWatcher[T]:
        """The watcher of the response ``open_`` gives, called when the watcher is first
        awaited, entered or iterated (as the constructor does)."""
        return cls(open_, model, keep, lazy)

    async def _opened(self) -> AsyncStreamWatcher[T]:
        if self._response is None and not self._stopped:
            self._response = await self._open()
        return self

    def __await__(self) -> Generator[Any, None, AsyncStreamWatcher[T]]:
        return self._opened().__await__()

    def __aiter__(self) -> AsyncIterator[WatchEvent[T]]:
        return self._events()

    async def _events(self) -> AsyncIterator[WatchEvent[T]]:
        await self._opened()
        if self._response is None:
            return  # stopped before it was opened
        try:
            async for line in self._response.aiter_lines():
                if self._stopped:
                    return
                event = self._decoder.decode(line)
                if event is not None:
                    yield event
                if self._decoder.failed:
                    return
        except (TimeoutError, ConnectionError):
            if not self._stopped:
                raise
        finally:
            self._response.close()

    def stop(self) -> None:
        """End the iteration promptly; a task waiting for the next event wakes. Idempotent."""
        self._stopped = True
        if self._response is not None:
            self._response.close()

    async def __aenter__(self) -> AsyncStreamWatcher[T]:
        return await self._opened()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()
