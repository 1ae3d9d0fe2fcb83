"""The reconcile gate of a ``sharded()`` controller: a request is reconciled only while its
object's hash is in a range the manager's ring member holds, and the member knows it runs.

Around each reconcile, the gate (:class:`~.shard_gate.ShardGate` or
:class:`~.shard_gate_aio.AsyncShardGate`, generated one from the other) calls the member's
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

from typing import Generic, Protocol, TypeVar

from kgen_runtime.controller._reconciler import Request
from kgen_runtime.meta import KubeObject
from kgen_runtime.sharding import ShardField, fnv1a64

__all__ = ["Fencing", "GateBase"]

T = TypeVar("T", bound=KubeObject)


class Fencing(Protocol):
    """What the gate uses of a ring member (:class:`~kgen_runtime.sharding.ShardMember`)."""

    def begin(self, digest: int) -> bool: ...

    def end(self, digest: int) -> None: ...


class GateBase(Generic[T]):
    """What the blocking and the async gate share: the member, the kind, the digest."""

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
