"""CRD version conversion through a hub (controller-runtime's ``conversion.Hub`` and
``Convertible``), and the ConversionReview handler a conversion webhook serves.

One version of a kind is the *hub* (usually the storage version); every other version is a
*spoke* with two functions, ``to_hub(spoke) -> hub`` and ``from_hub(hub) -> spoke``. Any
version converts to any other through the hub, so n versions need 2(n-1) functions, not
n(n-1). Fields a spoke cannot hold are the conversion functions' business: keep them in an
annotation on the way out and restore them on the way back, as Go conversions do
(:func:`stash_fields` / :func:`unstash_fields` do the bookkeeping).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

import orjson

from kgen_runtime.meta import KubeObject, Status
from kgen_runtime.webhook._review import ConversionRequest, ConversionResponse

__all__ = ["ConversionError", "Converter", "Spoke", "stash_fields", "unstash_fields"]

H = TypeVar("H", bound=KubeObject)
S = TypeVar("S", bound=KubeObject)


class ConversionError(ValueError):
    """An object cannot be converted (unknown version, or a conversion function refused)."""


@dataclass(frozen=True, slots=True)
class Spoke(Generic[S, H]):
    """A non-hub version: its model and the two conversion functions."""

    model: type[S]
    to_hub: Callable[[S], H]
    from_hub: Callable[[H], S]


def declared_type(model: type[KubeObject]) -> tuple[str, str]:
    """The ``(apiVersion, kind)`` a generated model declares as its field defaults."""
    fields = model.model_fields
    return str(fields["api_version"].default), str(fields["kind"].default)


class Converter(Generic[H]):
    """Converts objects of one kind between its versions through ``hub``.

    Thread-safe once built (it holds only the functions it was given).
    """

    def __init__(self, hub: type[H], spokes: Mapping[str, Spoke[Any, H]] | None = None) -> None:
        self.hub = hub
        self.hub_version, self.kind = declared_type(hub)
        self._spokes: dict[str, Spoke[Any, H]] = dict(spokes or {})

    @classmethod
    def of(cls, hub: type[H], *spokes: Spoke[Any, H]) -> Converter[H]:
        """A converter for ``hub`` and ``spokes`` (keyed by their models' apiVersion)."""
        return cls(hub, {declared_type(spoke.model)[0]: spoke for spoke in spokes})

    @property
    def api_versions(self) -> list[str]:
        """Every version this converter reads and writes, hub first."""
        return [self.hub_version, *sorted(self._spokes)]

    def convert(self, obj: dict[str, Any], desired_api_version: str) -> dict[str, Any]:
        """Convert one wire object to ``desired_api_version`` and return it as wire JSON.

        Raises:
            ConversionError: either version is not one of :attr:`api_versions`, or a
                conversion function raised.
        """
        source = obj.get("apiVersion", "")
        if source == desired_api_version:
            return obj
        for version in (source, desired_api_version):
            if version != self.hub_version and version not in self._spokes:
                raise ConversionError(
                    f"{self.kind}: unknown version {version!r}; "
                    f"known: {', '.join(self.api_versions)}")
        try:
            hub = self._to_hub(obj, source)
            converted: KubeObject = (hub if desired_api_version == self.hub_version
                                     else self._spokes[desired_api_version].from_hub(hub))
        except ConversionError:
            raise
        except Exception as err:
            raise ConversionError(
                f"{self.kind} {source} -> {desired_api_version}: {err}") from err
        result: dict[str, Any] = converted.model_dump(mode="json")
        result["apiVersion"] = desired_api_version
        result["kind"] = self.kind
        return result

    def _to_hub(self, obj: dict[str, Any], source: str) -> H:
        if source == self.hub_version:
            return self.hub.model_validate(obj)
        spoke = self._spokes[source]
        return spoke.to_hub(spoke.model.model_validate(obj))

    def handle(self, request: ConversionRequest) -> ConversionResponse:
        """Answer a ConversionReview request: every object converted, or a Failure."""
        try:
            converted = [self.convert(obj, request.desired_api_version)
                         for obj in request.objects or ()]
        except ConversionError as err:
            return ConversionResponse(
                uid=request.uid, result=Status(status="Failure", message=str(err)))
        return ConversionResponse(uid=request.uid, converted_objects=converted,
                                  result=Status(status="Success"))


def _annotation(kind: str) -> str:
    return f"conversion.kgen.io/{kind.lower()}-fields"


def stash_fields(target: KubeObject, kind: str, fields: Mapping[str, Any]) -> None:
    """Keep hub-only ``fields`` (wire JSON) in an annotation of ``target`` (a spoke), added
    to what the annotation already keeps.

    Fields whose value is ``None`` are left out; nothing is written when none remain.
    """
    kept = {k: v for k, v in fields.items() if v is not None}
    if not kept or target.metadata is None:
        return
    annotations = dict(target.metadata.annotations or {})
    key = _annotation(kind)
    if key in annotations:
        kept = {**orjson.loads(annotations[key]), **kept}
    annotations[key] = orjson.dumps(kept, option=orjson.OPT_SORT_KEYS).decode()
    target.metadata.annotations = annotations


def take_stashed(wire: dict[str, Any], kind: str, keys: Collection[str]) -> dict[str, Any]:
    """Take ``keys`` out of what :func:`stash_fields` kept on the wire object ``wire``,
    leaving the rest (and dropping the annotation, and empty annotations, when none is)."""
    metadata = wire.get("metadata")
    annotations = metadata.get("annotations") if isinstance(metadata, dict) else None
    raw = annotations.get(_annotation(kind)) if isinstance(annotations, dict) else None
    if not isinstance(raw, str):
        return {}
    assert isinstance(metadata, dict) and isinstance(annotations, dict)
    stashed: dict[str, Any] = orjson.loads(raw)
    taken = {key: stashed.pop(key) for key in keys if key in stashed}
    if stashed:
        annotations[_annotation(kind)] = orjson.dumps(
            stashed, option=orjson.OPT_SORT_KEYS).decode()
    else:
        del annotations[_annotation(kind)]
        if not annotations:
            del metadata["annotations"]
    return taken


def unstash_fields(source: KubeObject, kind: str) -> dict[str, Any]:
    """Take back what :func:`stash_fields` kept, removing the annotation from ``source``."""
    if source.metadata is None or not source.metadata.annotations:
        return {}
    annotations = dict(source.metadata.annotations)
    raw = annotations.pop(_annotation(kind), None)
    if raw is None:
        return {}
    source.metadata.annotations = annotations or None
    if not annotations:  # like Go's omitempty: no annotations left means none on the wire
        source.metadata.__pydantic_fields_set__.discard("annotations")
    stashed: dict[str, Any] = orjson.loads(raw)
    return stashed
