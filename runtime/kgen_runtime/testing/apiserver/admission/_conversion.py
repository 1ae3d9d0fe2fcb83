"""CRD version conversion in the test API server and the fake (apiextensions-apiserver's
``crConverter``).

A custom resource is stored in its CRD's storage version. With ``spec.conversion.strategy:
None`` (the default) another served version reads the same object with only ``apiVersion``
rewritten (:meth:`ServedResource.present`). With ``Webhook``, or when a
:class:`~kgen_runtime.webhook.Converter` was registered in-process for the kind (tests that
want no TLS), objects are converted for real: a write in a version is converted to the
storage version before it is stored, and what is read (get, list, watch events, the answer of
a write) is converted from the storage version to the version of the request. Webhooks get
a ``ConversionReview`` (apiextensions.k8s.io/v1) at ``spec.conversion.webhook.clientConfig``
(``url`` + ``caBundle``, or ``service`` through the server's resolver). Conversions run with
no store lock held: the store hands out storage-version objects and this module converts
them after.

The review is the one kube-apiserver sends (apiextensions-apiserver's
``webhook_converter.go``): the first of the CRD's ``conversionReviewVersions`` it knows
(``v1``, ``v1beta1``), the objects not yet in the desired version, and the zero-valued
``response`` it decodes the answer into. A ``v1`` answer must be a ``v1`` ConversionReview
echoing the request's uid (``getConvertedObjectsFromResponse``); every converted object must
keep its kind, name, namespace and uid, and gets the original's metadata back except its
labels and annotations (``validateConvertedObject``, ``restoreObjectMeta``).

Failures are the apiserver's: 500 without a reason (``ErrorToAPIStatus`` of a plain error),
``conversion webhook for GROUP/VERSION, Kind=KIND failed: ...`` (the webhook's message when
it answered with a Failure).
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kgen_runtime.meta import copy_json
from kgen_runtime.testing._status import StatusError
from kgen_runtime.testing.apiserver.admission._webhooks import (
    HTTPSWebhookCaller,
    ServiceResolver,
    review_version,
    webhook_endpoint,
)
from kgen_runtime.testing.apiserver.storage._resources import ServedResource
from kgen_runtime.webhook import ConversionError, Converter

__all__ = ["Conversions", "VersionView"]

Obj = dict[str, Any]
_GroupResource = tuple[str, str]

#: kube-apiserver's timeout for a conversion webhook call.
_TIMEOUT = 30.0


@dataclass(frozen=True, slots=True)
class VersionView:
    """How a request's version sees the store: ``storage`` is the resource the store is
    read and written through; ``to_storage``/``to_request`` convert between them."""

    storage: ServedResource
    to_storage: Callable[[Obj], Obj]
    to_request: Callable[[Obj], Obj]

    @classmethod
    def identity(cls, info: ServedResource) -> VersionView:
        """The view of a resource that needs no conversion."""
        return cls(info, _same, _same)


@dataclass(frozen=True, slots=True)
class _Strategy:
    storage_version: str
    client_config: Obj | None  # None: strategy None
    review_versions: tuple[str, ...] = ("v1",)


#: The ConversionReview versions kube-apiserver sends, by ``conversionReviewVersions`` name.
_REVIEW_VERSIONS = {"v1": "apiextensions.k8s.io/v1", "v1beta1": "apiextensions.k8s.io/v1beta1"}


class Conversions:
    """The conversion of every custom resource the server serves (see the module docstring).

    Args:
        lookup: The served resource of ``(group, version, plural)``, or None.
        service_resolver: Where ``clientConfig.service`` webhooks are.
    """

    def __init__(self, lookup: Callable[[str, str, str], ServedResource | None],
                 service_resolver: ServiceResolver) -> None:
        self._lookup = lookup
        self._service_resolver = service_resolver
        self._caller = HTTPSWebhookCaller()
        self._lock = threading.Lock()
        self._strategies: dict[_GroupResource, _Strategy] = {}
        self._converters: dict[tuple[str, str], Converter[Any]] = {}

    def register(self, converter: Converter[Any]) -> None:
        """Convert ``converter``'s kind in-process, whatever its CRD's strategy says."""
        group = converter.hub_version.rpartition("/")[0]
        with self._lock:
            self._converters[(group, converter.kind)] = converter

    def track(self, crd: Obj) -> None:
        """Take a written CRD's storage version and conversion strategy."""
        spec = crd["spec"]
        storage = next(str(v["name"]) for v in spec["versions"] if v.get("storage"))
        conversion = spec.get("conversion") or {}
        client_config, review_versions = None, ()
        if conversion.get("strategy") == "Webhook":
            webhook = conversion.get("webhook") or {}
            client_config = dict(webhook.get("clientConfig") or {})
            review_versions = tuple(webhook.get("conversionReviewVersions") or ())
        with self._lock:
            self._strategies[(spec["group"], spec["names"]["plural"])] = _Strategy(
                storage, client_config, review_versions)

    def forget(self, group: str, plural: str) -> None:
        """Drop a deleted CRD's strategy."""
        with self._lock:
            self._strategies.pop((group, plural), None)

    def calls_webhooks(self) -> bool:
        """Whether any CRD converts through a webhook."""
        with self._lock:
            return any(s.client_config is not None for s in self._strategies.values())

    def converts(self, info: ServedResource) -> bool:
        """Whether ``info``'s resource converts between its versions for real (a webhook or
        an in-process converter), so that a version may move fields."""
        with self._lock:
            strategy = self._strategies.get((info.group, info.plural))
            converter = self._converters.get((info.group, info.kind))
        return strategy is not None and (strategy.client_config is not None
                                         or converter is not None)

    def view(self, info: ServedResource) -> VersionView | None:
        """How ``info`` reads and writes the store, or None when the store's apiVersion
        rewrite is all it takes (strategy None, or the storage version itself)."""
        with self._lock:
            strategy = self._strategies.get((info.group, info.plural))
            converter = self._converters.get((info.group, info.kind))
        if strategy is None or info.version == strategy.storage_version:
            return None
        if strategy.client_config is None and converter is None:
            return None
        storage = self._lookup(info.group, strategy.storage_version, info.plural)
        if storage is None:
            return None

        def convert(obj: Obj, api_version: str) -> Obj:
            return self._convert(info, [obj], api_version, converter, strategy)[0]

        return VersionView(storage, lambda obj: convert(obj, storage.api_version),
                           lambda obj: convert(obj, info.api_version))

    def convert(self, info: ServedResource, obj: Obj, api_version: str) -> Obj:
        """One object of ``info``'s resource, in any of its served versions, as
        ``api_version`` (the admission chain's view for a webhook of another version)."""
        with self._lock:
            strategy = self._strategies.get((info.group, info.plural))
            converter = self._converters.get((info.group, info.kind))
        if strategy is None:
            return {**obj, "apiVersion": api_version}
        return self._convert(info, [obj], api_version, converter, strategy)[0]

    def to_request(self, info: ServedResource, objects: list[Obj]) -> list[Obj]:
        """Storage-version ``objects`` as ``info``'s version (one review for all)."""
        with self._lock:
            strategy = self._strategies.get((info.group, info.plural))
            converter = self._converters.get((info.group, info.kind))
        if strategy is None or not objects:
            return objects
        return self._convert(info, objects, info.api_version, converter, strategy)

    def _convert(self, info: ServedResource, objects: list[Obj], api_version: str,
                 converter: Converter[Any] | None, strategy: _Strategy) -> list[Obj]:
        pending = [obj for obj in objects if obj.get("apiVersion") != api_version]
        if not pending:
            return objects
        source = f"{pending[0].get('apiVersion', '')}, Kind={info.kind}"
        if converter is not None:
            try:
                converted = [converter.convert(obj, api_version) for obj in pending]
            except ConversionError as error:
                raise StatusError.unknown(
                    f"conversion webhook for {source} failed: {error}") from error
        elif strategy.client_config is not None:
            converted = self._call(source, strategy, pending, api_version)
        else:
            converted = [{**obj, "apiVersion": api_version} for obj in pending]
        answers = iter(converted)
        return [obj if obj.get("apiVersion") == api_version else next(answers)
                for obj in objects]

    def _call(self, source: str, strategy: _Strategy, objects: list[Obj],
              api_version: str) -> list[Obj]:
        assert strategy.client_config is not None
        uid = str(uuid.uuid4())
        try:
            review_api_version = review_version(list(strategy.review_versions),
                                                _REVIEW_VERSIONS, "ConversionReview")
            review = {"kind": "ConversionReview", "apiVersion": review_api_version,
                      "request": {"uid": uid, "desiredAPIVersion": api_version,
                                  "objects": objects},
                      "response": {"uid": "", "convertedObjects": None,
                                   "result": {"metadata": {}}}}
            url, ca_bundle = webhook_endpoint(strategy.client_config, _TIMEOUT,
                                              self._service_resolver)
            answer = self._caller.call(url, ca_bundle, review, _TIMEOUT)
            converted = _converted_objects(answer, review_api_version, uid)
        except Exception as error:
            raise StatusError.unknown(f"conversion webhook for {source} failed: {error}") from error
        if len(converted) != len(objects):
            raise StatusError.unknown(f"conversion webhook for {source} returned "
                                      f"{len(converted)} objects, expected {len(objects)}")
        for index, (original, obj) in enumerate(zip(objects, converted, strict=True)):
            try:
                _check_converted(original, obj, api_version)
                obj["metadata"] = _restored_metadata(original, obj)
            except ValueError as error:
                raise StatusError.unknown(f"conversion webhook for {source} returned invalid "
                                          f"converted object at index {index}: {error}") from error
        return converted


def _converted_objects(answer: Obj, api_version: str, uid: str) -> list[Obj]:
    """The converted objects of a webhook's answer (``getConvertedObjectsFromResponse``: a
    v1 answer must be a v1 ConversionReview echoing ``uid``; a v1beta1 one was never
    checked).

    Raises:
        ValueError: with kube-apiserver's message.
    """
    if api_version == _REVIEW_VERSIONS["v1"] and (
            answer.get("apiVersion"), answer.get("kind")) != (api_version, "ConversionReview"):
        group, _, version = str(answer.get("apiVersion", "")).rpartition("/")
        raise ValueError(f"expected webhook response of apiextensions.k8s.io/v1, "
                         f"Kind=ConversionReview, got {group}/{version}, "
                         f"Kind={answer.get('kind', '')}")
    response = answer.get("response")
    if not isinstance(response, dict):
        raise ValueError("no response provided")
    if api_version == _REVIEW_VERSIONS["v1"] and response.get("uid", "") != uid:
        raise ValueError(f'expected response.uid="{uid}", got "{response.get("uid", "")}"')
    result = response.get("result") or {}
    if result.get("status") != "Success":
        raise ValueError(result.get("message") or
                         f"response.result.status was '{result.get('status', '')}', "
                         "not 'Success'")
    return list(response.get("convertedObjects") or [])


def _check_converted(original: Obj, converted: Obj, api_version: str) -> None:
    """``validateConvertedObject`` and the version check: the converted object has the
    desired apiVersion and the original's kind, name, namespace and uid."""
    if converted.get("apiVersion") != api_version:
        raise ValueError(f"invalid groupVersion (expected {api_version}, received "
                         f"{converted.get('apiVersion', '')})")
    if converted.get("kind") != original.get("kind"):
        raise ValueError(f"invalid kind (expected {original.get('kind')}, received "
                         f"{converted.get('kind', '')})")
    before, after = original.get("metadata") or {}, converted.get("metadata") or {}
    for field, what in (("name", "name"), ("namespace", "namespace"), ("uid", "UID")):
        if before.get(field, "") != after.get(field, ""):
            raise ValueError(f"must have the same {what}: {before.get(field, '')} != "
                             f"{after.get(field, '')}")


def _restored_metadata(original: Obj, converted: Obj) -> Obj:
    """``restoreObjectMeta``: the original's metadata, with the converted object's labels
    and annotations (the only metadata a conversion may change).

    Raises:
        ValueError: the converted object has no metadata, or labels/annotations that are
            not maps of strings.
    """
    returned = converted.get("metadata")
    if not isinstance(returned, dict):
        raise ValueError("missing metadata in converted object")
    metadata: Obj = copy_json(original.get("metadata") or {})
    for field in ("labels", "annotations"):
        value = returned.get(field)
        if value is None:
            metadata.pop(field, None)
            continue
        if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
            raise ValueError(f"invalid metadata.{field} in converted object")
        metadata[field] = value
    return metadata


def _same(obj: Obj) -> Obj:
    return obj
