"""Shard membership and fenced range hand-over, without I/O.

Each member of a ring holds a Lease (coordination.k8s.io/v1) named after it and labelled
``sharding.kgen.io/ring=<ring>``, renewed every ``renew_period``; its annotation
``sharding.kgen.io/held`` lists the hash ranges the member *claims*. The live members (Leases
not expired) split the hash space with a :class:`~kgen_runtime.sharding.HashRing`; each
member wants its share of the ring. The hand-over is fenced (as
timebertt/kubernetes-controller-sharding's drain handshake, but between the members
themselves, through their Leases):

* a member **claims** a range it wants by writing it into its Lease, and **acquires** it only
  when a LIST of the ring's Leases that started after that write was acknowledged shows no
  live Lease of another member claiming any of it. Writes to the API server are linearizable,
  so of two members claiming the same hash, the later writer's LIST sees the earlier claim:
  both cannot acquire it;
* a member that stops wanting a range stops accepting new reconciles over it at once
  (:meth:`ShardCoordinator.begin` returns ``False``) and **releases** it (drops it from its
  Lease) only after its in-flight reconciles over it ended;
* another member's Lease is expired when it has not changed for its ``leaseDurationSeconds``
  on the observer's monotonic clock, counted from when the observer first saw its current
  version (client-go's ``observedTime``); a member holds its ranges only until
  ``lease_duration`` after the *start* of its last acknowledged write, so it has given them up
  before anyone can count its Lease expired. Claims of expired Leases are ignored.

Like leader election, this cannot fence a reconcile that outlives its member's hold (a process
paused in the middle of one, or a reconcile longer than ``renew_period`` while renewals fail):
reconciles must be idempotent and use optimistic concurrency.

:class:`ShardCoordinator` is fed observations and times and tells its driver what to write
(:class:`WriteLease`, :class:`DeleteLease`); :class:`~kgen_runtime.sharding.ShardMember` and
:class:`~kgen_runtime.sharding.AsyncShardMember` do the I/O. It is thread-safe, so workers can
call :meth:`~ShardCoordinator.begin` and :meth:`~ShardCoordinator.end` while a driver feeds it.
"""

from __future__ import annotations

import bisect
import logging
import math
import threading
from collections.abc import Callable, Generator, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from kgen_runtime.api.coordination.v1.models import Lease, LeaseSpec
from kgen_runtime.meta import ObjectMeta, format_micro_time
from kgen_runtime.rest.errors import is_not_found
from kgen_runtime.sharding._ring import VIRTUAL_NODES, HashRing
from kgen_runtime.shardranges import HASH_SPACE, HashRange, merge

__all__ = [
    "HELD_ANNOTATION",
    "LEAVING_ANNOTATION",
    "RING_LABEL",
    "DeleteLease",
    "ListLeases",
    "Round",
    "ShardAction",
    "ShardCall",
    "ShardCoordinator",
    "WriteLease",
    "format_held",
    "parse_held",
]

_log = logging.getLogger("kgen_runtime.sharding")

RING_LABEL = "sharding.kgen.io/ring"
"""The label naming the ring a member's Lease belongs to."""

HELD_ANNOTATION = "sharding.kgen.io/held"
"""The annotation listing the ranges a member claims: ``0x<start>-0x<end>`` joined by ``,``."""

LEAVING_ANNOTATION = "sharding.kgen.io/leaving"
"""Set (``"true"``) on the Lease of a member that is leaving: the others drop it from the ring
at once, and take each range it releases while it drains the rest."""

Ranges = tuple[HashRange, ...]
_EVERYTHING: Ranges = (HashRange(0, HASH_SPACE),)


@dataclass(frozen=True, slots=True)
class WriteLease:
    """Write the member's Lease: create it when ``lease`` has no ``resourceVersion``, else
    update it with that ``resourceVersion`` as precondition."""

    lease: Lease


@dataclass(frozen=True, slots=True)
class DeleteLease:
    """Delete the member's Lease (the member left), if still at ``resource_version``."""

    name: str
    resource_version: str | None


ShardAction = WriteLease | DeleteLease


@dataclass(frozen=True, slots=True)
class ListLeases:
    """LIST the ring's Leases by ``label_selector``; answered with the Leases."""

    label_selector: str


ShardCall = ListLeases | WriteLease | DeleteLease
Round = Generator[ShardCall, Any, None]
"""The API calls of one driver round; each is answered with its result (the Leases listed,
the Lease written, ``None`` for a delete) or has its error thrown in."""


def format_held(ranges: Iterable[HashRange]) -> str:
    """The :data:`HELD_ANNOTATION` value for ``ranges`` (merged first)."""
    return ",".join(f"0x{r.start:016x}-0x{r.end:016x}" for r in merge(ranges))


def parse_held(text: str, lease: str) -> Ranges:
    """The ranges a :data:`HELD_ANNOTATION` value lists.

    Raises:
        ValueError: ``text`` is malformed; the message names ``lease`` and the annotation.
    """
    ranges = []
    for term in filter(None, text.split(",")):
        try:
            start, end = term.split("-")
            ranges.append(HashRange(int(start, 16), int(end, 16)))
        except ValueError as err:
            raise ValueError(
                f"lease {lease}: annotation {HELD_ANNOTATION}: bad range {term!r} ({err})"
            ) from None
    return merge(ranges)


def _covers(ranges: Ranges, digest: int) -> bool:
    """Whether merged ``ranges`` contain ``digest`` (a binary search)."""
    index = bisect.bisect_right(ranges, digest, key=lambda r: r.start) - 1
    return index >= 0 and digest in ranges[index]


def _intersect(a: Ranges, b: Ranges) -> Ranges:
    """What merged ``a`` and ``b`` share (one sweep over both)."""
    pieces: list[HashRange] = []
    i = j = 0
    while i < len(a) and j < len(b):
        start, end = max(a[i].start, b[j].start), min(a[i].end, b[j].end)
        if start < end:
            pieces.append(HashRange(start, end))
        if a[i].end < b[j].end:
            i += 1
        else:
            j += 1
    return tuple(pieces)


def _subtract(a: Ranges, b: Ranges) -> Ranges:
    pieces = []
    for x in a:
        start = x.start
        for y in b:  # b is merged: sorted and disjoint
            if y.end <= start or y.start >= x.end:
                continue
            if y.start > start:
                pieces.append(HashRange(start, y.start))
            start = max(start, y.end)
        if start < x.end:
            pieces.append(HashRange(start, x.end))
    return merge(pieces)


@dataclass(frozen=True, slots=True)
class _Seen:
    """Another member's Lease as last observed."""

    resource_version: str | None
    held: Ranges
    duration: float
    since: float  # when this version was first observed
    leaving: bool

    def live(self, now: float) -> bool:
        return now < self.since + self.duration


def utc_now() -> datetime:
    """The wall-clock time written into Leases' ``renewTime``."""
    return datetime.now(UTC)


class ShardCoordinator:
    """One member's view of its ring and the ranges it holds (see the module docstring).

    The driver repeatedly: LISTs the ring's Leases (label ``RING_LABEL=<ring>``) and passes
    them to :meth:`observe` with the time the LIST started; asks :meth:`next_action` what to
    write and reports the outcome (:meth:`written`, :meth:`write_failed`, :meth:`deleted`).
    Times are the member's monotonic clock in seconds.

    Args:
        ring: The ring's name (the Leases' label value).
        identity: This member's name (its Lease's name).
        lease_duration: Seconds a Lease lasts without renewal.
        renew_period: Seconds between renewals; less than ``lease_duration``.
        virtual_nodes: Tokens per member on the ring (all members must agree).
        wall_now: Wall-clock time written into the Lease's ``renewTime``.

    Raises:
        ValueError: an empty ring or identity, or not 0 < renew_period < lease_duration.
    """

    def __init__(
        self,
        ring: str,
        identity: str,
        *,
        lease_duration: float = 15.0,
        renew_period: float = 5.0,
        virtual_nodes: int = VIRTUAL_NODES,
        wall_now: Callable[[], datetime] = utc_now,
    ) -> None:
        if not ring or not identity:
            raise ValueError("a shard member needs a non-empty ring name and identity")
        if not 0 < renew_period < lease_duration:
            raise ValueError(
                f"renew_period ({renew_period}) must be > 0 and < lease_duration ({lease_duration})"
            )
        self.ring = ring
        self.identity = identity
        self.lease_duration = lease_duration
        self.renew_period = renew_period
        self.virtual_nodes = virtual_nodes
        self._wall_now = wall_now
        self._lock = threading.Lock()
        self._others: dict[str, _Seen] = {}
        self._rings: dict[frozenset[str], HashRing] = {}
        self._active: Ranges = ()  # acquired: begin() accepts these
        self._pending: Ranges = ()  # claimed, waiting for others to release
        self._draining: Ranges = ()  # no longer wanted: released once in-flight work ends
        self._in_flight: dict[int, int] = {}
        self._resource_version: str | None = None
        self._version_known = True  # False after a failed write: learn it from a LIST
        self._writing: tuple[Ranges, bool, float] | None = None  # claims, leaving, start
        self._acked: Ranges = ()  # claims of the last acknowledged write
        self._acked_leaving = False  # whether it said the member is leaving
        self._acked_at = math.inf
        self._deadline = -math.inf  # ranges are held until then
        self._last_write_start = -math.inf
        self._leaving = False
        self._left = False

    # -- what the member holds -------------------------------------------------------------

    def ranges(self, now: float) -> Ranges:
        """The ranges this member holds at ``now``: no other member holds any of them."""
        with self._lock:
            return self._active if now < self._deadline else ()

    def begin(self, digest: int, now: float) -> bool:
        """Start a reconcile over ``digest`` if this member holds it at ``now`` for at least
        ``renew_period`` more; every ``True`` must be followed by one :meth:`end`.

        A member that renews on time holds its ranges for about ``lease_duration`` ahead, so
        this refuses only when renewals are overdue: a reconcile that begins then still ends
        before the member's hold does if it takes less than ``renew_period``."""
        with self._lock:
            if now >= self._deadline - self.renew_period or not _covers(self._active, digest):
                return False
            self._in_flight[digest] = self._in_flight.get(digest, 0) + 1
            return True

    def end(self, digest: int) -> None:
        """A reconcile :meth:`begin` accepted has ended."""
        with self._lock:
            count = self._in_flight.get(digest, 0)
            if count <= 0:
                raise ValueError(f"end({digest:#x}) without a matching begin")
            if count == 1:
                del self._in_flight[digest]
            else:
                self._in_flight[digest] = count - 1

    def members(self, now: float) -> frozenset[str]:
        """The members of the ring as this member sees them: live and not leaving."""
        with self._lock:
            return self._members_locked(now)

    @property
    def left(self) -> bool:
        """Whether the member left: its Lease is deleted and it holds nothing."""
        return self._left

    def leave(self) -> None:
        """Hand every range over: stop accepting reconciles, release each range once its
        in-flight reconciles end, then delete the Lease (:meth:`next_action`)."""
        with self._lock:
            self._leaving = True
            self._draining = merge(self._draining + self._active)
            self._active = self._pending = ()

    # -- observations and actions ----------------------------------------------------------

    def observe(self, leases: Iterable[Lease], started: float, now: float) -> None:
        """The ring's Leases as a LIST that started at ``started`` returned them at ``now``;
        a member whose Lease is absent is gone. Acquires the claimed ranges no other live
        member claims, if the LIST started after the claims were written."""
        with self._lock:
            others: dict[str, _Seen] = {}
            for lease in leases:
                name = lease.metadata.name if lease.metadata else None
                if not name:
                    continue
                version = lease.metadata.resource_version if lease.metadata else None
                if name == self.identity:
                    if not self._version_known:
                        self._resource_version, self._version_known = version, True
                    continue
                previous = self._others.get(name)
                since = (previous.since if previous and previous.resource_version == version
                         else now)
                spec = lease.spec or LeaseSpec()
                annotations = (lease.metadata.annotations if lease.metadata else None) or {}
                others[name] = _Seen(version, _held_of(lease, name),
                                     float(spec.lease_duration_seconds or 0), since,
                                     annotations.get(LEAVING_ANNOTATION) == "true")
            if not self._version_known:  # our Lease is gone: create it again
                self._resource_version, self._version_known = None, True
            self._others = others
            self._advance_locked(now)
            if started < self._acked_at or now >= self._deadline:
                return
            taken = merge(r for seen in others.values() if seen.live(now) for r in seen.held)
            acquired = _subtract(_intersect(self._pending, self._acked), taken)
            if acquired:
                _log.info("%s/%s: acquired %s", self.ring, self.identity, format_held(acquired))
                self._active = merge(self._active + acquired)
                self._pending = _subtract(self._pending, acquired)

    def next_action(self, now: float) -> ShardAction | None:
        """What to write now: the Lease when a renewal is due or the claims changed, its
        deletion once the member has left every range; else ``None``. At most one write is
        outstanding: report its outcome before asking again."""
        with self._lock:
            self._advance_locked(now)
            if self._writing is not None or self._left or not self._version_known:
                return None
            claims = self._claims_locked()
            if self._leaving and not claims:
                if self._resource_version is None and self._acked_at == math.inf:
                    self._left = True  # never written
                    return None
                self._writing = ((), True, now)
                return DeleteLease(self.identity, self._resource_version)
            unchanged = claims == self._acked and self._leaving == self._acked_leaving
            if unchanged and now < self._last_write_start + self.renew_period:
                return None
            self._writing = (claims, self._leaving, now)
            return WriteLease(self._lease_locked(claims))

    def written(self, lease: Lease, now: float) -> None:
        """The write :meth:`next_action` asked for succeeded; ``lease`` is what the server
        returned."""
        with self._lock:
            claims, leaving, started = self._take_write_locked()
            self._resource_version = lease.metadata.resource_version if lease.metadata else None
            self._acked, self._acked_leaving, self._acked_at = claims, leaving, now
            self._last_write_start = started
            self._deadline = started + self.lease_duration
            self._advance_locked(now)

    def write_failed(self, now: float) -> None:
        """The write failed (a conflict, the Lease missing or existing, or unreachable); the
        Lease's version is learnt again from the next :meth:`observe`."""
        with self._lock:
            self._take_write_locked()
            self._version_known = False
            self._advance_locked(now)

    def deleted(self) -> None:
        """The :class:`DeleteLease` succeeded (or the Lease was already gone)."""
        with self._lock:
            self._take_write_locked()
            self._left = True
            self._active = self._pending = self._draining = ()

    # -- internals -------------------------------------------------------------------------

    def _take_write_locked(self) -> tuple[Ranges, bool, float]:
        if self._writing is None:
            raise RuntimeError("no write is outstanding")
        writing, self._writing = self._writing, None
        return writing

    def _claims_locked(self) -> Ranges:
        return merge(self._active + self._pending + self._draining)

    def _members_locked(self, now: float) -> frozenset[str]:
        live = {name for name, seen in self._others.items()
                if seen.live(now) and not seen.leaving}
        if not (self._leaving or self._left):
            live.add(self.identity)
        return frozenset(live)

    def _ring_locked(self, members: frozenset[str]) -> HashRing:
        ring = self._rings.get(members)
        if ring is None:
            if len(self._rings) > 64:
                self._rings.clear()
            ring = self._rings[members] = HashRing(members, self.virtual_nodes)
        return ring

    def _advance_locked(self, now: float) -> None:
        """Follow the ring: lapse everything if the Lease expired, drain what is no longer
        wanted, claim what is newly wanted, release drained ranges without in-flight work."""
        if now >= self._deadline and (self._active or self._draining or self._acked):
            if self._active or self._draining:
                _log.warning("%s/%s: lease not renewed in time; holding nothing until it is",
                             self.ring, self.identity)
            self._active = self._pending = self._draining = self._acked = ()
        wanted = (() if self._leaving or self._left
                  else self._ring_locked(self._members_locked(now)).ranges_of(self.identity))
        unwanted = _subtract(self._active, wanted)
        self._active = merge(_intersect(self._active, wanted) + _intersect(self._draining, wanted))
        self._draining = _subtract(merge(self._draining + unwanted), wanted)
        self._pending = _subtract(wanted, self._active)
        self._draining = tuple(
            r for r in self._draining if any(digest in r for digest in self._in_flight)
        )  # the rest is released: it leaves the claims at the next write

    def _lease_locked(self, claims: Ranges) -> Lease:
        return Lease(
            metadata=ObjectMeta(
                name=self.identity,
                resource_version=self._resource_version,
                labels={RING_LABEL: self.ring},
                annotations={HELD_ANNOTATION: format_held(claims),
                             **({LEAVING_ANNOTATION: "true"} if self._leaving else {})},
            ),
            spec=LeaseSpec(
                holder_identity=self.identity,
                lease_duration_seconds=math.ceil(self.lease_duration),
                renew_time=format_micro_time(self._wall_now()),
            ),
        )


def _held_of(lease: Lease, name: str) -> Ranges:
    """The ranges ``lease`` claims; a malformed list claims everything (safe: it blocks)."""
    text = (lease.metadata.annotations or {}).get(HELD_ANNOTATION, "") if lease.metadata else ""
    try:
        return parse_held(text, name)
    except ValueError as err:
        _log.error("%s; treating it as claiming every hash", err)
        return _EVERYTHING


def member_round(coordinator: ShardCoordinator, now: Callable[[], float]) -> Round:
    """One round of a driver (sans-I/O, shared by the thread and the asyncio driver): LIST
    the ring, observe, write what :meth:`ShardCoordinator.next_action` asks; after a write,
    LIST again at once (at most three times), so a claim just written is acquired without
    waiting a period and a deleted Lease hands its ranges over in the same round."""
    selector = f"{RING_LABEL}={coordinator.ring}"
    for _ in range(3):
        started = now()
        try:
            leases = yield ListLeases(selector)
        except Exception as err:
            _log.warning("%s/%s: listing the ring's leases failed: %s",
                         coordinator.ring, coordinator.identity, err)
            return
        coordinator.observe(leases, started, now())
        action = coordinator.next_action(now())
        if action is None:
            return
        try:
            written = yield action
        except Exception as err:
            if isinstance(action, DeleteLease) and is_not_found(err):
                coordinator.deleted()
                return
            _log.warning("%s/%s: writing lease %s failed: %s",
                         coordinator.ring, coordinator.identity, coordinator.identity, err)
            coordinator.write_failed(now())
            return
        if isinstance(action, DeleteLease):
            coordinator.deleted()
            return
        coordinator.written(written, now())
