"""Which objects a list or watch selects, as the API server decides it.

Parsing and matching are the runtime's :mod:`kgen_runtime.labels` and
:mod:`kgen_runtime.fields`; this module adds what is server-specific: malformed selectors and
unsupported field labels become 400 BadRequest, and field selectors are limited to
``metadata.name`` and ``metadata.namespace`` (all a custom resource serves without
``selectableFields``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kgen_runtime import fields, labels
from kgen_runtime.testing._status import StatusError

__all__ = ["WatchFilter", "parse_filter"]

_SUPPORTED_FIELDS = frozenset({"metadata.name", "metadata.namespace"})


@dataclass(frozen=True, slots=True)
class WatchFilter:
    """A namespace (empty: all) and label/field selectors. Immutable, shareable."""

    namespace: str = ""
    label_selector: labels.Selector = field(default_factory=labels.everything)
    field_selector: fields.Selector = field(default_factory=fields.everything)

    def matches(self, obj: dict[str, Any]) -> bool:
        meta = obj.get("metadata") or {}
        if self.namespace and meta.get("namespace") != self.namespace:
            return False
        return self.label_selector.matches(meta.get("labels") or {}) and (
            self.field_selector.matches({
                "metadata.name": meta.get("name", ""),
                "metadata.namespace": meta.get("namespace", ""),
            })
        )

    def is_everything(self) -> bool:
        return self.label_selector.empty() and self.field_selector.empty()


def parse_filter(namespace: str, label_selector: str, field_selector: str) -> WatchFilter:
    """Parse the ``labelSelector``/``fieldSelector`` query values; 400 when malformed."""
    try:
        parsed_labels = labels.parse(label_selector)
    except labels.SelectorError as error:
        raise StatusError.bad_request(f"unable to parse requirement: {error}") from None
    try:
        parsed_fields = fields.parse(field_selector)
    except fields.FieldSelectorError as error:
        raise StatusError.bad_request(f"invalid field selector: {error}") from None
    for term in parsed_fields.terms:
        if term.field not in _SUPPORTED_FIELDS:
            raise StatusError.bad_request(
                f'"{term.field}" is not a known field selector: only "metadata.name", '
                f'"metadata.namespace"')
    return WatchFilter(namespace, parsed_labels, parsed_fields)
