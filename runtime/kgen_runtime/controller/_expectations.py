"""Controller expectations (``pkg/controller/controller_utils.go``, seed 001 §5).

Between a controller creating (or deleting) children and its informer showing them, its cache
is stale: a sync in that window would count too few children and create more. So before
writing, the controller records how many creations/deletions it expects for the owner's key;
its child event handlers lower the counts as the informer observes them; and a sync proceeds
only when :meth:`ControllerExpectations.satisfied` — the counts are down to zero, or the
expectations are older than their TTL (an event was missed: act on the cache anyway)::

    if not expectations.satisfied(key):
        return None                                  # wait for the informer to catch up
    ...
    expectations.expect_creations(key, diff)
    for _ in range(diff):
        try:
            client.create(child)
        except ApiError:
            expectations.creation_observed(key)      # that create will never be observed
            raise

    # in the child informer's handlers:
    on_add    -> expectations.creation_observed(owner_key)
    on_delete -> expectations.deletion_observed(owner_key)
"""

from __future__ import annotations

import threading
from dataclasses import dataclass

from kgen_runtime.util.clock import REAL_CLOCK, Clock

__all__ = ["EXPECTATIONS_TIMEOUT", "ControlleeExpectations", "ControllerExpectations"]

EXPECTATIONS_TIMEOUT = 5 * 60.0
"""client-go's ``ExpectationsTimeout``: expectations older than this count as satisfied."""


@dataclass(frozen=True, slots=True)
class ControlleeExpectations:
    """A snapshot of one key's expectations.

    Attributes:
        add: Creations still expected (may go negative: more observed than expected).
        delete: Deletions still expected.
        timestamp: Clock time the expectations were set (raising/lowering keeps it).
    """

    add: int
    delete: int
    timestamp: float

    def fulfilled(self) -> bool:
        """Whether every expected creation and deletion has been observed."""
        return self.add <= 0 and self.delete <= 0


class ControllerExpectations:
    """Expected creations and deletions per controller key, with a TTL.

    Thread-safe: one lock guards every key's counts, so observers on informer threads and
    workers may call any method concurrently; each call is atomic.

    Args:
        ttl: Seconds after which unfulfilled expectations count as satisfied.
        clock: Time source of the timestamps and the TTL.
    """

    def __init__(self, *, ttl: float = EXPECTATIONS_TIMEOUT, clock: Clock = REAL_CLOCK) -> None:
        self.ttl = ttl
        self._clock = clock
        self._lock = threading.Lock()
        self._store: dict[str, ControlleeExpectations] = {}

    def get(self, key: str) -> ControlleeExpectations | None:
        """The expectations recorded for ``key``, or ``None``."""
        with self._lock:
            return self._store.get(key)

    def satisfied(self, key: str) -> bool:
        """Whether a sync of ``key`` may act on the cache (client-go ``SatisfiedExpectations``).

        True when no expectations are recorded (a new controller, or after :meth:`delete`),
        when they are fulfilled, or when they have expired.
        """
        with self._lock:
            exp = self._store.get(key)
        if exp is None or exp.fulfilled():
            return True
        return self._clock.now() - exp.timestamp > self.ttl

    def set(self, key: str, add: int, delete: int) -> None:
        """Replace ``key``'s expectations with these counts, timestamped now."""
        exp = ControlleeExpectations(add, delete, self._clock.now())
        with self._lock:
            self._store[key] = exp

    def expect_creations(self, key: str, adds: int) -> None:
        """Expect ``adds`` creations (and no deletions) for ``key``."""
        self.set(key, adds, 0)

    def expect_deletions(self, key: str, deletes: int) -> None:
        """Expect ``deletes`` deletions (and no creations) for ``key``."""
        self.set(key, 0, deletes)

    def raise_expectations(self, key: str, add: int, delete: int) -> None:
        """Add to ``key``'s counts; nothing happens if it has no expectations."""
        self._adjust(key, add, delete)

    def lower_expectations(self, key: str, add: int, delete: int) -> None:
        """Subtract from ``key``'s counts; nothing happens if it has no expectations."""
        self._adjust(key, -add, -delete)

    def creation_observed(self, key: str) -> None:
        """One expected creation was seen (or will never happen)."""
        self._adjust(key, -1, 0)

    def deletion_observed(self, key: str) -> None:
        """One expected deletion was seen (or will never happen)."""
        self._adjust(key, 0, -1)

    def delete(self, key: str) -> None:
        """Forget ``key``'s expectations (when the owner itself is deleted)."""
        with self._lock:
            self._store.pop(key, None)

    def _adjust(self, key: str, add: int, delete: int) -> None:
        with self._lock:
            exp = self._store.get(key)
            if exp is not None:
                self._store[key] = ControlleeExpectations(
                    exp.add + add, exp.delete + delete, exp.timestamp
                )
