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
  :mod:`.shard_gate`); owned and watched kinds stay unsharded;
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

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Self, TypeVar, cast

from kgen_runtime.api.rbac.v1.models import PolicyRule
from kgen_runtime.controller._builder.shard_gate import ShardGate
from kgen_runtime.controller._builder.shard_gate_core import Fencing
from kgen_runtime.controller._cluster.kinds import Kinds
from kgen_runtime.controller._controller import Controller
from kgen_runtime.controller._handler.predicates import Predicate
from kgen_runtime.controller._handler.request_handlers import (
    EnqueueRequestForObject,
    EnqueueRequestForOwner,
    EnqueueRequestsFromMapFunc,
    EventHandler,
    GenericEventSource,
    InformerSource,
    MapFunc,
    RequestAdder,
)
from kgen_runtime.controller._manager.manager import Manager
from kgen_runtime.controller._rbac import (
    EVENT_VERBS,
    OWNED_VERBS,
    PRIMARY_VERBS,
    READ_VERBS,
    PermissionSet,
)
from kgen_runtime.controller._reconciler import Reconciler, ReconcilerFunc, Request, Result
from kgen_runtime.meta import KubeObject
from kgen_runtime.sharding import ShardField
from kgen_runtime.workqueue import RateLimiter

__all__ = ["Builder", "BuilderBase"]

T = TypeVar("T", bound=KubeObject)

ReconcileFunc = Callable[[Request], Result | None]


@dataclass(frozen=True, slots=True)
class _Watch:
    kind: type[KubeObject]
    handler: EventHandler
    predicates: tuple[Predicate, ...]


@dataclass(frozen=True, slots=True)
class _SourceWatch:
    source: GenericEventSource
    handler: EventHandler
    predicates: tuple[Predicate, ...]


def _event_handler(handler: MapFunc | EventHandler) -> EventHandler:
    if hasattr(handler, "create"):
        return cast(EventHandler, handler)
    return EnqueueRequestsFromMapFunc(handler)


class BuilderBase(Generic[T]):
    """What :class:`Builder` and :class:`~kgen_runtime.controller.AsyncBuilder` share: what
    a controller watches, how it runs, its RBAC rules; everything but building it."""

    def __init__(self, kinds: Kinds) -> None:
        self._kinds = kinds
        self._for: type[T] | None = None
        self._name = ""
        self._watches: list[_Watch] = []
        self._owned: list[type[KubeObject]] = []
        self._sources: list[_SourceWatch] = []
        self._filters: list[Predicate] = []
        self._workers = 1
        self._rate_limiter: RateLimiter[Request] | None = None
        self._cache_sync_timeout: float | None = None
        self._extra = PermissionSet()
        self._sharded = False
        self._completed = False

    def for_(self, kind: type[T], *, predicates: Sequence[Predicate] = ()) -> Self:
        """Reconcile objects of ``kind``: each one's events enqueue its own request."""
        if self._for is not None:
            raise ValueError(f"for_ was already called with {self._for.__qualname__}")
        self._kinds.resource_for(kind)  # fail here for a kind the scheme lacks
        self._for = kind
        self._watches.insert(0, _Watch(kind, EnqueueRequestForObject(), tuple(predicates)))
        return self

    def owns(
        self,
        kind: type[KubeObject],
        *,
        predicates: Sequence[Predicate] = (),
        match_every_owner: bool = False,
    ) -> Self:
        """Watch ``kind`` and enqueue the ``for_`` object controlling each one (with
        ``match_every_owner``: every ``for_``-kind owner)."""
        owner = self._require_for("owns")
        self._kinds.resource_for(kind)
        resource = self._kinds.resource_for(owner)
        handler = EnqueueRequestForOwner(resource.gvk, only_controller=not match_every_owner,
                                         owner_namespaced=resource.namespaced)
        self._watches.append(_Watch(kind, handler, tuple(predicates)))
        self._owned.append(kind)
        return self

    def watches(
        self,
        kind: type[KubeObject],
        handler: MapFunc | EventHandler,
        *,
        predicates: Sequence[Predicate] = (),
    ) -> Self:
        """Watch ``kind``; ``handler`` is a map function (object → requests) or an
        :class:`EventHandler`."""
        self._kinds.resource_for(kind)
        self._watches.append(_Watch(kind, _event_handler(handler), tuple(predicates)))
        return self

    def watches_source(
        self,
        source: GenericEventSource,
        handler: MapFunc | EventHandler | None = None,
        *,
        predicates: Sequence[Predicate] = (),
    ) -> Self:
        """Reconcile on ``source``'s generic events: the object's own request by default,
        or what ``handler`` (a map function or an :class:`EventHandler`) asks for
        (``WatchesRawSource``)."""
        chosen = EnqueueRequestForObject() if handler is None else _event_handler(handler)
        self._sources.append(_SourceWatch(source, chosen, tuple(predicates)))
        return self

    def with_event_filter(self, predicate: Predicate) -> Self:
        """Filter the events of every watch with ``predicate``."""
        self._filters.append(predicate)
        return self

    def with_options(
        self,
        *,
        max_concurrent_reconciles: int = 1,
        rate_limiter: RateLimiter[Request] | None = None,
        cache_sync_timeout: float | None = None,
    ) -> Self:
        """How the controller runs (``controller.Options``): workers, the backoff of failing
        requests (client-go's default controller limiter if ``None``), and the bound on
        waiting for its handlers to see the cache (none if ``None``; the manager has
        already waited for the informers to sync when the controller starts)."""
        if max_concurrent_reconciles < 1:
            raise ValueError(
                f"max_concurrent_reconciles must be at least 1, got {max_concurrent_reconciles}"
            )
        self._workers = max_concurrent_reconciles
        self._rate_limiter = rate_limiter
        self._cache_sync_timeout = cache_sync_timeout
        return self

    def sharded(self) -> Self:
        """Reconcile only the ``for_`` objects of the manager's shard ring member: the
        kind's informers list and watch the member's hash ranges, and each reconcile is
        fenced by the member (see :mod:`.shard_gate`). Owned and watched kinds are not
        sharded: every member caches all of them. Needs ``Manager(sharding=...)``."""
        self._require_for("sharded")
        self._sharded = True
        return self

    def _shard(self, member: Fencing | None, field: ShardField | None, cache: Any,
               ) -> tuple[Fencing, type[T], ShardField] | None:
        """For a ``sharded()`` builder: mark the ``for_`` kind sharded in ``cache`` and
        return what its gate needs.

        Raises:
            ValueError: the manager does not shard, or the kind was cached unsharded.
        """
        if not self._sharded:
            return None
        kind = self._require_for("sharded")
        if member is None or field is None:
            raise ValueError(f"sharded() controller of {kind.__qualname__} needs a manager "
                             "with sharding: Manager(sharding=ShardingConfig(...), cluster=...)")
        cache.shard(kind)
        return member, kind, field

    def named(self, name: str) -> Self:
        """Name the controller (its queue, metrics and logs); by default the ``for_`` kind's
        name in lower case."""
        self._name = name
        return self

    def with_permissions(self, kind: type[KubeObject], *verbs: str) -> Self:
        """Declare that the reconciler also uses ``verbs`` on ``kind`` (e.g. reads a kind
        it does not watch: ``"get", "list", "watch"``), for :meth:`rbac_rules`."""
        if not verbs:
            raise ValueError("with_permissions needs at least one verb")
        self._extra.add_kind(self._kinds.resource_for(kind), verbs)
        return self

    def rbac_rules(self) -> list[PolicyRule]:
        """The permissions the controller needs (see the module docstring), sorted."""
        kinds = self._kinds
        permissions = PermissionSet()
        permissions.update(self._extra.rules())
        for watch in self._watches:
            permissions.add_kind(kinds.resource_for(watch.kind), READ_VERBS)
        for owned in self._owned:
            permissions.add_kind(kinds.resource_for(owned), OWNED_VERBS)
        if self._for is not None:
            primary = kinds.resource_for(self._for)
            permissions.add_kind(primary, PRIMARY_VERBS)
            if primary.status_subresource:
                permissions.add(primary.group, f"{primary.plural}/status",
                                ("get", "update", "patch"))
            permissions.add(primary.group, f"{primary.plural}/finalizers", ("update",))
        permissions.add("", "events", EVENT_VERBS)
        return permissions.rules()

    def _controller_name(self) -> str:
        """The name to build under; checks the builder can complete.

        Raises:
            ValueError: neither ``for_`` nor ``named`` was given, nothing is watched, or the
                builder already completed.
        """
        if self._completed:
            raise ValueError("this builder already completed")
        default = self._kinds.kind_of(self._for).kind.lower() if self._for else ""
        name = self._name or default
        if not name:
            raise ValueError("a controller without for_ needs a name: call named()")
        if not self._watches and not self._sources:
            raise ValueError(f"controller {name!r} watches nothing: call for_, owns or watches")
        return name

    def _connect(
        self,
        add_handler: Callable[[type[KubeObject], InformerSource], Sequence[Any]],
        enqueue: RequestAdder,
    ) -> list[Any]:
        """Register every watch's handler through ``add_handler`` and connect the sources,
        all feeding ``enqueue``; the informer registrations (their ``has_synced``)."""
        registrations: list[Any] = []
        for watch in self._watches:
            source = InformerSource(watch.handler, (*self._filters, *watch.predicates), enqueue)
            registrations += add_handler(watch.kind, source)
        for raw in self._sources:
            raw.source.connect(raw.handler, (*self._filters, *raw.predicates), enqueue)
        self._completed = True
        return registrations

    def _require_for(self, method: str) -> type[T]:
        if self._for is None:
            raise ValueError(f"call for_ before {method}: it names the owner kind")
        return self._for


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
