"""A starter API module for ``kgen init --api-from python``: the kind as Python types."""

from __future__ import annotations

__all__ = ["starter_api_module"]

_TEMPLATE = '''\
"""The {kind} API, {api_version}: the source of truth for its CRD.

After changing it, regenerate the CRD with ``kgen crd {module_hint} -o {crd_dir}``
(``--verify`` in CI fails while the committed CRD is stale).
"""

from __future__ import annotations

from typing import Annotated

from kgen_runtime.markers import Maximum, Minimum, PrinterColumn, resource
from kgen_runtime.meta import Field, KubeModel, KubeObject


class {kind}Spec(KubeModel):
    """The desired state of a {kind}."""

    replicas: Annotated[int, Minimum(0), Maximum(100)] = 1
    """How many replicas to run."""


class {kind}Status(KubeModel):
    """The observed state of a {kind}."""

    ready_replicas: int | None = None
    """How many replicas are ready."""


@resource(
    {group!r},
    {version!r},
    status_subresource=True,
    printer_columns=(PrinterColumn("Replicas", "integer", ".spec.replicas"),),
)
class {kind}(KubeObject):
    """A {kind}."""

    spec: {kind}Spec = Field(default_factory={kind}Spec)
    status: {kind}Status | None = None
'''


def starter_api_module(
    group: str, version: str, kind: str, *, module_hint: str = "api", crd_dir: str = "config/crd"
) -> str:
    """Python source declaring ``kind`` of ``group/version`` with a spec, a status and
    markers, ready for ``kgen crd``; ``module_hint`` and ``crd_dir`` fill in the command its
    docstring shows. ``kind`` must be a Python identifier (the scaffold checks it)."""
    if not kind.isidentifier():
        raise ValueError(f"{kind!r} is not a valid kind name")
    return _TEMPLATE.format(
        kind=kind,
        group=group,
        version=version,
        api_version=f"{group}/{version}",
        module_hint=module_hint,
        crd_dir=crd_dir,
    )
