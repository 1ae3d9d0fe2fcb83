"""A client typed by model class, whose reads may come from a cache (controller-runtime's
``client`` package).

Reads are split from writes. A :class:`Reader` has ``get`` and ``list``; the informer cache
(:class:`InformerCache`), the live :class:`APIReader` and :class:`Client` itself all are
one, so a reconciler does not care which it reads from. A :class:`Client` reads from the
reader it was given (the manager's cache) and writes to the API server::

    foo = client.get(Foo, "default", "example-foo")      # a copy: safe to change
    deployments = client.list(Deployment, namespace="default", labels={"app": "nginx"})
    foo.metadata.labels = {"seen": "yes"}
    foo = client.update(foo)                              # the server's copy
    foo.status = FooStatus(available_replicas=1)
    client.update_status(foo)
    client.patch(foo, {"metadata": {"annotations": {"a": "b"}}})
    client.delete(foo)

Contract:

* The kind of a call comes from the model class (``client.get(Foo, ...)``) or the object
  (writes), mapped to its resource by the :class:`Kinds` (the scheme and REST mapper).
* Objects returned are the caller's (copies when read from a cache); objects passed in are
  only read.
* ``get`` raises :class:`~kgen_runtime.rest.errors.NotFoundError`; ``list`` returns the
  objects sorted by namespace and name, as the API server does, from every reader.
* A namespaced kind needs a namespace for ``get`` and the writes (``ValueError``);
  ``list`` without one lists every namespace the reader sees. A cluster-scoped kind ignores
  the namespace.
"""

from __future__ import annotations

import builtins
import threading
from collections.abc import Mapping
from typing import Any, Protocol, TypeVar

from kgen_runtime.cache import SelectorLike
from kgen_runtime.groupversion import GroupVersionKind
from kgen_runtime.labels import as_selector
from kgen_runtime.meta import KubeObject
from kgen_runtime.resource import Resource
from kgen_runtime.rest import (
    ListOptions,
    PatchBody,
    PatchType,
    Preconditions,
    PropagationPolicy,
    ResourceClient,
    StatusClientMixin,
    Transport,
)
from kgen_runtime.scheme import NoResourceMatchError, NotRegisteredError, RESTMapper, Scheme

__all__ = ["APIReader", "Client", "Kinds", "LabelsLike", "Reader"]

T = TypeVar("T", bound=KubeObject)

LabelsLike = SelectorLike | Mapping[str, str]
"""A label selector: text, ``{key: value}`` pairs, a parsed selector, or ``None`` (all)."""


class Kinds:
    """Model class → kind → resource, from a scheme and a REST mapper (built from the
    scheme's resources when not given). Thread-safe; answers are cached per class."""

    def __init__(self, scheme: Scheme, mapper: RESTMapper | None = None) -> None:
        self.scheme = scheme
        self._mapper = mapper
        self._lock = threading.Lock()
        self._resources: dict[type[Any], Resource[Any]] = {}

    def kind_of(self, cls: type[KubeObject]) -> GroupVersionKind:
        """The kind ``cls`` is registered as.

        Raises:
            NotRegisteredError: ``cls`` is not in the scheme (the message says how to add it).
        """
        try:
            return self.scheme.object_kind(cls)
        except NotRegisteredError as err:
            raise NotRegisteredError(
                cls=cls, reason="add its package to the scheme (add_to_scheme(scheme))"
            ) from err

    def resource_for(self, cls: type[T]) -> Resource[T]:
        """The resource serving ``cls``'s kind.

        Raises:
            NotRegisteredError: ``cls`` is not in the scheme.
            NoResourceMatchError: no resource serves its kind.
        """
        resource = self._resources.get(cls)
        if resource is not None:
            return resource
        gvk = self.kind_of(cls)
        mapper = self._mapper or RESTMapper(self.scheme.resources())
        try:
            resource = mapper.resource_for(gvk)
        except NoResourceMatchError as err:
            raise NoResourceMatchError(
                f"{cls.__qualname__}: no resource is known for {gvk}"
            ) from err
        with self._lock:
            self._resources[cls] = resource
        return resource


class Reader(Protocol):
    """Reads objects by model class (``client.Reader``)."""

    def get(self, kind: type[T], namespace: str, name: str) -> T:
        """The object ``namespace/name``; ``NotFoundError`` if there is none."""
        ...

    def list(
        self, kind: type[T], *, namespace: str | None = None, labels: LabelsLike = None
    ) -> builtins.list[T]:
        """The objects matching ``labels`` in ``namespace`` (``None``: all), sorted."""
        ...


def require_namespace(resource: Resource[Any], namespace: str | None) -> None:
    """Raise ``ValueError`` if a namespaced ``resource`` is addressed without a namespace."""
    if resource.namespaced and not namespace:
        raise ValueError(f"{resource.plural} are namespaced: a namespace is needed")


def sort_by_key(objects: builtins.list[T]) -> builtins.list[T]:
    """``objects`` in the API server's order: by namespace, then name."""
    objects.sort(key=lambda o: (o.metadata.namespace or "", o.metadata.name or ""))
    return objects


class APIReader:
    """A :class:`Reader` asking the API server every time (``manager.GetAPIReader()``):
    consistent, but a request per call. Thread-safe."""

    def __init__(self, transport: Transport, kinds: Kinds) -> None:
        self.transport = transport
        self.kinds = kinds

    def get(self, kind: type[T], namespace: str, name: str) -> T:
        resource = self.kinds.resource_for(kind)
        require_namespace(resource, namespace)
        return self._client(resource, namespace).get(name)

    def list(
        self, kind: type[T], *, namespace: str | None = None, labels: LabelsLike = None
    ) -> builtins.list[T]:
        resource = self.kinds.resource_for(kind)
        selector = as_selector(labels)
        options = ListOptions(label_selector=None if selector.empty() else str(selector))
        items: builtins.list[T] = list(self._client(resource, namespace).list(options).items)
        return sort_by_key(items)

    def _client(self, resource: Resource[T], namespace: str | None) -> ResourceClient[T, Any]:
        return ResourceClient(self.transport, resource, namespace or None)


class Client:
    """Reads from ``reader`` (the live API by default), writes to the API server
    (``client.Client``). See the module docstring. Thread-safe.

    Args:
        transport: Where writes (and default reads) go.
        kinds: Maps model classes to resources.
        reader: Where ``get``/``list`` read; an :class:`APIReader` when ``None``.
        field_manager: Sent with every write unless a call names its own.
    """

    def __init__(
        self,
        transport: Transport,
        kinds: Kinds,
        *,
        reader: Reader | None = None,
        field_manager: str | None = None,
    ) -> None:
        self.transport = transport
        self.kinds = kinds
        self.reader: Reader = reader if reader is not None else APIReader(transport, kinds)
        self.field_manager = field_manager

    # -- reads ------------------------------------------------------------------------------

    def get(self, kind: type[T], namespace: str, name: str) -> T:
        """The object ``namespace/name`` from the reader (see :class:`Reader`)."""
        return self.reader.get(kind, namespace, name)

    def list(
        self, kind: type[T], *, namespace: str | None = None, labels: LabelsLike = None
    ) -> builtins.list[T]:
        """The objects matching ``labels`` in ``namespace`` from the reader, sorted."""
        return self.reader.list(kind, namespace=namespace, labels=labels)

    # -- writes -----------------------------------------------------------------------------

    def create(self, obj: T, *, dry_run: bool = False, field_manager: str | None = None) -> T:
        """Create ``obj``; the server's copy is returned."""
        return self._for(obj).create(obj, dry_run=dry_run,
                                     field_manager=field_manager or self.field_manager)

    def update(self, obj: T, *, dry_run: bool = False, field_manager: str | None = None) -> T:
        """Replace ``obj``; a stale ``resourceVersion`` raises ``ConflictError``."""
        return self._for(obj).update(obj, dry_run=dry_run,
                                     field_manager=field_manager or self.field_manager)

    def patch(
        self,
        obj: T,
        patch: PatchBody,
        *,
        patch_type: PatchType = "merge",
        dry_run: bool = False,
        field_manager: str | None = None,
    ) -> T:
        """Patch the object named like ``obj`` (kind, namespace, name) with ``patch``."""
        return self._for(obj).patch(object_name(obj), patch, patch_type=patch_type, dry_run=dry_run,
                                    field_manager=field_manager or self.field_manager)

    def update_status(
        self, obj: T, *, dry_run: bool = False, field_manager: str | None = None
    ) -> T:
        """Replace ``obj``'s status through the status subresource."""
        return self._status(obj).update_status(
            obj, dry_run=dry_run, field_manager=field_manager or self.field_manager)

    def patch_status(
        self,
        obj: T,
        patch: PatchBody,
        *,
        patch_type: PatchType = "merge",
        dry_run: bool = False,
        field_manager: str | None = None,
    ) -> T:
        """Patch the status of the object named like ``obj``."""
        return self._status(obj).patch_status(
            object_name(obj), patch, patch_type=patch_type, dry_run=dry_run,
            field_manager=field_manager or self.field_manager)

    def delete(
        self,
        obj: KubeObject,
        *,
        propagation_policy: PropagationPolicy | None = None,
        preconditions: Preconditions | None = None,
        dry_run: bool = False,
    ) -> None:
        """Delete the object named like ``obj`` (it may linger while it has finalizers)."""
        self._for(obj).delete(object_name(obj), propagation_policy=propagation_policy,
                              preconditions=preconditions, dry_run=dry_run)

    # -- machinery --------------------------------------------------------------------------

    def _for(self, obj: T) -> StatusClientMixin[T, Any]:
        resource = self.kinds.resource_for(type(obj))
        require_namespace(resource, obj.metadata.namespace)
        return StatusClientMixin(self.transport, resource, obj.metadata.namespace)

    def _status(self, obj: T) -> StatusClientMixin[T, Any]:
        client = self._for(obj)
        if not client.resource.status_subresource:
            raise ValueError(f"{client.resource.plural} have no status subresource")
        return client


def object_name(obj: KubeObject) -> str:
    """``obj``'s name; ``ValueError`` if it has none."""
    name = obj.metadata.name
    if not name:
        raise ValueError(f"{type(obj).__name__} has no metadata.name")
    return name
