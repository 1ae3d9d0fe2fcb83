"""What a ``conversion`` module prints: its conversions' paths as code and as text."""

from __future__ import annotations

from typing import Any

from kgen import ir
from kgen.emit import pyexpr
from kgen_runtime.webhook import EACH, format_path

__all__ = ["conversion_context", "path_literal", "path_text", "summary"]


def path_text(path: ir.FieldPath) -> str:
    """How the runtime spells a path (``spec.ports[*].port``), in messages and ``stash``."""
    return format_path(tuple(EACH if segment is None else segment for segment in path))


def path_literal(path: ir.FieldPath) -> str:
    """A path as the runtime's ``FieldPath`` literal: ``("spec", "ports", EACH, "port")``."""
    parts = ["EACH" if segment is None else pyexpr.literal(segment) for segment in path]
    return f"({parts[0]},)" if len(parts) == 1 else f"({', '.join(parts)})"


def conversion_context(gv: ir.GroupVersion) -> dict[str, Any]:
    """The imports and exports of a spoke group/version's ``conversion`` module."""
    conversions = gv.conversions
    paths = [p for c in conversions for p in (*c.automatic, *c.hub_only, *c.spoke_only,
                                              *c.changed)]
    stashing = any(c.stashable for c in conversions)
    hubs = sorted({(".".join(c.hub_module), c.hub_alias) for c in conversions})
    return {
        "hub_imports": hubs,
        "typing_imports": ["Literal"] if stashing else [],
        "abc_imports": ["Callable", "Sequence"] if stashing else ["Callable"],
        "runtime_imports": (["EACH"] if any(None in p for p in paths) else [])
        + ["Spoke", "SpokeScaffold"],
        "spoke_models": pyexpr.sort_names(sorted({c.model for c in conversions})),
        "summaries": {c.factory: summary(c, gv.version) for c in conversions},
        "conversion_exports": pyexpr.sort_names(
            [c.factory for c in conversions]
            + [c.scaffold for c in conversions]
            + [c.stashable_type for c in conversions if c.stashable]
        ),
    }


def summary(conversion: ir.Conversion, version: str) -> str:
    """What the generator found: the automatic paths, and the undecided ones with why."""
    hub_version = conversion.hub_api_version.rpartition("/")[2]
    automatic = ", ".join(path_text(p) for p in conversion.automatic) or "nothing else"
    undecided = sorted(
        [(path_text(p), f"only in {hub_version}") for p in conversion.hub_only]
        + [(path_text(p), f"only in {version}") for p in conversion.spoke_only]
        + [(path_text(p), "type changed") for p in conversion.changed]
    )
    left = "".join(f"\n- {path}: {why}" for path, why in undecided) or " nothing."
    return (
        f"How {conversion.kind} of {version} compares with its hub, "
        f"{conversion.hub_api_version}.\n\n"
        f"Converted automatically (with metadata): {automatic}.\n\n"
        f"Left to to_hub/from_hub (the schemas cannot decide):{left}"
    )
