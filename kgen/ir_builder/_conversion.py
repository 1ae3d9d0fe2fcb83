"""Compare each spoke version of a multi-version kind with its hub (the storage version):
which wire paths convert by themselves and which the schemas cannot decide (Go's
conversion-gen: ``autoConvert_*`` for matching fields, "requires manual conversion" for
the rest).

A path converts automatically when it has the same wire path in both versions and a
compatible schema, recursively: the same scalar type (enums compare by their base type, as
Go's string types do; validation rules such as bounds or patterns are not compared, the
server checks them), lists and maps of compatible items, objects whose fields all convert.
A path in one version only, or whose shape changed (a string became an object), is left to
the user. An object all of whose fields convert is reported as one path, copied whole.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from kgen import ir, naming

__all__ = ["with_conversions"]

_ROOT_FIELDS = frozenset({"apiVersion", "kind", "metadata"})
"""Root fields the runtime sets (apiVersion, kind) or always copies (metadata)."""

_RUNTIME_IMPORTS = frozenset(
    {"annotations", "Callable", "Literal", "Sequence", "EACH", "Spoke", "SpokeScaffold"}
)
"""Names a ``conversion`` module imports besides its models."""

_ModelKey = tuple[tuple[str, str] | None, str]


def with_conversions(modules: Sequence[ir.GroupVersion]) -> list[ir.GroupVersion]:
    """``modules`` with the conversions of every spoke group/version filled in.

    A kind is converted when more than one of its versions is served and its storage
    version is one of them; OpenAPI documents' kinds have no storage version, so none.
    """
    hubs: dict[tuple[str, str], tuple[ir.GroupVersion, ir.Kind]] = {}
    for gv in modules:
        for kind in gv.kinds:
            if kind.storage:
                hubs[(gv.group, kind.kind)] = (gv, kind)
    models = _ModelIndex(modules)
    result = []
    for gv in modules:
        spokes = [
            (kind, hubs[(gv.group, kind.kind)])
            for kind in gv.kinds
            if not kind.storage and (gv.group, kind.kind) in hubs
        ]
        if spokes:
            taken = set(_RUNTIME_IMPORTS) | {kind.model for kind, _ in spokes}
            hub_modules = sorted({hub_gv.module for _, (hub_gv, _) in spokes})
            aliases = {
                module: naming.unique(naming.hub_alias(module), taken) for module in hub_modules
            }
            conversions = tuple(
                _conversion(gv, kind, hub_gv, hub_kind, models, taken, aliases[hub_gv.module])
                for kind, (hub_gv, hub_kind) in spokes
            )
            gv = dataclasses.replace(gv, conversions=conversions)
        result.append(gv)
    return result


def _conversion(
    spoke_gv: ir.GroupVersion,
    spoke: ir.Kind,
    hub_gv: ir.GroupVersion,
    hub: ir.Kind,
    models: _ModelIndex,
    taken: set[str],
    hub_alias: str,
) -> ir.Conversion:
    hub_root = models.get((hub_gv.module, hub.model))
    spoke_root = models.get((spoke_gv.module, spoke.model))
    diff = _Diff()
    comparison = _Comparison(models, hub_gv.module, spoke_gv.module)
    comparison.fields(hub_root, spoke_root, (), diff, skip=_ROOT_FIELDS)
    return ir.Conversion(
        kind=spoke.kind,
        model=spoke.model,
        hub_module=hub_gv.module,
        hub_alias=hub_alias,
        hub_api_version=hub_gv.api_version,
        hub_model=hub.model,
        factory=naming.unique(naming.spoke_factory(spoke.kind), taken),
        scaffold=naming.unique(naming.scaffold_constant(spoke.kind), taken),
        stashable_type=naming.unique(naming.stashable_type(spoke.model), taken, suffix="2"),
        automatic=tuple(diff.automatic),
        hub_only=tuple(diff.hub_only),
        spoke_only=tuple(diff.spoke_only),
        changed=tuple(diff.changed),
    )


class _ModelIndex:
    """Every generated model (aliases resolved) by (module, class name)."""

    def __init__(self, modules: Iterable[ir.GroupVersion]) -> None:
        self._models: dict[_ModelKey, ir.Model] = {}
        for gv in modules:
            own = {m.name: m for m in gv.models}
            self._models.update(((gv.module, name), model) for name, model in own.items())
            for alias in gv.aliases:
                self._models[(gv.module, alias.name)] = own[alias.target]

    def get(self, key: _ModelKey) -> ir.Model:
        return self._models[key]

    def find(self, key: _ModelKey) -> ir.Model | None:
        return self._models.get(key)


@dataclass
class _Diff:
    automatic: list[ir.FieldPath] = field(default_factory=list)
    hub_only: list[ir.FieldPath] = field(default_factory=list)
    spoke_only: list[ir.FieldPath] = field(default_factory=list)
    changed: list[ir.FieldPath] = field(default_factory=list)

    def extend(self, other: _Diff) -> None:
        self.automatic += other.automatic
        self.hub_only += other.hub_only
        self.spoke_only += other.spoke_only
        self.changed += other.changed


class _Comparison:
    """Compares the types of two group/version modules, path by path."""

    def __init__(
        self, models: _ModelIndex, hub: tuple[str, str], spoke: tuple[str, str]
    ) -> None:
        self._models = models
        self._hub = hub
        self._spoke = spoke
        self._open: set[tuple[str, str]] = set()

    def fields(
        self,
        hub: ir.Model,
        spoke: ir.Model,
        path: ir.FieldPath,
        diff: _Diff,
        skip: frozenset[str] = frozenset(),
    ) -> bool:
        """Add the differences of two objects' fields to ``diff``; True when every field
        converts as it is (nothing was added then: the caller copies the object whole)."""
        hub_fields = {f.wire_name: f for f in hub.fields if f.wire_name not in skip}
        spoke_fields = {f.wire_name: f for f in spoke.fields if f.wire_name not in skip}
        found = _Diff()
        whole = True
        for name in sorted(hub_fields.keys() | spoke_fields.keys()):
            here = (*path, name)
            if name not in spoke_fields:
                found.hub_only.append(here)
            elif name not in hub_fields:
                found.spoke_only.append(here)
            elif self.types(hub_fields[name].type, spoke_fields[name].type, here, found):
                found.automatic.append(here)
                continue
            whole = False
        if whole and path:
            return True
        diff.extend(found)
        return False

    def types(self, hub: ir.TypeRef, spoke: ir.TypeRef, path: ir.FieldPath, diff: _Diff) -> bool:
        """Like :meth:`fields`, for the values at ``path``."""
        hub, spoke = _base(hub), _base(spoke)
        if isinstance(hub, ir.ListOf) and isinstance(spoke, ir.ListOf):
            return self._each(hub.item, spoke.item, path, diff)
        if isinstance(hub, ir.MapOf) and isinstance(spoke, ir.MapOf):
            return self._each(hub.value, spoke.value, path, diff)
        if isinstance(hub, ir.ModelRef) and isinstance(spoke, ir.ModelRef):
            return self._objects(hub, spoke, path, diff)
        if isinstance(hub, ir.Scalar) and hub == spoke:
            return True
        diff.changed.append(path)
        return False

    def _each(self, hub: ir.TypeRef, spoke: ir.TypeRef, path: ir.FieldPath, diff: _Diff) -> bool:
        found = _Diff()
        if self.types(hub, spoke, (*path, None), found):
            return True
        if found.changed == [(*path, None)]:  # the items themselves changed shape
            diff.changed.append(path)
            return False
        diff.extend(found)
        return False

    def _objects(
        self, hub: ir.ModelRef, spoke: ir.ModelRef, path: ir.FieldPath, diff: _Diff
    ) -> bool:
        hub_model = self._models.find((hub.module or self._hub, hub.name))
        spoke_model = self._models.find((spoke.module or self._spoke, spoke.name))
        if hub_model is None or spoke_model is None:  # the runtime's types (ObjectMeta, …)
            if hub == spoke:
                return True
            diff.changed.append(path)
            return False
        pair = (hub_model.name, spoke_model.name)
        if pair in self._open:  # a recursive type: as compatible as the level above
            return True
        self._open.add(pair)
        try:
            return self.fields(hub_model, spoke_model, path, diff)
        finally:
            self._open.discard(pair)


def _base(type_: ir.TypeRef) -> ir.TypeRef:
    """Enums convert like their base scalar: the values allowed are validation."""
    return type_.base if isinstance(type_, ir.EnumOf) else type_

