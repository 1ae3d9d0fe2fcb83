"""``ObjectTracker``: direct access to a fake's store (client-go ``testing.ObjectTracker``).

The tracker is the same store the test API server uses, so objects it holds behave exactly as
on the server (resourceVersions, conflicts, finalizers, watches). Tests use it to seed
fixtures and to inspect state without going through a client (no actions are recorded).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from kgen_runtime.groupversion import GroupVersionResource
from kgen_runtime.meta import KubeModel, copy_json
from kgen_runtime.testing._core import APIServerCore
from kgen_runtime.testing._status import StatusError
from kgen_runtime.testing.apiserver.admission._conversion import VersionView
from kgen_runtime.testing.apiserver.storage._resources import ServedResource, WriteOptions
from kgen_runtime.testing.apiserver.storage._selectors import WatchFilter
from kgen_runtime.testing.apiserver.storage._strategy import is_namespace

__all__ = ["ObjectTracker", "wire_copy"]

Obj = dict[str, Any]


class ObjectTracker:
    """Reads and writes of stored objects, by resource, without admission webhooks (as
    client-go's tracker) but converted between a CRD's versions. Thread-safe.

    Objects may be given as typed models (dumped with ``model_dump(mode="json")``) or as
    wire-format dicts; results are fresh dicts the caller may mutate. Failures raise
    :class:`StatusError` with the server's code and reason.
    """

    def __init__(self, core: APIServerCore) -> None:
        self._core = core

    def add(self, obj: KubeModel | Obj) -> Obj:
        """Seed an object as it is (status kept, resourceVersion assigned); 409 if present."""
        body = wire_copy(obj)
        info = self._core.registry.for_kind(str(body.get("apiVersion", "")),
                                            str(body.get("kind", "")))
        if info is None:
            raise StatusError.bad_request(
                f"no resource serves {body.get('apiVersion')}, Kind={body.get('kind')}")
        namespace = str((body.get("metadata") or {}).get("namespace") or "")
        if info.namespaced and not namespace:
            namespace = "default"
        view = self._view(info)
        return _copy(view.to_request(self._core.store.create(
            view.storage, namespace, view.to_storage(body), seed=True)))

    def get(self, resource: GroupVersionResource, namespace: str, name: str) -> Obj:
        view = self._view(self._info(resource))
        return _copy(view.to_request(self._core.store.get(view.storage, namespace, name)))

    def list(self, resource: GroupVersionResource, namespace: str = "") -> list[Obj]:
        """Every object of ``resource`` (in ``namespace``, or all), ordered by key."""
        view = self._view(self._info(resource))
        result = self._core.store.list_objects(view.storage, namespace,
                                               WatchFilter(namespace))
        return [_copy(view.to_request(item)) for item in result.items]

    def create(
        self, resource: GroupVersionResource, obj: KubeModel | Obj, namespace: str = ""
    ) -> Obj:
        view = self._view(self._info(resource))
        return _copy(view.to_request(self._core.store.create(
            view.storage, namespace, view.to_storage(wire_copy(obj)))))

    def update(
        self, resource: GroupVersionResource, obj: KubeModel | Obj, namespace: str = ""
    ) -> Obj:
        body = wire_copy(obj)
        name = str((body.get("metadata") or {}).get("name", ""))
        view = self._view(self._info(resource))
        return _copy(view.to_request(self._core.store.update(
            view.storage, namespace, name, view.to_storage(body))))

    def delete(self, resource: GroupVersionResource, namespace: str, name: str) -> Obj:
        """Delete as the server does (a Namespace through its lifecycle: see ``namespaces``)."""
        info = self._info(resource)
        if is_namespace(info):
            return _copy(self._core.namespaces.delete(name, WriteOptions()))
        deleted = self._core.store.delete(info, namespace, name)
        self._core.namespaces.finish(namespace)
        return _copy(deleted)

    def _view(self, info: ServedResource) -> VersionView:
        """Objects of a converted CRD version are stored in the storage version."""
        return self._core.conversions.view(info) or VersionView.identity(info)

    def _info(self, resource: GroupVersionResource) -> ServedResource:
        info = self._core.registry.lookup(resource.group, resource.version, resource.resource)
        if info is None:
            raise StatusError.no_route()
        return info


def _copy(obj: Obj) -> Obj:
    copied: Obj = copy_json(obj)
    return copied


def wire_copy(obj: KubeModel | Mapping[str, Any]) -> Obj:
    """A fresh wire-format dict of a typed model (dumped) or of a dict (deep-copied)."""
    if isinstance(obj, KubeModel):
        return obj.model_dump(mode="json")
    return _copy(dict(obj))
