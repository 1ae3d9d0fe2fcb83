"""The object store as requests see it: writes through the admission webhooks and reads
converted between a CRD's versions, wherever either is configured.

kube-apiserver's handlers wrap every resource's REST storage in the admission chain and read
and write it through the codec that converts to and from the storage version.
:class:`AdmittedStore` makes the same choice per request: while no webhook configuration is
stored and the request's version needs no conversion, a request goes straight to the
:class:`~kgen_runtime.testing.apiserver.storage._store.ObjectStore` (one step under its
lock); otherwise it goes through
:class:`~kgen_runtime.testing.apiserver.admission._admission.WebhookAdmission`
(GuaranteedUpdate with the webhooks called outside the lock) and the :class:`VersionView` of
:class:`~kgen_runtime.testing.apiserver.admission._conversion.Conversions`. The ``scale``
subresource goes the same way, its webhooks seeing the ``autoscaling/v1`` Scale (see
:mod:`kgen_runtime.testing.apiserver.subresources._scale`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kgen_runtime.testing._status import Cause, StatusError
from kgen_runtime.testing.apiserver.admission._admission import WebhookAdmission
from kgen_runtime.testing.apiserver.admission._conversion import Conversions, VersionView
from kgen_runtime.testing.apiserver.fieldmanager._managed_fields import FieldManager
from kgen_runtime.testing.apiserver.storage._registry import Registry
from kgen_runtime.testing.apiserver.storage._resources import ServedResource, WriteOptions
from kgen_runtime.testing.apiserver.storage._selectors import WatchFilter
from kgen_runtime.testing.apiserver.storage._store import ListResult, ObjectStore, PatchFunction
from kgen_runtime.testing.apiserver.storage._watch import Subscription
from kgen_runtime.testing.apiserver.subresources._scale import ScaleProjection

__all__ = ["AdmittedStore"]

Obj = dict[str, Any]


class AdmittedStore:
    """Reads and writes of one server's resources, with admission and conversion where
    configured (see the module docstring). Thread-safe.

    Attributes:
        admission: The webhook chain around writes (``webhook_service_resolver`` on it).
        conversions: The CRD version conversions (:meth:`Conversions.register` one).
    """

    def __init__(self, store: ObjectStore, registry: Registry,
                 field_manager: FieldManager) -> None:
        self._store = store
        self.admission = WebhookAdmission(store, registry, field_manager)
        self.conversions: Conversions = self.admission.conversions

    def calls_out(self) -> bool:
        """Whether a request may call a webhook now (an admission webhook is configured, or
        a CRD converts through one): it may then block on the network."""
        return self.admission.active() or self.conversions.calls_webhooks()

    # -- reads --------------------------------------------------------------------------------

    def get(self, info: ServedResource, namespace: str, name: str) -> Obj:
        """One object as ``info``'s version."""
        return self.admission.get(info, namespace, name)

    def list_objects(self, info: ServedResource, namespace: str, where: WatchFilter, *,
                     resource_version: str, match: str, limit: int,
                     continue_token: str) -> ListResult:
        """A page of objects as ``info``'s version (one conversion review for the page)."""
        view = self.conversions.view(info)
        result = self._store.list_objects(
            info if view is None else view.storage, namespace, where,
            resource_version=resource_version, match=match, limit=limit,
            continue_token=continue_token)
        if view is not None:
            result.items = self.conversions.to_request(info, result.items)
        return result

    def watch(
        self, info: ServedResource, where: WatchFilter, *, resource_version: str,
        send_initial_events: bool, allow_bookmarks: bool, timeout: float | None,
    ) -> tuple[Subscription, Callable[[Obj], Obj] | None]:
        """A watch of the stored objects and the conversion of its events' objects to
        ``info``'s version (None: they need none)."""
        view = self.conversions.view(info)
        subscription = self._store.watch(
            info if view is None else view.storage, where, resource_version=resource_version,
            send_initial_events=send_initial_events, allow_bookmarks=allow_bookmarks,
            timeout=timeout)
        return subscription, None if view is None else view.to_request

    # -- writes -------------------------------------------------------------------------------

    def create(self, info: ServedResource, namespace: str, obj: Obj,
               options: WriteOptions) -> Obj:
        view = self.admission.view(info)
        if view is None:
            return self._store.create(info, namespace, obj, options=options)
        return self.admission.create(info, view, namespace, obj, options)

    def update(self, info: ServedResource, namespace: str, name: str, obj: Obj,
               subresource: str, options: WriteOptions) -> Obj:
        """Replace an object (or its ``status``) with ``obj``."""
        view = self.admission.view(info)
        if view is None:
            return self._store.update(info, namespace, name, obj, subresource,
                                      options=options)

        def replacement(_: Obj) -> Obj:
            # The store's update refuses a custom resource without a resourceVersion first.
            if info.custom and not (obj.get("metadata") or {}).get("resourceVersion"):
                raise StatusError.invalid(info.group, info.plural, name, [Cause(
                    "FieldValueInvalid", "Invalid value: 0: must be specified for an update",
                    "metadata.resourceVersion")])
            return obj

        return self.admission.patch(info, view, namespace, name, replacement, subresource,
                                    options)

    def patch_function(self, info: ServedResource) -> PatchFunction:
        """:meth:`ObjectStore.patch`, or the same through the webhooks and conversion."""
        return self.admission.patch_function(info)

    def delete(self, info: ServedResource, namespace: str, name: str, options: WriteOptions,
               *, uid: str | None, resource_version: str | None) -> Obj:
        view = self.admission.view(info)
        if view is None:
            return self._store.delete(info, namespace, name, uid=uid,
                                      resource_version=resource_version, options=options)
        return self.admission.delete(info, view, namespace, name, options, uid=uid,
                                     resource_version=resource_version)

    def delete_namespace(self, info: ServedResource, name: str, options: WriteOptions,
                         delete: Callable[[], Obj]) -> Obj:
        """A Namespace's delete (``delete``: its lifecycle's), after the webhooks."""
        if not self.admission.active():
            return delete()
        return self.admission.delete(info, VersionView.identity(info), "", name, options,
                                     uid=None, resource_version=None,
                                     commit=lambda _: delete())

    def delete_collection(self, info: ServedResource, namespace: str, where: WatchFilter,
                          options: WriteOptions) -> list[Obj]:
        view = self.admission.view(info)
        if view is None:
            return self._store.delete_collection(info, namespace, where, options=options)
        return self.admission.delete_collection(info, view, namespace, where, options)

    # -- the scale subresource ----------------------------------------------------------------

    def get_scale(self, info: ServedResource, namespace: str, name: str) -> Obj:
        """The Scale of an object, read as ``info``'s version (whose paths it follows)."""
        return _projection(info).scale_of(self.get(info, namespace, name))

    def update_scale(self, info: ServedResource, namespace: str, name: str,
                     change: Callable[[Obj], Obj], options: WriteOptions) -> Obj:
        """Write the desired replicas of ``change(current Scale)``; returns the new Scale."""
        projection = _projection(info)
        view = self.admission.view(info)
        if view is None:
            updated = self._store.patch(info, namespace, name, projection.patcher(change),
                                        "scale", options=options)
        else:
            updated = self.admission.patch(info, view, namespace, name, change, "scale",
                                           options, projection=projection)
        return projection.scale_of(updated)


def _projection(info: ServedResource) -> ScaleProjection:
    assert info.scale is not None  # the core routes only kinds with a scale subresource
    return ScaleProjection(info.scale)
