"""CRD → generated models → ``kgen crd`` gives the CRD's schema back, less what models lose.

Generated models carry a schema's structure (types, properties, wire names, required), its
descriptions (docstrings), the constraints of ``__kgen_rules__`` (enum, bounds, lengths,
pattern, item and property counts) and scalar defaults. What they do not carry today, and
so cannot come back, is listed here with the reason; :func:`expected` removes exactly that
from the original schema before comparing.
"""

from __future__ import annotations

import importlib
import itertools
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from kgen.crdgen import kind_schema
from kgen.generate import generate
from kgen.load import load_crds, read_documents
from kgen.load.crd import CRDSource

from .conftest import CORPUS, requires_corpus

pytestmark = requires_corpus

NOT_CARRIED = {
    # Informative to clients only; the IR keeps it (ir.Field.format) but models do not.
    "format": "generated annotations are plain str/int/float",
    # Server-side apply and CEL: the IR keeps field extensions, models do not.
    "x-kubernetes-list-type": "server-side apply merge strategy, not in models",
    "x-kubernetes-list-map-keys": "server-side apply merge keys, not in models",
    "x-kubernetes-map-type": "server-side apply merge strategy, not in models",
    "x-kubernetes-validations": "CEL rules are checked by the server only",
    # Value validation beyond structure: models decode leniently and check FieldRules only.
    "oneOf": "value validation, not a type",
    "anyOf": "value validation, not a type (IntOrString's anyOf is rebuilt)",
    "allOf": "value validation, not a type",
    "not": "value validation, not a type",
    "uniqueItems": "not a FieldRules constraint",
    "multipleOf": "not a FieldRules constraint",
    "example": "documentation the generator drops",
    "title": "documentation the generator drops",
    "externalDocs": "documentation the generator drops",
}
# Constraints FieldRules hold per field: on list items and map values they are lost.
FIELD_ONLY = (
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength",
    "pattern", "minItems", "maxItems", "minProperties", "maxProperties",
)  # fmt: skip
ROOT_FIELDS = ("apiVersion", "kind", "metadata")
LITERAL_TYPES = (str, int, bool, type(None))


def expected(schema: dict[str, Any], *, root: bool = False) -> dict[str, Any]:
    """``schema`` less what a generated model cannot carry, normalised like :func:`actual`."""
    return _expected(schema, field=True, root=root)


def _expected(schema: dict[str, Any], *, field: bool, root: bool = False) -> dict[str, Any]:
    out = {k: v for k, v in schema.items() if k not in NOT_CARRIED}
    # nullable: models make every field optional, so only T | None items and values say it.
    if field:
        out.pop("nullable", None)
    else:
        # FieldRules belong to fields; items and map values keep only a Literal enum.
        for key in FIELD_ONLY:
            out.pop(key, None)
        enum = out.get("enum")
        if enum is not None and not all(isinstance(v, LITERAL_TYPES) for v in enum):
            del out["enum"]
        # A scalar item has no class to hold a docstring; an object item's class is shared
        # by structurally identical schemas and carries the first one's docstring.
        out.pop("description", None)
    if schema.get("x-kubernetes-int-or-string"):
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
    # Defaults: exposed for values without objects (ir builder's _defaultable).
    if "default" in out and (out["default"] is None or _holds_object(schema)):
        del out["default"]
    properties = out.pop("properties", None) or {}
    embedded = bool(schema.get("x-kubernetes-embedded-resource"))
    if root or embedded:  # apiVersion/kind/metadata are the runtime's, not the schema's
        properties = {k: v for k, v in properties.items() if k not in ROOT_FIELDS}
    if properties:
        out["properties"] = {k: _expected(v, field=True) for k, v in properties.items()}
    required = [r for r in out.pop("required", []) if r in out.get("properties", {})]
    if required:
        out["required"] = sorted(required)
    extra = out.get("additionalProperties")
    if isinstance(extra, dict) and _has_type(extra):
        out["additionalProperties"] = _expected(extra, field=False)
    elif "additionalProperties" in out or (_is_object(schema) and not properties and not embedded):
        # A free-form object (no properties, or values of any type) is dict[str, Any],
        # which kgen crd writes as preserving unknown fields.
        out.pop("additionalProperties", None)
        if not (root and schema.get("properties")):
            out["x-kubernetes-preserve-unknown-fields"] = True
    elif properties or embedded:
        # Preserving unknown fields beside declared properties: a model has no place for it.
        out.pop("x-kubernetes-preserve-unknown-fields", None)
    if isinstance(out.get("items"), dict):
        out["items"] = _expected(out["items"], field=False)
    if "description" in out:
        out["description"] = " ".join(out["description"].split())
    if not _has_type(schema) and not properties:
        # No type at all: Any, which kgen crd writes as preserving unknown fields.
        out = {k: v for k, v in out.items() if k in ("description",)}
        out["x-kubernetes-preserve-unknown-fields"] = True
    return out


def actual(schema: dict[str, Any], *, root: bool = False) -> dict[str, Any]:
    """``kgen crd``'s schema, normalised: whitespace of descriptions (the generator wraps
    long lines into docstrings), order of ``required``, the standard root properties."""
    out = dict(schema)
    properties = out.pop("properties", None) or {}
    if root or schema.get("x-kubernetes-embedded-resource"):
        properties = {k: v for k, v in properties.items() if k not in ROOT_FIELDS}
    if properties:
        out["properties"] = {k: actual(v) for k, v in properties.items()}
    if "required" in out:
        out["required"] = sorted(r for r in out["required"] if r in properties)
        if not out["required"]:
            del out["required"]
    for key in ("items", "additionalProperties"):
        if isinstance(out.get(key), dict):
            out[key] = actual(out[key])
            out[key].pop("description", None)  # see _expected
    if "description" in out:
        out["description"] = " ".join(out["description"].split())
    return out


def _has_type(schema: dict[str, Any]) -> bool:
    return any(
        k in schema
        for k in (
            "type",
            "properties",
            "x-kubernetes-int-or-string",
            "x-kubernetes-embedded-resource",
        )
    )


def _is_object(schema: dict[str, Any]) -> bool:
    return schema.get("type") == "object" or "properties" in schema


def _holds_object(schema: dict[str, Any]) -> bool:
    if _is_object(schema) or schema.get("x-kubernetes-embedded-resource"):
        return True
    items = schema.get("items")
    return isinstance(items, dict) and _holds_object(items)


_counter = itertools.count()


def round_trip_differences(paths: Sequence[Path], root: Path) -> list[str]:
    """Generate a package from ``paths``, feed each served kind's model to ``kind_schema`` and
    list every JSON path where the result differs from :func:`expected` of the original."""
    name = f"kgen_round_trip_{os.getpid()}_{next(_counter)}"
    result = generate(list(paths), root / name, name)
    documents = [d for path in paths for d in read_documents(path) if not hasattr(d, "message")]
    crds, problems = load_crds(documents)  # type: ignore[arg-type]
    assert not problems
    sys.path.insert(0, str(root))
    try:
        differences: list[str] = []
        for crd, version in _served(crds):
            gv = next(
                g
                for g in result.package.group_versions
                if (g.group, g.version) == (crd.group, version.name)
            )
            module = importlib.import_module(f"{name}.{'.'.join(gv.module)}.models")
            kind = next(k for k in gv.kinds if k.kind == crd.kind)
            got = actual(kind_schema(getattr(module, kind.model)), root=True)
            want = expected(dict(version.schema), root=True)
            differences += _diff(want, got, f"{crd.kind}.{crd.group}/{version.name}")
        return differences
    finally:
        sys.path.remove(str(root))
        for module_name in [m for m in sys.modules if m.split(".")[0] == name]:
            del sys.modules[module_name]


def _served(crds: list[CRDSource]) -> Iterator[tuple[CRDSource, Any]]:
    for crd in crds:
        for version in crd.versions:
            if version.served:
                yield crd, version


def _diff(want: Any, got: Any, path: str) -> list[str]:
    if isinstance(want, dict) and isinstance(got, dict):
        out = []
        for key in sorted(set(want) | set(got)):
            if key not in got:
                out.append(f"{path}.{key}: lost {want[key]!r:.120}")
            elif key not in want:
                out.append(f"{path}.{key}: added {got[key]!r:.120}")
            else:
                out += _diff(want[key], got[key], f"{path}.{key}")
        return out
    if want != got:
        return [f"{path}: {want!r:.120} became {got!r:.120}"]
    return []


REPRESENTATIVE = (
    "kubernetes__sample-controller__foos-status-subresource.yaml",
    "cert-manager__cert-manager__certificates.yaml",
    "kubernetes-sigs__gateway-api__httproutes.yaml",
    "zalando__postgres-operator__postgresqls.yaml",
)


def test_generated_models_give_their_crds_schema_back(tmp_path: Path) -> None:
    assert round_trip_differences([CORPUS / name for name in REPRESENTATIVE], tmp_path) == []


@pytest.mark.slow
def test_the_whole_corpus_round_trips(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    if "slow" not in (request.config.getoption("markexpr") or ""):
        pytest.skip("whole-corpus round trip (~2 min): run with -m slow")
    assert round_trip_differences(sorted(CORPUS.glob("*.yaml")), tmp_path) == []
