"""The delaying queue (client-go's ``DelayingInterface``): add an item after a delay.

Waiting items sit in a heap ordered by ready time. One waiter thread per queue sleeps (on the
queue's clock) until the earliest ready time, moves every ready item into the queue, and wakes
early when a sooner item arrives or the queue shuts down.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable
from typing import TypeVar

from kgen_runtime.util.clock import REAL_CLOCK, Clock
from kgen_runtime.util.runtime import handle_crash
from kgen_runtime.workqueue._state import WaitingList
from kgen_runtime.workqueue.metrics import PrometheusMetricsProvider
from kgen_runtime.workqueue.queue import Queue

__all__ = ["DelayingQueue"]

T = TypeVar("T", bound=Hashable)


class DelayingQueue(Queue[T]):
    """A :class:`Queue` with :meth:`add_after`.

    An item waiting for its delay is not in the queue yet: :meth:`add` of the same item puts
    it in at once (and its timer still fires later, then deduplicated as usual). Re-adding a
    waiting item with :meth:`add_after` keeps the earlier of the two ready times.

    The waiter thread is a daemon started by the constructor and ends on shutdown; items still
    waiting then are dropped (as in client-go). Shut every delaying queue down when done with
    it: until then its thread, and through it the queue, stay alive.
    """

    def __init__(
        self,
        *,
        name: str = "",
        clock: Clock = REAL_CLOCK,
        metrics_provider: PrometheusMetricsProvider | None = None,
    ) -> None:
        """Create an empty queue and start its waiter thread (arguments as for :class:`Queue`)."""
        super().__init__(name=name, clock=clock, metrics_provider=metrics_provider)
        self._waiting_cond = threading.Condition(threading.Lock())
        self._waiting: WaitingList[T] = WaitingList()
        self._stopped = False
        self._waiter = threading.Thread(
            target=self._waiting_loop, name=f"kgen-delaying-queue-{name or id(self)}", daemon=True
        )
        self._waiter.start()

    def add_after(self, item: T, delay: float) -> None:
        """Add ``item`` once ``delay`` seconds (clock time) have passed; ``<= 0`` adds now.

        Ignored after shutdown. Never blocks beyond the waiting-list lock.
        """
        if self.shutting_down():
            return
        if self._metrics is not None:
            self._metrics.retry()
        if delay <= 0:
            self.add(item)
            return
        ready_at = self._clock.now() + delay
        with self._waiting_cond:
            if self._waiting.push(item, ready_at):  # the new earliest: wake the waiter sooner
                self._waiting_cond.notify()

    def shut_down(self) -> None:
        """Shut down (see :meth:`Queue.shut_down`) and stop the waiter thread."""
        super().shut_down()
        self._stop_waiter()

    def shut_down_with_drain(
        self, *, include_queued: bool = False, timeout: float | None = None
    ) -> bool:
        """Stop the waiter thread, then drain (see :meth:`Queue.shut_down_with_drain`)."""
        self._stop_waiter()
        return super().shut_down_with_drain(include_queued=include_queued, timeout=timeout)

    def waiting_count(self) -> int:
        """Return how many items are waiting for their delay to pass."""
        with self._waiting_cond:
            return len(self._waiting)

    def _stop_waiter(self) -> None:
        with self._waiting_cond:
            self._stopped = True
            self._waiting_cond.notify()

    def _waiting_loop(self) -> None:
        """Move items into the queue as they become ready, until shutdown."""
        with self._waiting_cond:
            while not self._stopped:
                with handle_crash():
                    self._add_ready_items()
                self._clock.wait_until(self._waiting_cond, self._waiting.next_ready_at())

    def _add_ready_items(self) -> None:
        """Pop every item whose time has come into the queue; the caller holds the lock."""
        for item in self._waiting.pop_ready(self._clock.now()):
            self.add(item)
