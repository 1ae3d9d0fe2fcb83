"""Checked CRDs → the IR: types, names and shared models decided once, here.

Object schemas become models named after their path (``FooSpecTemplate``). Within a
group/version, structurally identical object schemas become one class; every other path that
leads to it gets an alias with its own path name, so the names a user imports do not change
when another CRD joins the package.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from kgen import ir, naming
from kgen.diagnostics import Diagnostic, GenerateError, Location
from kgen.load.crd import CRDSource, CRDVersion

__all__ = ["build_package"]

_OBJECT_META = "ObjectMeta"
_ROOT_FIELDS = ("apiVersion", "kind", "metadata")
# Attributes of the runtime's group-version client and informer bases.
_CLIENT_ATTRIBUTES = frozenset({"transport", "factory"})
_KNOWN_TYPES = frozenset({"object", "array", "string", "integer", "number", "boolean"})
_SCALARS: Mapping[str, ir.ScalarName] = {
    "string": "str",
    "integer": "int",
    "number": "float",
    "boolean": "bool",
}
# Literal[...] accepts these value types; other enums are checked at construction only.
_LITERAL_TYPES = (str, int, bool, type(None))


def build_package(name: str, crds: Sequence[CRDSource]) -> ir.Package:
    """Build the IR for every served version of ``crds``; raise GenerateError on problems."""
    problems: list[Diagnostic] = []
    by_gv: dict[tuple[str, str], list[tuple[CRDSource, CRDVersion]]] = {}
    seen: dict[tuple[str, str], CRDSource] = {}
    for crd in sorted(crds, key=lambda c: (c.group, c.kind, str(c.location))):
        previous = seen.setdefault((crd.group, crd.kind), crd)
        if previous is not crd:
            problems.append(
                Diagnostic(
                    crd.location.child("spec", "names", "kind"),
                    f"{crd.group}/{crd.kind} is also defined by {previous.location}",
                )
            )
            continue
        for version in crd.versions:
            if version.served:
                by_gv.setdefault((crd.group, version.name), []).append((crd, version))
    modules = _module_paths(sorted(by_gv))
    group_versions = []
    for key in sorted(by_gv):
        builder = _ModuleBuilder(*key, module=modules[key])
        group_versions.append(builder.build(by_gv[key]))
        problems.extend(builder.problems)
    if not group_versions and not problems:
        raise GenerateError([Diagnostic(Location("<inputs>"), "no served version in any CRD")])
    if problems:
        raise GenerateError(problems)
    return ir.Package(name=name, group_versions=tuple(group_versions))


def _module_paths(keys: Iterable[tuple[str, str]]) -> dict[tuple[str, str], tuple[str, str]]:
    """``samplecontroller.k8s.io`` → ``samplecontroller``; groups sharing a first label
    (``monitoring.coreos.com``, ``monitoring.example.org``) use their whole name instead."""
    keys = list(keys)
    short = {g: naming.module_name(g.split(".")[0]) if g else "core" for g, _ in keys}
    counts: dict[str, set[str]] = {}
    for group, label in short.items():
        counts.setdefault(label, set()).add(group)
    paths = {}
    for group, version in keys:
        label = short[group]
        if len(counts[label]) > 1:
            label = naming.module_name(group.replace(".", "_"))
        paths[(group, version)] = (label, naming.module_name(version))
    return paths


class _ModuleBuilder:
    """Builds one group/version module, collecting diagnostics."""

    def __init__(self, group: str, version: str, module: tuple[str, str]) -> None:
        self.group = group
        self.version = version
        self.module = module
        self.problems: list[Diagnostic] = []
        self.models: list[ir.Model] = []
        self.aliases: list[ir.Alias] = []
        self.taken: set[str] = set(naming.RESERVED_MODULE_NAMES)
        self._by_structure: dict[str, str] = {}

    def build(self, sources: list[tuple[CRDSource, CRDVersion]]) -> ir.GroupVersion:
        names = {}
        for crd, _ in sources:  # kinds and lists claim their names before any nested type
            model = self._claim(naming.class_name([crd.kind]))
            names[crd.kind] = (model, self._claim(naming.class_name([crd.list_kind])))
        kinds = [self._kind(crd, version, *names[crd.kind]) for crd, version in sources]
        return ir.GroupVersion(
            group=self.group,
            version=self.version,
            module=self.module,
            kinds=tuple(kinds),
            models=tuple(self.models),
            aliases=tuple(self.aliases),
        )

    def _accessor(self, plural: str) -> str:
        name = naming.attribute_name(plural)
        return f"{name}_" if name in _CLIENT_ATTRIBUTES else name

    def _claim(self, name: str) -> str:
        if name in self.taken:
            return naming.unique(f"{name}_", self.taken, suffix="2")
        self.taken.add(name)
        return name

    def _fail(self, location: Location, message: str) -> None:
        self.problems.append(Diagnostic(location, message))

    def _kind(self, crd: CRDSource, version: CRDVersion, model: str, list_model: str) -> ir.Kind:
        schema = version.schema
        location = version.schema_location
        fields = self._fields(schema, [crd.kind], location, reserved=_ROOT_FIELDS)
        self.models.append(
            ir.Model(
                name=model,
                fields=fields,
                description=_text(schema.get("description")),
                path=crd.kind,
                base="KubeObject",
                extensions=_extensions(schema),
            )
        )
        scale = version.scale_subresource
        return ir.Kind(
            kind=crd.kind,
            list_kind=crd.list_kind,
            plural=crd.plural,
            singular=crd.singular,
            namespaced=crd.namespaced,
            model=model,
            list_model=list_model,
            resource_constant=f"{naming.constant_name(crd.kind)}_RESOURCE",
            accessor=self._accessor(crd.plural),
            short_names=crd.short_names,
            categories=crd.categories,
            status_subresource=version.status_subresource,
            scale_subresource=(
                ir.ScaleSubresource(
                    spec_replicas_path=scale["specReplicasPath"],
                    status_replicas_path=scale["statusReplicasPath"],
                    label_selector_path=scale.get("labelSelectorPath"),
                )
                if scale
                else None
            ),
            printer_columns=tuple(
                ir.PrinterColumn(
                    name=c.name,
                    type=c.type,
                    json_path=c.json_path,
                    description=c.description,
                    format=c.format,
                    priority=c.priority,
                )
                for c in version.printer_columns
            ),
            storage=version.storage,
            deprecated=version.deprecated,
            deprecation_warning=version.deprecation_warning,
            description=_text(schema.get("description")),
        )

    def _fields(
        self,
        schema: Mapping[str, Any],
        path: list[str],
        location: Location,
        reserved: Sequence[str] = (),
    ) -> tuple[ir.Field, ...]:
        properties = schema.get("properties") or {}
        if not isinstance(properties, Mapping):
            self._fail(location.child("properties"), "must be a mapping of property schemas")
            return ()
        required = schema.get("required") or []
        if not isinstance(required, list):
            self._fail(location.child("required"), "must be a list of property names")
            required = []
        taken = {naming.attribute_name(r) for r in reserved}
        fields = []
        for key, sub in properties.items():
            wire = str(key)
            if wire in reserved:
                continue
            where = location.child("properties", wire)
            if not isinstance(sub, Mapping):
                self._fail(where, "must be a schema (a mapping)")
                continue
            type_ = self._type(sub, [*path, wire], where)
            rules = _rules(sub, required=wire in required)
            has_default = "default" in sub and _defaultable(type_, sub["default"])
            fields.append(
                ir.Field(
                    name=naming.unique(naming.attribute_name(wire), taken),
                    wire_name=wire,
                    type=type_,
                    description=_text(sub.get("description")),
                    nullable=bool(sub.get("nullable")),
                    has_default=has_default,
                    default=sub.get("default") if has_default else None,
                    format=_text(sub.get("format")) or None,
                    rules=rules,
                    extensions=_extensions(sub),
                )
            )
        return tuple(fields)

    def _type(self, schema: Mapping[str, Any], path: list[str], location: Location) -> ir.TypeRef:
        type_name = schema.get("type")
        if type_name is not None and type_name not in _KNOWN_TYPES:
            expected = ", ".join(sorted(_KNOWN_TYPES))
            self._fail(
                location.child("type"),
                f"unknown schema type {type_name!r}; expected one of {expected}",
            )
            return ir.Scalar("any")
        if schema.get("x-kubernetes-int-or-string") or _is_int_or_string(schema):
            return ir.Scalar("int_or_str")
        embedded = bool(schema.get("x-kubernetes-embedded-resource"))
        if type_name == "object" or (type_name is None and "properties" in schema) or embedded:
            return self._object(schema, path, location, embedded)
        if type_name == "array":
            items = schema.get("items")
            if items is None:
                return ir.ListOf(ir.Scalar("any"))
            if not isinstance(items, Mapping):
                self._fail(location.child("items"), "must be a schema (a mapping)")
                return ir.ListOf(ir.Scalar("any"))
            item_path = [*path[:-1], naming.singular(path[-1])]
            return ir.ListOf(
                self._type(items, item_path, location.child("items")),
                item_nullable=bool(items.get("nullable")),
            )
        if type_name is None:
            return ir.Scalar("any")
        scalar = ir.Scalar(_SCALARS[type_name])
        values = schema.get("enum")
        if (
            isinstance(values, list)
            and values
            and all(isinstance(v, _LITERAL_TYPES) for v in values)
        ):
            return ir.EnumOf(tuple(dict.fromkeys(values)), scalar)
        return scalar

    def _object(
        self, schema: Mapping[str, Any], path: list[str], location: Location, embedded: bool
    ) -> ir.TypeRef:
        extra = schema.get("additionalProperties")
        if not schema.get("properties") and not embedded:
            if isinstance(extra, Mapping):
                value_path = [*path, "Value"]
                value = self._type(extra, value_path, location.child("additionalProperties"))
                return ir.MapOf(value, value_nullable=bool(extra.get("nullable")))
            return ir.MapOf(ir.Scalar("any"))
        reserved = _ROOT_FIELDS if embedded else ()
        fields = self._fields(schema, path, location, reserved=reserved)
        if embedded:
            fields = _embedded_fields() + fields
        return ir.ModelRef(self._model(path, fields, schema))

    def _model(
        self, path: list[str], fields: tuple[ir.Field, ...], schema: Mapping[str, Any]
    ) -> str:
        """Register a model for ``path``, sharing an identical earlier one by alias."""
        structure = repr(fields)
        wanted = naming.class_name(path)
        canonical = self._by_structure.get(structure)
        if canonical is not None:
            if wanted not in self.taken:
                self.taken.add(wanted)
                self.aliases.append(ir.Alias(wanted, canonical))
            return canonical
        name = naming.unique(wanted, self.taken, suffix="2")
        self._by_structure[structure] = name
        self.models.append(
            ir.Model(
                name=name,
                fields=fields,
                description=_text(schema.get("description")),
                path=".".join(path),
                extensions=_extensions(schema),
            )
        )
        return name


def _embedded_fields() -> tuple[ir.Field, ...]:
    """apiVersion/kind/metadata of an ``x-kubernetes-embedded-resource`` object."""
    return (
        ir.Field(name="api_version", wire_name="apiVersion", type=ir.Scalar("str")),
        ir.Field(name="kind", wire_name="kind", type=ir.Scalar("str")),
        ir.Field(name="metadata", wire_name="metadata", type=ir.ModelRef(_OBJECT_META)),
    )


def _is_int_or_string(schema: Mapping[str, Any]) -> bool:
    """``anyOf: [{type: integer}, {type: string}]`` without the extension flag."""
    options = schema.get("anyOf")
    if not isinstance(options, list) or "type" in schema:
        return False
    types = {o.get("type") for o in options if isinstance(o, Mapping)}
    return types == {"integer", "string"}


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _extensions(schema: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in schema.items() if isinstance(k, str) and k.startswith("x-kubernetes-")}


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return value if math.isfinite(value) else None


def _count(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _rules(schema: Mapping[str, Any], *, required: bool) -> ir.Rules:
    enum = schema.get("enum")
    pattern = schema.get("pattern")
    return ir.Rules(
        required=required,
        enum=tuple(enum) if isinstance(enum, list) and enum else None,
        minimum=_number(schema.get("minimum")),
        maximum=_number(schema.get("maximum")),
        exclusive_minimum=schema.get("exclusiveMinimum") is True,
        exclusive_maximum=schema.get("exclusiveMaximum") is True,
        min_length=_count(schema.get("minLength")),
        max_length=_count(schema.get("maxLength")),
        min_items=_count(schema.get("minItems")),
        max_items=_count(schema.get("maxItems")),
        pattern=pattern if isinstance(pattern, str) else None,
        min_properties=_count(schema.get("minProperties")),
        max_properties=_count(schema.get("maxProperties")),
    )


def _is_json(value: Any) -> bool:
    if value is None or isinstance(value, str | bool | int):
        return True
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, list):
        return all(_is_json(v) for v in value)
    if isinstance(value, dict):
        return all(isinstance(k, str) and _is_json(v) for k, v in value.items())
    return False


def _contains_model(type_: ir.TypeRef) -> bool:
    if isinstance(type_, ir.ListOf):
        return _contains_model(type_.item)
    if isinstance(type_, ir.MapOf):
        return _contains_model(type_.value)
    return isinstance(type_, ir.ModelRef)


def _defaultable(type_: ir.TypeRef, default: Any) -> bool:
    """Defaults are exposed for fields of scalars, enums and lists/maps of them; defaults that
    hold objects are left to the server (they would have to be validated at import time)."""
    return not _contains_model(type_) and default is not None and _is_json(default)
