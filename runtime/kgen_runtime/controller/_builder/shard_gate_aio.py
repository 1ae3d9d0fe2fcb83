"""The reconcile gate of a ``sharded()`` controller: a reconcile runs only while the member
fences it (see :mod:`.shard_gate_core` for the rules and why refused requests are dropped).
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
            try:
                obj = await self.cache.get(self.kind, request.namespace, request.name)
            except NotFoundError:
                return None
        digest = self.digest(request, obj)
        if digest is None or not self.member.begin(digest):
            return None
        try:
            return await self.reconciler.reconcile(request)
        finally:
            self.member.end(digest)
