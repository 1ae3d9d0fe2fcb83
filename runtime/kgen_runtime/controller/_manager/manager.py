"""The Manager: runs informers, controllers and leader election, and shuts them down in
phases (controller-runtime's ``manager`` + ``SetupSignalHandler``).

::

    stop = setup_signal_handler()                     # SIGTERM/SIGINT set it
    manager = Manager(leader_election=LeaderElectionConfig(LeaseLock(leases, "foo", host)),
                      health_address=("0.0.0.0", 8081))
    manager.add_informer_factory(factory)             # request informers before start
    manager.add_controller(foo_controller, workers=2)  # runs only while leading
    manager.add_async_controller(bar_controller, workers=2,   # an AsyncController, on a
                                 informer_factories=[async_factory])  # loop of its own
    manager.start(stop)                               # blocks until shut down

Start-up, in order: the health/metrics server; the webhook server (when webhooks are
registered); the shard member (with ``sharding``: see :class:`ShardingConfig`); the
informer factories, waited on until
synced (``/readyz`` fails until then); runnables that do not need leader election; then the
leader-election runnables (controllers), at once or when this replica becomes leader.

Shutdown, when ``stop`` is set (by a signal, the caller, a failing runnable or lost
leadership), in order, sharing ``graceful_shutdown_timeout``:

1. leader-election runnables are stopped and joined (controllers drain their queues);
2. the lease is released (``release_on_cancel``), so another replica takes over at once;
3. the other runnables are stopped and joined;
   then the shard member (``sharding``) leaves its ring, handing its ranges over;
4. the Events recorded so far are written (one try each);
5. the informers are stopped and joined;
6. the webhook server and then the health/metrics server are closed.

:meth:`Manager.start` then raises the first runnable's error, or ``RuntimeError`` if
leadership was lost, so the process exits non-zero and is restarted.
"""

from __future__ import annotations

import logging
import os
import signal
import threading
from collections.abc import Callable, Sequence
from datetime import datetime
from types import FrameType
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar

from prometheus_client import CollectorRegistry

from kgen_runtime.api.coordination.v1.client import CoordinationV1Client
from kgen_runtime.cache import SharedInformerFactory
from kgen_runtime.controller._controller import Controller
from kgen_runtime.controller._controller_aio import AsyncController
from kgen_runtime.controller._manager.base import ManagerBase
from kgen_runtime.controller._manager.metrics_server import MetricsServer
from kgen_runtime.controller._manager.runnable_aio import AsyncClosable, AsyncControllerRunnable
from kgen_runtime.controller._manager.sharding import ShardingConfig, new_member
from kgen_runtime.controller._metrics import METRICS_REGISTRY
from kgen_runtime.events import EventSink
from kgen_runtime.leaderelection import LeaderElectionConfig, LeaderElector, LeaseLock
from kgen_runtime.meta import KubeObject
from kgen_runtime.sharding import ShardMember
from kgen_runtime.util.clock import REAL_CLOCK, Clock, wall_clock_now
from kgen_runtime.webhook import WebhookServer

if TYPE_CHECKING:
    from kgen_runtime.api.rbac.v1.models import PolicyRule
    from kgen_runtime.cache import AsyncSharedInformerFactory
    from kgen_runtime.controller._builder.builder import Builder
    from kgen_runtime.controller._cluster.cache import InformerCache
    from kgen_runtime.controller._cluster.cluster import Cluster

T = TypeVar("T", bound=KubeObject)

__all__ = [
    "Manager",
    "Runnable",
    "RunnableFunc",
    "setup_signal_handler",
]

_log = logging.getLogger("kgen_runtime.controller.manager")


class Runnable(Protocol):
    """Something the manager runs on its own thread until ``stop`` is set."""

    def run(self, stop: threading.Event) -> None:
        """Block until ``stop`` is set, then clean up and return; raising stops the manager."""
        ...


class RunnableFunc:
    """Adapts a plain function to :class:`Runnable`."""

    __slots__ = ("func",)

    def __init__(self, func: Callable[[threading.Event], None]) -> None:
        self.func = func

    def run(self, stop: threading.Event) -> None:
        self.func(stop)


class _Group:
    """Runnables that start together and stop together."""

    def __init__(self, name: str, on_error: Callable[[Exception], None]) -> None:
        self.name = name
        self.stop = threading.Event()
        self.runnables: list[Runnable] = []
        self._threads: list[threading.Thread] = []
        self._on_error = on_error

    def start(self) -> None:
        for i, runnable in enumerate(self.runnables):
            thread = threading.Thread(target=self._run, args=(runnable,),
                                      name=f"manager-{self.name}-{i}", daemon=True)
            self._threads.append(thread)
            thread.start()

    def shut_down(self, deadline: float | None, clock: Clock) -> None:
        self.stop.set()
        for thread in self._threads:
            thread.join(_remaining(deadline, clock))
        alive = [t.name for t in self._threads if t.is_alive()]
        if alive:
            _log.error("runnables still running after the graceful shutdown timeout: %s", alive)

    def _run(self, runnable: Runnable) -> None:
        try:
            runnable.run(self.stop)
        except Exception as err:
            self._on_error(err)


def _remaining(deadline: float | None, clock: Clock) -> float | None:
    return None if deadline is None else max(0.0, deadline - clock.now())


class Manager(ManagerBase["Cluster", LeaseLock]):
    """Runs and stops everything a controller process needs (see the module docstring).

    Args:
        leader_election: Compete for a Lease before running leader-election runnables;
            ``None`` runs them at once.
        health_address: ``(host, port)`` of the ``/healthz`` and ``/readyz`` server; ``None``
            serves nothing. Port 0 picks a free port (see :attr:`health_address`).
        metrics_registry: What ``/metrics`` serves: kgen_runtime's :data:`METRICS_REGISTRY`
            (REST client, reflector, work-queue, reconcile and process metrics) by default.
        metrics_server: Serves ``/metrics`` (a :class:`MetricsServer` of
            ``metrics_registry``: HTTPS, TokenReview/SubjectAccessReview authorisation), run
            beside the health server on every replica; ``None``: no metrics server.
        health_metrics: Also serve ``/metrics`` on the health server's port, plain and open
            to anyone (tests, local runs); off by default, as in controller-runtime.
        webhook_server: Serves the webhooks registered through :attr:`webhooks`; by default
            one is made on first use of :attr:`webhooks` (port 9443, certificates in
            ``DEFAULT_CERT_DIR``), as controller-runtime does.
        event_sink: Where the recorders of :meth:`event_recorder` write Events (e.g. a
            ``ClientEventSink``); without one their events are dropped.
        cache_sync_timeout: Seconds to wait for the informers before :meth:`start` fails.
        graceful_shutdown_timeout: Bound on the whole shutdown (real seconds; the join waits
            of threads cannot follow a fake clock); ``None`` waits for everything.
        clock: Time source of the shutdown deadline, the cache-sync wait and the election.
        now: Wall-clock time written into the Lease.
        cluster: The scheme, informer cache and client of :meth:`controller_for`'s
            controllers; its cache starts with the informer factories and stops with them.
        sharding: Take part in a shard ring (see :class:`ShardingConfig`): the kinds the
            builder marks ``sharded()`` are cached and reconciled only for the member's
            ranges. Needs ``cluster``; excludes ``leader_election``.

    Add everything before :meth:`start`; the adders are not thread-safe with it.
    """

    builder_type: ClassVar[type[Builder[Any]]]
    """What :meth:`controller_for` starts: :mod:`kgen_runtime.controller._builder.builder`
    sets it when imported, which importing :mod:`kgen_runtime.controller` does (the builder
    imports the manager, never the reverse)."""

    def __init__(
        self,
        *,
        leader_election: LeaderElectionConfig[LeaseLock] | None = None,
        health_address: tuple[str, int] | None = None,
        metrics_registry: CollectorRegistry = METRICS_REGISTRY,
        metrics_server: MetricsServer | None = None,
        health_metrics: bool = False,
        webhook_server: WebhookServer | None = None,
        event_sink: EventSink | None = None,
        cache_sync_timeout: float | None = 120.0,
        graceful_shutdown_timeout: float | None = 30.0,
        clock: Clock = REAL_CLOCK,
        now: Callable[[], datetime] = wall_clock_now,
        cluster: Cluster | None = None,
        sharding: ShardingConfig | None = None,
    ) -> None:
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
            clock=clock,
            now=now,
        )
        self._clock = clock
        self._lock = threading.Lock()
        self._factories: list[SharedInformerFactory | InformerCache] = []
        if cluster is not None:
            self._factories.append(cluster.cache)
        self._others = _Group("runnable", self._fail)
        self._leaders = _Group("leader", self._fail)
        self._elected = threading.Event()
        self._shutting_down = False
        self._started = False
        self._stop: threading.Event | None = None
        self._elector: LeaderElector | None = None
        self._event_sink = event_sink
        self._member: ShardMember | None = None
        if sharding is not None and cluster is not None:
            leases = CoordinationV1Client(cluster.transport).leases(sharding.lease_namespace)
            self._member = new_member(ShardMember, leases, sharding, cluster.cache.shards,
                                      clock, now)

    # -- configuration ------------------------------------------------------------------------

    @property
    def shard_member(self) -> ShardMember | None:
        """The ring member of a manager with ``sharding``: the builder gates reconciles on
        it (``begin``/``end``)."""
        return self._member

    @property
    def elected(self) -> threading.Event:
        """Set once the leader-election runnables have been started."""
        return self._elected

    def add_informer_factory(self, factory: SharedInformerFactory) -> None:
        """Start ``factory``'s informers (requested so far) at start; stop them last."""
        self._factories.append(factory)

    def add(self, runnable: Runnable, *, needs_leader_election: bool = True) -> None:
        """Run ``runnable``; with ``needs_leader_election`` only while leading."""
        (self._leaders if needs_leader_election else self._others).runnables.append(runnable)

    def add_controller(
        self, controller: Controller[Any], workers: int = 1, *,
        rbac_rules: Sequence[PolicyRule] = (),
    ) -> None:
        """Run ``controller`` with ``workers`` workers while leading; ``rbac_rules`` are
        the permissions it needs (reported by :meth:`rbac_rules`).

        Raises:
            ValueError: a controller of the same name was added (names label metrics).
        """
        self._claim_controller(controller.name, rbac_rules)
        self.add(RunnableFunc(lambda stop: controller.run(workers, stop)))

    def add_async_controller(
        self, controller: AsyncController[Any], workers: int = 1, *,
        informer_factories: Sequence[AsyncSharedInformerFactory] = (),
        closing: Sequence[AsyncClosable] = (),
        rbac_rules: Sequence[PolicyRule] = (),
    ) -> None:
        """Run the async ``controller`` with ``workers`` worker tasks while leading, on an
        event loop of its own with the async ``informer_factories`` that feed it (started
        and synced first, within ``cache_sync_timeout``; shut down after the controller
        drained), then close ``closing`` (its async clientsets) on that loop. See
        :class:`AsyncControllerRunnable`.

        Raises:
            ValueError: a controller of the same name was added (names label metrics).
        """
        self._claim_controller(controller.name, rbac_rules)
        self.add(AsyncControllerRunnable(controller, workers,
                                         informer_factories=informer_factories,
                                         cache_sync_timeout=self._cache_sync_timeout,
                                         closing=closing))

    def controller_for(self, kind: type[T]) -> Builder[T]:
        """A builder of a controller reconciling ``kind`` (see :class:`Builder`)."""
        builder: Builder[T] = self.builder_type(self)
        return builder.for_(kind)

    # -- running ----------------------------------------------------------------------------

    def start(self, stop: threading.Event) -> None:
        """Start everything, block until ``stop`` is set, then shut down in phases.

        The manager sets ``stop`` itself when a runnable raises or leadership is lost.

        Raises:
            RuntimeError: called twice, or leadership was lost.
            TimeoutError: the informers did not sync within ``cache_sync_timeout``.
            Exception: the first error a runnable raised.
        """
        with self._lock:
            if self._started:
                raise RuntimeError("the manager was already started")
            self._started = True
            self._stop = stop
        cache_stop = threading.Event()
        elector_stop = threading.Event()
        elector_thread: threading.Thread | None = None
        try:
            if self._event_sink is not None:
                self.event_broadcaster.start_recording_to_sink(self._event_sink)
            self._start_servers()
            webhooks = self._serve_webhooks()
            if webhooks is not None:
                webhooks.start()
            if self._member is not None:
                self._member.start()  # its ranges are what the sharded informers list
            self._start_informers(stop, cache_stop)
            if not stop.is_set():
                self._others.start()
                elector_thread = self._start_leader_runnables(elector_stop)
                stop.wait()
        finally:
            self._shut_down(cache_stop, elector_stop, elector_thread)
        if self._errors:
            raise self._errors[0]

    def _start_informers(self, stop: threading.Event, cache_stop: threading.Event) -> None:
        for factory in self._factories:
            factory.start(cache_stop)
        for factory in self._factories:
            synced = factory.wait_for_cache_sync(stop, timeout=self._cache_sync_timeout)
            if not all(synced.values()) and not stop.is_set():
                missing = sorted(str(gvr) for gvr, ok in synced.items() if not ok)
                self._fail(TimeoutError(f"informers did not sync in time: {missing}"))
                return
        self._synced.set()

    def _start_leader_runnables(self, elector_stop: threading.Event) -> threading.Thread | None:
        config = self._leader_election
        if config is None:
            self._start_leading()
            return None
        elector = LeaderElector(
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
        self._elector = elector
        self._healthz["leader-election"] = lambda: elector.check(config.health_tolerance)
        thread = threading.Thread(target=elector.run, args=(elector_stop,),
                                  name="manager-leader-election", daemon=True)
        thread.start()
        return thread

    def _lead(self, leading: threading.Event) -> None:
        """The elector's ``on_started_leading``: run the leader group until leadership ends."""
        self._start_leading()
        leading.wait()
        self._leaders.stop.set()

    def _start_leading(self) -> None:
        with self._lock:
            if self._shutting_down:
                return
            self._leaders.start()
        self._elected.set()

    def _stopped_leading(self) -> None:
        with self._lock:
            lost = self._elected.is_set() and not self._shutting_down
        if lost:
            self._fail(RuntimeError("leader election lost"))

    def _fail(self, err: Exception) -> None:
        """Record a fatal error and stop the manager."""
        self._record_error(err)
        with self._lock:
            stop = self._stop
        if stop is not None:
            stop.set()

    def _shut_down(
        self,
        cache_stop: threading.Event,
        elector_stop: threading.Event,
        elector_thread: threading.Thread | None,
    ) -> None:
        _log.info("stopping the manager")
        with self._lock:
            self._shutting_down = True
        timeout = self._graceful_timeout
        deadline = None if timeout is None else self._clock.now() + timeout
        self._leaders.shut_down(deadline, self._clock)
        elector_stop.set()
        if elector_thread is not None:
            elector_thread.join(_remaining(deadline, self._clock))
        self._others.shut_down(deadline, self._clock)
        if self._member is not None:  # the controllers drained: hand every range over
            self._member.stop(_remaining(deadline, self._clock))
        self.event_broadcaster.shutdown(_remaining(deadline, self._clock))
        cache_stop.set()
        for factory in self._factories:
            factory.shutdown()
        if self._webhooks is not None:
            self._webhooks.stop()
        self._stop_servers()
        _log.info("the manager stopped")


def setup_signal_handler(
    signals: Sequence[signal.Signals] = (signal.SIGTERM, signal.SIGINT),
) -> threading.Event:
    """An event set by the first of ``signals``; a second one exits the process at once
    (exit code 1), as controller-runtime's ``SetupSignalHandler``. Main thread only."""
    stop = threading.Event()

    def handler(signum: int, frame: FrameType | None) -> None:
        if stop.is_set():
            os._exit(1)
        _log.info("received signal %d, shutting down", signum)
        stop.set()

    for sig in signals:
        signal.signal(sig, handler)
    return stop
