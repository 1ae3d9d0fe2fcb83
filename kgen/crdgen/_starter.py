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

from kgen_runtime.markers import ListMapKeys, ListType, Maximum, Minimum, PrinterColumn, resource
from kgen_runtime.meta import Condition, Field, KubeModel, KubeObject


class {kind}Spec(KubeModel):
    """The desired state of a {kind}."""

    message: str | None = None
    """A message the controller reports back in the status."""
    replicas: Annotated[int, Minimum(0), Maximum(100)] = 1
    """How many replicas to run."""


class {kind}Status(KubeModel):
    """The observed state of a {kind}."""

    observed_generation: int | None = None
    """The metadata.generation the controller last reconciled."""
    message: str | None = None
    """The message of the spec the controller last reconciled."""
    conditions: Annotated[list[Condition] | None, ListType("map"), ListMapKeys("type")] = None
    """Observations of the object's state, one per type."""


@resource(
    {group!r},
    {version!r},{options}
    status_subresource=True,
    printer_columns=(PrinterColumn("Replicas", "integer", ".spec.replicas"),),
)
class {kind}(KubeObject):
    """A {kind}."""

    spec: {kind}Spec = Field(default_factory={kind}Spec)
    status: {kind}Status | None = None
'''


def starter_api_module(
    group: str,
    version: str,
    kind: str,
    *,
    module_hint: str = "api",
    crd_dir: str = "config/crd",
    plural: str | None = None,
    namespaced: bool = True,
) -> str:
    """Python source declaring ``kind`` of ``group/version`` with a spec, a status and
    markers, ready for ``kgen crd``; ``module_hint`` and ``crd_dir`` fill in the command its
    docstring shows. ``plural`` (when not the marker's default, the lowercase kind plus
    ``s``) and ``namespaced=False`` become ``@resource`` options. ``kind`` must be a Python
    identifier (the scaffold checks it)."""
    if not kind.isidentifier():
        raise ValueError(f"{kind!r} is not a valid kind name")
    options = ""
    if not namespaced:
        options += '\n    scope="Cluster",'
    if plural is not None and plural != f"{kind.lower()}s":
        options += f"\n    plural={plural!r},"
    return _TEMPLATE.format(
        options=options,
        kind=kind,
        group=group,
        version=version,
        api_version=f"{group}/{version}",
        module_hint=module_hint,
        crd_dir=crd_dir,
    )
