"""Read-only views of an informer's cache: client-go's generic ``listers``.

Generated listers subclass these and name their resource; nothing else::

    class FooLister(NamespacedLister[Foo]):
        \"\"\"Lists Foos from the cache. Objects are shared: deepcopy() before changing.\"\"\"
        resource = FOO_RESOURCE

Contract:

* Reads come from the local cache: fast, never a request, eventually consistent.
* **Returned objects are the cache's own**, shared with every other reader and handler. They
  are read-only: call ``deepcopy()`` before changing one. Returned lists are fresh lists.
* ``list(selector)`` takes a label selector (a :class:`~kgen_runtime.labels.Selector`, a
  selector string, or ``None`` for everything); order is unspecified.
* ``get(name)`` raises :class:`~kgen_runtime.rest.errors.NotFoundError` (the error the API
  server would give) when the object is not in the cache.
"""

from __future__ import annotations

import builtins
from collections.abc import Mapping
from typing import Any, ClassVar, Generic, TypeVar

from kgen_runtime import labels
from kgen_runtime.cache._store import NAMESPACE_INDEX, Indexer
from kgen_runtime.groupversion import GroupVersionResource
from kgen_runtime.resource import Resource
from kgen_runtime.rest.errors import NotFoundError

__all__ = [
    "ClusterLister",
    "GenericLister",
    "NamespaceLister",
    "NamespacedLister",
    "SelectorLike",
]

T = TypeVar("T")

SelectorLike = labels.Selector | str | None
"""A label selector: parsed, as text, or ``None`` (everything)."""


def _filter(objects: list[T], selector: SelectorLike) -> list[T]:
    sel = labels.as_selector(selector)
    if sel.empty():
        return objects
    return [o for o in objects if sel.matches(_labels(o))]


def _labels(obj: Any) -> Mapping[str, str] | None:
    labels_: Mapping[str, str] | None = obj.metadata.labels
    return labels_


class _ListerBase(Generic[T]):
    """What every lister shares: the indexer, the resource, listing and not-found errors."""

    #: The resource listed; generated subclasses set it.
    resource: ClassVar[Resource[Any] | None] = None

    def __init__(self, indexer: Indexer[T], gvr: GroupVersionResource | None = None) -> None:
        self._indexer = indexer
        if gvr is None and self.resource is not None:
            gvr = self.resource.gvr
        self._gvr = gvr

    def list(self, selector: SelectorLike = None) -> builtins.list[T]:
        """Every cached object matching ``selector`` (all namespaces)."""
        return _filter(self._indexer.list(), selector)

    def _get(self, key: str, name: str) -> T:
        obj = self._indexer.get_by_key(key)
        if obj is None:
            raise self._not_found(name)
        return obj

    def _list_namespace(self, namespace: str, selector: SelectorLike) -> builtins.list[T]:
        return _filter(self._indexer.by_index(NAMESPACE_INDEX, namespace), selector)

    def _not_found(self, name: str) -> NotFoundError:
        gvr = self._gvr
        qualified = (f"{gvr.resource}.{gvr.group}" if gvr.group else gvr.resource) if gvr else ""
        details: dict[str, Any] = {"name": name}
        if gvr is not None:
            details.update(group=gvr.group, kind=gvr.resource)
        return NotFoundError(
            {
                "kind": "Status",
                "apiVersion": "v1",
                "status": "Failure",
                "code": 404,
                "reason": "NotFound",
                "message": f'{qualified} "{name}" not found'.lstrip(),
                "details": details,
            }
        )


class NamespaceLister(_ListerBase[T]):
    """A namespaced resource's cached objects in one namespace."""

    def __init__(
        self, indexer: Indexer[T], namespace: str, gvr: GroupVersionResource | None = None
    ) -> None:
        super().__init__(indexer, gvr)
        self._namespace = namespace

    @property
    def namespace(self) -> str:
        return self._namespace

    def list(self, selector: SelectorLike = None) -> builtins.list[T]:
        """Objects of this namespace matching ``selector``."""
        return self._list_namespace(self._namespace, selector)

    def get(self, name: str) -> T:
        """The object called ``name`` in this namespace; :class:`NotFoundError` if absent."""
        return self._get(f"{self._namespace}/{name}", name)


class NamespacedLister(_ListerBase[T]):
    """A namespaced resource's cached objects: ``list`` across namespaces, or per namespace."""

    def namespaced(self, namespace: str) -> NamespaceLister[T]:
        """The objects of one namespace (client-go's ``lister.Foos(namespace)``)."""
        return NamespaceLister(self._indexer, namespace, self._gvr)


class ClusterLister(_ListerBase[T]):
    """A cluster-scoped resource's cached objects."""

    def get(self, name: str) -> T:
        """The object called ``name``; :class:`NotFoundError` if absent."""
        return self._get(name, name)


class GenericLister(ClusterLister[T], NamespacedLister[T]):
    """A lister for any resource (``for_resource``): ``get`` for cluster-scoped objects,
    ``namespaced(ns).get`` for namespaced ones."""
