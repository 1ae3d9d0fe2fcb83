"""One generated module (group/version) built from schemas: types, names, shared models.

Object schemas become models named after their path (``FooSpecTemplate``). Within a
group/version, structurally identical anonymous object schemas become one class; every other
path that leads to it gets an alias with its own path name, so the names a user imports do
not change when another CRD joins the package. Named schemas (OpenAPI ``$ref``) are resolved
by a hook the caller provides.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from kgen import ir, naming
from kgen.crdgen import condition_schema
from kgen.diagnostics import Diagnostic, Location

__all__ = ["KindNames", "KindSpec", "ModuleBuilder", "RefResolver"]

RefResolver = Callable[[str, Location], ir.TypeRef]
"""Turns a ``$ref`` met in a schema into a type (a ModelRef, or a scalar for well-known types)."""


@dataclass(frozen=True, slots=True)
class KindSpec:
    """What a served kind's module needs besides its schema, from a CRD or OpenAPI paths."""

    kind: str
    list_kind: str
    plural: str
    singular: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    status_subresource: bool = False
    scale_subresource: ir.ScaleSubresource | None = None
    printer_columns: tuple[ir.PrinterColumn, ...] = ()
    storage: bool = False
    deprecated: bool = False
    deprecation_warning: str | None = None


@dataclass(frozen=True, slots=True)
class KindNames:
    """The module-level names a kind's generated code defines, claimed in its module."""

    model: str
    list_model: str
    client: str
    lister: str
    informer: str
    resource_constant: str
    extract_function: str


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


class ModuleBuilder:
    """Builds one group/version module, collecting diagnostics."""

    def __init__(
        self,
        group: str,
        version: str,
        module: tuple[str, str],
        package_names: set[str],
        resolve_ref: RefResolver | None = None,
    ) -> None:
        """``package_names`` are the names taken in the package-level modules, shared by
        every module's builder (each module's client class is imported by the clientset)."""
        self.group = group
        self.package_names = package_names
        self.version = version
        self.module = module
        self.resolve_ref = resolve_ref
        self.problems: list[Diagnostic] = []
        self.models: list[ir.Model] = []
        self.aliases: list[ir.Alias] = []
        # Each kind's class and the rest of its IR, waiting for its async twins' names
        # (claimed when the module is finished).
        self._kinds: list[tuple[str, Callable[..., ir.Kind]]] = []
        self.taken: set[str] = set(naming.RESERVED_MODULE_NAMES)
        self._client_class: str | None = None
        self._result: ir.GroupVersion | None = None
        self._apply_taken: set[str] = set(naming.RESERVED_APPLY_NAMES)
        self._by_structure: dict[str, str] = {}
        self._alias_targets: dict[str, str] = {}

    def result(self) -> ir.GroupVersion:
        """The finished module. The names of the async twins (each kind's async client and
        informer, this module's async client) are claimed here, after every other name of
        the module, so they never displace a name the blocking code has without them."""
        if self._result is None:
            client_class = self._claim_client_class()
            kinds = tuple(
                kind(
                    async_client_class=self.claim(naming.async_client_class(model)),
                    async_informer_class=self.claim(naming.async_informer_class(model)),
                )
                for model, kind in self._kinds
            )
            self._result = ir.GroupVersion(
                group=self.group,
                version=self.version,
                module=self.module,
                kinds=kinds,
                models=tuple(self.models),
                client_class=client_class,
                async_client_class=self._claim_package_class(
                    naming.async_group_version_client_class(self.module)
                ),
                aliases=tuple(self.aliases),
            )
        return self._result

    def claim_kinds(self, kinds: Sequence[tuple[str, str]]) -> list[KindNames]:
        """Reserve the names of kinds given as (kind, list kind): first every kind's class,
        so kinds keep their plain names, then their list classes, then the names derived
        from them (client, lister, informer, resource constant), then this module's client
        class."""
        models = [self.claim(naming.class_name([kind])) for kind, _ in kinds]
        list_models = [self.claim(naming.class_name([list_kind])) for _, list_kind in kinds]
        names = [
            KindNames(
                model=model,
                list_model=list_model,
                client=self.claim(naming.client_class(model)),
                lister=self.claim(naming.lister_class(model)),
                informer=self.claim(naming.informer_class(model)),
                resource_constant=self.claim(naming.resource_constant(kind)),
                extract_function=naming.unique(naming.extract_function(kind), self._apply_taken),
            )
            for (kind, _), model, list_model in zip(kinds, models, list_models, strict=True)
        ]
        self._claim_client_class()
        return names

    def _claim_client_class(self) -> str:
        """Claimed in this module and in the package (the clientset imports it)."""
        if self._client_class is None:
            wanted = naming.group_version_client_class(self.module)
            self._client_class = self._claim_package_class(wanted)
        return self._client_class

    def _claim_package_class(self, wanted: str) -> str:
        name = naming.unique(wanted, self.taken | self.package_names, suffix="2")
        self.taken.add(name)
        self.package_names.add(name)
        return name

    def claim(self, name: str) -> str:
        """Reserve a class name (kinds and named types claim theirs before nested types)."""
        if name in self.taken:
            return naming.unique(f"{name}_", self.taken, suffix="2")
        self.taken.add(name)
        return name

    def add_named_model(self, name: str, schema: Mapping[str, Any], location: Location) -> None:
        """Add a model for a named (``$ref``-able) schema under an already claimed name."""
        self.models.append(
            ir.Model(
                name=name,
                fields=self._fields(schema, [name], location),
                description=_text(schema.get("description")),
                path=name,
                extensions=_extensions(schema),
            )
        )

    def _accessor(self, plural: str) -> str:
        name = naming.attribute_name(plural)
        return f"{name}_" if name in _CLIENT_ATTRIBUTES else name

    def _fail(self, location: Location, message: str) -> None:
        self.problems.append(Diagnostic(location, message))

    def add_kind(
        self, spec: KindSpec, schema: Mapping[str, Any], location: Location, names: KindNames
    ) -> None:
        """Add a served kind (names claimed by ``claim_kinds``): its root model (a
        KubeObject) and its description."""
        fields = self._fields(schema, [spec.kind], location, reserved=_ROOT_FIELDS)
        self.models.append(
            ir.Model(
                name=names.model,
                fields=fields,
                description=_text(schema.get("description")),
                path=spec.kind,
                base="KubeObject",
                extensions=_extensions(schema),
            )
        )
        kind = functools.partial(
                ir.Kind,
                kind=spec.kind,
                list_kind=spec.list_kind,
                plural=spec.plural,
                singular=spec.singular,
                namespaced=spec.namespaced,
                model=names.model,
                list_model=names.list_model,
                resource_constant=names.resource_constant,
                client_class=names.client,
                lister_class=names.lister,
                informer_class=names.informer,
                accessor=self._accessor(spec.plural),
                extract_function=names.extract_function,
                short_names=spec.short_names,
                categories=spec.categories,
                status_subresource=spec.status_subresource,
                scale_subresource=spec.scale_subresource,
                printer_columns=spec.printer_columns,
                storage=spec.storage,
                deprecated=spec.deprecated,
                deprecation_warning=spec.deprecation_warning,
                description=_text(schema.get("description")),
            )
        self._kinds.append((names.model, kind))

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
                    merge=_merge_rules(sub),
                    extensions=_extensions(sub),
                )
            )
        return tuple(fields)

    def _type(self, schema: Mapping[str, Any], path: list[str], location: Location) -> ir.TypeRef:
        ref = _reference(schema)
        if ref is not None:
            if self.resolve_ref is None:
                self._fail(location, f"$ref {ref!r}: CRD schemas must be self-contained")
                return ir.Scalar("any")
            return self.resolve_ref(ref, location)
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
        if not embedded and _is_meta_condition(schema):
            # metav1.Condition, as controller-gen writes it for a []metav1.Condition field:
            # the runtime's Condition, with its helpers (set_status_condition, …).
            return ir.ModelRef("Condition", ir.RUNTIME_MODULE)
        reserved = _ROOT_FIELDS if embedded else ()
        fields = self._fields(schema, path, location, reserved=reserved)
        if embedded and not fields:
            # Any object at all (a Pod template, a Secret…): the runtime's lossless type.
            return ir.ModelRef("Unstructured", ir.RUNTIME_MODULE)
        if embedded:
            fields = _embedded_fields() + fields
        return ir.ModelRef(self._model(path, fields, schema))

    def _canonical(self, type_: ir.TypeRef) -> ir.TypeRef:
        """``type_`` with aliases replaced by the classes they name (structural identity)."""
        if isinstance(type_, ir.ListOf):
            return dataclasses.replace(type_, item=self._canonical(type_.item))
        if isinstance(type_, ir.MapOf):
            return dataclasses.replace(type_, value=self._canonical(type_.value))
        if isinstance(type_, ir.ModelRef) and type_.name in self._alias_targets:
            return dataclasses.replace(type_, name=self._alias_targets[type_.name])
        return type_

    def _model(
        self, path: list[str], fields: tuple[ir.Field, ...], schema: Mapping[str, Any]
    ) -> str:
        """Register a model for ``path``, sharing an identical earlier one by alias.

        Returns the name annotations should use: the path's own name (an alias of the shared
        class) where it is free, so a field reads ``FooSpecTemplate`` whichever kind's
        identical schema came first.
        """
        canonical_fields = (dataclasses.replace(f, type=self._canonical(f.type)) for f in fields)
        structure = repr(tuple(canonical_fields))
        wanted = naming.class_name(path)
        canonical = self._by_structure.get(structure)
        if canonical is not None:
            if wanted in self.taken:
                return canonical
            self.taken.add(wanted)
            self.aliases.append(ir.Alias(wanted, canonical))
            self._alias_targets[wanted] = canonical
            return wanted
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


def _is_meta_condition(schema: Mapping[str, Any]) -> bool:
    """Whether an object schema is metav1.Condition's as controller-gen writes it for
    ``[]metav1.Condition``: exactly the schema of the runtime's ``Condition`` (descriptions,
    formats and rules included), so the models still give the CRD's schema back. A schema
    that only resembles it keeps a class of its own."""
    return bool(schema.get("properties")) and schema == condition_schema()


def _reference(schema: Mapping[str, Any]) -> str | None:
    """The target of ``{$ref: X}`` or of OpenAPI's ``{allOf: [{$ref: X}]}`` wrapping."""
    ref = schema.get("$ref")
    if isinstance(ref, str):
        return ref
    options = schema.get("allOf")
    if isinstance(options, list) and len(options) == 1 and isinstance(options[0], Mapping):
        inner = options[0].get("$ref")
        return inner if isinstance(inner, str) else None
    return None


def _embedded_fields() -> tuple[ir.Field, ...]:
    """apiVersion/kind/metadata of an ``x-kubernetes-embedded-resource`` object."""
    return (
        ir.Field(name="api_version", wire_name="apiVersion", type=ir.Scalar("str")),
        ir.Field(name="kind", wire_name="kind", type=ir.Scalar("str")),
        ir.Field(
            name="metadata",
            wire_name="metadata",
            type=ir.ModelRef(_OBJECT_META, ir.RUNTIME_MODULE),
        ),
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


def _merge_rules(schema: Mapping[str, Any]) -> ir.MergeRules | None:
    """The schema's list/map type and patch directives, if it states any."""
    keys = schema.get("x-kubernetes-list-map-keys")
    rules = ir.MergeRules(
        list_type=_word(schema.get("x-kubernetes-list-type")),
        list_map_keys=tuple(str(k) for k in keys) if isinstance(keys, list) else (),
        map_type=_word(schema.get("x-kubernetes-map-type")),
        patch_strategy=_word(schema.get("x-kubernetes-patch-strategy")),
        patch_merge_key=_word(schema.get("x-kubernetes-patch-merge-key")),
    )
    return None if rules == ir.MergeRules() else rules


def _word(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


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
