"""Finalizers: keep an object until the controller has cleaned up after it (controller-runtime's
``controllerutil`` finalizer helpers and ``pkg/finalizer``).

:func:`add_finalizer`, :func:`remove_finalizer` and :func:`contains_finalizer` work on the
object in place (your own copy, never a cached one). :func:`handle_finalizer` is the whole
pattern at the top of a reconcile::

    foo = handle_finalizer(client, client.get(Foo, ns, name), FINALIZER, delete_external)
    if foo is None:
        return None          # being deleted: cleaned up (or not ours); nothing more to do
    ...                      # foo carries the finalizer; reconcile as usual
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from kgen_runtime.controller._cluster.client import Client
from kgen_runtime.meta import KubeObject

__all__ = ["add_finalizer", "contains_finalizer", "handle_finalizer", "remove_finalizer"]

T = TypeVar("T", bound=KubeObject)


def contains_finalizer(obj: KubeObject, finalizer: str) -> bool:
    """Whether ``obj`` carries ``finalizer``."""
    return finalizer in (obj.metadata.finalizers or ())


def add_finalizer(obj: KubeObject, finalizer: str) -> bool:
    """Append ``finalizer`` to ``obj`` unless it is there; return whether ``obj`` changed."""
    if contains_finalizer(obj, finalizer):
        return False
    obj.metadata.finalizers = [*(obj.metadata.finalizers or ()), finalizer]
    return True


def remove_finalizer(obj: KubeObject, finalizer: str) -> bool:
    """Remove every occurrence of ``finalizer`` from ``obj``; return whether it changed."""
    finalizers = obj.metadata.finalizers or []
    kept = [f for f in finalizers if f != finalizer]
    if len(kept) == len(finalizers):
        return False
    obj.metadata.finalizers = kept
    return True


def handle_finalizer(
    client: Client, obj: T, finalizer: str, cleanup: Callable[[T], None]
) -> T | None:
    """Keep ``finalizer`` on a live ``obj``; on deletion, run ``cleanup`` and release it.

    * ``obj`` is not being deleted: returns it carrying ``finalizer`` — the server's copy
      after an update adding it, or ``obj`` itself if it was there.
    * ``obj`` is being deleted (``deletionTimestamp`` set) and carries ``finalizer``:
      ``cleanup(obj)`` runs, then the finalizer is removed with an update; returns ``None``.
      If ``cleanup`` raises, the finalizer stays (the reconcile fails and is retried).
    * ``obj`` is being deleted without ``finalizer``: returns ``None`` at once.

    ``obj`` itself is never changed (updates start from a copy). Updates carry its
    ``resourceVersion``: a stale ``obj`` raises ``ConflictError``.
    """
    deleting = obj.metadata.deletion_timestamp is not None
    if not deleting:
        if contains_finalizer(obj, finalizer):
            return obj
        copy = obj.deepcopy()
        add_finalizer(copy, finalizer)
        return client.update(copy)
    if contains_finalizer(obj, finalizer):
        cleanup(obj)
        copy = obj.deepcopy()
        remove_finalizer(copy, finalizer)
        client.update(copy)
    return None
