"""The built-in kinds' structure as a compact table the test API server ships.

``kgen_runtime.testing`` must not read ``../shared`` at run time, so this script turns the
Kubernetes OpenAPI v3 documents into ``runtime/kgen_runtime/testing/builtin_schemas.json.gz``:
for every component schema its properties (each a type code), required properties and enums,
and which schema each (group, version, kind) is. The server uses it to drop unknown fields
(and report them under ``fieldValidation``), to refuse values of the wrong JSON type as the
Go decoder does, and to check required properties and enums.

Type codes: ``"s"`` string, ``"i32"``/``"i64"`` integer, ``"n"`` number, ``"b"`` boolean,
``"q"`` int-or-string, ``"o"`` free-form JSON, ``{"$": name}`` a component schema,
``{"a": T}`` an array of T, ``{"m": T}`` a map of T, ``{"e": [values]}`` a string enum.

Regenerate (byte-identical run to run)::

    python -m kgen.ir_builder.builtin_schemas ../shared/openapi \\
        runtime/kgen_runtime/testing/builtin_schemas.json.gz
"""

from __future__ import annotations

import gzip
import json
import sys
from pathlib import Path
from typing import Any

__all__ = ["builtin_schema_table", "main"]

_REF = "#/components/schemas/"


def builtin_schema_table(openapi_dir: Path) -> dict[str, Any]:
    """The table of every ``*.json`` OpenAPI v3 document in ``openapi_dir``."""
    definitions: dict[str, Any] = {}
    kinds: dict[str, str] = {}
    for path in sorted(openapi_dir.glob("*.json")):
        document = json.loads(path.read_text())
        for name, schema in ((document.get("components") or {}).get("schemas") or {}).items():
            definitions[name] = _definition(schema)
            for gvk in schema.get("x-kubernetes-group-version-kind") or ():
                kinds[f"{gvk['group']}/{gvk['version']}/{gvk['kind']}"] = name
    return {"definitions": dict(sorted(definitions.items())), "kinds": dict(sorted(kinds.items()))}


def _definition(schema: dict[str, Any]) -> Any:
    properties = schema.get("properties")
    if not properties:
        return _type(schema)
    entry: dict[str, Any] = {"p": {name: _type(sub) for name, sub in sorted(properties.items())}}
    if schema.get("required"):
        entry["r"] = sorted(schema["required"])
    return entry


def _type(schema: dict[str, Any]) -> Any:
    if "$ref" in schema:
        return {"$": schema["$ref"].removeprefix(_REF)}
    refs = [s["$ref"] for s in schema.get("allOf") or () if "$ref" in s]
    if len(refs) == 1:
        return {"$": refs[0].removeprefix(_REF)}
    if schema.get("x-kubernetes-int-or-string"):
        return "q"
    kind = schema.get("type")
    if kind == "string":
        return {"e": list(schema["enum"])} if schema.get("enum") else "s"
    if kind == "integer":
        return "i32" if schema.get("format") == "int32" else "i64"
    if kind == "number":
        return "n"
    if kind == "boolean":
        return "b"
    if kind == "array" and isinstance(schema.get("items"), dict):
        return {"a": _type(schema["items"])}
    if kind == "object" and isinstance(schema.get("additionalProperties"), dict):
        return {"m": _type(schema["additionalProperties"])}
    return "o"


def main(argv: list[str] | None = None) -> int:
    openapi_dir, output = (argv if argv is not None else sys.argv[1:])[:2]
    table = json.dumps(builtin_schema_table(Path(openapi_dir)), separators=(",", ":"))
    Path(output).write_bytes(gzip.compress(table.encode(), mtime=0))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
