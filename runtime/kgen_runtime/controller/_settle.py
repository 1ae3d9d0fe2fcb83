"""What happens to a key after its reconcile: one decision for the blocking and async loops.

client-go's ``handleErr`` and controller-runtime's ``reconcileHandler``, without I/O: given
what the reconciler returned or raised, requeue the key (now, after a delay, or after its
rate-limiter backoff), forget it, or drop it after ``max_retries``. Works on any queue with
``forget``/``add_after``/``add_rate_limited``/``num_requeues`` — the blocking
:class:`~kgen_runtime.workqueue.RateLimitingQueue` and the
:class:`~kgen_runtime.workqueue.AsyncRateLimitingQueue` alike.
"""

from __future__ import annotations

import logging
from collections.abc import Hashable
from typing import Protocol, TypeVar

from kgen_runtime.controller._metrics import ReconcileOutcome
from kgen_runtime.controller._reconciler import Result, TerminalError
from kgen_runtime.util.runtime import handle_error

__all__ = ["RetryQueue", "settle_error", "settle_result"]

K = TypeVar("K", bound=Hashable)
K_contra = TypeVar("K_contra", bound=Hashable, contravariant=True)

_log = logging.getLogger("kgen_runtime.controller")


class RetryQueue(Protocol[K_contra]):
    def forget(self, item: K_contra) -> None: ...

    def add_after(self, item: K_contra, delay: float) -> None: ...

    def add_rate_limited(self, item: K_contra) -> None: ...

    def num_requeues(self, item: K_contra) -> int: ...


def settle_result(
    queue: RetryQueue[K], key: K, result: Result | None
) -> tuple[ReconcileOutcome, bool]:
    """A reconcile returned ``result``: requeue or forget ``key``; the outcome, terminality."""
    if result is not None and result.requeue_after > 0:
        queue.forget(key)
        queue.add_after(key, result.requeue_after)
        return "requeue_after", False
    if result is not None and result.requeue:
        queue.add_rate_limited(key)
        return "requeue", False
    queue.forget(key)
    return "success", False


def settle_error(
    queue: RetryQueue[K], key: K, err: Exception, max_retries: int | None, name: str
) -> tuple[ReconcileOutcome, bool]:
    """A reconcile raised ``err``: a terminal error forgets ``key``; any other is retried with
    backoff up to ``max_retries`` (``None``: forever), then logged and dropped."""
    if isinstance(err, TerminalError):
        queue.forget(key)
        handle_error(err, f"controller {name}: terminal error for {key!r}, not requeued")
        return "error", True
    retries = queue.num_requeues(key)
    if max_retries is None or retries < max_retries:
        _log.info("controller %s: error reconciling %r, requeued: %s", name, key, err)
        queue.add_rate_limited(key)
        return "error", False
    queue.forget(key)
    handle_error(err, f"controller {name}: dropping {key!r} after {retries} retries")
    return "error", False
