"""The checks kube-apiserver makes of a Mutating/ValidatingWebhookConfiguration before it
stores one (pkg/apis/admissionregistration/validation/validation.go
``validateMutatingWebhook``/``validateValidatingWebhook``, per webhook in this order, then
its ``Duplicate`` name; the URL and service rules of apiserver's util/webhook/validation.go).

Not checked here: the rules' groups, versions and resources (``validateRule``), label
selectors, ``admissionReviewVersions`` beyond being required, and the CEL
``matchConditions`` (compiled when the chain evaluates them).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import orjson

from kgen_runtime import _names
from kgen_runtime.testing._status import Cause

__all__ = ["webhook_configuration_causes"]

Obj = dict[str, Any]

_FAILURE_POLICIES = ("Fail", "Ignore")
_MATCH_POLICIES = ("Equivalent", "Exact")
_REINVOCATION_POLICIES = ("IfNeeded", "Never")
_SIDE_EFFECTS = ("None", "NoneOnDryRun", "Some", "Unknown")
_NO_SIDE_EFFECTS = ("None", "NoneOnDryRun")
_FORM = "; desired format: https://host[/path]"


def webhook_configuration_causes(obj: Obj, old: Obj | None) -> Iterator[Cause]:
    """The 422 causes of a webhook configuration about to be written over ``old``."""
    mutating = obj.get("kind") == "MutatingWebhookConfiguration"
    # A create allows no side effects but None/NoneOnDryRun; an update only while every
    # stored webhook does (ValidateXxxWebhookConfigurationUpdate: requireNoSideEffects).
    old_hooks = [] if old is None else list(old.get("webhooks") or [])
    allowed = (_NO_SIDE_EFFECTS if all(isinstance(h, dict) and h.get("sideEffects")
                                       in _NO_SIDE_EFFECTS for h in old_hooks)
               else _SIDE_EFFECTS)
    seen: set[str] = set()
    for index, hook in enumerate(obj.get("webhooks") or []):
        if not isinstance(hook, dict):
            continue
        path = f"webhooks[{index}]"
        yield from _webhook(hook, path, allowed, mutating)
        name = hook.get("name")
        if isinstance(name, str) and name:
            if name in seen:
                yield Cause("FieldValueDuplicate", f"Duplicate value: {_json(name)}",
                            f"{path}.name")
            seen.add(name)


def _webhook(hook: Obj, path: str, allowed: tuple[str, ...],
             mutating: bool) -> Iterator[Cause]:
    yield from _name(hook.get("name"), f"{path}.name")
    for field, supported in (("failurePolicy", _FAILURE_POLICIES),
                             ("matchPolicy", _MATCH_POLICIES)):
        yield from _supported(hook.get(field), supported, f"{path}.{field}")
    side_effects = hook.get("sideEffects")
    if side_effects is None:
        yield Cause("FieldValueRequired",
                    f"Required value: must specify one of {', '.join(allowed)}",
                    f"{path}.sideEffects")
    else:
        yield from _supported(side_effects, allowed, f"{path}.sideEffects")
    timeout = hook.get("timeoutSeconds")
    if isinstance(timeout, int) and not 1 <= timeout <= 30:
        yield Cause("FieldValueInvalid", f"Invalid value: {timeout}: the timeout value must "
                    "be between 1 and 30 seconds", f"{path}.timeoutSeconds")
    if mutating:
        yield from _supported(hook.get("reinvocationPolicy"), _REINVOCATION_POLICIES,
                              f"{path}.reinvocationPolicy")
    yield from _client_config(hook.get("clientConfig") or {}, f"{path}.clientConfig")


def _name(name: Any, path: str) -> Iterator[Cause]:
    """``IsFullyQualifiedName``: a DNS subdomain of three segments at least."""
    if not isinstance(name, str) or not name:
        yield Cause("FieldValueRequired", "Required value", path)
        return
    errors = _names.dns1123_subdomain_errors(name)
    if errors:
        yield Cause("FieldValueInvalid", f"Invalid value: {_json(name)}: {','.join(errors)}",
                    path)
    elif len(name.split(".")) < 3:
        yield Cause("FieldValueInvalid", f"Invalid value: {_json(name)}: should be a domain "
                    "with at least three segments separated by dots", path)


def _supported(value: Any, supported: tuple[str, ...], path: str) -> Iterator[Cause]:
    if value is not None and value not in supported:
        yield Cause("FieldValueNotSupported", f"Unsupported value: {_json(value)}: supported "
                    f"values: {', '.join(_json(s) for s in supported)}", path)


def _client_config(config: Obj, path: str) -> Iterator[Cause]:
    url, service = config.get("url"), config.get("service")
    if (url is None) == (service is None):
        yield Cause("FieldValueRequired", "Required value: exactly one of url or service is "
                    "required", path)
    elif isinstance(url, str):
        yield from _url(url, f"{path}.url")
    elif isinstance(service, dict):
        yield from _service(service, f"{path}.service")


def _url(url: str, path: str) -> Iterator[Cause]:
    """``ValidateWebhookURL`` with https forced."""
    try:
        parts = urlsplit(url)
        host = parts.netloc.rpartition("@")[2]
    except ValueError as error:
        yield Cause("FieldValueRequired", f"Required value: url must be a valid URL: {error}"
                    f"{_FORM}", path)
        return
    if parts.scheme != "https":
        yield Cause("FieldValueInvalid", f"Invalid value: {_json(parts.scheme)}: 'https' is "
                    f"the only allowed URL scheme{_FORM}", path)
    if not host:
        yield Cause("FieldValueInvalid", f'Invalid value: "": host must be provided{_FORM}',
                    path)
    if "@" in parts.netloc:
        user = parts.netloc.rpartition("@")[0]
        yield Cause("FieldValueInvalid", f"Invalid value: {_json(user)}: user information is "
                    "not permitted in the URL", path)
    if parts.fragment:
        yield Cause("FieldValueInvalid", f"Invalid value: {_json(parts.fragment)}: fragments "
                    "are not permitted in the URL", path)
    if parts.query:
        yield Cause("FieldValueInvalid", f"Invalid value: {_json(parts.query)}: query "
                    "parameters are not permitted in the URL", path)


def _service(service: Obj, path: str) -> Iterator[Cause]:
    """``ValidateWebhookService`` (its path's segments are not checked here)."""
    if not service.get("name"):
        yield Cause("FieldValueRequired", "Required value: service name is required",
                    f"{path}.name")
    if not service.get("namespace"):
        yield Cause("FieldValueRequired", "Required value: service namespace is required",
                    f"{path}.namespace")
    port = service.get("port", 443)
    if isinstance(port, int) and not 1 <= port <= 65535:
        yield Cause("FieldValueInvalid", f"Invalid value: {port}: port is not valid: must be "
                    "between 1 and 65535, inclusive", f"{path}.port")


def _json(value: Any) -> str:
    return orjson.dumps(value).decode()
