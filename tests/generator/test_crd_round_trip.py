"""CRD → generated models → ``kgen crd`` gives the CRD's schema back, less what models lose.

Generated models carry a schema's structure (types, properties, wire names, required), its
descriptions (docstrings), the constraints of ``__kgen_rules__`` (enum, bounds, lengths,
pattern, item and property counts), scalar defaults, and — in ``__kgen_schema__`` — each
field's format, nullable and x-kubernetes-* extensions. What they do not carry, and so
cannot come back, is listed here with the reason; :func:`expected` removes exactly that from
the original schema before comparing.
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
import yaml

from kgen.crdgen import kind_schema
from kgen.generate import generate
from kgen.load import load_crds, read_documents
from kgen.load.crd import CRDSource

from .conftest import CORPUS, requires_corpus

pytestmark = requires_corpus

NOT_CARRIED = {
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
# Kept per field (FieldRules, __kgen_schema__): on a kind's root, list items and map values,
# which are no field, they are lost.
FIELD_ONLY = (
    "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength",
    "pattern", "minItems", "maxItems", "minProperties", "maxProperties", "format",
)  # fmt: skip
ROOT_FIELDS = ("apiVersion", "kind", "metadata")
LITERAL_TYPES = (str, int, bool, type(None))
PRESERVE = "x-kubernetes-preserve-unknown-fields"


def expected(schema: dict[str, Any], *, root: bool = False) -> dict[str, Any]:
    """``schema`` less what a generated model cannot carry, normalised like :func:`actual`."""
    return _expected(schema, field=not root, root=root)


def _expected(schema: dict[str, Any], *, field: bool, root: bool = False) -> dict[str, Any]:
    out = {k: v for k, v in schema.items() if k not in NOT_CARRIED}
    if out.get("format") == "":
        del out["format"]  # an empty format says nothing; the IR builder drops it
    if not field:
        for key in FIELD_ONLY:
            out.pop(key, None)
        for key in [k for k in out if k.startswith("x-kubernetes-")]:
            del out[key]
        if root:
            out.pop("nullable", None)
        enum = out.get("enum")
        if enum is not None and not all(isinstance(v, LITERAL_TYPES) for v in enum):
            del out["enum"]  # a Literal holds the enum of an item; other values need a field
        elif enum is not None:
            out["enum"] = _item_enum(enum)
        if not root:
            # A scalar item has no class to hold a docstring; an object item's class is
            # shared by structurally identical schemas and carries the first one's docstring.
            out.pop("description", None)
    out.pop("x-kubernetes-int-or-string", None)
    out.pop("x-kubernetes-embedded-resource", None)
    if schema.get("x-kubernetes-int-or-string"):
        out["anyOf"] = [{"type": "integer"}, {"type": "string"}]
        out["x-kubernetes-int-or-string"] = True
    # Defaults: exposed for values without objects (the IR builder's _defaultable).
    if "default" in out and (out["default"] is None or _holds_object(schema)):
        del out["default"]
    properties = out.pop("properties", None) or {}
    embedded = bool(schema.get("x-kubernetes-embedded-resource"))
    if embedded:
        out["x-kubernetes-embedded-resource"] = True
    if root or embedded:  # apiVersion/kind/metadata are the runtime's, not the schema's
        properties = {k: v for k, v in properties.items() if k not in ROOT_FIELDS}
    if properties:
        out["properties"] = {k: _expected(v, field=True) for k, v in properties.items()}
    required = [r for r in out.pop("required", []) if r in out.get("properties", {})]
    if required:
        out["required"] = sorted(required)
    # Preserving unknown fields: a field keeps its flag; a free-form object (dict[str, Any],
    # or Unstructured for an embedded resource) always says it; the root (a class) cannot.
    extra = out.pop("additionalProperties", None)
    if isinstance(extra, dict) and _has_type(extra):
        out["additionalProperties"] = _expected(extra, field=False)
    elif not properties and not root and (embedded or _is_object(schema)):
        out[PRESERVE] = True
    if isinstance(out.get("items"), dict):
        out["items"] = _expected(out["items"], field=False)
    if "description" in out:
        out["description"] = " ".join(out["description"].split())
    if not _has_type(schema) and not properties:
        # No type at all: Any, which kgen crd writes as preserving unknown fields.
        kept = ("description", "nullable", "x-kubernetes-validations") if field else ()
        out = {k: v for k, v in out.items() if k in kept}
        out[PRESERVE] = True
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
            if "enum" in out[key]:
                out[key]["enum"] = _item_enum(out[key]["enum"])
    if "description" in out:
        out["description"] = " ".join(out["description"].split())
    return out


def _item_enum(values: list[Any]) -> list[Any]:
    """An item's enum in a fixed order: it is read from a ``Literal`` inside ``list[...] |
    None``, and typing caches unions by equality, which ignores a Literal's order — so the
    order can be that of an equal union another package created earlier in the process."""
    return sorted(values, key=repr)


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
                if key == "description" and got.get("type") == "object":
                    # An object field without a description of its own shows its class's
                    # docstring (controller-gen's rule for a struct's doc comment), and a
                    # class shared by identical schemas has the first one's description.
                    continue
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


def test_controller_gens_metav1_condition_schema_is_the_runtimes_condition(
    tmp_path: Path,
) -> None:
    """A CRD's ``[]metav1.Condition`` (controller-gen's schema, as in cloudnative-pg's
    Cluster) generates ``list[Condition]`` of the runtime, with its helpers; ``kgen crd`` of
    the models gives the same schema back (the test above), and a schema that only
    resembles it keeps a class of its own."""
    crd = next(d for d in yaml.safe_load_all(
        (CORPUS / "cloudnative-pg__cloudnative-pg__clusters.yaml").read_text())
        if d and d.get("kind") == "CustomResourceDefinition")
    status = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["status"]
    condition = status["properties"]["conditions"]["items"]
    resembling = {**condition, "description": "Not metav1's."}
    widget = {
        "apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": "widgets.example.com"},
        "spec": {"group": "example.com", "scope": "Namespaced",
                 "names": {"kind": "Widget", "plural": "widgets"},
                 "versions": [{"name": "v1", "served": True, "storage": True, "schema": {
                     "openAPIV3Schema": {"type": "object", "properties": {"status": {
                         "type": "object", "properties": {
                             "conditions": {"type": "array", "items": condition},
                             "others": {"type": "array", "items": resembling}}}}}}}]},
    }
    (tmp_path / "crd.yaml").write_text(yaml.safe_dump(widget))
    generate([tmp_path / "crd.yaml"], tmp_path / "conditions_api", "conditions_api")
    models = (tmp_path / "conditions_api/example/v1/models.py").read_text()
    assert "    conditions: list[Condition] | None = None\n" in models
    assert "    others: list[WidgetStatusOther] | None = None\n" in models
