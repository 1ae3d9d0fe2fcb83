"""Informer handlers of the hand-wired layer (sample-controller's): they turn notifications
into the ``namespace/name`` keys a :class:`~kgen_runtime.controller.Controller` queues.

* :class:`EnqueueHandler` — an object's own key (controller-runtime's
  ``EnqueueRequestForObject``, sample-controller's ``enqueueFoo``).
* :class:`EnqueueOwnerHandler` — the key of the object's controlling owner of a given kind
  (sample-controller's ``handleObject``, controller-runtime's ``EnqueueRequestForOwner``).
* :func:`deleted_object` — the object behind a delete notification, which may be a
  :class:`~kgen_runtime.cache.DeletedFinalStateUnknown` tombstone (seed 001 §4).

Handlers run on the informer's listener thread (one per handler): they only compute keys and
call ``enqueue``, which must not block (a controller's queue never does). Objects are the
cache's own and are never modified here. Problems (an object without a name, a tombstone
holding the wrong type) are reported through ``handle_error`` and the notification dropped.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any, TypeVar

from kgen_runtime.cache import DeletedFinalStateUnknown, KeyFunc, KeyFuncError
from kgen_runtime.cache import meta_namespace_key_func as _default_key_func
from kgen_runtime.controller._controllerutil.ownerref import controller_ref_no_copy
from kgen_runtime.groupversion import GroupVersion, GroupVersionKind
from kgen_runtime.meta import KubeObject
from kgen_runtime.meta._lazy import resource_version
from kgen_runtime.util.runtime import handle_error

__all__ = ["EnqueueHandler", "EnqueueOwnerHandler", "OwnerResolver", "deleted_object"]

T = TypeVar("T")

_log = logging.getLogger("kgen_runtime.controller.handlers")

#: ``(namespace, name) -> owner or None``: looks an owner up, usually in a lister.
OwnerResolver = Callable[[str, str], KubeObject | None]


def deleted_object(obj: Any, cls: type[T]) -> T | None:
    """The ``cls`` instance a delete handler received, unwrapping a tombstone.

    client-go's delete-handler preamble: ``obj`` is either the deleted object or a
    :class:`DeletedFinalStateUnknown` whose ``obj`` is its last known (possibly stale) state.
    Anything else is reported through ``handle_error`` and gives ``None``.
    """
    if isinstance(obj, cls):
        return obj
    if not isinstance(obj, DeletedFinalStateUnknown):
        handle_error(TypeError(f"couldn't get object from tombstone {obj!r}"))
        return None
    if not isinstance(obj.obj, cls):
        handle_error(TypeError(f"tombstone contained object that is not a {cls.__name__}: {obj!r}"))
        return None
    return obj.obj


class EnqueueHandler:
    """Enqueues the key of every added, updated and deleted object.

    Keys come from ``key_func`` (``"namespace/name"`` by default, which keys tombstones by
    their own key). Resyncs (updates with the same object) are enqueued too: that is what
    makes a controller level-triggered.
    """

    __slots__ = ("enqueue", "key_func")

    def __init__(
        self, enqueue: Callable[[str], None], *, key_func: KeyFunc = _default_key_func
    ) -> None:
        self.enqueue = enqueue
        self.key_func = key_func

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        self._enqueue(obj)

    def on_update(self, old: Any, new: Any) -> None:
        self._enqueue(new)

    def on_delete(self, obj: Any) -> None:
        self._enqueue(obj)

    def _enqueue(self, obj: Any) -> None:
        try:
            key = self.key_func(obj)
        except KeyFuncError as err:
            handle_error(err, "cannot enqueue object")
            return
        self.enqueue(key)


class EnqueueOwnerHandler:
    """Enqueues the key of each object's controlling owner of kind ``owner`` (group + kind).

    For a child with a controller reference to a ``owner``-kind object named ``n``, enqueues
    ``"<child namespace>/n"`` (just ``"n"`` when ``owner_namespaced`` is false). Children
    without such a reference are ignored. Deletions (tombstones included) enqueue the owner
    too, so it can recreate the child. An update enqueues the owners of both the old and the
    new state (the controller reference may have changed); an update that did not change the
    ``resourceVersion`` (a periodic resync) is skipped, as in sample-controller.

    With ``resolve`` the owner is looked up first (sample-controller's lister check) and
    enqueued only if it exists with the referenced uid, so children of a deleted or
    recreated owner are ignored.
    """

    __slots__ = ("enqueue", "group", "kind", "owner_namespaced", "resolve")

    def __init__(
        self,
        enqueue: Callable[[str], None],
        owner: GroupVersionKind,
        *,
        resolve: OwnerResolver | None = None,
        owner_namespaced: bool = True,
    ) -> None:
        self.enqueue = enqueue
        self.group = owner.group
        self.kind = owner.kind
        self.resolve = resolve
        self.owner_namespaced = owner_namespaced

    def on_add(self, obj: Any, is_in_initial_list: bool) -> None:
        self.handle_object(obj)

    def on_update(self, old: Any, new: Any) -> None:
        version = _resource_version(new)
        if version is not None and version == _resource_version(old):
            return
        self.handle_object(old)
        self.handle_object(new)

    def on_delete(self, obj: Any) -> None:
        child = deleted_object(obj, KubeObject)
        if child is not None:
            self.handle_object(child)

    def handle_object(self, obj: KubeObject) -> None:
        """Enqueue ``obj``'s owner if it is controlled by an ``owner``-kind object."""
        ref = controller_ref_no_copy(obj)
        if ref is None or ref.kind != self.kind or not ref.name:
            return
        try:
            group = GroupVersion.parse(ref.api_version or "").group
        except ValueError:
            return
        if group != self.group:
            return
        namespace = (obj.metadata.namespace or "") if self.owner_namespaced else ""
        if self.resolve is not None:
            owner = self.resolve(namespace, ref.name)
            if owner is None or owner.metadata.uid != ref.uid:
                _log.debug("ignoring orphaned object %s of %s %s/%s",
                           obj.metadata.name, self.kind, namespace, ref.name)
                return
        self.enqueue(f"{namespace}/{ref.name}" if namespace else ref.name)


def _resource_version(obj: Any) -> str | None:
    try:
        return resource_version(obj)  # an untouched cached object stays so
    except AttributeError:
        return None
