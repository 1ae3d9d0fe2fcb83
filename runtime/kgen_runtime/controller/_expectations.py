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

import logging
import threading
from collections.abc import Iterable
from dataclasses import dataclass

from kgen_runtime.util.clock import REAL_CLOCK, Clock

__all__ = [
    "EXPECTATIONS_TIMEOUT",
    "ControlleeExpectations",
    "ControllerExpectations",
    "UIDTrackingControllerExpectations",
]

_log = logging.getLogger("kgen_runtime.controller.expectations")

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


class UIDTrackingControllerExpectations(ControllerExpectations):
    """Expectations that also remember *which* children are expected to go away
    (client-go's ``UIDTrackingControllerExpectations``).

    A deletion can be observed twice — as an update setting ``deletionTimestamp`` and as the
    final delete — and a controller that lowered its count on both would under-count. Here
    :meth:`expect_deletions_of` records the children's keys (or uids), and
    :meth:`deletion_observed_of` lowers the count only the first time it sees each of them.
    """

    def __init__(self, *, ttl: float = EXPECTATIONS_TIMEOUT, clock: Clock = REAL_CLOCK) -> None:
        super().__init__(ttl=ttl, clock=clock)
        self._uids: dict[str, set[str]] = {}

    def expect_deletions_of(self, key: str, deleted: Iterable[str]) -> None:
        """Expect the deletion of each child in ``deleted`` (keys or uids) for ``key``.

        Replaces earlier tracked children of ``key``; replacing some not yet observed is
        logged as an error (a controller bug), as in client-go.
        """
        uids = set(deleted)
        with self._lock:
            if self._uids.get(key):
                _log.error("clobbering existing delete keys of %r: %s", key,
                           sorted(self._uids[key]))
            self._uids[key] = uids
        self.expect_deletions(key, len(uids))

    def deletion_observed_of(self, key: str, deleted: str) -> None:
        """``deleted`` was seen going away; lowers ``key``'s count once per tracked child."""
        with self._lock:
            uids = self._uids.get(key)
            if uids is None or deleted not in uids:
                return
            uids.discard(deleted)
        self.deletion_observed(key)

    def delete(self, key: str) -> None:
        """Forget ``key``'s expectations and tracked children."""
        with self._lock:
            self._uids.pop(key, None)
        super().delete(key)

    def tracked(self, key: str) -> frozenset[str]:
        """The children of ``key`` whose deletion is still expected."""
        with self._lock:
            return frozenset(self._uids.get(key, ()))
