"""Kind ⇄ class registry (apimachinery's ``runtime.Scheme``) and resource ⇄ kind mapping
(``meta.DefaultRESTMapper``).

A :class:`Scheme` answers "which Python class decodes ``samplecontroller.k8s.io/v1alpha1,
Kind=Foo``?" and "which kind is this object?"; a :class:`RESTMapper` answers "which kind is
served at ``foos``?" and "is it namespaced?". Generated packages fill both from their
``Resource`` descriptions (``add_to_scheme(scheme)``)::

    >>> from kgen_runtime.meta import KubeList, KubeObject
    >>> from kgen_runtime.resource import Resource
    >>> class Foo(KubeObject):
    ...     kind: str = "Foo"
    >>> class FooList(KubeList[Foo]):
    ...     kind: str = "FooList"
    >>> FOO = Resource(group="example.com", version="v1", kind="Foo", plural="foos",
    ...                singular="foo", namespaced=True, model=Foo, list_model=FooList,
    ...                short_names=("fo",))
    >>> scheme = Scheme()
    >>> scheme.add_resource(FOO)               # registers Foo and FooList
    >>> print(scheme.object_kind(Foo()))
    example.com/v1, Kind=Foo
    >>> mapper = RESTMapper(scheme.resources())
    >>> print(mapper.find("fo").gvr, mapper.scope_for(FOO.gvk).value)
    example.com/v1, Resource=foos Namespaced

There is deliberately no process-wide default scheme: every consumer (codec, clients, fakes)
takes the scheme it should use, so two generated packages or two tests never share state.

Thread-safety: registration may happen from any thread (it takes a lock and replaces the
lookup tables); lookups never block and see either the tables before or after a registration.
"""

from __future__ import annotations

import enum
import sys
import threading
from collections.abc import Iterable
from typing import Any

from kgen_runtime.groupversion import GroupVersion, GroupVersionKind, GroupVersionResource
from kgen_runtime.meta import APIObject, Status, Unstructured, UnstructuredList
from kgen_runtime.resource import ModelRef, Resource

__all__ = [
    "AlreadyRegisteredError",
    "AmbiguousResourceError",
    "NoResourceMatchError",
    "NotRegisteredError",
    "RESTMapper",
    "Scheme",
    "Scope",
]

_STATUS_GVK = GroupVersionKind("", "v1", "Status")


class NotRegisteredError(LookupError):
    """A kind or class the scheme does not know (``runtime.IsNotRegisteredError``).

    Attributes:
        gvk: the kind asked for, if the question was about a kind.
        cls: the class asked about, if the question was about a class.
        registered: the kinds registered in the same group, to tell a typo from a missing
            ``add_to_scheme``.
    """

    def __init__(
        self,
        *,
        gvk: GroupVersionKind | None = None,
        cls: type[Any] | None = None,
        registered: tuple[GroupVersionKind, ...] = (),
        reason: str = "",
    ) -> None:
        self.gvk = gvk
        self.cls = cls
        self.registered = registered
        if gvk is not None:
            where = f'group "{gvk.group}"' if gvk.group else "the core group"
            known = "; ".join(str(k) for k in registered) if registered else "nothing"
            message = f"no kind is registered for {gvk}; registered in {where}: {known}"
        elif cls is not None:
            message = f"type {cls.__qualname__} is not registered in the scheme"
        else:
            message = "object kind unknown"
        super().__init__(f"{message}{': ' + reason if reason else ''}")


class AlreadyRegisteredError(ValueError):
    """A kind (or resource) registered twice with different classes (or descriptions)."""


class NoResourceMatchError(LookupError):
    """No resource matches a kind, resource or name (``meta.NoResourceMatchError``)."""


class AmbiguousResourceError(LookupError):
    """A name matches resources in more than one group (``meta.AmbiguousResourceError``).

    Attributes:
        candidates: the matching resources, one per group, in registration order.
    """

    def __init__(self, message: str, candidates: tuple[Resource[Any], ...]) -> None:
        super().__init__(message)
        self.candidates = candidates


class Scope(enum.Enum):
    """Whether a resource lives in a namespace (CRD ``spec.scope`` terms)."""

    NAMESPACED = "Namespaced"
    CLUSTER = "Cluster"


class Scheme:
    """Maps kinds to the classes that represent them, and back.

    A new scheme knows ``v1 Status`` (the API server's error/result document, which every
    group can return). A class may be registered under several kinds (the same shape served
    at two versions); a kind maps to exactly one class.

    A kind may be registered by name (:meth:`add_deferred`, or :meth:`add_resource` with a
    resource whose models are :class:`~kgen_runtime.resource.ModelRef`): its module is
    imported on the first question that needs the class (:meth:`class_for`, :meth:`lookup`,
    :meth:`new`, decoding that kind, :meth:`object_kind` of its class), so that a generated
    package's scheme imports without importing every model. Questions about names and scope
    (:meth:`recognizes`, :meth:`resource_for`, :meth:`resources`) never import.
    """

    def __init__(self) -> None:
        self._lock = threading.RLock()
        self._classes: dict[GroupVersionKind, type[APIObject]] = {}
        self._kinds: dict[type[APIObject], tuple[GroupVersionKind, ...]] = {}
        self._resources: dict[GroupVersionKind, Resource[Any]] = {}
        self._deferred: dict[GroupVersionKind, ModelRef] = {}
        self._deferred_modules: frozenset[str] = frozenset()
        self.add_known_type(_STATUS_GVK, Status)

    def add_known_type(self, gvk: GroupVersionKind, cls: type[APIObject]) -> None:
        """Register ``cls`` as the representation of ``gvk``; re-registering is a no-op.

        Raises:
            AlreadyRegisteredError: ``gvk`` is already registered with another class.
            TypeError: ``cls`` is not an :class:`APIObject` subclass, or is one of the
                unstructured classes (they stand for every kind and are never registered).
        """
        if not (isinstance(cls, type) and issubclass(cls, APIObject)):
            raise TypeError(f"{cls!r} is not an APIObject subclass")
        if issubclass(cls, Unstructured | UnstructuredList):
            raise TypeError(f"{cls.__qualname__} represents any kind and cannot be registered")
        _check_complete(gvk)
        with self._lock:
            self._check_free(gvk, cls)
            if self._classes.get(gvk) is cls:
                return
            classes = dict(self._classes)
            classes[gvk] = cls
            kinds = dict(self._kinds)
            kinds[cls] = (*kinds.get(cls, ()), gvk)
            self._classes, self._kinds = classes, kinds
            if gvk in self._deferred:  # registered by name before: this is that class
                self._set_deferred({k: v for k, v in self._deferred.items() if k != gvk})

    def add_deferred(self, gvk: GroupVersionKind, module: str, class_name: str) -> None:
        """Register the class ``class_name`` of ``module`` for ``gvk`` without importing it.

        The module is imported on first use of the kind (see the class doc); the class is then
        checked as :meth:`add_known_type` checks it. Re-registering the same name is a no-op.

        Raises:
            AlreadyRegisteredError: ``gvk`` is registered with another class.
            ValueError: ``gvk`` lacks a version or kind.
        """
        _check_complete(gvk)
        ref = ModelRef(module, class_name)
        with self._lock:
            existing = self._classes.get(gvk)
            if existing is not None:
                if (existing.__module__, existing.__qualname__) != (module, class_name):
                    self._check_free(gvk, ref.load())
                return
            pending = self._deferred.get(gvk)
            if pending == ref:
                return
            if pending is not None:
                raise AlreadyRegisteredError(
                    f"{gvk} is already registered as {pending.module}.{pending.name},"
                    f" not {module}.{class_name}"
                )
            self._set_deferred({**self._deferred, gvk: ref})

    def add_resource(self, resource: Resource[Any]) -> None:
        """Register a resource's kind and list kind, and remember it for :meth:`resources`.

        A resource whose models are given by :class:`~kgen_runtime.resource.ModelRef` and not
        imported yet is registered with :meth:`add_deferred`.

        Raises:
            AlreadyRegisteredError: a different resource, or another class, has this kind.
            TypeError: the resource's model or list model is not an :class:`APIObject`.
        """
        with self._lock:
            existing = self._resources.get(resource.gvk)
            if existing is not None and existing != resource:
                raise AlreadyRegisteredError(
                    f"a different resource is registered for {resource.gvk}"
                )
            if resource.models_imported:
                model, list_model = resource.model, resource.list_model
                if not (issubclass(model, APIObject) and issubclass(list_model, APIObject)):
                    raise TypeError(
                        f"{resource.kind}: model and list model must be APIObject classes"
                    )
                self._check_free(resource.gvk, model)
                self._check_free(resource.list_gvk, list_model)
                self.add_known_type(resource.gvk, model)
                self.add_known_type(resource.list_gvk, list_model)
            else:
                model_ref, list_ref = resource.model_ref, resource.list_model_ref
                self.add_deferred(resource.gvk, model_ref.module, model_ref.name)
                self.add_deferred(resource.list_gvk, list_ref.module, list_ref.name)
            self._resources = {**self._resources, resource.gvk: resource}

    def object_kind(self, obj: APIObject | type[APIObject]) -> GroupVersionKind:
        """The kind of an object or class (``runtime.ObjectKinds``, first answer).

        A registered class answers with its registered kind; when it is registered under
        several kinds, an instance whose own ``apiVersion``/``kind`` name one of them gets
        that one, otherwise the first registered. An :class:`Unstructured` object (or any
        unregistered instance) answers with its own ``apiVersion`` and ``kind``.

        Raises:
            NotRegisteredError: the class is not registered and (for an instance) the object
                does not carry a usable ``apiVersion`` and ``kind``.
        """
        cls = obj if isinstance(obj, type) else obj.__class__  # a lazy object: its model class
        kinds = self._kinds.get(cls, ())
        if not kinds and self._deferred:
            self._import_pending(cls.__module__)
            kinds = self._kinds.get(cls, ())
        if isinstance(obj, type):
            if not kinds:
                raise NotRegisteredError(cls=cls)
            return kinds[0]
        own = _own_kind(obj)
        if kinds:
            return own if own in kinds else kinds[0]
        if own is None:
            raise NotRegisteredError(cls=cls, reason="the object has no apiVersion and kind")
        return own

    def class_for(self, gvk: GroupVersionKind) -> type[APIObject]:
        """The class registered for ``gvk``.

        Raises:
            NotRegisteredError: nothing is registered for ``gvk``; the error lists what is
                registered in its group.
        """
        cls = self.lookup(gvk)
        if cls is None:
            raise NotRegisteredError(gvk=gvk, registered=self._kinds_in_group(gvk.group))
        return cls

    def lookup(self, gvk: GroupVersionKind) -> type[APIObject] | None:
        """The class registered for ``gvk``, or None: :meth:`class_for` without the error."""
        cls = self._classes.get(gvk)
        if cls is None and gvk in self._deferred:
            return self._import(gvk)
        return cls

    def recognizes(self, gvk: GroupVersionKind) -> bool:
        """Whether a class is registered for ``gvk`` (without importing a deferred one)."""
        return gvk in self._classes or gvk in self._deferred

    def new(self, gvk: GroupVersionKind) -> APIObject:
        """A new, empty object of kind ``gvk`` with ``apiVersion`` and ``kind`` set.

        Like Go's zero value, it skips the schema's construction rules (required fields
        are not filled in).

        Raises:
            NotRegisteredError: nothing is registered for ``gvk``.
        """
        obj = self.class_for(gvk).model_construct()
        obj.api_version = gvk.api_version
        obj.kind = gvk.kind
        return obj

    def all_known_types(self) -> dict[GroupVersionKind, type[APIObject]]:
        """A snapshot of every registered kind and its class, ordered by kind (this imports
        every deferred kind's module)."""
        for gvk in list(self._deferred):
            self._import(gvk)
        classes = self._classes
        return {gvk: classes[gvk] for gvk in sorted(classes)}

    def resources(self) -> list[Resource[Any]]:
        """The resources added with :meth:`add_resource`, in the order they were added."""
        return list(self._resources.values())

    def resource_for(self, gvk: GroupVersionKind) -> Resource[Any]:
        """The resource added for kind ``gvk``, without importing its model.

        Raises:
            NoResourceMatchError: no resource was added for ``gvk``.
        """
        resource = self._resources.get(gvk)
        if resource is None:
            raise NoResourceMatchError(f"no resource is registered for {gvk}")
        return resource

    def _import(self, gvk: GroupVersionKind) -> type[APIObject]:
        """Import the deferred class of ``gvk`` and register it as :meth:`add_known_type`
        does (which raises TypeError for a class that is not an :class:`APIObject`)."""
        ref = self._deferred.get(gvk)
        if ref is None:  # another thread imported it meanwhile
            return self._classes[gvk]
        try:
            cls = ref.load()  # outside the lock: the import may register into this scheme
        except ImportError as error:
            raise ImportError(f"cannot import the class registered for {gvk}: {error}") from error
        with self._lock:
            if gvk in self._deferred:
                self.add_known_type(gvk, cls)
        return self._classes[gvk]

    def _set_deferred(self, deferred: dict[GroupVersionKind, ModelRef]) -> None:
        self._deferred = deferred
        self._deferred_modules = frozenset(ref.module for ref in deferred.values())

    def _import_pending(self, module: str) -> None:
        """Import the deferred kinds whose classes live in ``module`` when it is imported
        already: a class from it can be asked about before the scheme needed it."""
        if module not in self._deferred_modules or module not in sys.modules:
            return
        for gvk in [gvk for gvk, ref in self._deferred.items() if ref.module == module]:
            self._import(gvk)

    def _check_free(self, gvk: GroupVersionKind, cls: type[APIObject]) -> None:
        pending = self._deferred.get(gvk)
        if pending is not None and (cls.__module__, cls.__qualname__) != (
            pending.module,
            pending.name,
        ):
            named = pending.load()  # the name may be an alias of ``cls``
            if named is not cls:
                raise AlreadyRegisteredError(
                    f"{gvk} is already registered as {pending.module}.{pending.name},"
                    f" not {cls.__qualname__}"
                )
        existing = self._classes.get(gvk)
        if existing is not None and existing is not cls:
            raise AlreadyRegisteredError(
                f"{gvk} is already registered as {existing.__qualname__}, not {cls.__qualname__}"
            )

    def _kinds_in_group(self, group: str) -> tuple[GroupVersionKind, ...]:
        known = (*self._classes, *self._deferred)
        return tuple(sorted(gvk for gvk in known if gvk.group == group))


def _check_complete(gvk: GroupVersionKind) -> None:
    if not gvk.kind or not gvk.version:
        raise ValueError(f"incomplete kind {gvk!r}: version and kind are required")


def _own_kind(obj: APIObject) -> GroupVersionKind | None:
    """The kind an object names itself, or None when it does not say (or says nonsense)."""
    if not obj.kind or not obj.api_version:
        return None
    try:
        return GroupVersion.parse(obj.api_version).with_kind(obj.kind)
    except ValueError:
        return None


class RESTMapper:
    """Maps resources (``foos``, ``foo``, short names) to kinds and back, with their scope.

    Names are matched case-insensitively against the plural, the singular, the short names
    and the kind; ``name.group`` and ``name.version.group`` narrow the search. An
    empty group or version in a query means "any", except that a resource of the core group
    wins over other groups for an empty group. When several versions of one group match,
    the version added first is preferred (it plays the role of the group's preferred
    version). Matches in several groups are ambiguous.
    """

    def __init__(self, resources: Iterable[Resource[Any]] = ()) -> None:
        self._lock = threading.Lock()
        self._by_kind: dict[GroupVersionKind, Resource[Any]] = {}
        for resource in resources:
            self.add(resource)

    def add(self, resource: Resource[Any]) -> None:
        """Add a resource; adding an equal one again is a no-op.

        Raises:
            AlreadyRegisteredError: a different resource is registered for the same kind.
        """
        with self._lock:
            existing = self._by_kind.get(resource.gvk)
            if existing == resource:
                return
            if existing is not None:
                raise AlreadyRegisteredError(
                    f"{resource.gvk} is already mapped to resource {existing.gvr}"
                )
            self._by_kind = {**self._by_kind, resource.gvk: resource}

    def resource_for(self, gvk: GroupVersionKind) -> Resource[Any]:
        """The resource serving kind ``gvk`` (``RESTMapping``).

        An empty ``gvk.version`` means the group's preferred version of the kind (the first
        one added), as ``RESTMapping(groupKind)`` without versions does.

        Raises:
            NoResourceMatchError: no resource serves ``gvk``.
        """
        resource = self._by_kind.get(gvk)
        if resource is None and not gvk.version:
            resource = next(
                (r for r in self._by_kind.values() if (r.group, r.kind) == (gvk.group, gvk.kind)),
                None,
            )
        if resource is None:
            raise NoResourceMatchError(f"no resource is known for {gvk}")
        return resource

    def kind_for(self, gvr: GroupVersionResource) -> GroupVersionKind:
        """The kind served at ``gvr``; empty group or version match any (see the class doc).

        Raises:
            NoResourceMatchError: nothing matches.
            AmbiguousResourceError: matches in several groups.
        """
        return self.find(gvr.resource, group=gvr.group, version=gvr.version).gvk

    def find(self, name: str, *, group: str = "", version: str = "") -> Resource[Any]:
        """The resource a user-typed name denotes, like ``kubectl get <name>`` resolves it.

        Without an explicit ``group``, ``name`` may carry one, as in kubectl:
        ``foos.v1alpha1.samplecontroller.k8s.io`` (resource.version.group) is tried first,
        then ``foos.samplecontroller.k8s.io`` (resource.group).

        Raises:
            NoResourceMatchError: nothing matches.
            AmbiguousResourceError: matches in several groups.
        """
        wanted = name.lower()
        if group or "." not in wanted:
            return self._find(name, wanted, group, version)
        resource, _, qualifier = wanted.partition(".")
        explicit_version, _, versioned_group = qualifier.partition(".")
        if versioned_group and not version:
            try:
                return self._find(name, resource, versioned_group, explicit_version)
            except NoResourceMatchError:
                pass
        return self._find(name, resource, qualifier, version)

    def _find(self, name: str, wanted: str, group: str, version: str) -> Resource[Any]:
        matches = [
            r
            for r in self._by_kind.values()
            if (not group or r.group == group)
            and (not version or r.version == version)
            and wanted in _names(r)
        ]
        if not group and any(r.group == "" for r in matches):
            matches = [r for r in matches if r.group == ""]
        if not matches:
            where = f" in group {group!r}" if group else ""
            where += f" at version {version!r}" if version else ""
            raise NoResourceMatchError(f"no resource named {name!r}{where}")
        first_per_group: dict[str, Resource[Any]] = {}
        for r in matches:
            first_per_group.setdefault(r.group, r)
        if len(first_per_group) > 1:
            candidates = tuple(first_per_group.values())
            listed = "; ".join(str(r.gvr) for r in candidates)
            raise AmbiguousResourceError(
                f"{name!r} matches several resources: {listed}", candidates
            )
        return matches[0]

    def scope_for(self, gvk: GroupVersionKind) -> Scope:
        """Whether kind ``gvk`` is namespaced or cluster-scoped.

        Raises:
            NoResourceMatchError: no resource serves ``gvk``.
        """
        return Scope.NAMESPACED if self.resource_for(gvk).namespaced else Scope.CLUSTER

    def resources(self) -> list[Resource[Any]]:
        """Every resource, in the order added."""
        return list(self._by_kind.values())


def _names(resource: Resource[Any]) -> tuple[str, ...]:
    short = (n.lower() for n in resource.short_names)
    return (resource.plural, resource.singular, resource.kind.lower(), *short)
