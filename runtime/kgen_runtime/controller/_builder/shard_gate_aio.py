"""The reconcile gate of a ``sharded()`` controller: a reconcile runs only while the member
fences it (see :mod:`.shard_gate_core` for the rules, and which refused requests are requeued
and which dropped).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

from kgen_runtime.controller._builder.shard_gate_core import Fencing, GateBase
from kgen_runtime.controller._reconciler import Request, Result
from kgen_runtime.meta import KubeObject
from kgen_runtime.rest.errors import NotFoundError
from kgen_runtime.sharding import ShardField

if TYPE_CHECKING:  # annotations only; apart, so its blocking rewrite stays a sorted import
    from kgen_runtime.controller._reconciler_aio import AsyncReconciler

__all__ = ["AsyncShardGate"]

T = TypeVar("T", bound=KubeObject)

_RETRY = Result(requeue=True)
"""What a request refused while its object is cached gets: another look after a backoff."""


class AsyncShardGate(GateBase[T]):
    """Wraps a :class:`AsyncReconciler` with the member's fencing (see the module docstring)."""

    def __init__(
        self,
        reconciler: AsyncReconciler[Request],
        member: Fencing,
        kind: type[T],
        field: ShardField,
        cache: Any,
    ) -> None:
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
