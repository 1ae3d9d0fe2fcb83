"""What the runtime knows about one served kind: the generated code's description of a resource.

Generated packages declare one ``Resource`` per kind (``FOO_RESOURCE``); the scheme, REST
mapper, clients, listers, informers and fakes all read it, so the facts about a kind are
written down exactly once.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from kgen_runtime.groupversion import (
    GroupVersion,
    GroupVersionKind,
    GroupVersionResource,
)

if TYPE_CHECKING:
    from kgen_runtime.meta import KubeModel

__all__ = ["ModelRef", "Resource", "ScaleSubresource"]

T = TypeVar("T", bound="KubeModel")


@dataclass(frozen=True, slots=True)
class ScaleSubresource:
    """The JSON paths of a CRD's ``scale`` subresource."""

    spec_replicas_path: str
    status_replicas_path: str
    label_selector_path: str | None = None


@dataclass(frozen=True, slots=True)
class ModelRef:
    """A model class named by module and class name, imported when first needed.

    Generated packages describe their kinds with these so that importing the package (or its
    scheme) does not import, and build, every model module: ``import corpus.scheme`` for the
    CRD corpus otherwise spends seconds creating classes most programs never use.
    """

    module: str
    name: str

    def load(self) -> type[Any]:
        """Import :attr:`module` and return its attribute :attr:`name`.

        Raises:
            ImportError: the module cannot be imported, or does not define :attr:`name`.
        """
        module = importlib.import_module(self.module)
        try:
            cls = getattr(module, self.name)
        except AttributeError:
            raise ImportError(
                f"module {self.module!r} does not define {self.name!r}", name=self.module
            ) from None
        if not isinstance(cls, type):
            raise ImportError(f"{self.module}.{self.name} is not a class", name=self.module)
        return cls


_FACTS = (
    "group",
    "version",
    "kind",
    "plural",
    "singular",
    "namespaced",
    "list_kind",
    "short_names",
    "categories",
    "status_subresource",
    "scale_subresource",
)
"""The attributes of a :class:`Resource` besides its models, in constructor order."""


class Resource(Generic[T]):
    """A kind served by the API: its names, scope, subresources and Python classes.

    ``model`` and ``list_model`` may be given as :class:`ModelRef`; the class is then imported
    on first read of the attribute, so a resource's names and scope are known without it.
    Resources are immutable, hashable and compare by their facts (a model given by reference
    equals the class it names).
    """

    __slots__ = (
        "_list_model",
        "_model",
        "_refs",
        "categories",
        "group",
        "kind",
        "list_kind",
        "namespaced",
        "plural",
        "scale_subresource",
        "short_names",
        "singular",
        "status_subresource",
        "version",
    )

    group: str
    version: str
    kind: str
    plural: str
    singular: str
    namespaced: bool
    list_kind: str
    short_names: tuple[str, ...]
    categories: tuple[str, ...]
    status_subresource: bool
    scale_subresource: ScaleSubresource | None
    _model: type[T] | ModelRef
    _list_model: type[KubeModel] | ModelRef
    _refs: tuple[ModelRef, ModelRef]

    def __init__(
        self,
        group: str,
        version: str,
        kind: str,
        plural: str,
        singular: str,
        namespaced: bool,
        model: type[T] | ModelRef,
        list_model: type[KubeModel] | ModelRef,
        list_kind: str = "",
        short_names: tuple[str, ...] = (),
        categories: tuple[str, ...] = (),
        status_subresource: bool = False,
        scale_subresource: ScaleSubresource | None = None,
    ) -> None:
        values = {
            "group": group,
            "version": version,
            "kind": kind,
            "plural": plural,
            "singular": singular,
            "namespaced": namespaced,
            "list_kind": list_kind,
            "short_names": short_names,
            "categories": categories,
            "status_subresource": status_subresource,
            "scale_subresource": scale_subresource,
            "_model": model,
            "_list_model": list_model,
            "_refs": (_ref(model), _ref(list_model)),
        }
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError(f"Resource is immutable: cannot set {name!r}")

    def __delattr__(self, name: str) -> None:
        raise AttributeError(f"Resource is immutable: cannot delete {name!r}")

    def __reduce__(self) -> tuple[type[Resource[T]], tuple[Any, ...]]:
        facts = self._facts()
        return (Resource, (*facts[:6], self._model, self._list_model, *facts[6:]))

    @property
    def model(self) -> type[T]:
        """The kind's class (imported now if it was given as a :class:`ModelRef`)."""
        model = self._model
        if isinstance(model, ModelRef):
            model = model.load()
            object.__setattr__(self, "_model", model)
        return model

    @property
    def list_model(self) -> type[KubeModel]:
        """The list kind's class (imported now if it was given as a :class:`ModelRef`)."""
        model = self._list_model
        if isinstance(model, ModelRef):
            model = model.load()
            object.__setattr__(self, "_list_model", model)
        return model

    @property
    def models_imported(self) -> bool:
        """Whether both classes are at hand (given as classes, or imported since)."""
        return not isinstance(self._model, ModelRef) and not isinstance(self._list_model, ModelRef)

    @property
    def model_ref(self) -> ModelRef:
        """The kind's class by module and name as given (or as the class says), without
        importing it."""
        return self._refs[0]

    @property
    def list_model_ref(self) -> ModelRef:
        """The list kind's class by module and name, without importing it."""
        return self._refs[1]

    def _facts(self) -> tuple[Any, ...]:
        return tuple(getattr(self, name) for name in _FACTS)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Resource):
            return NotImplemented
        return (
            self._facts() == other._facts()
            and _same_model(self._model, other._model)
            and _same_model(self._list_model, other._list_model)
        )

    def __hash__(self) -> int:
        return hash((self._facts(), self._refs))

    def __repr__(self) -> str:
        facts = ", ".join(f"{name}={getattr(self, name)!r}" for name in _FACTS)
        return f"Resource({facts}, model={self._model!r}, list_model={self._list_model!r})"

    @property
    def group_version(self) -> GroupVersion:
        return GroupVersion(self.group, self.version)

    @property
    def gvk(self) -> GroupVersionKind:
        return GroupVersionKind(self.group, self.version, self.kind)

    @property
    def list_gvk(self) -> GroupVersionKind:
        return GroupVersionKind(self.group, self.version, self.list_kind or f"{self.kind}List")

    @property
    def gvr(self) -> GroupVersionResource:
        return GroupVersionResource(self.group, self.version, self.plural)

    @property
    def api_version(self) -> str:
        return self.group_version.api_version

    def describe(self) -> dict[str, Any]:
        """The discovery (``APIResource``) view of this kind."""
        return {
            "name": self.plural,
            "singularName": self.singular,
            "namespaced": self.namespaced,
            "kind": self.kind,
            "shortNames": list(self.short_names),
            "categories": list(self.categories),
        }


def _ref(model: type[Any] | ModelRef) -> ModelRef:
    return model if isinstance(model, ModelRef) else ModelRef(model.__module__, model.__qualname__)


def _same_model(a: type[Any] | ModelRef, b: type[Any] | ModelRef) -> bool:
    """Two classes are the same model when identical; a reference matches by name."""
    if isinstance(a, ModelRef) or isinstance(b, ModelRef):
        return _ref(a) == _ref(b)
    return a is b
