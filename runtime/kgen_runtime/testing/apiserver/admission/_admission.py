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
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import cel

from kgen_runtime.meta import copy_json
from kgen_runtime.testing._status import StatusError
from kgen_runtime.testing.apiserver.admission._conversion import Conversions, VersionView
from kgen_runtime.testing.apiserver.admission._webhooks import (
    AdmissionAttributes,
    AdmissionChain,
    ServiceResolver,
)
from kgen_runtime.testing.apiserver.endpoints._query import warning_header
from kgen_runtime.testing.apiserver.fieldmanager._managed_fields import FieldManager
from kgen_runtime.testing.apiserver.storage._registry import Registry
from kgen_runtime.testing.apiserver.storage._resources import ServedResource, WriteOptions
from kgen_runtime.testing.apiserver.storage._selectors import WatchFilter
from kgen_runtime.testing.apiserver.storage._services import carry_allocations
from kgen_runtime.testing.apiserver.storage._store import ObjectStore, PatchFunction
from kgen_runtime.testing.apiserver.storage._strategy import prepare_identity, prepare_update
from kgen_runtime.testing.apiserver.subresources._scale import ScaleProjection

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

    def __init__(self, store: ObjectStore, registry: Registry,
                 field_manager: FieldManager) -> None:
        self._store = store
        self._registry = registry
        self._field_manager = field_manager
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
        if view is None and (self.active() or self.conversions.converts(info)):
            # the storage version of a converting resource too: its managedFields entries
            # of other versions are compared converted (see _record_fields)
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
        with _warnings_kept(options):
            return self._create(info, view, namespace, obj, options)

    def _create(self, info: ServedResource, view: VersionView, namespace: str, obj: Obj,
                options: WriteOptions) -> Obj:
        # The handler fills the namespace in before admission (rest.
        # EnsureObjectNamespaceMatchesRequestNamespace in endpoints/handlers/create.go).
        name = str(prepare_identity(info, namespace, obj).get("name", ""))
        attributes = self._attributes("CREATE", info, namespace, name, "", options)
        warnings = options.warnings
        request = copy_json(obj)
        mutated = self._mutate(attributes, obj, None, warnings)
        if view.storage is not info:
            return self._create_converted(info, view, namespace, mutated, attributes, options)
        options.admitted = (request, copy_json(mutated))
        preview = self._store.create(info, namespace, copy_json(mutated),
                                     options=_preview(options))
        _keep_preview(info, mutated, preview)
        self._validate(dataclasses.replace(attributes, name=preview["metadata"]["name"]),
                       preview, None, warnings)
        return self._store.create(info, namespace, mutated, options=options)

    def _create_converted(self, info: ServedResource, view: VersionView, namespace: str,
                          mutated: Obj, attributes: AdmissionAttributes,
                          options: WriteOptions) -> Obj:
        """A create in another version than the storage's, in kube-apiserver's order: the
        registry's checks and the validating webhooks on the object in the request's
        version (a custom resource's internal version is the request's: the CRD handler's
        hub is ``__internal``, which crConverter only relabels), then the conversion to the
        storage version when it is encoded for storage, with its uid and creationTimestamp
        (registry/store.go ``Create``: ``BeforeCreate``, ``createValidation``, then
        ``Storage.Create``). The store stamps its own uid and time on the commit and keeps
        the managedFields the preview recorded in the request's version."""
        preview = self._store.create(info, namespace, copy_json(mutated),
                                     options=_preview(options))
        _keep_preview(info, mutated, preview)
        self._validate(dataclasses.replace(attributes, name=preview["metadata"]["name"]),
                       preview, None, options.warnings)
        # the preview's managedFields were recorded in the request's version, as the
        # handler's field manager does before the object is converted for storage
        stored = view.to_storage(copy_json(preview))
        created = self._store.create(view.storage, namespace, stored,
                                     options=dataclasses.replace(options, fields_recorded=True))
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
        with _warnings_kept(options):
            return self._patch(info, view, namespace, name, change, subresource, options,
                               create_if_missing=create_if_missing, projection=projection)

    def _patch(
        self, info: ServedResource, view: VersionView, namespace: str, name: str,
        change: Callable[[Obj], Obj], subresource: str, options: WriteOptions, *,
        create_if_missing: bool, projection: ScaleProjection | None,
    ) -> Obj:
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
            attributes = self._attributes(operation, info, namespace, name, subresource, options,
                                     scale=projection is not None)
            warnings = options.warnings
            request = change(copy_json(seen) if seen else {})
            if projection is None and view.storage is info:
                options.admitted = (copy_json(request), request)
            mutated = self._mutate(attributes, request, seen, warnings)
            if options.admitted is not None:
                options.admitted = (options.admitted[0], copy_json(mutated))
            if projection is not None and current is not None:
                mutated = projection.apply(copy_json(current), mutated)
            write_options = options
            if (projection is None and current is not None and not options.applying
                    and self.conversions.converts(info) and _other_versions(info, current)):
                self._record_fields(info, current, mutated, subresource, options)
                write_options = dataclasses.replace(options, fields_recorded=True)
            new = view.to_storage(mutated)
            write = _replace_with(new, over=expected)
            try:
                preview = self._store.patch(storage, namespace, name, write, subresource,
                                            create_if_missing=create_if_missing,
                                            options=_preview(write_options))
                if current is None:
                    _keep_preview(storage, new, preview)
                admitted = view.to_request(preview)
                self._validate(attributes, admitted if projection is None
                               else projection.scale_of(admitted), seen, warnings)
                written = self._store.patch(storage, namespace, name, write, subresource,
                                            create_if_missing=create_if_missing,
                                            options=write_options)
            except _Stale:
                continue
            return view.to_request(written)
        raise StatusError.modified(info.group, info.plural, name)

    def _record_fields(self, info: ServedResource, current: Obj, mutated: Obj,
                       subresource: str, options: WriteOptions) -> None:
        """Record in ``mutated`` (``info``'s version) the update's managedFields before it is
        converted for storage, each other manager's fields compared in its own version
        (structured-merge-diff converts the objects), with no store lock held while the
        conversions call out; the write that follows is conditional on the version read."""

        def convert(obj: Obj, api_version: str) -> tuple[Obj, ServedResource]:
            version = api_version.rpartition("/")[2]
            other = self._registry.lookup(info.group, version, info.plural) or info
            return self.conversions.convert(info, obj, api_version), other

        # what the write may change (the status, or all but it): the strategy's split
        effective = prepare_update(info, current, copy_json(mutated), subresource)
        self._field_manager.update(info, current, effective, options.field_manager,
                                   subresource,
                                   api_version=options.api_version or info.api_version,
                                   admitted=options.admitted, convert=convert)
        meta = mutated.setdefault("metadata", {})
        meta.pop("managedFields", None)
        if "managedFields" in effective.get("metadata", {}):
            meta["managedFields"] = effective["metadata"]["managedFields"]

    def delete(self, info: ServedResource, view: VersionView, namespace: str, name: str,
               options: WriteOptions, *, uid: str | None, resource_version: str | None,
               commit: Callable[[str | None], Obj] | None = None) -> Obj:
        """Delete after the webhooks saw the stored object as ``oldObject``; ``commit``
        (given the resourceVersion precondition) replaces the store's delete."""
        with _warnings_kept(options):
            return self._delete(info, view, namespace, name, options, uid=uid,
                                resource_version=resource_version, commit=commit)

    def _delete(self, info: ServedResource, view: VersionView, namespace: str, name: str,
                options: WriteOptions, *, uid: str | None, resource_version: str | None,
                commit: Callable[[str | None], Obj] | None) -> Obj:
        attributes = self._attributes("DELETE", info, namespace, name, "", options)
        for _ in range(ATTEMPTS):
            stored = self._current(view.storage, namespace, name)
            if stored is None:
                raise StatusError.not_found(info.group, info.plural, name)
            current = view.to_request(stored)
            warnings = options.warnings
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

    def _attributes(self, operation: str, info: ServedResource, namespace: str, name: str,
                    subresource: str, options: WriteOptions, *,
                    scale: bool = False) -> AdmissionAttributes:
        """:func:`_attributes`, with a custom resource's other served versions as the
        equivalents webhooks of ``matchPolicy: Equivalent`` are matched against (its CRD's
        versions: apiextensions' crdHandler registers them with the equivalent-resource
        registry) and the conversion that shows them the object in one of those."""
        attributes = _attributes(operation, info, namespace, name, subresource, options,
                                 scale=scale)
        if scale or not info.custom:
            return attributes
        others = tuple((served.version, served.kind)
                       for served in self._registry.versions(info.group, info.plural)
                       if served.version != info.version)
        if not others:
            return attributes

        def convert(obj: Obj, api_version: str) -> Obj:
            return self.conversions.convert(info, obj, api_version)

        return dataclasses.replace(attributes, equivalents=others, convert=convert)

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
        mutated = self.chain.mutate(attributes, obj, old, warnings)
        return mutated if mutated is not None else {}

    def _validate(self, attributes: AdmissionAttributes, obj: Obj | None, old: Obj | None,
                  warnings: list[str]) -> None:
        self.chain.validate(attributes, obj, old, warnings)


@contextmanager
def _warnings_kept(options: WriteOptions) -> Iterator[None]:
    """A refused or failed write still carries the warnings recorded before it: the request's
    warning recorder writes each ``Warning`` header as it is added (apiserver's
    endpoints/filters/warning.go), so a webhook's warnings come back with a later webhook's
    refusal or the storage's 409."""
    try:
        yield
    except StatusError as error:
        if options.warnings:
            error.headers["Warning"] = warning_header(options.warnings)
        raise


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


def _other_versions(info: ServedResource, current: Obj) -> bool:
    """Whether a write through ``info`` is not the stored object's own version, or
    ``current`` has managedFields entries of another version."""
    return current.get("apiVersion") != info.api_version or any(
        isinstance(entry, dict) and entry.get("apiVersion") != info.api_version
        for entry in (current.get("metadata") or {}).get("managedFields") or ())


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
