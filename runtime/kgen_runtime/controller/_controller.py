"""The controller: a rate-limited work queue drained by worker threads (seed 001 §1).

client-go's canonical worker loop (``processNextWorkItem`` + ``handleErr``) and
controller-runtime's ``reconcileHandler``, behind one small type::

    controller = Controller("foos", ReconcilerFunc(sync), cache_synced=[foos.has_synced])
    foos.add_handler(EnqueueHandler(controller.enqueue))   # keys in
    controller.run(workers=2, stop=stop)                   # blocks until stopped

or, sample-controller style, as a base class::

    class FooController(Controller[str]):
        def reconcile(self, key: str) -> Result | None: ...

Guarantees:

* A key is reconciled by at most one worker at a time; keys added while it is being
  reconciled are reconciled once more afterwards (the queue's exclusivity).
* Workers start only once every ``cache_synced`` function reports true.
* What happens to a key after reconcile follows :class:`Reconciler`'s contract. A failing
  key is retried with the rate limiter's backoff up to ``max_retries`` times, then logged
  and dropped (its backoff forgotten); a later event starts it afresh.
* Nothing a reconciler raises (``Exception``) ends a worker.
* Each reconcile runs with ``controller``, ``namespace``, ``name`` and ``reconcileID`` bound
  to what it logs (see :mod:`kgen_runtime.log`), and is measured in the
  ``controller_runtime_*`` metrics.
* Shutdown is phased: when ``stop`` is set the queue stops taking keys (adds are ignored),
  the workers finish the keys in flight and those still queued (retries and ``requeue_after``
  timers not yet due are dropped), then they are joined.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Hashable, Sequence
from typing import Generic, TypeVar

from kgen_runtime.cache import InformerSynced, wait_for_cache_sync
from kgen_runtime.controller._metrics import (
    RECONCILE_METRICS,
    ReconcileMetricsProvider,
    ReconcileOutcome,
)
from kgen_runtime.controller._reconciler import Reconciler, Result
from kgen_runtime.controller._settle import settle_error, settle_result
from kgen_runtime.log import reconcile_context
from kgen_runtime.util.clock import REAL_CLOCK, Clock
from kgen_runtime.util.runtime import handle_crash
from kgen_runtime.workqueue import RateLimiter, RateLimitingQueue

__all__ = ["DEFAULT_MAX_RETRIES", "Controller"]

K = TypeVar("K", bound=Hashable)

_log = logging.getLogger("kgen_runtime.controller")

DEFAULT_MAX_RETRIES = 15
"""client-go controllers' bound: with the default limiter the last retry waits ~82 s."""


class Controller(Generic[K]):
    """Runs a :class:`Reconciler` over the keys of a rate-limited queue (see the module doc).

    Args:
        name: Names the queue (metrics) and the worker threads.
        reconciler: What each key is handed to; ``None`` in a subclass that overrides
            :meth:`reconcile` itself (sample-controller style).
        rate_limiter: Backoff of failing keys; client-go's default controller limiter
            (per-item 5 ms → 1000 s, overall 10 qps / 100 burst) when ``None``.
        max_retries: Retries of a failing key before it is dropped; ``None`` retries forever
            (controller-runtime's behaviour).
        cache_synced: ``has_synced`` functions of the informers the reconciler reads.
        cache_sync_timeout: Seconds to wait for them before :meth:`run` raises; ``None``
            waits until ``stop``.
        shutdown_timeout: Bound (clock seconds) on draining and (real seconds) on joining
            the workers at shutdown; ``None`` waits for them.
        metrics: Where to record reconcile metrics (see :mod:`._metrics`): the provider of
            the manager's registry unless given another; ``None`` records none.
        clock: Time source of the queue, the limiter built here and the waits.

    Thread-safe: :meth:`enqueue` and friends may be called from any thread at any time (they
    are ignored once shutdown has begun). :meth:`run` may be called once. The queue's timer
    thread lives until :meth:`run` returns; a controller that is never run should have its
    ``queue.shut_down()`` called.
    """

    def __init__(
        self,
        name: str,
        reconciler: Reconciler[K] | None = None,
        *,
        rate_limiter: RateLimiter[K] | None = None,
        max_retries: int | None = DEFAULT_MAX_RETRIES,
        cache_synced: Sequence[InformerSynced] = (),
        cache_sync_timeout: float | None = None,
        shutdown_timeout: float | None = None,
        metrics: ReconcileMetricsProvider | None = RECONCILE_METRICS,
        clock: Clock = REAL_CLOCK,
    ) -> None:
        self.name = name
        if reconciler is None and type(self).reconcile is Controller.reconcile:
            raise TypeError("pass a reconciler or override Controller.reconcile")
        self.reconciler: Reconciler[K] = self if reconciler is None else reconciler
        self.max_retries = max_retries
        self._queue: RateLimitingQueue[K] = RateLimitingQueue(rate_limiter, name=name, clock=clock)
        self._cache_synced = tuple(cache_synced)
        self._cache_sync_timeout = cache_sync_timeout
        self._shutdown_timeout = shutdown_timeout
        self._clock = clock
        self._metrics = None if metrics is None else metrics.for_controller(name)
        self._started = False
        self._start_lock = threading.Lock()

    def reconcile(self, key: K) -> Result | None:
        """What a subclass constructed without a ``reconciler`` does with each key."""
        raise NotImplementedError

    @property
    def queue(self) -> RateLimitingQueue[K]:
        """The controller's queue (to inspect, or to add to with the queue's own methods)."""
        return self._queue

    def enqueue(self, key: K) -> None:
        """Queue ``key`` for reconciling now (deduplicated with pending adds)."""
        self._queue.add(key)

    def enqueue_after(self, key: K, delay: float) -> None:
        """Queue ``key`` once ``delay`` seconds have passed."""
        self._queue.add_after(key, delay)

    def enqueue_rate_limited(self, key: K) -> None:
        """Queue ``key`` after its rate-limiter backoff (counts as a retry)."""
        self._queue.add_rate_limited(key)

    def run(self, workers: int, stop: threading.Event) -> None:
        """Wait for the caches, run ``workers`` worker threads until ``stop``, then shut down.

        Blocks until the shutdown described in the module docstring is complete (or its
        ``shutdown_timeout`` passed; workers still busy then are left behind as daemon
        threads and logged).

        Raises:
            ValueError: ``workers`` is less than 1.
            RuntimeError: ``run`` was already called.
            TimeoutError: the caches did not sync within ``cache_sync_timeout``.
        """
        if workers < 1:
            raise ValueError(f"workers must be at least 1, got {workers}")
        with self._start_lock:
            if self._started:
                raise RuntimeError(f"controller {self.name!r} was already run")
            self._started = True
        _log.info("starting controller %s", self.name)
        synced = wait_for_cache_sync(
            stop, *self._cache_synced, timeout=self._cache_sync_timeout, clock=self._clock
        )
        if not synced:
            self._queue.shut_down()
            if stop.is_set():
                return
            raise TimeoutError(f"controller {self.name!r}: caches did not sync in time")
        if self._metrics is not None:
            self._metrics.set_workers(workers)
        threads = [
            threading.Thread(target=self._worker, name=f"{self.name}-worker-{i}", daemon=True)
            for i in range(workers)
        ]
        for thread in threads:
            thread.start()
        _log.info("controller %s started %d workers", self.name, workers)
        stop.wait()
        self._shut_down(threads)

    def process_next_work_item(self) -> bool:
        """Take one key, reconcile it and settle it; ``False`` once the queue is shut down.

        What each worker does in a loop; tests may call it directly instead of :meth:`run`.
        Blocks until a key is available.
        """
        got = self._queue.get()
        if got[1]:
            return False
        key = got[0]
        try:
            with reconcile_context(self.name, key):
                self._reconcile(key)
        finally:
            self._queue.done(key)
        return True

    def _reconcile(self, key: K) -> None:
        """Reconcile ``key``, settle it per the contract and record the outcome."""
        metrics = self._metrics
        if metrics is None:
            self._settle(key)
            return
        metrics.started()
        started = self._clock.now()
        outcome: ReconcileOutcome = "error"
        terminal = False
        try:
            outcome, terminal = self._settle(key)
        finally:
            metrics.finished(outcome, self._clock.now() - started, terminal=terminal)

    def _settle(self, key: K) -> tuple[ReconcileOutcome, bool]:
        """Reconcile ``key`` and requeue or forget it; return the outcome and terminality."""
        try:
            result = self.reconciler.reconcile(key)
        except Exception as err:
            return settle_error(self._queue, key, err, self.max_retries, self.name)
        return settle_result(self._queue, key, result)

    def _worker(self) -> None:
        """Process keys until the queue shuts down; a crash in one item never ends the loop."""
        more = True
        while more:
            # Entered once per crash, not per item: if an item raises, ``more`` keeps its
            # value, the crash is logged and the loop goes on with the next item.
            with handle_crash():
                while more:
                    more = self.process_next_work_item()

    def _shut_down(self, threads: list[threading.Thread]) -> None:
        """Stop intake, let the workers drain, then join them."""
        _log.info("shutting down controller %s", self.name)
        drained = self._queue.shut_down_with_drain(
            include_queued=True, timeout=self._shutdown_timeout
        )
        self._queue.shut_down()  # wakes idle workers; they see the shutdown and return
        for thread in threads:
            thread.join(self._shutdown_timeout)
        alive = [t.name for t in threads if t.is_alive()]
        if not drained or alive:
            _log.error("controller %s: shutdown timed out; still busy: %s", self.name, alive)
        _log.info("controller %s stopped", self.name)
