"""The reconcile gate of a ``sharded()`` controller: a request is reconciled only while its
object's hash is in a range the manager's ring member holds, and the member knows it runs.

Around each reconcile, :class:`ShardGate` (and :class:`AsyncShardGate`) call the member's
``begin(digest)`` and, if it accepted, ``end(digest)`` after: the member hands a range over
only once the reconciles it accepted in that range ended, and the next owner starts only
then, so an object is never reconciled by two members at once.

The digest is FNV-1a 64 of the object's ``metadata.uid`` (read from the manager's cache:
the sharded informer holds the member's objects) or of the request's namespace, as the
ring's :class:`~kgen_runtime.sharding.ShardField` says.

A refused request whose object is not in the member's cache is dropped: its range is
another member's, whose sharded informer listed the object when it took the range (and that
list enqueued it there). A refused request whose object *is* cached is requeued (after the
rate limiter's backoff): the member's informer still covers its range, so the member held it
a moment ago or is about to hold it again: its hold lapsed while it was paused, or a renewal
ran late, or the range is being handed over. Dropping it would lose the event for good when
the member keeps or regains the range, since a relist of objects the cache already holds at
that resourceVersion notifies no handler; the retries end once the member holds the range
again, or its informer let the object go. A request whose object is not in the cache is
dropped under ``ShardField.UID`` before asking the member: its uid, hence its owner, is
unknown (it was deleted, or belongs to another shard, e.g. enqueued by an owned object,
which is not sharded). Reconcilers should therefore clean up through finalizers (an object
being deleted stays in the cache), as controller-runtime recommends anyway.
"""

from __future__ import annotations

from typing import Any, Generic, Protocol, TypeVar

from kgen_runtime.controller._controller_aio import AsyncReconciler
from kgen_runtime.controller._reconciler import Reconciler, Request, Result
from kgen_runtime.meta import KubeObject
from kgen_runtime.rest.errors import NotFoundError
from kgen_runtime.sharding import ShardField, fnv1a64

__all__ = ["AsyncShardGate", "Fencing", "ShardGate"]

T = TypeVar("T", bound=KubeObject)

_RETRY = Result(requeue=True)
"""What a request refused while its object is cached gets: another look after a backoff."""


class Fencing(Protocol):
    """What the gate uses of a ring member (:class:`~kgen_runtime.sharding.ShardMember`)."""

    def begin(self, digest: int) -> bool: ...

    def end(self, digest: int) -> None: ...


class _Gate(Generic[T]):
    def __init__(self, member: Fencing, kind: type[T], field: ShardField) -> None:
        self.member = member
        self.kind = kind
        self.field = field

    def digest(self, request: Request, obj: KubeObject | None) -> int | None:
        """The hash of ``request``'s object, or ``None`` if it is unknown (not cached)."""
        if self.field is ShardField.NAMESPACE:
            return fnv1a64(request.namespace)
        meta = obj.metadata if obj is not None else None
        return None if meta is None else self.field.digest(meta)


class ShardGate(_Gate[T]):
    """Wraps a :class:`Reconciler` with the member's fencing (see the module docstring)."""

    def __init__(self, reconciler: Reconciler[Request], member: Fencing, kind: type[T],
                 field: ShardField, cache: Any) -> None:
        super().__init__(member, kind, field)
        self.reconciler = reconciler
        self.cache = cache

    def reconcile(self, request: Request) -> Result | None:
        obj = None
        if self.field is ShardField.UID:
            obj = self._cached(request)
            if obj is None:
                return None
        digest = self.digest(request, obj)
        if digest is None:
            return None
        if not self.member.begin(digest):
            cached = obj is not None or self._cached(request) is not None
            return _RETRY if cached else None
        try:
            return self.reconciler.reconcile(request)
        finally:
            self.member.end(digest)

    def _cached(self, request: Request) -> KubeObject | None:
        try:
            obj: KubeObject = self.cache.get(self.kind, request.namespace, request.name)
        except NotFoundError:
            return None
        return obj


class AsyncShardGate(_Gate[T]):
    """The asyncio twin of :class:`ShardGate`, over an :class:`AsyncReconciler`."""

    def __init__(self, reconciler: AsyncReconciler[Request], member: Fencing, kind: type[T],
                 field: ShardField, cache: Any) -> None:
        super().__init__(member, kind, field)
        self.reconciler = reconciler
        self.cache = cache

    async def reconcile(self, request: Request) -> Result | None:
        obj = None
        if self.field is ShardField.UID:
            obj = await self._cached(request)
            if obj is None:
                return None
        digest = self.digest(request, obj)
        if digest is None:
            return None
        if not self.member.begin(digest):
            cached = obj is not None or await self._cached(request) is not None
            return _RETRY if cached else None
        try:
            return await self.reconciler.reconcile(request)
        finally:
            self.member.end(digest)

    async def _cached(self, request: Request) -> KubeObject | None:
        try:
            obj: KubeObject = await self.cache.get(self.kind, request.namespace, request.name)
        except NotFoundError:
            return None
        return obj
