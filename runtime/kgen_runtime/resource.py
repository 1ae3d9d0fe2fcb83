"""What the runtime knows about one served kind: the generated code's description of a resource.

Generated packages declare one ``Resource`` per kind (``FOO_RESOURCE``); the scheme, REST
mapper, clients, listers, informers and fakes all read it, so the facts about a kind are
written down exactly once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from kgen_runtime.groupversion import (
    GroupVersion,
    GroupVersionKind,
    GroupVersionResource,
)

if TYPE_CHECKING:
    from kgen_runtime.meta import KubeModel

__all__ = ["Resource", "ScaleSubresource"]

T = TypeVar("T", bound="KubeModel")


@dataclass(frozen=True, slots=True)
class ScaleSubresource:
    """The JSON paths of a CRD's ``scale`` subresource."""

    spec_replicas_path: str
    status_replicas_path: str
    label_selector_path: str | None = None


@dataclass(frozen=True, slots=True)
class Resource(Generic[T]):
    """A kind served by the API: its names, scope, subresources and Python classes."""

    group: str
    version: str
    kind: str
    plural: str
    singular: str
    namespaced: bool
    model: type[T]
    list_model: type[KubeModel]
    list_kind: str = ""
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    status_subresource: bool = False
    scale_subresource: ScaleSubresource | None = None

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
