"""CRDs → group/version modules (every served version of every CRD)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kgen import ir
from kgen.diagnostics import Diagnostic
from kgen.ir_builder._module import KindSpec, ModuleBuilder
from kgen.load.crd import CRDSource, CRDVersion

__all__ = ["crd_modules"]


def crd_modules(
    crds: Sequence[CRDSource],
    paths: Mapping[tuple[str, str], tuple[str, str]],
    package_names: set[str],
) -> tuple[list[ir.GroupVersion], list[Diagnostic]]:
    """Build one module per (group, version); ``paths`` gives each its package path;
    ``package_names`` are the names taken in the package-level modules."""
    by_gv: dict[tuple[str, str], list[tuple[CRDSource, CRDVersion]]] = {}
    for crd in crds:
        for version in crd.versions:
            if version.served:
                by_gv.setdefault((crd.group, version.name), []).append((crd, version))
    modules = []
    problems: list[Diagnostic] = []
    for key in sorted(by_gv):
        builder = ModuleBuilder(*key, module=paths[key], package_names=package_names)
        kinds = by_gv[key]
        names = builder.claim_kinds([(crd.kind, crd.list_kind) for crd, _ in kinds])
        for (crd, version), kind_names in zip(kinds, names, strict=True):
            builder.add_kind(
                _kind_spec(crd, version), version.schema, version.schema_location, kind_names
            )
        modules.append(builder.result())
        problems.extend(builder.problems)
    return modules, problems


def served_group_versions(crds: Sequence[CRDSource]) -> set[tuple[str, str]]:
    return {(c.group, v.name) for c in crds for v in c.versions if v.served}


def _kind_spec(crd: CRDSource, version: CRDVersion) -> KindSpec:
    scale = version.scale_subresource
    return KindSpec(
        kind=crd.kind,
        list_kind=crd.list_kind,
        plural=crd.plural,
        singular=crd.singular,
        namespaced=crd.namespaced,
        short_names=crd.short_names,
        categories=crd.categories,
        status_subresource=version.status_subresource,
        scale_subresource=ir.ScaleSubresource(
            spec_replicas_path=scale["specReplicasPath"],
            status_replicas_path=scale["statusReplicasPath"],
            label_selector_path=scale.get("labelSelectorPath"),
        )
        if scale
        else None,
        printer_columns=version.printer_columns,
        storage=version.storage,
        deprecated=version.deprecated,
        deprecation_warning=version.deprecation_warning,
    )
