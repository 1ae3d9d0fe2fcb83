"""What the blocking and the asyncio builder share (everything but ``complete``): what a
controller watches and with which predicates, how it runs, whether it is sharded, and the RBAC
rules it needs. The contract is :mod:`.builder`'s docstring.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, Self, TypeVar, cast

from kgen_runtime.api.rbac.v1.models import PolicyRule
from kgen_runtime.controller._builder.shard_gate_core import Fencing
from kgen_runtime.controller._cluster.kinds import Kinds
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
from kgen_runtime.controller._rbac import (
    EVENT_VERBS,
    OWNED_VERBS,
    PRIMARY_VERBS,
    READ_VERBS,
    PermissionSet,
)
from kgen_runtime.controller._reconciler import Request
from kgen_runtime.meta import KubeObject
from kgen_runtime.sharding import ShardField
from kgen_runtime.workqueue import RateLimiter

__all__ = ["BuilderBase"]

T = TypeVar("T", bound=KubeObject)


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
    """What :class:`~kgen_runtime.controller.Builder` and its async twin share: what
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
        fenced by the member (see :mod:`.shard_gate`). The ``owns()`` kinds follow their
        owners: their informers keep only the objects whose controller owner is in the
        ranges (see :mod:`kgen_runtime.controller._cluster.shards`), so the manager's cache
        of them, for every reader, holds only those. ``watches()`` kinds are not sharded:
        every member caches all of them. Needs ``Manager(sharding=...)``."""
        self._require_for("sharded")
        self._sharded = True
        return self

    def _shard(self, member: Fencing | None, field: ShardField | None, cache: Any,
               ) -> tuple[Fencing, type[T], ShardField] | None:
        """For a ``sharded()`` builder: mark the ``for_`` kind sharded in ``cache``, and
        the owned kinds sharded by their owner, and return what its gate needs.

        Raises:
            ValueError: the manager does not shard, or a kind was cached unsharded (or is
                sharded otherwise).
        """
        if not self._sharded:
            return None
        kind = self._require_for("sharded")
        if member is None or field is None:
            raise ValueError(f"sharded() controller of {kind.__qualname__} needs a manager "
                             "with sharding: Manager(sharding=ShardingConfig(...), cluster=...)")
        cache.shard(kind)
        for owned in self._owned:
            cache.shard_owned(owned)
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
