"""Writes through the admission webhook chain, outside the store lock.

kube-apiserver runs a write as: mutating admission (webhooks), then the registry's defaulting
and validation, then validating admission, then the etcd commit, inside ``GuaranteedUpdate``:
read the current object, compute the new one, admit it, and write it only if the stored
object is still the one read, else start again. A webhook handler commonly reads from the API
server, so the webhooks here run with no store lock held, the same way:

1. read the current object (none for a create);
2. compute the new object (the update body, the patch or the apply on a copy);
3. the mutating webhooks (:meth:`AdmissionChain.mutate`);
4. the store's own admission on a copy: a dry run of the write, giving the object as it
   would be stored (defaults, pruning, validation, managedFields);
5. the validating webhooks on that object;
6. commit the mutated object under the lock only if the stored resourceVersion is still the
   one read (the store's admission runs again there, deterministically); a concurrent write
   in between restarts from 1, at most :data:`ATTEMPTS` times, then 409 Conflict.

Used only while a webhook configuration is stored or the resource's versions are converted
(``VersionView``: the store holds the storage version; the webhooks see the request's), so
other writes keep the store's single locked path. A write of the ``scale`` subresource shows
the webhooks the ``autoscaling/v1`` Scale of the object (``object`` and ``oldObject``), as
kube-apiserver's ``ScaleREST`` does, and writes back the replicas of the Scale they admit.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

import cel

from kgen_runtime.meta import copy_json
from kgen_runtime.testing._conversion import Conversions, VersionView
from kgen_runtime.testing._registry import Registry
from kgen_runtime.testing._resources import ServedResource, WriteOptions
from kgen_runtime.testing._scale import ScaleProjection
from kgen_runtime.testing._selectors import WatchFilter
from kgen_runtime.testing._services import carry_allocations
from kgen_runtime.testing._status import StatusError
from kgen_runtime.testing._store import ObjectStore, PatchFunction
from kgen_runtime.testing._webhooks import AdmissionAttributes, AdmissionChain, ServiceResolver

__all__ = ["ATTEMPTS", "CELMatchConditions", "WebhookAdmission"]

Obj = dict[str, Any]

_ADMISSION_GROUP = "admissionregistration.k8s.io"

#: How many times a write is admitted, a concurrent write to its object restarting it
#: (kube-apiserver retries until the request times out; every attempt calls the webhooks).
ATTEMPTS = 32


class _Stale(Exception):
    """The stored object changed between the read and the commit."""


class WebhookAdmission:
    """The store's writes with the webhook chain around them and its reads converted (see
    the module docstring).

    Attributes:
        conversions: The CRD version conversions (:meth:`Conversions.register` one).
        webhook_service_resolver: Where webhooks' ``clientConfig.service`` is reached (a
            test server has no Services): ``(namespace, name, port) -> "https://host:port"``;
            None refuses them.
    """

    def __init__(self, store: ObjectStore, registry: Registry) -> None:
        self._store = store
        self._registry = registry
        self.webhook_service_resolver: ServiceResolver | None = None
        self.conversions = Conversions(registry.lookup, self._resolve_service)
        self.chain = AdmissionChain(
            lambda plural: store.stored(_ADMISSION_GROUP, plural), self._namespace_labels,
            service_resolver=self._resolve_service, match_conditions=CELMatchConditions())

    def active(self) -> bool:
        """Whether any webhook configuration is stored."""
        return self.chain.active()

    def view(self, info: ServedResource) -> VersionView | None:
        """How a write of ``info`` goes through webhooks and conversion; None: straight to
        the store (no webhook configured, no conversion)."""
        view = self.conversions.view(info)
        if view is None and self.active():
            return VersionView.identity(info)
        return view

    def patch_function(self, info: ServedResource) -> PatchFunction:
        """The store's patch, or :meth:`patch` through :meth:`view` with its signature."""
        view = self.view(info)
        if view is None:
            return self._store.patch

        def patch(
            info: ServedResource, namespace: str, name: str, patcher: Callable[[Obj], Obj],
            subresource: str = "", *, create_if_missing: bool = False,
            options: WriteOptions | None = None,
        ) -> Obj:
            return self.patch(info, view, namespace, name, patcher, subresource,
                              options if options is not None else WriteOptions(),
                              create_if_missing=create_if_missing)

        return patch

    def get(self, info: ServedResource, namespace: str, name: str) -> Obj:
        """Read one object as ``info``'s version, converted after the store's lock."""
        view = self.conversions.view(info)
        if view is None:
            return self._store.get(info, namespace, name)
        return view.to_request(self._store.get(view.storage, namespace, name))

    def create(self, info: ServedResource, view: VersionView, namespace: str, obj: Obj,
               options: WriteOptions) -> Obj:
        """Create ``obj`` (of ``info``'s version, stored through ``view``) after the mutating
        and validating webhooks."""
        name = str((obj.get("metadata") or {}).get("name", ""))
        attributes = _attributes("CREATE", info, namespace, name, "", options)
        warnings: list[str] = []
        mutated = self._mutate(attributes, obj, None, warnings)
        stored = view.to_storage(mutated)
        preview = self._store.create(view.storage, namespace, copy_json(stored),
                                     options=_preview(options))
        _keep_preview(view.storage, stored, preview)
        self._validate(dataclasses.replace(attributes, name=preview["metadata"]["name"]),
                       view.to_request(preview), None, warnings)
        created = self._store.create(view.storage, namespace, stored, options=options)
        options.warnings += warnings
        return view.to_request(created)

    def patch(
        self, info: ServedResource, view: VersionView, namespace: str, name: str,
        change: Callable[[Obj], Obj], subresource: str, options: WriteOptions, *,
        create_if_missing: bool = False, projection: ScaleProjection | None = None,
    ) -> Obj:
        """An update, patch or apply: ``change`` turns a copy of the stored object as
        ``info``'s version (``{}`` when absent and ``create_if_missing``) into the object to
        write. With a ``projection`` (the scale subresource) ``change`` and the webhooks see
        the object's Scale instead, and the Scale they let through is written back."""
        storage = view.storage
        for _ in range(ATTEMPTS):
            stored = self._current(storage, namespace, name)
            if stored is None and not create_if_missing:
                raise StatusError.not_found(info.group, info.plural, name)
            expected = _version(stored)
            current = None if stored is None else view.to_request(stored)
            seen = current if current is None or projection is None else projection.scale_of(
                current, for_write=True)
            operation = "UPDATE" if current is not None else "CREATE"
            attributes = _attributes(operation, info, namespace, name, subresource, options,
                                     scale=projection is not None)
            warnings: list[str] = []
            mutated = self._mutate(attributes, change(copy_json(seen) if seen else {}), seen,
                                   warnings)
            if projection is not None and current is not None:
                mutated = projection.apply(copy_json(current), mutated)
            new = view.to_storage(mutated)
            write = _replace_with(new, over=expected)
            try:
                preview = self._store.patch(storage, namespace, name, write, subresource,
                                            create_if_missing=create_if_missing,
                                            options=_preview(options))
                if current is None:
                    _keep_preview(storage, new, preview)
                admitted = view.to_request(preview)
                self._validate(attributes, admitted if projection is None
                               else projection.scale_of(admitted), seen, warnings)
                written = self._store.patch(storage, namespace, name, write, subresource,
                                            create_if_missing=create_if_missing,
                                            options=options)
            except _Stale:
                continue
            options.warnings += warnings
            return view.to_request(written)
        raise StatusError.modified(info.group, info.plural, name)

    def delete(self, info: ServedResource, view: VersionView, namespace: str, name: str,
               options: WriteOptions, *, uid: str | None, resource_version: str | None,
               commit: Callable[[str | None], Obj] | None = None) -> Obj:
        """Delete after the webhooks saw the stored object as ``oldObject``; ``commit``
        (given the resourceVersion precondition) replaces the store's delete."""
        attributes = _attributes("DELETE", info, namespace, name, "", options)
        for _ in range(ATTEMPTS):
            stored = self._current(view.storage, namespace, name)
            if stored is None:
                raise StatusError.not_found(info.group, info.plural, name)
            current = view.to_request(stored)
            warnings: list[str] = []
            self._mutate(attributes, None, current, warnings)
            self._validate(attributes, None, current, warnings)
            precondition = resource_version or _version(stored)
            try:
                deleted = (commit(precondition) if commit is not None else self._store.delete(
                    view.storage, namespace, name, uid=uid, resource_version=precondition,
                    options=options))
            except StatusError as error:
                if resource_version or error.code != 409 or "the UID in the precondition" in str(
                        error):
                    raise
                continue
            options.warnings += warnings
            return view.to_request(deleted)
        raise StatusError.modified(info.group, info.plural, name)

    def delete_collection(self, info: ServedResource, view: VersionView, namespace: str,
                          where: WatchFilter, options: WriteOptions) -> list[Obj]:
        """Delete every matching object, each through the webhooks (as deletecollection)."""
        deleted = []
        for obj in self._store.list_objects(view.storage, namespace, where).items:
            meta = obj["metadata"]
            try:
                deleted.append(self.delete(info, view, meta.get("namespace", ""),
                                           meta["name"], options, uid=None,
                                           resource_version=None))
            except StatusError as error:
                if error.code != 404:
                    raise
        return deleted

    def _namespace_labels(self, name: str) -> dict[str, str] | None:
        namespaces = self._registry.lookup("", "v1", "namespaces")
        try:
            namespace = self._store.get(namespaces, "", name) if namespaces else None
        except StatusError:
            return None
        return None if namespace is None else dict(namespace["metadata"].get("labels") or {})

    def _resolve_service(self, namespace: str, name: str, port: int) -> str:
        if self.webhook_service_resolver is None:
            raise RuntimeError("clientConfig.service needs the test server's "
                               "admission.webhook_service_resolver; use clientConfig.url")
        return self.webhook_service_resolver(namespace, name, port)

    def _current(self, info: ServedResource, namespace: str, name: str) -> Obj | None:
        try:
            return self._store.get(info, namespace, name)
        except StatusError as error:
            if error.code == 404:
                return None
            raise

    def _mutate(self, attributes: AdmissionAttributes, obj: Obj | None, old: Obj | None,
                warnings: list[str]) -> Obj:
        outcome = self.chain.mutate(attributes, obj, old)
        warnings += outcome.warnings
        return outcome.obj if outcome.obj is not None else {}

    def _validate(self, attributes: AdmissionAttributes, obj: Obj | None, old: Obj | None,
                  warnings: list[str]) -> None:
        warnings += self.chain.validate(attributes, obj, old)


def _attributes(operation: str, info: ServedResource, namespace: str, name: str,
                subresource: str, options: WriteOptions, *,
                scale: bool = False) -> AdmissionAttributes:
    """The admission attributes of a write; of ``scale`` it is an ``autoscaling/v1`` Scale.

    Its options are the handler's: CreateOptions, UpdateOptions (a patch's PatchOptions
    turned into one of these by ``patchToCreateOptions``/``patchToUpdateOptions``, keeping
    dryRun, fieldManager and fieldValidation) or DeleteOptions."""
    request_options = {"kind": _OPTIONS_KINDS[operation], "apiVersion": "meta.k8s.io/v1",
                       **options.requested}
    if scale:
        return AdmissionAttributes(operation, info.group, info.version, info.plural, "Scale",
                                   namespace, name, info.namespaced, subresource,
                                   dry_run=options.dry_run, kind_group_version="autoscaling/v1",
                                   options=request_options)
    return AdmissionAttributes(operation, info.group, info.version, info.plural, info.kind,
                               namespace, name, info.namespaced, subresource,
                               dry_run=options.dry_run, options=request_options)


_OPTIONS_KINDS = {"CREATE": "CreateOptions", "UPDATE": "UpdateOptions",
                  "DELETE": "DeleteOptions"}


def _preview(options: WriteOptions) -> WriteOptions:
    """The options of the dry run that shows the validating webhooks the stored object."""
    return dataclasses.replace(options, dry_run=True, warnings=[],
                               keep_allocations=not options.dry_run)


def _keep_preview(info: ServedResource, created: Obj, preview: Obj) -> None:
    """What the preview of a create decided stays in the object committed, as the webhooks
    saw it: a generated name, and a Service's cluster IP and node ports (allocated once)."""
    created.setdefault("metadata", {})["name"] = preview["metadata"]["name"]
    if (info.group, info.plural) == ("", "services"):
        carry_allocations(created, preview)


def _version(obj: Obj | None) -> str | None:
    return None if obj is None else str(obj["metadata"].get("resourceVersion", ""))


def _replace_with(new: Obj, *, over: str | None) -> Callable[[Obj], Obj]:
    """A store patcher writing a copy of ``new`` only over the stored object of resourceVersion
    ``over`` (None: only if none is stored); else it raises :class:`_Stale`."""

    def replace(live: Obj) -> Obj:
        if (_version(live) if live else None) != over:
            raise _Stale
        copied: Obj = copy_json(new)
        return copied

    return replace


class CELMatchConditions:
    """Evaluates webhooks' ``matchConditions`` (CEL over ``object``, ``oldObject`` and
    ``request``), compiling each expression once."""

    def __init__(self) -> None:
        self._programs: dict[str, Any] = {}

    def __call__(self, expression: str, variables: Mapping[str, Any]) -> bool:
        program = self._programs.get(expression)
        if program is None:
            program = self._programs[expression] = cel.compile(expression)
        result = program.execute(cel.Context(dict(variables)))
        if not isinstance(result, bool):
            raise StatusError.internal(f"matchCondition {expression!r} evaluated to "
                                       f"{type(result).__name__}, not bool")
        return result
