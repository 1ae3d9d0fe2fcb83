"""Asyncio code run by the :class:`~kgen_runtime.controller.Manager`.

The manager runs each runnable in a thread of its own until its ``stop`` event is set
(controller-runtime's ``Runnable.Start(ctx)``). :class:`AsyncRunnableFunc` runs a coroutine
there instead, on an event loop of its own, and cancels it when ``stop`` is set; the
coroutine's cleanup (``finally``, ``async with``) then runs before the manager goes on with
its shutdown. :class:`AsyncControllerRunnable` is the one the manager builds for
:meth:`Manager.add_async_controller <kgen_runtime.controller.Manager.add_async_controller>`:
it starts the controller's async informer factories on that loop, waits for their caches,
runs the :class:`AsyncController`, and at stop lets the controller drain (its phased
shutdown) before the informers are shut down and the async clientsets closed::

    clientset = AsyncClientset.for_config(config)       # its session opens on first use
    factory = AsyncSharedInformerFactory(clientset.transport)
    foos = factory.informer_for(FOO_RESOURCE)
    controller = AsyncController("foos", AsyncReconcilerFunc(reconcile))
    foos.add_event_handler(on_add=lambda o: controller.enqueue(key_of(o)))
    manager.add_async_controller(controller, workers=4, informer_factories=[factory],
                                 closing=[clientset])
    manager.start(stop)

Everything a coroutine of one runnable touches (the async transport's session, the factory,
the controller's queue) belongs to that runnable's loop: share them between runnables only
through thread-safe means.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

from kgen_runtime.cache import AsyncSharedInformerFactory
from kgen_runtime.controller._controller_aio import AsyncController

__all__ = ["AsyncClosable", "AsyncControllerRunnable", "AsyncRunnableFunc"]


class AsyncClosable(Protocol):
    """An async clientset or transport: its connections belong to the loop that used it."""

    async def aclose(self) -> None: ...


class AsyncRunnableFunc:
    """Adapts a coroutine function to :class:`~kgen_runtime.controller.Runnable`.

    ``func()`` runs on a new event loop in the manager's runnable thread until it returns or
    ``stop`` is set, which cancels it. An error it raises stops the manager with that error;
    the cancellation that ``stop`` causes is a clean end.
    """

    __slots__ = ("func",)

    def __init__(self, func: Callable[[], Awaitable[None]]) -> None:
        self.func = func

    def run(self, stop: threading.Event) -> None:
        if not stop.is_set():
            asyncio.run(_run_until_stopped(self.func, stop))


async def _run_until_stopped(func: Callable[[], Awaitable[None]], stop: threading.Event) -> None:
    loop = asyncio.get_running_loop()
    task: asyncio.Future[None] = asyncio.ensure_future(func())

    def cancel_on_stop() -> None:
        stop.wait()
        with contextlib.suppress(RuntimeError):  # the loop has closed: the coroutine ended
            loop.call_soon_threadsafe(task.cancel)

    # A thread, not an executor job: asyncio.run would wait for an executor job that waits
    # for a stop nobody sets (a coroutine may return on its own).
    threading.Thread(target=cancel_on_stop, name="manager-async-stop", daemon=True).start()
    try:
        await task
    except asyncio.CancelledError:
        if not stop.is_set():
            raise


class AsyncControllerRunnable:
    """Runs an :class:`AsyncController` and the async informer factories feeding it on one
    event loop, as a manager runnable (see the module docstring).

    Args:
        controller: What to run, with ``workers`` worker tasks.
        informer_factories: Started on the controller's loop before it; waited on for at most
            ``cache_sync_timeout`` seconds (``None``: no bound); shut down after it.
        closing: Closed last, on the same loop: the async clientsets or transports the
            factories and the reconciler use (their sessions open on this loop).
    """

    def __init__(
        self,
        controller: AsyncController[Any],
        workers: int = 1,
        *,
        informer_factories: Sequence[AsyncSharedInformerFactory] = (),
        cache_sync_timeout: float | None = 120.0,
        closing: Sequence[AsyncClosable] = (),
    ) -> None:
        self.controller = controller
        self.workers = workers
        self._factories = tuple(informer_factories)
        self._cache_sync_timeout = cache_sync_timeout
        self._closing = tuple(closing)

    def run(self, stop: threading.Event) -> None:
        AsyncRunnableFunc(self._run).run(stop)

    async def _run(self) -> None:
        for factory in self._factories:
            factory.start()
        try:
            for factory in self._factories:
                synced = await factory.wait_for_cache_sync(timeout=self._cache_sync_timeout)
                missing = sorted(str(gvr) for gvr, ok in synced.items() if not ok)
                if missing:
                    raise TimeoutError(
                        f"controller {self.controller.name!r}: informers did not sync in time: "
                        f"{missing}"
                    )
            await self.controller.run(self.workers)
        finally:
            try:
                for factory in self._factories:
                    await factory.shutdown()
            finally:
                for closable in self._closing:
                    await closable.aclose()
