"""Validation of a posted CustomResourceDefinition, with kube-apiserver's paths and messages.

What ``apiextensions-apiserver``'s ``ValidateCustomResourceDefinition`` refuses most often:
not exactly one storage version, schema types outside OpenAPI's six, non-structural schemas
(a missing ``type``, an array without ``items``, ``properties`` beside
``additionalProperties``), and ``x-kubernetes-validations`` rules that do not compile.
Schema paths are the server's: ``spec.validation.openAPIV3Schema…`` when every version has
the same schema (the server stores it once), else ``spec.versions[i].schema.openAPIV3Schema…``.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from kgen_runtime.cel import CompiledRules, RuleCompilationError, compile_rules
from kgen_runtime.testing._status import Cause

__all__ = ["crd_causes"]

Schema = dict[str, Any]

_TYPES = ("array", "boolean", "integer", "number", "object", "string")


def crd_causes(spec: dict[str, Any]) -> tuple[list[Cause], dict[str, CompiledRules]]:
    """The spec's problems, and each version's compiled rules (by version name)."""
    versions = [v for v in spec.get("versions") or () if isinstance(v, dict)]
    causes = list(_storage_causes(versions))
    schemas = [(v.get("schema") or {}).get("openAPIV3Schema") for v in versions]
    shared = len({json.dumps(s, sort_keys=True) for s in schemas}) == 1
    rules: dict[str, CompiledRules] = {}
    for index, (version, schema) in enumerate(zip(versions, schemas, strict=True)):
        if not isinstance(schema, dict):
            causes.append(Cause("FieldValueRequired", "Required value: schemas are required",
                                f"spec.versions[{index}].schema.openAPIV3Schema"))
            continue
        prefix = ("spec.validation.openAPIV3Schema" if shared
                  else f"spec.versions[{index}].schema.openAPIV3Schema")
        schema_causes = list(_schema_causes(schema, prefix, "root"))
        if shared and index > 0:
            schema_causes = []
        try:
            rules[str(version.get("name"))] = compile_rules(schema)
        except RuleCompilationError as error:
            if not (shared and index > 0):
                schema_causes += [Cause(p.reason, p.message, f"{prefix}.{p.path}")
                                  for p in error.problems]
        causes += schema_causes
    return causes, rules


def _storage_causes(versions: list[dict[str, Any]]) -> Iterator[Cause]:
    storage = [v for v in versions if v.get("storage")]
    if len(storage) != 1:
        yield Cause("FieldValueInvalid", f"Invalid value: {_go_versions(versions)}: must have "
                    f"exactly one version marked as storage version", "spec.versions")
    if not storage:
        yield Cause("FieldValueInvalid", "Invalid value: null: must have at least one stored "
                    "version", "status.storedVersions")


def _schema_causes(schema: Schema, path: str, level: str) -> Iterator[Cause]:
    """Type and structural problems of one schema node and those below it."""
    kind = schema.get("type", "")
    if kind and kind not in _TYPES:
        supported = ", ".join(f'"{t}"' for t in _TYPES)
        yield Cause("FieldValueNotSupported", f'Unsupported value: "{kind}": supported '
                    f"values: {supported}", f"{path}.type")
    elif not kind and not (schema.get("x-kubernetes-int-or-string")
                           or schema.get("x-kubernetes-preserve-unknown-fields")):
        detail = {"root": "must not be empty at the root",
                  "item": "must not be empty for specified array items",
                  "field": "must not be empty for specified object fields"}[level]
        yield Cause("FieldValueRequired", f"Required value: {detail}", f"{path}.type")
    if level == "root" and kind and kind != "object":
        yield Cause("FieldValueInvalid", f'Invalid value: "{kind}": must be object at the root',
                    f"{path}.type")
    if kind == "array" and not isinstance(schema.get("items"), dict):
        yield Cause("FieldValueRequired", "Required value: must be specified", f"{path}.items")
    additional = schema.get("additionalProperties")
    if schema.get("properties") and (additional is False or isinstance(additional, dict)):
        yield Cause("FieldValueForbidden", "Forbidden: additionalProperties and properties are "
                    "mutual exclusive", f"{path}.additionalProperties")
    for name, sub in (schema.get("properties") or {}).items():
        if isinstance(sub, dict):
            yield from _schema_causes(sub, f"{path}.properties[{name}]", "field")
    if isinstance(additional, dict):
        yield from _schema_causes(additional, f"{path}.additionalProperties", "field")
    if isinstance(schema.get("items"), dict):
        yield from _schema_causes(schema["items"], f"{path}.items", "item")


def _go_versions(versions: list[dict[str, Any]]) -> str:
    """The versions as Go's ``%#v`` prints the server's internal type (pointers elided)."""

    def one(version: dict[str, Any]) -> str:
        return (
            f"apiextensions.CustomResourceDefinitionVersion{{Name:"
            f"{json.dumps(str(version.get('name', '')))}, "
            f"Served:{_go_bool(version.get('served'))}, "
            f"Storage:{_go_bool(version.get('storage'))}, "
            f"Deprecated:{_go_bool(version.get('deprecated'))}, "
            f"DeprecationWarning:(*string)(nil), "
            f"Schema:(*apiextensions.CustomResourceValidation)(nil), "
            f"Subresources:(*apiextensions.CustomResourceSubresources)(nil), "
            f"AdditionalPrinterColumns:[]apiextensions.CustomResourceColumnDefinition(nil), "
            f"SelectableFields:[]apiextensions.SelectableField(nil)}}"
        )

    return ("[]apiextensions.CustomResourceDefinitionVersion{"
            + ", ".join(one(v) for v in versions) + "}")


def _go_bool(value: Any) -> str:
    return "true" if value else "false"
