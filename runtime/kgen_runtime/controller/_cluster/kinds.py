"""What every reader and writer of the controller kit shares, blocking or async, none of it
I/O: model class → kind → resource (:class:`Kinds`, over a scheme and a REST mapper), the
label selectors reads take, and the rules of the client contract (a namespaced kind needs a
namespace, writes need a name, lists come sorted as the API server sorts them).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Any, TypeVar

from kgen_runtime.cache import SelectorLike
from kgen_runtime.groupversion import GroupVersionKind
from kgen_runtime.meta import KubeObject
from kgen_runtime.resource import Resource
from kgen_runtime.scheme import NoResourceMatchError, NotRegisteredError, RESTMapper, Scheme

__all__ = [
    "Kinds",
    "LabelsLike",
    "builtin_scheme",
    "object_name",
    "require_namespace",
    "sort_by_key",
]

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


def builtin_scheme() -> Scheme:
    """A scheme with every built-in kind of :mod:`kgen_runtime.api` (a cluster's default)."""
    from kgen_runtime.api.scheme import add_to_scheme  # ~1 s of imports: only when needed

    scheme = Scheme()
    add_to_scheme(scheme)
    return scheme


def require_namespace(resource: Resource[Any], namespace: str | None) -> None:
    """Raise ``ValueError`` if a namespaced ``resource`` is addressed without a namespace."""
    if resource.namespaced and not namespace:
        raise ValueError(f"{resource.plural} are namespaced: a namespace is needed")


def sort_by_key(objects: list[T]) -> list[T]:
    """``objects`` in the API server's order: by namespace, then name."""
    objects.sort(key=lambda o: (o.metadata.namespace or "", o.metadata.name or ""))
    return objects


def object_name(obj: KubeObject) -> str:
    """``obj``'s name; ``ValueError`` if it has none."""
    name = obj.metadata.name
    if not name:
        raise ValueError(f"{type(obj).__name__} has no metadata.name")
    return name
