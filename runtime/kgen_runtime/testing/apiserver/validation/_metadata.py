"""Validation of ``metadata`` that the API server applies to every kind (ObjectMeta rules).

Names must be DNS-1123 subdomains (at most 253 characters), ``generateName`` a valid prefix,
label keys qualified names and label values valid label values, annotation keys qualified
names, finalizers qualified names; owner references need apiVersion, kind, name and uid, and
at most one may be the controller. Label, annotation and name rules and their messages are
apimachinery's (:mod:`kgen_runtime._names`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from kgen_runtime._names import (
    dns1123_subdomain_errors,
    label_value_errors,
    qualified_name_errors,
)
from kgen_runtime.testing._status import Cause

__all__ = ["metadata_causes"]


def metadata_causes(metadata: dict[str, Any], name_errors: Callable[[str], list[str]] =
                    dns1123_subdomain_errors) -> list[Cause]:
    """Every ObjectMeta rule ``metadata`` breaks, as 422 causes; ``name_errors`` is the
    kind's name rule (ValidateObjectMeta's ``nameFn``)."""
    return list(_causes(metadata, name_errors))


def _causes(metadata: dict[str, Any], name_errors: Callable[[str], list[str]]
            ) -> Iterator[Cause]:
    name = metadata.get("name")
    if isinstance(name, str) and name:
        for message in name_errors(name):
            yield Cause("FieldValueInvalid", f'Invalid value: "{name}": {message}',
                        "metadata.name")
    prefix = metadata.get("generateName")
    if isinstance(prefix, str) and prefix:
        for message in dns1123_subdomain_errors(prefix.rstrip("-") or "a"):
            yield Cause("FieldValueInvalid", f'Invalid value: "{prefix}": {message}',
                        "metadata.generateName")
    # ValidateLabels: each key's IsLabelKey errors, then each value's IsLabelValue errors
    # (showing the value); ValidateAnnotations: IsLabelKey of the lower-cased key
    for key, value in (metadata.get("labels") or {}).items():
        for message in qualified_name_errors(key):
            yield Cause("FieldValueInvalid", f'Invalid value: "{key}": {message}',
                        "metadata.labels")
        for message in label_value_errors(value if isinstance(value, str) else str(value)):
            yield Cause("FieldValueInvalid", f'Invalid value: "{value}": {message}',
                        "metadata.labels")
    for key in metadata.get("annotations") or {}:
        for message in qualified_name_errors(key.lower()):
            yield Cause("FieldValueInvalid", f'Invalid value: "{key}": {message}',
                        "metadata.annotations")
    for finalizer in metadata.get("finalizers") or ():  # ValidateFinalizerName
        for message in qualified_name_errors(str(finalizer)):
            yield Cause("FieldValueInvalid", f'Invalid value: "{finalizer}": {message}',
                        "metadata.finalizers")
    yield from _owner_reference_causes(metadata.get("ownerReferences") or [])


def _owner_reference_causes(references: list[Any]) -> Iterator[Cause]:
    """apiVersion, kind, name and uid are required; at most one reference is the controller."""
    for reference in references:
        for field in ("apiVersion", "kind", "name", "uid"):
            if not (reference or {}).get(field):
                yield Cause("FieldValueInvalid", f'Invalid value: "": {field} must not be '
                            f"empty", f"metadata.ownerReferences.{field}")
    controllers = [r for r in references if isinstance(r, dict) and r.get("controller")]
    if len(controllers) > 1:
        owners = " and ".join(f"{r.get('kind')}/{r.get('name')}" for r in controllers)
        yield Cause("FieldValueInvalid", f"Only one reference can have Controller set to "
                    f'true. Found "true" in references for {owners}', "metadata.ownerReferences")
