"""OpenAPI v3 documents → group/version modules.

Named schemas become classes named as in Go (``io.k8s.api.apps.v1.DeploymentSpec`` →
``DeploymentSpec``) in the module of their Go package (``apps/v1``), so ``apps/v1`` refers
to ``core/v1``'s ``PodTemplateSpec`` instead of copying it. apimachinery's meta types map to
the runtime's hand-written ones, and a few well-known types to scalars.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

from kgen import ir, naming
from kgen.diagnostics import Diagnostic, Location
from kgen.ir_builder._module import KindSpec, ModuleBuilder
from kgen.load.openapi import OpenAPIKind, OpenAPISource

__all__ = ["openapi_modules", "package_module"]

_META = "io.k8s.apimachinery.pkg.apis.meta.v1."
_RUNTIME_TYPES = {
    f"{_META}{name}": name
    for name in (
        "ObjectMeta", "ListMeta", "OwnerReference", "ManagedFieldsEntry", "LabelSelector",
        "LabelSelectorRequirement", "FieldSelectorRequirement", "Condition", "Status",
        "StatusDetails", "StatusCause",
    )
}
_SCALAR_TYPES: Mapping[str, ir.ScalarName] = {
    f"{_META}Time": "str",
    f"{_META}MicroTime": "str",
    f"{_META}Duration": "str",
    f"{_META}FieldsV1": "any",
    "io.k8s.apimachinery.pkg.api.resource.Quantity": "int_or_str",
    "io.k8s.apimachinery.pkg.util.intstr.IntOrString": "int_or_str",
    "io.k8s.apimachinery.pkg.runtime.RawExtension": "any",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON": "any",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrArray": "any",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrBool": "any",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaPropsOrStringArray": (
        "any"
    ),
}
_REF_PREFIX = "#/components/schemas/"


def package_module(schema_name: str) -> tuple[str, str]:
    """``io.k8s.api.apps.v1.Deployment`` → ``("apps", "v1")``."""
    parts = schema_name.split(".")[:-1]
    return naming.module_name(parts[-2]), naming.module_name(parts[-1])


def openapi_modules(
    sources: Sequence[OpenAPISource], package_names: set[str]
) -> tuple[list[ir.GroupVersion], list[Diagnostic]]:
    """Build the modules of every Go package the documents' kinds need; ``package_names``
    are the names taken in the package-level modules."""
    return _Builder(sources, package_names).build()


class _Builder:
    def __init__(self, sources: Sequence[OpenAPISource], package_names: set[str]) -> None:
        self.package_names = package_names
        self.schemas: dict[str, Mapping[str, Any]] = {}
        self.locations: dict[str, Location] = {}
        for source in sources:
            for name, schema in source.schemas.items():
                self.schemas.setdefault(name, schema)
                self.locations.setdefault(
                    name, source.location.child("components", "schemas", name)
                )
        self.kinds = sorted(
            {(k.group, k.version, k.kind): k for s in sources for k in s.kinds}.values(),
            key=lambda k: (k.group, k.version, k.kind),
        )
        self.kind_modules = _kind_modules(self.kinds)
        self.builders: dict[tuple[str, str], ModuleBuilder] = {}
        self.named: dict[str, ir.ModelRef] = {}
        self.problems: list[Diagnostic] = []

    def build(self) -> tuple[list[ir.GroupVersion], list[Diagnostic]]:
        module_groups: dict[tuple[str, str], str] = {}
        for kind in self.kinds:  # kinds first, so their classes get the plain names
            module = self.kind_modules[kind.schema]
            other = module_groups.setdefault(module, kind.group)
            if other != kind.group:
                self.problems.append(
                    Diagnostic(
                        self.locations[kind.schema],
                        f"{kind.group or 'core'}/{kind.version} {kind.kind} would share module "
                        f"{'/'.join(module)} with group {other or 'core'} (same Go package name)",
                    )
                )
                continue
            builder = self._builder(module, kind.group)
            (names,) = builder.claim_kinds([(kind.kind, f"{kind.kind}List")])
            self.named[kind.schema] = ir.ModelRef(names.model, builder.module)
            builder.add_kind(
                _kind_spec(kind), self.schemas[kind.schema], self.locations[kind.schema], names
            )
        modules = [self.builders[key].result() for key in sorted(self.builders)]
        for builder in self.builders.values():
            self.problems.extend(builder.problems)
        return modules, self.problems

    def _builder(self, module: tuple[str, str], group: str | None) -> ModuleBuilder:
        builder = self.builders.get(module)
        if builder is None:
            builder = ModuleBuilder(group or "", module[1], module, self.package_names)
            builder.resolve_ref = partial(self._resolve, builder)
            self.builders[module] = builder
        elif group is not None and not builder.group:
            builder.group = group
        return builder

    def _resolve(self, origin: ModuleBuilder, ref: str, location: Location) -> ir.TypeRef:
        name = ref.removeprefix(_REF_PREFIX)
        if name in _RUNTIME_TYPES:
            return ir.ModelRef(_RUNTIME_TYPES[name], ir.RUNTIME_MODULE)
        if name in _SCALAR_TYPES:
            return ir.Scalar(_SCALAR_TYPES[name])
        target = self.named.get(name)
        if target is None:
            schema = self.schemas.get(name)
            if schema is None or not ref.startswith(_REF_PREFIX):
                self.problems.append(Diagnostic(location, f"unresolvable $ref {ref!r}"))
                return ir.Scalar("any")
            builder = self._builder(package_module(name), None)
            target = ir.ModelRef(builder.claim(naming.class_name([name.rsplit(".", 1)[-1]])),
                                 builder.module)
            self.named[name] = target  # before the fields: schemas may refer to themselves
            builder.add_named_model(target.name, schema, self.locations[name])
        return target if target.module != origin.module else ir.ModelRef(target.name)


def _kind_modules(kinds: Sequence[OpenAPIKind]) -> dict[str, tuple[str, str]]:
    """Each kind schema's module: its Go package's (``apps/v1``), except that kinds of a
    CRD-served group (schemas named ``com.example.apps.v1.Widget`` by apiextensions-apiserver)
    whose package another group uses too take their whole group name (``apps_example_com``),
    as CRD inputs do."""
    groups: dict[tuple[str, str], set[str]] = {}
    for kind in kinds:
        groups.setdefault(package_module(kind.schema), set()).add(kind.group)
    modules = {}
    for kind in kinds:
        module = package_module(kind.schema)
        crd_schema = ".".join([*reversed(kind.group.split(".")), kind.version, kind.kind])
        if len(groups[module]) > 1 and kind.schema == crd_schema:
            module = (naming.module_name(kind.group.replace(".", "_")), module[1])
        modules[kind.schema] = module
    return modules


def _kind_spec(kind: OpenAPIKind) -> KindSpec:
    return KindSpec(
        kind=kind.kind,
        list_kind=f"{kind.kind}List",
        plural=kind.plural,
        singular=kind.kind.lower(),
        namespaced=kind.namespaced,
        status_subresource="status" in kind.subresources,
        scale_subresource=ir.ScaleSubresource(".spec.replicas", ".status.replicas")
        if "scale" in kind.subresources
        else None,
        storage=True,
    )
