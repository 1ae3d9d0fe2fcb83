"""The run-time half of generated conversion scaffolding (Go's conversion-gen
``autoConvert_*`` functions, as data rather than code).

``kgen generate`` compares each spoke version of a kind with its hub (the storage version)
and writes, per spoke group/version, a ``conversion.py`` holding a :class:`SpokeScaffold`:
the wire paths that convert by themselves (same path, compatible schema) and those the
schemas cannot decide (only in the hub, only in the spoke, or a changed type). Its typed
factory (``foo_spoke(to_hub=..., from_hub=...)``) calls :meth:`SpokeScaffold.spoke`, which
copies the automatic paths on the wire dicts and calls the user's functions only for the
rest, refusing at build time when undecided paths are left to nobody.

A path is a tuple of wire names; :data:`EACH` stands for every item of a list or every value
of a map (``("spec", "ports", EACH, "port")`` reads ``spec.ports[*].port``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from dataclasses import dataclass
from enum import Enum
from typing import Any, Final, TypeAlias, TypeVar

from kgen_runtime.meta import KubeObject
from kgen_runtime.webhook._conversion import Spoke, declared_type, stash_fields, take_stashed

__all__ = ["EACH", "FieldPath", "SpokeScaffold", "format_path"]

H = TypeVar("H", bound=KubeObject)
S = TypeVar("S", bound=KubeObject)


class _Each(Enum):
    EACH = "[*]"

    def __repr__(self) -> str:
        return "EACH"


EACH: Final = _Each.EACH
"""A path segment standing for every item of a list or every value of a map."""

FieldPath: TypeAlias = tuple["str | _Each", ...]
"""A wire path: object keys, and :data:`EACH` for a list's items or a map's values."""

# A copy plan: key → None (copy the value whole) or the plan of its value.
_Plan: TypeAlias = dict["str | _Each", "_Plan | None"]


def format_path(path: FieldPath) -> str:
    """``("spec", "ports", EACH, "port")`` → ``spec.ports[*].port``."""
    text = ""
    for segment in path:
        if segment is EACH:
            text += "[*]"
        else:
            text += f".{segment}" if text else str(segment)
    return text


def _plan_of(paths: Collection[FieldPath]) -> _Plan:
    plan: _Plan = {"metadata": None}
    for path in paths:
        node = plan
        for segment in path[:-1]:
            child = node.setdefault(segment, {})
            if child is None:  # an enclosing path is copied whole already
                break
            node = child
        else:
            node[path[-1]] = None
    return plan


def _copy(value: Any, plan: _Plan) -> Any:
    """The parts of the wire ``value`` that ``plan`` names (sharing, not copying, leaves)."""
    if EACH in plan:
        each = plan[EACH]
        if each is None:
            return value
        if isinstance(value, list):
            return [_copy(item, each) for item in value]
        if isinstance(value, dict):
            return {key: _copy(item, each) for key, item in value.items()}
        return value
    if not isinstance(value, dict):
        return value
    copied = {}
    for key, child in plan.items():
        if key in value:
            copied[key] = value[key] if child is None else _copy(value[key], child)
    return copied


def _take(wire: dict[str, Any], path: tuple[str, ...]) -> Any:
    """The value at ``path`` of ``wire``, or None."""
    value: Any = wire
    for segment in path:
        if not isinstance(value, dict):
            return None
        value = value.get(segment)
    return value


def _put(wire: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    """Set ``path`` of ``wire`` to ``value``, making the objects missing (or null) on the
    way."""
    node = wire
    for segment in path[:-1]:
        child = node.get(segment)
        if not isinstance(child, dict):
            child = node[segment] = {}
        node = child
    node[path[-1]] = value


@dataclass(frozen=True, slots=True)
class SpokeScaffold:
    """What the generator found comparing one spoke version of a kind with its hub.

    ``automatic`` paths are copied as they are; ``hub_only``, ``spoke_only`` and
    ``changed`` are left to the user's functions, except the hub-only paths the user asks to
    *stash*: those are kept in the spoke's conversion annotation on the way from the hub and
    put back on the way to it, so hub → spoke → hub loses nothing without user code. Stash
    only the paths no function maps: a stashed value is put back before ``to_hub`` runs, so
    a mapped one would come back stale wherever ``to_hub`` sets nothing.

    ``metadata`` is always copied. Fields neither schema declares (which the API server
    prunes) are copied only inside objects copied whole.
    """

    kind: str
    automatic: tuple[FieldPath, ...]
    hub_only: tuple[FieldPath, ...] = ()
    spoke_only: tuple[FieldPath, ...] = ()
    changed: tuple[FieldPath, ...] = ()

    @property
    def stashable(self) -> tuple[str, ...]:
        """The hub-only paths that can be stashed: those outside lists and maps."""
        return tuple(format_path(p) for p in self.hub_only if EACH not in p)

    def spoke(
        self,
        spoke: type[S],
        hub: type[H],
        *,
        to_hub: Callable[[S, H], None] | None,
        from_hub: Callable[[H, S], None] | None,
        stash: Collection[str] = (),
        factory: str = "spoke",
    ) -> Spoke[S, H]:
        """The :class:`Spoke` converting ``spoke`` objects to and from ``hub`` objects.

        ``to_hub(source, hub)`` and ``from_hub(source, spoke)`` receive the source and the
        destination with every automatic path already copied (metadata included, the
        conversion annotation too), and fill in the rest; neither may change the source.

        Raises:
            TypeError: a function is missing while the schemas leave paths undecided, or
                ``stash`` names a path that is not a stashable hub-only one.
        """
        unknown = sorted(set(stash) - set(self.stashable))
        if unknown:
            raise TypeError(
                f"{factory}: cannot stash {', '.join(unknown)}: stash takes hub-only paths "
                f"outside lists and maps ({', '.join(self.stashable) or 'none here'})")
        stashed = tuple(tuple(str(s) for s in p) for p in self.hub_only
                        if EACH not in p and format_path(p) in stash)
        undecided = self._undecided(set(stash), spoke, hub)
        missing = [name for name, fn in (("to_hub", to_hub), ("from_hub", from_hub))
                   if fn is None]
        if undecided and missing:
            raise TypeError(
                f"{factory}: {' and '.join(missing)} required: the schemas cannot decide "
                f"{'; '.join(undecided)}")
        plan = _plan_of(self.automatic)
        return Spoke(
            spoke,
            to_hub=_converter(hub, plan, to_hub, restore=stashed, kind=self.kind),
            from_hub=_converter(spoke, plan, from_hub, keep=stashed, kind=self.kind),
        )

    def _undecided(self, stash: set[str], spoke: type[S], hub: type[H]) -> list[str]:
        hub_version = declared_type(hub)[0].rpartition("/")[2]
        spoke_version = declared_type(spoke)[0].rpartition("/")[2]
        reasons = [(p, f"only in {hub_version}") for p in self.hub_only
                   if format_path(p) not in stash]
        reasons += [(p, f"only in {spoke_version}") for p in self.spoke_only]
        reasons += [(p, "its type changed") for p in self.changed]
        return [f"{format_path(path)} ({why})" for path, why in sorted(
            reasons, key=lambda reason: format_path(reason[0]))]


_D = TypeVar("_D", bound=KubeObject)
_Source = TypeVar("_Source", bound=KubeObject)


def _converter(
    target: type[_D],
    plan: _Plan,
    fill: Callable[[_Source, _D], None] | None,
    *,
    kind: str,
    keep: tuple[tuple[str, ...], ...] = (),
    restore: tuple[tuple[str, ...], ...] = (),
) -> Callable[[_Source], _D]:
    """One direction: copy ``plan`` from the source's wire form, put back the ``restore``
    paths stashed on the source, ``fill`` in the rest, then stash the source's ``keep``
    paths (after ``fill``, which may take its own stashed fields out of the annotation)."""
    api_version, target_kind = declared_type(target)
    restore_keys = {format_path(p): p for p in restore}

    def convert(source: _Source) -> _D:
        wire: dict[str, Any] = source.model_dump(mode="json")
        converted: dict[str, Any] = _copy(wire, plan)
        converted["apiVersion"], converted["kind"] = api_version, target_kind
        if restore_keys:
            for key, value in take_stashed(converted, kind, restore_keys).items():
                _put(converted, restore_keys[key], value)
        result = target.model_validate(converted)
        if fill is not None:
            fill(source, result)
        if keep:
            stash_fields(result, kind, {format_path(p): _take(wire, p) for p in keep})
        return result

    return convert

