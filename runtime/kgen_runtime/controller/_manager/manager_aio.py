"""The asyncio twin of :mod:`.manager`: one event loop runs it all.

::

    async with AsyncClientset.for_config(config) as clientset:
        manager = AsyncManager(
            cluster=AsyncCluster(clientset.transport, scheme),
            leader_election=LeaderElectionConfig(
                AsyncLeaseLock(clientset.coordination_v1.leases("ns"), "foo", host)),
            health_address=("0.0.0.0", 8081),
            event_sink=AsyncClientEventSink(clientset.core_v1.events),
        )
        manager.controller_for(Foo).owns(Deployment).complete(FooReconciler(...))
        await manager.start(signals=(signal.SIGTERM, signal.SIGINT))   # until shut down

Start-up and shutdown are the :class:`~kgen_runtime.controller.Manager`'s, phase for phase,
with tasks instead of threads: the health/metrics server (:class:`HealthServer`, on its own
thread); the webhook server (thread-based, when webhooks are registered); the async informer
factories and the cluster's cache, awaited until synced (``/readyz`` fails until then);
runnables that do not need leader election; then, at once or once this replica leads
(:class:`AsyncLeaderElector`), the leader-election runnables and controllers.

A runnable is an :class:`AsyncRunnable` (``async def run()``) or a coroutine function, run as
a task until the manager cancels it: stopping *is* cancelling, so an
:class:`AsyncController` drains its queue on the way out and a reconcile still running past
the drain is cancelled (its key marked done).

Shutdown starts when :meth:`AsyncManager.stop` is called (from any thread), a signal given
to :meth:`~AsyncManager.start` arrives (a second one exits at once with status 1), the task
running ``start`` is cancelled, a runnable raises, or leadership is lost. Within
``graceful_shutdown_timeout``, in order:

1. leader-election runnables are cancelled and awaited (controllers drain their queues);
2. the elector is cancelled: it releases the lease (``release_on_cancel``);
3. the other runnables are cancelled and awaited;
4. the Events recorded so far are written (one try each);
5. the informers are cancelled and awaited;
6. the webhook server and then the health/metrics server are closed.

``start`` then raises the first runnable's error, ``RuntimeError`` if leadership was lost,
or re-raises its own cancellation. Blocking work (joining server threads, flushing Events)
runs in worker threads, never on the loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
from collections.abc import Awaitable, Callable, Coroutine, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar

from prometheus_client import CollectorRegistry

from kgen_runtime.api.coordination.v1.client import AsyncCoordinationV1Client
from kgen_runtime.cache import AsyncSharedInformerFactory
from kgen_runtime.controller._cluster.cache_aio import AsyncInformerCache
from kgen_runtime.controller._controller_aio import AsyncController
from kgen_runtime.controller._manager.base import ManagerBase
from kgen_runtime.controller._manager.metrics_server import MetricsServer
from kgen_runtime.controller._manager.sharding import ShardingConfig, new_member
from kgen_runtime.controller._metrics import METRICS_REGISTRY
from kgen_runtime.events import AsyncEventSink, LoopEventSink
from kgen_runtime.leaderelection import AsyncLeaderElector, AsyncLeaseLock, LeaderElectionConfig
from kgen_runtime.meta import KubeObject
from kgen_runtime.sharding import AsyncShardMember
from kgen_runtime.util.clock import REAL_CLOCK, wall_clock_now
from kgen_runtime.util.clock_aio import ASYNC_REAL_CLOCK, AsyncClock
from kgen_runtime.webhook import WebhookServer

if TYPE_CHECKING:
    from kgen_runtime.api.rbac.v1.models import PolicyRule
    from kgen_runtime.controller._builder.builder_aio import AsyncBuilder
    from kgen_runtime.controller._cluster.cluster_aio import AsyncCluster

__all__ = ["AsyncManager", "AsyncRunnable"]

T = TypeVar("T", bound=KubeObject)

_log = logging.getLogger("kgen_runtime.controller.manager")


class AsyncRunnable(Protocol):
    """Something the async manager runs as a task until it cancels it."""

    async def run(self) -> None:
        """Run until cancelled (clean up on the way out); raising stops the manager."""
        ...


RunnableLike = AsyncRunnable | Callable[[], Awaitable[None]]
"""An :class:`AsyncRunnable` or a coroutine function taking no argument."""


class _TaskGroup:
    """Runnables that start together and are cancelled together."""

    def __init__(self, name: str, on_error: Callable[[Exception], None]) -> None:
        self.name = name
        self.runnables: list[RunnableLike] = []
        self._tasks: list[asyncio.Task[None]] = []
        self._on_error = on_error

    def start(self) -> None:
        for i, runnable in enumerate(self.runnables):
            run = runnable.run if hasattr(runnable, "run") else runnable
            self._tasks.append(asyncio.create_task(self._run(run), name=f"manager-{self.name}-{i}"))

    def cancel(self) -> None:
        for task in self._tasks:
            task.cancel()

    async def shut_down(self, deadline: float | None) -> None:
        self.cancel()
        await _wait(self._tasks, deadline)
        alive = [t.get_name() for t in self._tasks if not t.done()]
        if alive:
            _log.error("runnables still running after the graceful shutdown timeout: %s", alive)

    async def _run(self, run: Callable[[], Awaitable[None]]) -> None:
        try:
            await run()
        except Exception as err:
            self._on_error(err)


def _remaining(deadline: float | None) -> float | None:
    if deadline is None:
        return None
    return max(0.0, deadline - asyncio.get_running_loop().time())


async def _wait(tasks: Sequence[asyncio.Future[Any]], deadline: float | None) -> None:
    """Wait for ``tasks`` until ``deadline`` (loop time; ``None``: no bound)."""
    if tasks:
        await asyncio.wait(tasks, timeout=_remaining(deadline))


class AsyncManager(ManagerBase["AsyncCluster", AsyncLeaseLock]):
    """Runs and stops everything an async controller process needs, on one event loop (see
    the module docstring). Options as :class:`~kgen_runtime.controller.Manager`'s, except:

    Args:
        leader_election: With an :class:`AsyncLeaseLock`.
        event_sink: An :class:`AsyncEventSink` (e.g. an :class:`AsyncClientEventSink`),
            awaited on the manager's loop.
        graceful_shutdown_timeout: Bound on the whole shutdown in seconds of the loop's
            clock; ``None`` waits for everything.
        clock: Time of the leader election.
        cluster: The scheme, async informer cache and async client of
            :meth:`controller_for`'s controllers.
        sharding: Take part in a shard ring (an :class:`AsyncShardMember` task on the
            manager's loop; see :class:`ShardingConfig`).

    Add everything before :meth:`start`, on the loop that will run it.
    """

    builder_type: ClassVar[type[AsyncBuilder[Any]]]
    """What :meth:`controller_for` starts: :mod:`kgen_runtime.controller._builder.builder_aio`
    sets it when imported, which importing :mod:`kgen_runtime.controller` does (the builder
    imports the manager, never the reverse)."""

    def __init__(
        self,
        *,
        leader_election: LeaderElectionConfig[AsyncLeaseLock] | None = None,
        health_address: tuple[str, int] | None = None,
        metrics_registry: CollectorRegistry = METRICS_REGISTRY,
        metrics_server: MetricsServer | None = None,
        health_metrics: bool = False,
        webhook_server: WebhookServer | None = None,
        event_sink: AsyncEventSink | None = None,
        cache_sync_timeout: float | None = 120.0,
        graceful_shutdown_timeout: float | None = 30.0,
        clock: AsyncClock = ASYNC_REAL_CLOCK,
        now: Callable[[], datetime] = wall_clock_now,
        cluster: AsyncCluster | None = None,
        sharding: ShardingConfig | None = None,
    ) -> None:
        if leader_election is not None and not isinstance(leader_election.lock, AsyncLeaseLock):
            raise TypeError("an AsyncManager elects its leader with an AsyncLeaseLock, got "
                            f"{type(leader_election.lock).__name__}")
        super().__init__(
            sharding=sharding,
            cluster=cluster,
            leader_election=leader_election,
            health_address=health_address,
            metrics_registry=metrics_registry,
            metrics_server=metrics_server,
            health_metrics=health_metrics,
            webhook_server=webhook_server,
            cache_sync_timeout=cache_sync_timeout,
            graceful_shutdown_timeout=graceful_shutdown_timeout,
            clock=REAL_CLOCK,
            now=now,
        )
        self._clock = clock
        self._event_sink = event_sink
        self._factories: list[AsyncSharedInformerFactory | AsyncInformerCache] = []
        if cluster is not None:
            self._factories.append(cluster.cache)
        self._others = _TaskGroup("runnable", self._fail)
        self._leaders = _TaskGroup("leader", self._fail)
        self._elected = asyncio.Event()
        self._stopping = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._elector_task: asyncio.Task[None] | None = None
        self._shutting_down = False
        self._started = False
        self._member: AsyncShardMember | None = None
        if sharding is not None and cluster is not None:
            leases = AsyncCoordinationV1Client(cluster.transport).leases(sharding.lease_namespace)
            self._member = new_member(AsyncShardMember, leases, sharding,
                                      cluster.cache.shards, clock, now)

    # -- configuration ------------------------------------------------------------------------

    @property
    def shard_member(self) -> AsyncShardMember | None:
        """The ring member of a manager with ``sharding``: the builder gates reconciles on
        it (``begin``/``end``)."""
        return self._member

    @property
    def elected(self) -> asyncio.Event:
        """Set once the leader-election runnables have been started."""
        return self._elected

    def add_informer_factory(self, factory: AsyncSharedInformerFactory) -> None:
        """Start ``factory``'s informers (requested so far) at start; stop them last."""
        self._factories.append(factory)

    def add(self, runnable: RunnableLike, *, needs_leader_election: bool = True) -> None:
        """Run ``runnable`` as a task; with ``needs_leader_election`` only while leading."""
        (self._leaders if needs_leader_election else self._others).runnables.append(runnable)

    def add_controller(
        self, controller: AsyncController[Any], workers: int = 1, *,
        rbac_rules: Sequence[PolicyRule] = (),
    ) -> None:
        """Run ``controller`` with ``workers`` worker tasks while leading; ``rbac_rules``
        are the permissions it needs (reported by :meth:`rbac_rules`).

        Raises:
            ValueError: a controller of the same name was added (names label metrics).
        """
        self._claim_controller(controller.name, rbac_rules)
        self.add(lambda: controller.run(workers))

    def controller_for(self, kind: type[T]) -> AsyncBuilder[T]:
        """A builder of an async controller reconciling ``kind`` (see :class:`AsyncBuilder`)."""
        builder: AsyncBuilder[T] = self.builder_type(self)
        return builder.for_(kind)

    # -- running ----------------------------------------------------------------------------

    def stop(self) -> None:
        """Begin the shutdown; callable from any thread, before or during :meth:`start`."""
        loop = self._loop
        try:
            running = asyncio.get_running_loop()
        except RuntimeError:
            running = None
        if loop is None or running is loop:
            self._stopping.set()
        else:
            with contextlib.suppress(RuntimeError):  # the loop has closed: nothing runs
                loop.call_soon_threadsafe(self._stopping.set)

    async def start(self, *, signals: Sequence[signal.Signals] = ()) -> None:
        """Start everything, run until shut down (see the module docstring), then shut down
        in phases. ``signals`` (e.g. SIGTERM and SIGINT) are handled while it runs: the first
        stops the manager, a second exits the process at once (status 1).

        Raises:
            RuntimeError: called twice, or leadership was lost.
            TimeoutError: the informers did not sync within ``cache_sync_timeout``.
            Exception: the first error a runnable raised.
            asyncio.CancelledError: the task running ``start`` was cancelled (after the
                shutdown).
        """
        if self._started:
            raise RuntimeError("the manager was already started")
        self._started = True
        loop = self._loop = asyncio.get_running_loop()
        previous = self._handle_signals(loop, signals)
        try:
            if self._event_sink is not None:
                self.event_broadcaster.start_recording_to_sink(
                    LoopEventSink(self._event_sink, loop))
            self._start_servers()
            webhooks = self._serve_webhooks()
            if webhooks is not None:
                await asyncio.to_thread(webhooks.start)
            if self._member is not None:
                self._member.start()  # its ranges are what the sharded informers list
            await self._until_stopping(self._start_informers())
            if not self._stopping.is_set():
                self._others.start()
                self._start_leader_runnables()
                await self._stopping.wait()
        finally:
            try:
                await self._shut_down()  # a second signal during it exits at once
            finally:
                for sig, handler in previous.items():  # the handlers from before, restored
                    loop.remove_signal_handler(sig)
                    signal.signal(sig, handler)
        if self._errors:
            raise self._errors[0]

    def _handle_signals(
        self, loop: asyncio.AbstractEventLoop, signals: Sequence[signal.Signals]
    ) -> dict[signal.Signals, Any]:
        """Handle ``signals`` on ``loop``; the Python handlers they had before."""
        def handle(sig: signal.Signals) -> None:
            if self._stopping.is_set():
                _log.error("second signal %s: exiting now", sig.name)
                os._exit(1)
            _log.info("received signal %s, shutting down", sig.name)
            self._stopping.set()

        previous = {sig: signal.getsignal(sig) for sig in signals}
        for sig in signals:
            loop.add_signal_handler(sig, handle, sig)
        return previous

    async def _until_stopping(self, work: Coroutine[Any, Any, None]) -> None:
        """Run ``work`` until it ends or the manager is stopping (then cancel it)."""
        task = asyncio.create_task(work)
        stopping = asyncio.create_task(self._stopping.wait())
        try:
            await asyncio.wait({task, stopping}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for pending in (task, stopping):
                pending.cancel()
            await asyncio.gather(task, stopping, return_exceptions=True)
        if task.done() and not task.cancelled():
            task.result()  # re-raises what ``work`` raised

    async def _start_informers(self) -> None:
        for factory in self._factories:
            factory.start()
        for factory in self._factories:
            synced = await factory.wait_for_cache_sync(timeout=self._cache_sync_timeout)
            if not all(synced.values()):
                missing = sorted(str(gvr) for gvr, ok in synced.items() if not ok)
                self._fail(TimeoutError(f"informers did not sync in time: {missing}"))
                return
        self._synced.set()

    def _start_leader_runnables(self) -> None:
        config = self._leader_election
        if config is None:
            self._start_leading()
            return
        elector = AsyncLeaderElector(
            config.lock,
            on_started_leading=self._lead,
            on_stopped_leading=self._stopped_leading,
            lease_duration=config.lease_duration,
            renew_deadline=config.renew_deadline,
            retry_period=config.retry_period,
            release_on_cancel=config.release_on_cancel,
            clock=self._clock,
            now=self._now,
        )
        self._healthz["leader-election"] = lambda: elector.check(config.health_tolerance)
        self._elector_task = asyncio.create_task(elector.run(), name="manager-leader-election")

    async def _lead(self) -> None:
        """The elector's ``on_started_leading``: run the leader group while leading."""
        self._start_leading()
        try:
            await asyncio.Event().wait()  # until leadership ends (the elector cancels this)
        finally:
            self._leaders.cancel()  # awaited by the shutdown

    def _start_leading(self) -> None:
        if self._shutting_down:
            return
        self._leaders.start()
        self._elected.set()

    def _stopped_leading(self) -> None:
        if self._elected.is_set() and not self._shutting_down:
            self._fail(RuntimeError("leader election lost"))

    def _fail(self, err: Exception) -> None:
        """Record a fatal error and stop the manager."""
        self._record_error(err)
        self._stopping.set()

    async def _shut_down(self) -> None:
        _log.info("stopping the manager")
        self._shutting_down = True
        self._stopping.set()
        timeout = self._graceful_timeout
        deadline = None if timeout is None else asyncio.get_running_loop().time() + timeout
        await self._leaders.shut_down(deadline)
        if self._elector_task is not None:
            self._elector_task.cancel()
            await _wait([self._elector_task], deadline)
        await self._others.shut_down(deadline)
        if self._member is not None:  # the controllers drained: hand every range over
            try:
                async with asyncio.timeout(_remaining(deadline)):
                    await self._member.stop()
            except TimeoutError:
                _log.error("the shard member had not left its ring by the shutdown timeout")
        await asyncio.to_thread(self.event_broadcaster.shutdown, _remaining(deadline))
        for factory in self._factories:
            try:
                async with asyncio.timeout(_remaining(deadline)):
                    await factory.shutdown()
            except TimeoutError:
                _log.error("informers still running after the graceful shutdown timeout")
        if self._webhooks is not None:
            await asyncio.to_thread(self._webhooks.stop)
        await asyncio.to_thread(self._stop_servers)
        _log.info("the manager stopped")
