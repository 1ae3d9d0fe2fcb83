"""Event handlers that turn a watched kind's events into reconcile :class:`Request`\\ s
(controller-runtime's ``handler`` package), and the sources that feed them: an informer's
notifications, or :class:`GenericEventSource` for events from outside the cluster.

* :class:`EnqueueRequestForObject` — the object's own request (what ``for_`` uses);
* :class:`EnqueueRequestForOwner` — the requests of the object's owners of one kind, only
  its controller by default (what ``owns`` uses);
* :class:`EnqueueRequestsFromMapFunc` — whatever a function maps the object to (what
  ``watches(kind, map_fn)`` uses).

An update asks for the requests of both the old and the new object, each once (an owner
reference or a mapped field may have changed). Handlers run on the informer's listener
thread and only compute requests; ``add`` must not block (a controller's queue never does).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol

from kgen_runtime.cache import DeletedFinalStateUnknown
from kgen_runtime.controller._controllerutil.ownerref import controller_ref_no_copy
from kgen_runtime.controller._handler.predicates import (
    CreateEvent,
    DeleteEvent,
    GenericEvent,
    Predicate,
    UpdateEvent,
)
from kgen_runtime.controller._reconciler import Request
from kgen_runtime.groupversion import GroupVersion, GroupVersionKind
from kgen_runtime.meta import OwnerReference
from kgen_runtime.meta._lazy import namespace_and_name

__all__ = [
    "EnqueueRequestForObject",
    "EnqueueRequestForOwner",
    "EnqueueRequestsFromMapFunc",
    "EventHandler",
    "GenericEventSource",
    "MapFunc",
    "RequestAdder",
]

RequestAdder = Callable[[Request], None]
"""Queues a request (the controller's ``enqueue``)."""

MapFunc = Callable[[Any], Iterable[Request]]
"""Maps a watched object to the requests it should trigger."""


class EventHandler(Protocol):
    """Turns events into requests (``handler.EventHandler``)."""

    def create(self, event: CreateEvent, add: RequestAdder) -> None: ...

    def update(self, event: UpdateEvent, add: RequestAdder) -> None: ...

    def delete(self, event: DeleteEvent, add: RequestAdder) -> None: ...

    def generic(self, event: GenericEvent, add: RequestAdder) -> None: ...


class _PerObject:
    """An :class:`EventHandler` from ``_requests(obj)``; updates ask for old and new."""

    def _requests(self, obj: Any) -> Iterable[Request]:
        raise NotImplementedError

    def create(self, event: CreateEvent, add: RequestAdder) -> None:
        _add_all(self._requests(event.object), add)

    def update(self, event: UpdateEvent, add: RequestAdder) -> None:
        requests: dict[Request, None] = {}
        for obj in (event.object_old, event.object_new):
            if obj is not None:
                requests.update(dict.fromkeys(self._requests(obj)))
        _add_all(requests, add)

    def delete(self, event: DeleteEvent, add: RequestAdder) -> None:
        _add_all(self._requests(event.object), add)

    def generic(self, event: GenericEvent, add: RequestAdder) -> None:
        _add_all(self._requests(event.object), add)


def _add_all(requests: Iterable[Request], add: RequestAdder) -> None:
    for request in requests:
        add(request)


class EnqueueRequestForObject(_PerObject):
    """The request of the object itself (``handler.EnqueueRequestForObject``); an update
    asks for the new object only (old and new have the same name)."""

    def update(self, event: UpdateEvent, add: RequestAdder) -> None:
        obj = event.object_new if event.object_new is not None else event.object_old
        if obj is not None:
            _add_all(self._requests(obj), add)

    def _requests(self, obj: Any) -> Iterable[Request]:
        namespace, name = namespace_and_name(obj)  # an untouched cached object stays so
        return (Request(namespace or "", name),) if name else ()


class EnqueueRequestForOwner(_PerObject):
    """The requests of the object's owners of kind ``owner`` (group and kind; the version
    is ignored) (``handler.EnqueueRequestForOwner``).

    With ``only_controller`` (the default, ``handler.OnlyControllerOwner()``) only the
    controller reference counts. A namespaced owner is looked for in the object's
    namespace; a cluster-scoped one (``owner_namespaced=False``) has none.
    """

    def __init__(
        self,
        owner: GroupVersionKind,
        *,
        only_controller: bool = True,
        owner_namespaced: bool = True,
    ) -> None:
        self.owner = owner
        self.only_controller = only_controller
        self.owner_namespaced = owner_namespaced

    def _requests(self, obj: Any) -> Iterable[Request]:
        refs: Sequence[OwnerReference]
        if self.only_controller:
            ref = controller_ref_no_copy(obj)
            refs = () if ref is None else (ref,)
        else:
            refs = obj.metadata.owner_references or ()
        namespace = (obj.metadata.namespace or "") if self.owner_namespaced else ""
        return [Request(namespace, ref.name) for ref in refs if ref.name and self._owner(ref)]

    def _owner(self, ref: OwnerReference) -> bool:
        if ref.kind != self.owner.kind:
            return False
        try:
            return GroupVersion.parse(ref.api_version or "").group == self.owner.group
        except ValueError:
            return False


class EnqueueRequestsFromMapFunc(_PerObject):
    """The requests ``map_func(object)`` returns (``handler.EnqueueRequestsFromMapFunc``)."""

    def __init__(self, map_func: MapFunc) -> None:
        self.map_func = map_func

    def _requests(self, obj: Any) -> Iterable[Request]:
        return self.map_func(obj)


class InformerSource:
    """An informer handler: notifications → events → predicates → event handler → ``add``
    (controller-runtime's ``source.Kind`` with its predicates).

    A delete noticed only at a relist arrives as a ``DeleteEvent`` of the tombstone's last
    known object with ``delete_state_unknown``. Resyncs are updates with old and new the
    same object.
    """

    def __init__(
        self, handler: EventHandler, predicates: Sequence[Predicate], add: RequestAdder
    ) -> None:
        self.handler = handler
        self.predicates = tuple(predicates)
        self.add = add

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        event = CreateEvent(obj)
        if all(p.create(event) for p in self.predicates):
            self.handler.create(event, self.add)

    def on_update(self, old: Any, new: Any) -> None:
        event = UpdateEvent(old, new)
        if all(p.update(event) for p in self.predicates):
            self.handler.update(event, self.add)

    def on_delete(self, obj: Any) -> None:
        if isinstance(obj, DeletedFinalStateUnknown):
            event = DeleteEvent(obj.obj, delete_state_unknown=True)
        else:
            event = DeleteEvent(obj)
        if all(p.delete(event) for p in self.predicates):
            self.handler.delete(event, self.add)


class GenericEventSource:
    """Reconcile requests from outside the cluster (controller-runtime's ``source.Channel``).

    Each :meth:`emit` is a :class:`GenericEvent` handed, through each watcher's predicates
    (``generic``), to its event handler, in the caller's thread::

        webhooks = GenericEventSource()
        manager.controller_for(Foo).watches_source(webhooks).complete(reconciler)
        webhooks.emit(foo)              # e.g. from an HTTP handler: reconcile that Foo

    Thread-safe; ``emit`` never blocks (the controllers' queues do not).
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sinks: tuple[tuple[EventHandler, tuple[Predicate, ...], RequestAdder], ...] = ()

    def connect(
        self, handler: EventHandler, predicates: Sequence[Predicate], add: RequestAdder
    ) -> None:
        """Deliver later events to ``handler`` (what a builder does on ``complete``)."""
        with self._lock:
            self._sinks = (*self._sinks, (handler, tuple(predicates), add))

    def emit(self, obj: Any) -> None:
        """Hand a generic event about ``obj`` to every connected controller."""
        event = GenericEvent(obj)
        for handler, predicates, add in self._sinks:
            if all(p.generic(event) for p in predicates):
                handler.generic(event, add)
