"""How a field merges: the schema's list/map types and strategic-merge-patch directives.

Server-side apply (structured-merge-diff) and strategic merge patch need, per field, what the
OpenAPI schema says about it: ``x-kubernetes-list-type`` (``atomic``, ``set``, ``map``) with
``x-kubernetes-list-map-keys``, ``x-kubernetes-map-type`` (``atomic``, ``granular``), and for
built-in kinds ``x-kubernetes-patch-strategy``/``x-kubernetes-patch-merge-key``. Generated
models carry them per Python attribute in a ``__kgen_merge__`` class table (only the fields
that declare any); :func:`merge_rules` reads it. A type whose schema itself is atomic
(``LabelSelector``, ``ObjectReference``… in the built-in OpenAPI documents) says so in its
class's ``__kgen_map_type__``, read by :func:`map_type`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

__all__ = ["MergeRules", "map_type", "merge_rules"]


@dataclass(frozen=True, slots=True)
class MergeRules:
    """One field's merge metadata; ``None``/``()`` means the schema does not say."""

    list_type: str | None = None
    list_map_keys: tuple[str, ...] = ()
    map_type: str | None = None
    patch_strategy: str | None = None
    patch_merge_key: str | None = None


_NONE: Mapping[str, MergeRules] = MappingProxyType({})


def merge_rules(model: type) -> Mapping[str, MergeRules]:
    """The merge metadata of ``model``'s fields by Python attribute name (empty if none)."""
    rules: Mapping[str, MergeRules] = getattr(model, "__kgen_merge__", _NONE)
    return rules


def map_type(model: type) -> str | None:
    """The map type ``model``'s schema declares for every field of its type (``atomic``:
    replaced and owned as a whole), or None."""
    declared: str | None = getattr(model, "__kgen_map_type__", None)
    return declared
