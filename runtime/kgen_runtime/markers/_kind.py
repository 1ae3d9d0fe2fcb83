"""Kind-level markers: what a CRD says about a kind besides its schema.

The Python spelling of controller-gen's ``+groupName``, ``+kubebuilder:resource``,
``+kubebuilder:subresource``, ``+kubebuilder:printcolumn``, ``+kubebuilder:storageversion``
and ``+kubebuilder:deprecatedversion``::

    @resource("example.com", "v1", short_names=("wd",), status_subresource=True)
    class Widget(KubeObject):
        spec: WidgetSpec
        status: WidgetStatus | None = None

Object-level markers (CEL rules on a whole object, ``MinProperties``…) go on a model class
with :func:`object_markers`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from pydantic.fields import FieldInfo

from kgen_runtime.markers._fields import Marker
from kgen_runtime.resource import ScaleSubresource

if TYPE_CHECKING:  # imported late: KubeModel's subclass hook imports this package
    from kgen_runtime.meta import KubeModel, KubeObject

__all__ = ["KindMarkers", "PrinterColumn", "kind_markers", "object_markers", "resource"]

ModelT = TypeVar("ModelT", bound="type[KubeModel]")
ObjectT = TypeVar("ObjectT", bound="type[KubeObject]")


@dataclass(frozen=True, slots=True)
class PrinterColumn:
    """An ``additionalPrinterColumns`` entry (``kubectl get`` column)."""

    name: str
    type: Literal["integer", "number", "string", "boolean", "date"]
    json_path: str
    description: str = ""
    format: str = ""
    priority: int = 0


@dataclass(frozen=True, slots=True)
class KindMarkers:
    """Everything :func:`resource` records about a kind (``cls.__kgen_kind__``)."""

    group: str
    version: str
    kind: str
    plural: str
    singular: str
    list_kind: str
    scope: Literal["Namespaced", "Cluster"] = "Namespaced"
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    printer_columns: tuple[PrinterColumn, ...] = ()
    status_subresource: bool = False
    scale_subresource: ScaleSubresource | None = None
    storage: bool | None = None
    """``None``: the storage version if it is the kind's only version."""
    served: bool = True
    deprecated: bool = False
    deprecation_warning: str | None = None


def resource(
    group: str,
    version: str,
    *,
    kind: str | None = None,
    scope: Literal["Namespaced", "Cluster"] = "Namespaced",
    plural: str | None = None,
    singular: str | None = None,
    list_kind: str | None = None,
    short_names: tuple[str, ...] = (),
    categories: tuple[str, ...] = (),
    printer_columns: tuple[PrinterColumn, ...] = (),
    status_subresource: bool = False,
    scale_subresource: ScaleSubresource | None = None,
    storage: bool | None = None,
    served: bool = True,
    deprecated: bool = False,
    deprecation_warning: str | None = None,
) -> Callable[[ObjectT], ObjectT]:
    """Declare a :class:`~kgen_runtime.meta.KubeObject` subclass a kind of ``group/version``.

    The kind defaults to the class name, the plural to its lowercase form plus ``s`` and the
    singular to its lowercase form (as controller-gen does); the class's ``api_version`` and
    ``kind`` defaults become ``group/version`` and the kind, so a constructed object dumps
    them. Several versions of a kind (one class per version) make one CRD; exactly one of
    them says ``storage=True`` unless there is only one.
    """

    def declare(cls: ObjectT) -> ObjectT:
        from kgen_runtime.meta import KubeObject

        if not (isinstance(cls, type) and issubclass(cls, KubeObject)):
            raise TypeError(f"@resource needs a KubeObject subclass, got {cls!r}")
        name = kind or cls.__name__
        markers = KindMarkers(
            group=group,
            version=version,
            kind=name,
            plural=plural or f"{name.lower()}s",
            singular=singular or name.lower(),
            list_kind=list_kind or f"{name}List",
            scope=scope,
            short_names=tuple(short_names),
            categories=tuple(categories),
            printer_columns=tuple(printer_columns),
            status_subresource=status_subresource,
            scale_subresource=scale_subresource,
            storage=storage,
            served=served,
            deprecated=deprecated,
            deprecation_warning=deprecation_warning,
        )
        cls.__kgen_kind__ = markers  # type: ignore[attr-defined]
        _set_default(cls, "api_version", f"{group}/{version}" if group else version)
        _set_default(cls, "kind", name)
        return cls

    return declare


def kind_markers(cls: type[Any]) -> KindMarkers | None:
    """What :func:`resource` declared on ``cls`` itself (not inherited), or ``None``."""
    markers = cls.__dict__.get("__kgen_kind__")
    return markers if isinstance(markers, KindMarkers) else None


def object_markers(*markers: Marker) -> Callable[[ModelT], ModelT]:
    """Attach object-level markers to a model class (``XValidation`` across fields,
    ``MinProperties``, ``MapType``, ``PreserveUnknownFields``…): they apply wherever the
    class is used, as controller-gen's markers on a Go type do."""

    def attach(cls: ModelT) -> ModelT:
        cls.__kgen_markers__ = (*cls.__dict__.get("__kgen_markers__", ()), *markers)  # type: ignore[attr-defined]
        return cls

    return attach


def _set_default(cls: type[KubeObject], name: str, value: str) -> None:
    """Give an inherited ``api_version``/``kind`` field a new default (pydantic rebuilds)."""
    field = cls.__pydantic_fields__[name]
    if field.default == value:
        return
    cls.__pydantic_fields__[name] = FieldInfo.merge_field_infos(field, default=value)
    if cls.__pydantic_complete__:  # models build lazily (defer_build): usually not yet
        cls.model_rebuild(force=True)
