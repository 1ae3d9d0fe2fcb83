"""The async fake clientset: the same fake server, reactors and action log, awaited.

:class:`AsyncFakeTransport` puts the blocking :class:`FakeTransport` behind the
:class:`~kgen_runtime.rest.AsyncTransport` protocol, so a generated
``AsyncFakeClientset(*objects)`` records the same :class:`Action` s and runs the same reactors
(plain functions, run on the event loop) as ``FakeClientset``::

    fake = AsyncFakeClientset(existing_foo)
    fake.prepend_reactor("update", "foos", conflict_once)
    await fake.samplecontroller_v1alpha1.foos("ns").update(foo)
    assert [a.verb for a in fake.actions()] == ["update"]

Requests are answered in-process at once; a watch's stream, which blocks for events, is read
by a thread of its own and handed to the loop, so waiting for an event never blocks it.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import AsyncIterator, Mapping
from typing import Any, ClassVar

from kgen_runtime.meta import KubeModel
from kgen_runtime.resource import Resource
from kgen_runtime.rest import AsyncBaseClientset, AsyncResponse, Request, Response
from kgen_runtime.testing._clientset import FakeServerControls
from kgen_runtime.testing._fake import FakeTransport

__all__ = ["AsyncFakeClientsetBase", "AsyncFakeTransport"]


class AsyncFakeTransport:
    """A :class:`FakeTransport` (reactors, action log, in-process core) for coroutines.

    A request is answered on the event loop, except while the core may call a webhook
    (admission, or a conversion webhook): then it is answered from a worker thread, so the
    loop runs on during the call as it would during a real server's, and a webhook handler
    may reach back into it (reading through this fake, for one)."""

    def __init__(self, fake: FakeTransport) -> None:
        self.fake = fake

    async def send(
        self, request: Request, *, stream: bool = False, read_timeout: float | None = None
    ) -> AsyncResponse:
        if self.fake.core.objects.calls_out():
            response = await asyncio.to_thread(self.fake.send, request, stream=stream,
                                               read_timeout=read_timeout)
        else:
            response = self.fake.send(request, stream=stream, read_timeout=read_timeout)
        return _AsyncInProcessResponse(response, stream)


class _AsyncInProcessResponse:
    """An in-process response; a stream's lines come through a reader thread."""

    def __init__(self, response: Response, stream: bool) -> None:
        self._response = response
        self._stream = stream

    @property
    def status(self) -> int:
        return self._response.status

    @property
    def headers(self) -> Mapping[str, str]:
        return self._response.headers

    async def read(self) -> bytes:
        if self._stream:
            return await asyncio.to_thread(self._response.read)
        return self._response.read()

    async def aiter_lines(self) -> AsyncIterator[bytes]:
        loop = asyncio.get_running_loop()
        lines: asyncio.Queue[bytes | BaseException | None] = asyncio.Queue()

        def deliver(item: bytes | BaseException | None) -> None:
            with contextlib.suppress(RuntimeError):  # a closed loop: nobody reads any more
                loop.call_soon_threadsafe(lines.put_nowait, item)

        def pump() -> None:
            try:
                for line in self._response.iter_lines():
                    deliver(line)
            except BaseException as error:  # handed to the loop, raised there
                deliver(error)
            else:
                deliver(None)

        reader = threading.Thread(target=pump, name="kgen-async-fake-watch", daemon=True)
        reader.start()
        try:
            while (item := await lines.get()) is not None:
                if isinstance(item, BaseException):
                    raise item
                yield item
        finally:
            self._response.close()

    def close(self) -> None:
        self._response.close()


class AsyncFakeClientsetBase(FakeServerControls, AsyncBaseClientset):
    """What every generated ``AsyncFakeClientset(*objects)`` subclasses: the async twin of
    :class:`~kgen_runtime.testing.FakeClientsetBase`, with the same ``core``, ``tracker``,
    ``actions()`` and reactor methods."""

    #: The generated subclass's resources; built-in kinds are always served.
    resources: ClassVar[tuple[Resource[Any], ...]] = ()

    def __init__(self, *objects: KubeModel | dict[str, Any]) -> None:
        self.async_fake_transport = AsyncFakeTransport(self._start_fake())
        super().__init__(self.async_fake_transport)
        self._seed(objects)
