"""Group/version/kind/resource value types (apimachinery's runtime/schema).

Plain frozen values with no dependencies, so every layer can use them.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["GroupVersion", "GroupVersionKind", "GroupVersionResource"]


@dataclass(frozen=True, slots=True, order=True)
class GroupVersion:
    """An API group and version; the core group is the empty string."""

    group: str
    version: str

    @property
    def api_version(self) -> str:
        """The ``apiVersion`` string: ``"v1"`` for core, ``"group/version"`` otherwise."""
        return f"{self.group}/{self.version}" if self.group else self.version

    @classmethod
    def parse(cls, api_version: str) -> GroupVersion:
        """Split an ``apiVersion`` string; raises ValueError on more than one slash."""
        group, sep, version = api_version.rpartition("/")
        if "/" in group or not version or (sep and not group):
            raise ValueError(f"unexpected apiVersion {api_version!r}")
        return cls(group, version)

    def with_kind(self, kind: str) -> GroupVersionKind:
        return GroupVersionKind(self.group, self.version, kind)

    def with_resource(self, resource: str) -> GroupVersionResource:
        return GroupVersionResource(self.group, self.version, resource)

    def __str__(self) -> str:
        return self.api_version


@dataclass(frozen=True, slots=True, order=True)
class GroupVersionKind:
    """Identifies a type of object: ``samplecontroller.k8s.io/v1alpha1, Kind=Foo``."""

    group: str
    version: str
    kind: str

    @property
    def group_version(self) -> GroupVersion:
        return GroupVersion(self.group, self.version)

    @property
    def api_version(self) -> str:
        return self.group_version.api_version

    def __str__(self) -> str:
        return f"{self.api_version}, Kind={self.kind}"


@dataclass(frozen=True, slots=True, order=True)
class GroupVersionResource:
    """Identifies an HTTP resource: ``samplecontroller.k8s.io/v1alpha1, Resource=foos``."""

    group: str
    version: str
    resource: str

    @property
    def group_version(self) -> GroupVersion:
        return GroupVersion(self.group, self.version)

    def __str__(self) -> str:
        return f"{self.group_version.api_version}, Resource={self.resource}"
