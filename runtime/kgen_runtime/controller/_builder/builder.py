"""Wire a controller in one statement (controller-runtime's ``builder`` package)::

    manager.controller_for(Foo) \\
        .owns(Deployment) \\
        .watches(Secret, lambda secret: [Request(secret.metadata.namespace, "foo")]) \\
        .with_event_filter(GenerationChangedPredicate() | LabelChangedPredicate()) \\
        .with_options(max_concurrent_reconciles=4) \\
        .complete(FooReconciler(manager.cluster.client))

``manager.controller_for(Foo)`` is ``Builder(manager).for_(Foo)``: the builder needs the
manager's cache, and starting from the manager makes that dependency the first thing read.

What :meth:`Builder.complete` wires, on the manager's :class:`InformerCache`:

* ``for_(Foo)`` — every Foo event enqueues the Foo's own :class:`Request`;
* ``owns(Deployment)`` — a Deployment event enqueues its controlling owner if that is a Foo
  (``EnqueueRequestForOwner``; every Foo owner with ``match_every_owner``);
* ``watches(Secret, map_fn)`` — a Secret event enqueues whatever ``map_fn(secret)`` returns
  (or pass any :class:`EventHandler`);
* ``watches_source(source)`` — each ``source.emit(obj)`` (a :class:`GenericEventSource`)
  enqueues the object's request (or what a given handler asks for);
* ``with_event_filter(p)`` applies to every watch, ``predicates=`` to one; an event must
  pass them all;
* ``sharded()`` — with ``Manager(sharding=...)``, only the ``for_`` objects of the member's
  hash ranges are cached and reconciled, each reconcile fenced by the member (see
  :mod:`.shard_gate`); the owned kinds only the objects whose controller owner is in those
  ranges; watched kinds stay unsharded;
* a :class:`Controller` of :class:`Request`\\ s named after the kind (``"foo"``; ``named()``
  to choose), retrying failures with backoff for as long as they fail (controller-runtime's
  behaviour), run by the manager while it leads, with ``max_concurrent_reconciles`` workers
  (never two for the same request); its workers start once its handlers saw every cached
  object.

:meth:`Builder.rbac_rules` lists the permissions the controller needs: read (get, list,
watch) every watched kind; update and patch the ``for_`` kind, get, update and patch its
``status`` (if it has that subresource) and update its ``finalizers`` (an owner reference
with ``blockOwnerDeletion`` needs it); create, update, patch and delete owned kinds; create
and patch Events; plus what :meth:`Builder.with_permissions` adds (e.g. a kind the
reconciler reads through the cached client without watching it: its informer needs get,
list and watch). Building asks nothing of the server, so the rules can be computed offline.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from kgen_runtime.controller._builder.builder_core import BuilderBase
from kgen_runtime.controller._builder.shard_gate import ShardGate
from kgen_runtime.controller._controller import Controller
from kgen_runtime.controller._manager.manager import Manager
from kgen_runtime.controller._reconciler import Reconciler, ReconcilerFunc, Request, Result
from kgen_runtime.meta import KubeObject

__all__ = ["Builder"]

T = TypeVar("T", bound=KubeObject)

ReconcileFunc = Callable[[Request], Result | None]


class Builder(BuilderBase[T]):
    """Collects what a controller watches and how it runs; :meth:`complete` builds it.

    Every method but :meth:`complete` and :meth:`rbac_rules` returns the builder. A builder
    completes once; build before the manager starts.

    Raises:
        RuntimeError: ``manager`` has no :class:`Cluster`.
    """

    def __init__(self, manager: Manager) -> None:
        self._manager = manager
        self._cluster = manager.cluster
        super().__init__(self._cluster.kinds)

    def complete(self, reconciler: Reconciler[Request] | ReconcileFunc) -> Controller[Request]:
        """Build the controller, register its handlers and add it to the manager.

        ``reconciler`` is a :class:`Reconciler` of :class:`Request`\\ s or a plain function.

        Raises:
            ValueError: neither ``for_`` nor ``named`` was given, nothing is watched, the
                builder already completed, or the manager has a controller of that name.
        """
        name = self._controller_name()
        if not hasattr(reconciler, "reconcile"):
            reconciler = ReconcilerFunc(reconciler)
        sharding = self._manager.sharding
        gate = self._shard(self._manager.shard_member,
                           None if sharding is None else sharding.field, self._cluster.cache)
        if gate is not None:
            reconciler = ShardGate(reconciler, *gate, self._cluster.cache)
        registrations: list[Any] = []
        controller: Controller[Request] = Controller(
            name,
            reconciler,
            rate_limiter=self._rate_limiter,
            max_retries=None,
            cache_synced=[lambda: all(r.has_synced() for r in registrations)],
            cache_sync_timeout=self._cache_sync_timeout,
        )
        # Added first: a refused name (duplicate) leaves no handler behind.
        try:
            self._manager.add_controller(controller, self._workers,
                                         rbac_rules=self.rbac_rules())
        except ValueError:
            controller.queue.shut_down()  # never run: stop its timer thread
            raise
        registrations += self._connect(self._cluster.cache.add_handler, controller.enqueue)
        return controller


Manager.builder_type = Builder
