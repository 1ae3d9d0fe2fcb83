"""Namespace lifecycle: NamespaceLifecycle admission and (optionally) the namespace controller.

As on a cluster, a Namespace is created ``Active`` with the ``kubernetes`` finalizer in
``spec.finalizers``; deleting it marks it ``Terminating`` (``deletionTimestamp`` set) and it
stays readable, as does everything in it. Creating anything in a terminating namespace is
refused (403 Forbidden); with ``strict`` admission, creating in a namespace that does not
exist is too (404).

What happens next depends on ``controller``:

* on (a cluster with kube-controller-manager): the server plays the namespace controller at
  once, in the DELETE request — it deletes every object in the namespace (objects with
  finalizers are marked and stay until their finalizers are removed), and when the namespace
  is empty it removes the ``kubernetes`` finalizer, so the namespace goes (unless it has
  ``metadata.finalizers`` of its own);
* off (a bare kube-apiserver, as envtest runs): the namespace stays Terminating for good.
"""

from __future__ import annotations

import contextlib
from typing import Any

from kgen_runtime.testing._status import Cause, StatusError
from kgen_runtime.testing.apiserver.storage._registry import Registry
from kgen_runtime.testing.apiserver.storage._resources import ServedResource, WriteOptions
from kgen_runtime.testing.apiserver.storage._selectors import WatchFilter
from kgen_runtime.testing.apiserver.storage._store import ObjectStore

__all__ = ["NamespaceLifecycle"]

Obj = dict[str, Any]
_FINALIZER = "kubernetes"


class NamespaceLifecycle:
    """The namespace rules of one server (see the module docstring). Thread-safe."""

    def __init__(self, store: ObjectStore, registry: Registry, *, strict: bool,
                 controller: bool) -> None:
        self._store = store
        self._registry = registry
        self._strict = strict
        self._controller = controller

    def admit_create(self, info: ServedResource, namespace: str, obj: Obj) -> None:
        """NamespaceLifecycle admission of a creation in ``namespace``."""
        if not info.namespaced:
            return
        try:
            found = self._store.get(self._namespaces(), "", namespace)
        except StatusError:
            if self._strict:
                raise StatusError.not_found("", "namespaces", namespace) from None
            return
        if found["metadata"].get("deletionTimestamp"):
            name = str((obj.get("metadata") or {}).get("name", ""))
            # plugin/pkg/admission/namespace/lifecycle/admission.go: a Forbidden error with
            # the NamespaceTerminating cause (errors.NewForbidden + StatusCause)
            refused = StatusError.forbidden(
                info.group, info.plural, name, f"unable to create new content in namespace "
                f"{namespace} because it is being terminated")
            refused.details = {**(refused.details or {}), "causes": [Cause(
                "NamespaceTerminating", f"namespace {namespace} is being terminated",
                "metadata.namespace").as_json()]}
            raise refused

    def delete(self, name: str, options: WriteOptions) -> Obj:
        """DELETE of a Namespace: mark it Terminating, then (controller on) empty it.

        Deleting a namespace that is already terminating is a 409, as on a cluster.
        """
        namespaces = self._namespaces()
        current = self._store.get(namespaces, "", name)
        if current["metadata"].get("deletionTimestamp") and _FINALIZER in (
                (current.get("spec") or {}).get("finalizers") or ()):
            raise StatusError.conflict(
                "", "namespaces", name, "The system is ensuring all content is removed from "
                "this namespace.  Upon completion, this namespace will automatically be "
                "purged by the system.")
        terminating = self._store.delete(namespaces, "", name, options=options)
        if self._controller and not options.dry_run:
            self._empty(name)
            self.finish(name)
        return terminating

    def finish(self, namespace: str) -> None:
        """Remove a terminating namespace's ``kubernetes`` finalizer once it is empty."""
        if not self._controller or not namespace:
            return
        namespaces = self._namespaces()
        try:
            found = self._store.get(namespaces, "", namespace)
        except StatusError:
            return
        if not found["metadata"].get("deletionTimestamp"):
            return
        if not self._store.namespace_is_empty(namespace):
            return

        def drop_finalizer(obj: Obj) -> None:
            spec = obj.setdefault("spec", {})
            spec["finalizers"] = [f for f in spec.get("finalizers") or () if f != _FINALIZER]

        with contextlib.suppress(StatusError):  # deleted meanwhile
            self._store.finalize(namespaces, "", namespace, drop_finalizer)

    def _empty(self, namespace: str) -> None:
        everything = WatchFilter(namespace)
        seen: set[tuple[str, str]] = set()
        for info in self._registry.served():
            if info.namespaced and (info.group, info.plural) not in seen:
                seen.add((info.group, info.plural))
                self._store.delete_collection(info, namespace, everything)

    def _namespaces(self) -> ServedResource:
        info = self._registry.lookup("", "v1", "namespaces")
        assert info is not None  # a built-in, always served
        return info
