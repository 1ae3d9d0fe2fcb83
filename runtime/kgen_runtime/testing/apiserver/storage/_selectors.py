"""Which objects a list or watch selects, as the API server decides it.

Parsing and matching are the runtime's :mod:`kgen_runtime.labels` and
:mod:`kgen_runtime.fields`; this module adds what is server-specific: malformed selectors and
unsupported field labels become 400 BadRequest, and field selectors are limited to the labels
each kind supports (:mod:`kgen_runtime.testing.apiserver.storage._field_labels`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from kgen_runtime import fields, labels
from kgen_runtime.testing._status import StatusError
from kgen_runtime.testing.apiserver.encoding._go_labels import selector_error
from kgen_runtime.testing.apiserver.storage._field_labels import (
    field_values,
    supported_labels,
    unsupported_label_message,
)
from kgen_runtime.testing.apiserver.storage._resources import ServedResource

__all__ = ["WatchFilter", "parse_filter"]

_NAME_AND_NAMESPACE = supported_labels("", "")


@dataclass(frozen=True, slots=True)
class WatchFilter:
    """A namespace (empty: all), label/field selectors and a shard predicate (the
    ``shardSelector`` of :mod:`~kgen_runtime.testing._sharding`). Immutable, shareable."""

    namespace: str = ""
    label_selector: labels.Selector = field(default_factory=labels.everything)
    field_selector: fields.Selector = field(default_factory=fields.everything)
    #: The selector's labels, with where each value is read from (see _field_labels).
    field_sources: dict[str, tuple[str, str]] = field(
        default_factory=lambda: dict(_NAME_AND_NAMESPACE))
    shard: Callable[[dict[str, Any]], bool] | None = None

    def matches(self, obj: dict[str, Any]) -> bool:
        meta = obj.get("metadata") or {}
        if self.namespace and meta.get("namespace") != self.namespace:
            return False
        if self.shard is not None and not self.shard(obj):
            return False
        return self.label_selector.matches(meta.get("labels") or {}) and (
            self.field_selector.empty()
            or self.field_selector.matches(field_values(obj, self.field_sources)))

    def is_everything(self) -> bool:
        return (self.label_selector.empty() and self.field_selector.empty()
                and self.shard is None)


def parse_filter(
    resource: ServedResource, namespace: str, label_selector: str, field_selector: str
) -> WatchFilter:
    """Parse the ``labelSelector``/``fieldSelector`` query values of a request for
    ``resource``; 400 when malformed or when a field label is not one the kind supports."""
    try:
        parsed_labels = labels.parse(label_selector)
    except labels.SelectorError as error:
        # the handler's BadRequest carries labels.Parse's error as it is
        raise StatusError.bad_request(selector_error(label_selector)
                                      or f"unable to parse requirement: {error}") from None
    try:
        parsed_fields = fields.parse(field_selector)
    except fields.FieldSelectorError as error:
        message = str(error)
        raise StatusError.bad_request(message if message.startswith("invalid selector:")
                                      else f"invalid field selector: {message}") from None
    supported = supported_labels(
        resource.group, resource.kind, resource.selectable_fields,
        cluster_scoped_custom=resource.custom and not resource.namespaced)
    for term in parsed_fields.terms:
        if term.field not in supported:
            raise StatusError.bad_request(unsupported_label_message(
                resource.group, resource.kind, term.field, resource.custom))
    sources = {term.field: supported[term.field] for term in parsed_fields.terms}
    return WatchFilter(namespace, parsed_labels, parsed_fields, sources)
