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

Failures are the apiserver's: 500 ``conversion webhook for GROUP/VERSION, Kind=KIND failed:
...`` (or ``returned failure: MESSAGE`` when the webhook answered with a Failure).
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from kgen_runtime.testing._resources import ServedResource
from kgen_runtime.testing._status import StatusError
from kgen_runtime.testing._webhooks import HTTPSWebhookCaller, ServiceResolver, webhook_endpoint
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
        client_config = None
        if conversion.get("strategy") == "Webhook":
            client_config = dict((conversion.get("webhook") or {}).get("clientConfig") or {})
        with self._lock:
            self._strategies[(spec["group"], spec["names"]["plural"])] = _Strategy(
                storage, client_config)

    def forget(self, group: str, plural: str) -> None:
        """Drop a deleted CRD's strategy."""
        with self._lock:
            self._strategies.pop((group, plural), None)

    def calls_webhooks(self) -> bool:
        """Whether any CRD converts through a webhook."""
        with self._lock:
            return any(s.client_config is not None for s in self._strategies.values())

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
                raise StatusError.internal(
                    f"conversion webhook for {source} failed: {error}") from error
        elif strategy.client_config is not None:
            converted = self._call(source, strategy.client_config, pending, api_version)
        else:
            converted = [{**obj, "apiVersion": api_version} for obj in pending]
        answers = iter(converted)
        return [obj if obj.get("apiVersion") == api_version else next(answers)
                for obj in objects]

    def _call(self, source: str, client_config: Obj, objects: list[Obj],
              api_version: str) -> list[Obj]:
        uid = str(uuid.uuid4())
        review = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
                  "request": {"uid": uid, "desiredAPIVersion": api_version,
                              "objects": objects}}
        try:
            url, ca_bundle = webhook_endpoint(client_config, _TIMEOUT, self._service_resolver)
            answer = self._caller.call(url, ca_bundle, review, _TIMEOUT)
            response = answer.get("response")
            if not isinstance(response, dict) or response.get("uid") != uid:
                raise RuntimeError("the webhook's response has no matching uid")
        except Exception as error:
            raise StatusError.internal(
                f"conversion webhook for {source} failed: {error}") from error
        result = response.get("result") or {}
        if result.get("status") != "Success":
            raise StatusError.internal(f"conversion webhook for {source} returned failure: "
                                       f"{result.get('message', '')}")
        converted = response.get("convertedObjects") or []
        if len(converted) != len(objects) or any(
                obj.get("apiVersion") != api_version for obj in converted):
            raise StatusError.internal(
                f"conversion webhook for {source} failed: expected {len(objects)} objects "
                f"of {api_version}, got {len(converted)}")
        return list(converted)


def _same(obj: Obj) -> Obj:
    return obj
