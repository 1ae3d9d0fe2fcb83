"""The asyncio twin of :mod:`.builder`: wire an async controller in one
statement::

    async def reconcile(request: Request) -> Result | None:
        foo = await manager.cluster.client.get(Foo, request.namespace, request.name)
        ...

    manager.controller_for(Foo) \\
        .owns(Deployment) \\
        .watches(Secret, lambda secret: [Request(secret.metadata.namespace, "foo")]) \\
        .with_event_filter(GenerationChangedPredicate()) \\
        .with_options(max_concurrent_reconciles=4) \\
        .complete(reconcile)              # an AsyncReconciler, or an ``async def``

Everything but :meth:`AsyncBuilder.complete` is :class:`~kgen_runtime.controller.Builder`'s
(the same :class:`~kgen_runtime.controller._builder.builder_core.BuilderBase`: handlers, predicates,
options, RBAC rules). ``complete`` builds an :class:`AsyncController` of :class:`Request`\\ s
whose handlers are registered on the manager's :class:`AsyncInformerCache`; they run on
the manager's loop. At shutdown it drains for at most the manager's
``graceful_shutdown_timeout``, then cancels the reconciles still running. A
:class:`GenericEventSource` feeding an async controller must be emitted from that loop (its
queue belongs to the loop).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from kgen_runtime.controller._builder.builder_core import BuilderBase
from kgen_runtime.controller._builder.shard_gate_aio import AsyncShardGate
from kgen_runtime.controller._controller_aio import AsyncController
from kgen_runtime.controller._manager.manager_aio import AsyncManager
from kgen_runtime.controller._reconciler import Request, Result
from kgen_runtime.controller._reconciler_aio import AsyncReconciler, AsyncReconcilerFunc
from kgen_runtime.meta import KubeObject

__all__ = ["AsyncBuilder"]

T = TypeVar("T", bound=KubeObject)

AsyncReconcileFunc = Callable[[Request], Awaitable[Result | None]]


class AsyncBuilder(BuilderBase[T]):
    """Collects what an async controller watches and how it runs; :meth:`complete` builds
    it (see :class:`~kgen_runtime.controller.Builder` for every other method).

    Raises:
        RuntimeError: ``manager`` has no :class:`AsyncCluster`.
    """

    def __init__(self, manager: AsyncManager) -> None:
        self._manager = manager
        self._cluster = manager.cluster
        super().__init__(self._cluster.kinds)

    def complete(
        self, reconciler: AsyncReconciler[Request] | AsyncReconcileFunc
    ) -> AsyncController[Request]:
        """Build the async controller, register its handlers and add it to the manager.

        Raises:
            ValueError: neither ``for_`` nor ``named`` was given, nothing is watched, the
                builder already completed, or the manager has a controller of that name.
        """
        name = self._controller_name()
        if not hasattr(reconciler, "reconcile"):
            reconciler = AsyncReconcilerFunc(reconciler)
        sharding = self._manager.sharding
        gate = self._shard(self._manager.shard_member,
                           None if sharding is None else sharding.field, self._cluster.cache)
        if gate is not None:
            reconciler = AsyncShardGate(reconciler, *gate, self._cluster.cache)
        registrations: list[Any] = []
        controller: AsyncController[Request] = AsyncController(
            name,
            reconciler,
            rate_limiter=self._rate_limiter,
            max_retries=None,
            cache_synced=[lambda: all(r.has_synced() for r in registrations)],
            cache_sync_timeout=self._cache_sync_timeout,
            # Drain within the manager's bound; then in-flight reconciles are cancelled
            # (their keys marked done) rather than left running past the shutdown.
            shutdown_timeout=self._manager.graceful_shutdown_timeout,
        )
        # Added first: a refused name (duplicate) leaves no handler behind.
        self._manager.add_controller(controller, self._workers, rbac_rules=self.rbac_rules())
        registrations += self._connect(self._cluster.cache.add_handler, controller.enqueue)
        return controller


AsyncManager.builder_type = AsyncBuilder
