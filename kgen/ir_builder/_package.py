"""Assemble the package IR from every input, checking what spans inputs."""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence

from kgen import ir, naming
from kgen.diagnostics import Diagnostic, GenerateError, Location
from kgen.ir_builder._conversion import with_conversions
from kgen.ir_builder._crd import crd_modules, served_group_versions
from kgen.ir_builder._openapi import openapi_modules
from kgen.load.crd import CRDSource
from kgen.load.openapi import OpenAPISource

__all__ = ["build_package"]


def build_package(
    name: str, crds: Sequence[CRDSource], openapi: Sequence[OpenAPISource] = ()
) -> ir.Package:
    """Build the IR for every served version; raise GenerateError listing all problems."""
    problems: list[Diagnostic] = []
    unique: list[CRDSource] = []
    seen: dict[tuple[str, str], CRDSource] = {}
    for crd in sorted(crds, key=lambda c: (c.group, c.kind, str(c.location))):
        previous = seen.setdefault((crd.group, crd.kind), crd)
        if previous is crd:
            unique.append(crd)
        else:
            problems.append(
                Diagnostic(
                    crd.location.child("spec", "names", "kind"),
                    f"{crd.group}/{crd.kind} is also defined by {previous.location}",
                )
            )
    problems.extend(_list_kind_conflicts(unique))
    package_names = set(naming.RESERVED_PACKAGE_NAMES)
    builtin, builtin_problems = openapi_modules(openapi, package_names)
    problems.extend(builtin_problems)
    for module in builtin:
        for kind in module.kinds:
            if (module.group, kind.kind) in seen:
                problems.append(
                    Diagnostic(
                        seen[(module.group, kind.kind)].location.child("spec", "names", "kind"),
                        f"{module.group}/{kind.kind} is also defined by an OpenAPI document",
                    )
                )
    taken = {m.module for m in builtin}
    paths = _module_paths(sorted(served_group_versions(unique)), taken)
    custom, custom_problems = crd_modules(unique, paths, package_names)
    problems.extend(custom_problems)
    modules = with_conversions(sorted(builtin + custom, key=lambda m: m.module))
    if not modules and not problems:
        problems.append(Diagnostic(Location("<inputs>"), "no served version in any input"))
    if problems:
        raise GenerateError(problems)
    crd_texts = sorted(json.dumps(c.manifest, sort_keys=True, separators=(",", ":"))
                       for c in unique)
    return ir.Package(
        name=name, group_versions=tuple(modules), groups=_groups(modules, package_names),
        crds=tuple(crd_texts),
    )


def _list_kind_conflicts(crds: Sequence[CRDSource]) -> list[Diagnostic]:
    """A kind that is another CRD's list kind in the same group (the API server refuses the
    second CRD's names: both would be registered as one group/version/kind)."""
    list_kinds = {(crd.group, crd.list_kind): crd for crd in crds}
    return [
        Diagnostic(
            crd.location.child("spec", "names", "kind"),
            f"{crd.group}/{crd.kind} is also the listKind of {other.location}",
        )
        for crd in crds
        if (other := list_kinds.get((crd.group, crd.kind))) is not None
    ]


def _groups(modules: Sequence[ir.GroupVersion], package_names: set[str]) -> tuple[ir.Group, ...]:
    """One group per directory, in module order, with its served versions. The async
    factory's group classes are claimed after every blocking one, so they never displace
    one."""
    by_directory: dict[str, list[ir.GroupVersion]] = {}
    for gv in modules:
        by_directory.setdefault(gv.module[0], [])
        if gv.kinds:
            by_directory[gv.module[0]].append(gv)
    informers = [
        naming.unique(naming.group_informers_class(directory), package_names, suffix="2")
        for directory in by_directory
    ]
    async_informers = [
        naming.unique(naming.async_group_informers_class(directory), package_names, suffix="2")
        for directory in by_directory
    ]
    return tuple(
        ir.Group(
            name=versions[0].group if versions else "",
            module=directory,
            informers_class=informers_class,
            async_informers_class=async_informers_class,
            versions=tuple(versions),
        )
        for (directory, versions), informers_class, async_informers_class in zip(
            by_directory.items(), informers, async_informers, strict=True
        )
    )


def _module_paths(
    keys: Iterable[tuple[str, str]], taken: set[tuple[str, str]]
) -> dict[tuple[str, str], tuple[str, str]]:
    """``samplecontroller.k8s.io`` → ``samplecontroller``; groups sharing a first label
    (``monitoring.coreos.com``, ``monitoring.example.org``), or a label an OpenAPI module
    uses, take their whole name instead."""
    keys = list(keys)
    short = {g: naming.module_name(g.split(".")[0]) if g else "core" for g, _ in keys}
    groups_by_label: dict[str, set[str]] = {}
    for group, label in short.items():
        groups_by_label.setdefault(label, set()).add(group)
    taken_labels = {label for label, _ in taken}
    paths = {}
    for group, version in keys:
        label = short[group]
        if len(groups_by_label[label]) > 1 or label in taken_labels:
            label = naming.module_name(group.replace(".", "_"))
        paths[(group, version)] = (label, naming.module_name(version))
    return paths
