"""Validation of ``metadata`` that the API server applies to every kind (ObjectMeta rules).

Names must be DNS-1123 subdomains (at most 253 characters), ``generateName`` a valid prefix,
label keys qualified names and label values valid label values, annotation keys qualified
names, finalizers qualified names; owner references need apiVersion, kind, name and uid, and
at most one may be the controller. Key and value rules are :mod:`kgen_runtime.labels`'s;
the messages are the server's.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from kgen_runtime import labels
from kgen_runtime.testing._status import Cause

__all__ = ["metadata_causes"]

_DNS_SUBDOMAIN = re.compile(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*")
_SUBDOMAIN_MESSAGE = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' "
    "or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
    "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*"
    "[a-z0-9])?)*')"
)


def metadata_causes(metadata: dict[str, Any]) -> list[Cause]:
    """Every ObjectMeta rule ``metadata`` breaks, as 422 causes."""
    return list(_causes(metadata))


def _causes(metadata: dict[str, Any]) -> Iterator[Cause]:
    name = metadata.get("name")
    if isinstance(name, str) and name:
        for message in _subdomain_errors(name):
            yield Cause("FieldValueInvalid", f'Invalid value: "{name}": {message}',
                        "metadata.name")
    prefix = metadata.get("generateName")
    if isinstance(prefix, str) and prefix:
        for message in _subdomain_errors(prefix.rstrip("-") or "a"):
            yield Cause("FieldValueInvalid", f'Invalid value: "{prefix}": {message}',
                        "metadata.generateName")
    for key, value in (metadata.get("labels") or {}).items():
        try:
            labels.validate_label_key(key)
            if not isinstance(value, str):
                raise labels.SelectorError(f"invalid label value {value!r}: must be a string")
            labels.validate_label_value(value)
        except labels.SelectorError as error:
            yield Cause("FieldValueInvalid", f'Invalid value: "{key}": {error}',
                        "metadata.labels")
    for key in metadata.get("annotations") or {}:
        try:
            labels.validate_label_key(key)
        except labels.SelectorError as error:
            yield Cause("FieldValueInvalid", f'Invalid value: "{key}": {error}',
                        "metadata.annotations")
    for finalizer in metadata.get("finalizers") or ():
        try:
            labels.validate_label_key(str(finalizer))
        except labels.SelectorError as error:
            yield Cause("FieldValueInvalid", f'Invalid value: "{finalizer}": {error}',
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


def _subdomain_errors(name: str) -> list[str]:
    """apimachinery pkg/util/validation/validation.go IsDNS1123Subdomain: the length error,
    then the format error, each its own message."""
    errors = ["must be no more than 253 characters"] if len(name) > 253 else []
    if _DNS_SUBDOMAIN.fullmatch(name) is None:
        errors.append(_SUBDOMAIN_MESSAGE)
    return errors
