"""Retrying a read-modify-write on conflicts (client-go's ``util/retry``).

The usual use: re-read an object, change it and write it back, retrying when the server
answers 409 Conflict because someone else wrote in between::

    def bump() -> Foo:
        foo = client.get("name")
        foo.spec.replicas += 1
        return client.update(foo)

    updated = retry_on_conflict(DEFAULT_RETRY, bump)

The whole function is retried, so it must re-read what it writes. Retries sleep on an
injectable clock; ``fn`` runs in the calling thread.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from kgen_runtime.util.clock import REAL_CLOCK, Clock
from kgen_runtime.util.wait import Backoff, WaitTimeoutError, exponential_backoff

__all__ = ["DEFAULT_BACKOFF", "DEFAULT_RETRY", "is_conflict", "on_error", "retry_on_conflict"]

R = TypeVar("R")

DEFAULT_RETRY = Backoff(duration=0.010, factor=1.0, jitter=0.1, steps=5)
"""For conflicts between writers of one object: 5 tries, about 10 ms apart."""

DEFAULT_BACKOFF = Backoff(duration=0.010, factor=5.0, jitter=0.1, steps=4)
"""For errors that take longer to clear: 4 tries over about 1.5 s."""


def is_conflict(err: BaseException) -> bool:
    """Return whether ``err`` is the API server's 409 Conflict (apimachinery's ``IsConflict``).

    Duck-typed, so this module does not depend on the REST layer: an error whose ``reason`` is
    ``"Conflict"``, or whose HTTP code (``code`` or ``status_code``) is 409 and whose reason is
    not ``"AlreadyExists"`` (the other 409, which retrying cannot fix). The REST layer's
    ``ConflictError`` qualifies.
    """
    reason = getattr(err, "reason", None)
    if reason == "Conflict":
        return True
    if reason == "AlreadyExists":
        return False
    return 409 in (getattr(err, "code", None), getattr(err, "status_code", None))


def on_error(
    backoff: Backoff,
    retriable: Callable[[Exception], bool],
    fn: Callable[[], R],
    *,
    clock: Clock = REAL_CLOCK,
) -> R:
    """Call ``fn`` until it returns, retrying (per ``backoff``) errors that ``retriable`` accepts.

    Returns what ``fn`` returned. An error ``retriable`` rejects propagates at once; when the
    attempts (``backoff.steps``) run out, the last retriable error propagates.

    Raises:
        WaitTimeoutError: ``backoff.steps < 1``, so ``fn`` never ran.
    """
    outcome: list[R] = []
    last_error: list[Exception] = []

    def attempt() -> bool:
        try:
            outcome.append(fn())
        except Exception as err:
            if not retriable(err):
                raise
            last_error[:] = [err]
            return False
        return True

    try:
        exponential_backoff(backoff, attempt, clock=clock)
    except WaitTimeoutError:
        if last_error:
            raise last_error[0] from None
        raise
    return outcome[0]


def retry_on_conflict(backoff: Backoff, fn: Callable[[], R], *, clock: Clock = REAL_CLOCK) -> R:
    """Call ``fn``, retrying it while it raises a conflict (see :func:`is_conflict`)."""
    return on_error(backoff, is_conflict, fn, clock=clock)
