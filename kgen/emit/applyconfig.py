"""What an ``applyconfigurations`` module prints: field annotations and imports.

Apply configurations mirror the models: the same attributes, each ``T | Unset | None``
where a model's nested class ``Foo`` becomes ``FooApplyConfiguration``. The runtime's meta/v1
types that have an apply configuration there (``ObjectMeta``, ``LabelSelector``…) map to it;
the rest (``Status``, ``ListMeta``, ``Unstructured``…) are sent as plain JSON objects.
"""

from __future__ import annotations

from typing import Any

from kgen import ir
from kgen.emit import pyexpr
from kgen_runtime.meta import wire_name

__all__ = ["RUNTIME_APPLY_TYPES", "apply_annotation", "apply_imports", "apply_wire_names"]

RUNTIME_APPLY_TYPES = frozenset(
    {
        "Condition",
        "FieldSelectorRequirement",
        "LabelSelector",
        "LabelSelectorRequirement",
        "ObjectMeta",
        "OwnerReference",
    }
)
"""The runtime meta types that ``kgen_runtime.apply`` has an ``…ApplyConfiguration`` of."""

_JSON_OBJECT = "dict[str, Any]"


def _expression(type_: ir.TypeRef) -> str:
    if isinstance(type_, ir.ListOf):
        item = _expression(type_.item)
        return f"list[{_optional(item) if type_.item_nullable else item}]"
    if isinstance(type_, ir.MapOf):
        value = _expression(type_.value)
        return f"dict[str, {_optional(value) if type_.value_nullable else value}]"
    if not isinstance(type_, ir.ModelRef):
        return pyexpr.type_expression(type_)
    if type_.module == ir.RUNTIME_MODULE:
        return f"{type_.name}ApplyConfiguration" if _has_runtime_apply(type_) else _JSON_OBJECT
    if type_.module is None:
        return type_.apply_class
    return f"{sibling_alias(type_.module)}.{type_.apply_class}"


def _has_runtime_apply(ref: ir.ModelRef) -> bool:
    return ref.name in RUNTIME_APPLY_TYPES


def _optional(expression: str) -> str:
    return expression if expression == "Any" else f"{expression} | None"


def apply_annotation(field: ir.Field) -> str:
    """``T | Unset | None``: unset (left out) and ``None`` (sent as null) differ."""
    expression = _expression(field.type)
    return "Any" if expression == "Any" else f"{expression} | Unset | None"


def sibling_alias(module: tuple[str, str]) -> str:
    """How an applyconfigurations module imports another group/version's (``_core_v1``)."""
    return f"_{pyexpr.module_alias(module)}"


def apply_wire_names(model: ir.Model) -> dict[str, str]:
    """The fields whose wire name is not their attribute's default one."""
    return {f.name: f.wire_name for f in model.fields if f.wire_name != wire_name(f.name)}


def _types_in(type_: ir.TypeRef) -> list[ir.TypeRef]:
    if isinstance(type_, ir.ListOf):
        return [type_, *_types_in(type_.item)]
    if isinstance(type_, ir.MapOf):
        return [type_, *_types_in(type_.value)]
    return [type_]


def apply_imports(gv: ir.GroupVersion) -> dict[str, Any]:
    """The names an applyconfigurations module needs (only those it uses)."""
    types = [t for m in gv.models for f in m.fields for t in _types_in(f.type)]
    refs = [t for t in types if isinstance(t, ir.ModelRef)]
    typing_names = set()
    if ir.Scalar("any") in types or any(
        r.module == ir.RUNTIME_MODULE and not _has_runtime_apply(r) for r in refs
    ):
        typing_names.add("Any")
    if any(isinstance(t, ir.EnumOf) for t in types):
        typing_names.add("Literal")
    if any(m.base == "KubeObject" for m in gv.models) or any(
        apply_wire_names(m) for m in gv.models
    ):
        typing_names.add("ClassVar")
    fields = [f for m in gv.models for f in m.fields]
    runtime = {"UNSET"} if fields else set()
    if any(apply_annotation(f) != "Any" for f in fields):
        runtime.add("Unset")
    runtime.update(
        f"{r.name}ApplyConfiguration"
        for r in refs
        if r.module == ir.RUNTIME_MODULE and _has_runtime_apply(r)
    )
    if any(m.base == "KubeObject" for m in gv.models):
        runtime.add("ObjectApplyConfiguration")
    if any(m.base != "KubeObject" for m in gv.models):
        runtime.add("ApplyConfiguration")
    siblings = sorted({r.module for r in refs if r.module not in (None, ir.RUNTIME_MODULE)})
    return {
        "typing": sorted(typing_names),
        "runtime": pyexpr.sort_names(sorted(runtime)),
        "siblings": [{"path": ".".join(m), "alias": sibling_alias(m)} for m in siblings if m],
        "exports": pyexpr.sort_names(
            [m.apply_class for m in gv.models]
            + [a.apply_class for a in gv.aliases]
            + [k.extract_function for k in gv.kinds]
        ),
    }
