"""Small stand-ins for Kubernetes objects used by the cache tests."""

from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Meta:
    name: str
    namespace: str | None = None
    resource_version: str | None = None
    labels: dict[str, str] | None = None
    managed_fields: list[Any] | None = None


@dataclass
class Obj:
    """A KubeObject-like value: ``.metadata`` plus a payload, with ``deepcopy()``."""

    metadata: Meta
    spec: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def deepcopy(self) -> Obj:
        return copy.deepcopy(self)


def obj(
    name: str,
    namespace: str | None = "ns",
    rv: str | None = "1",
    spec: str = "",
    labels: dict[str, str] | None = None,
) -> Obj:
    return Obj(Meta(name, namespace, rv, labels), spec)
