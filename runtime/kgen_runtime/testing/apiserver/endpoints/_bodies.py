"""Request bodies as the API server reads them: size limit, media types, JSON and YAML.

* A body over 3 MiB is refused with 413 (kube-apiserver's ``MaxRequestBodyBytes``).
* Object bodies (create, update, delete options) are negotiated by ``Content-Type`` like the
  server's input serializers: JSON (also when no type is given), YAML and protobuf (built-in
  kinds, :mod:`._protobuf`) are read; anything else (CBOR too: v1.36 serves it only behind a
  feature gate, off by default) gets the server's 415.
* Patch bodies are JSON (their content type names the patch format); apply bodies YAML.
"""

from __future__ import annotations

from typing import Any

import orjson
import yaml  # type: ignore[import-untyped,unused-ignore]

from kgen_runtime.rest import Request
from kgen_runtime.testing._status import StatusError
from kgen_runtime.testing.apiserver.encoding._go_json import syntax_error, unmarshal_type
from kgen_runtime.testing.apiserver.endpoints._protobuf import MEDIA_TYPE as PROTOBUF
from kgen_runtime.testing.apiserver.endpoints._protobuf import decode_body as decode_protobuf

__all__ = ["MAX_BODY_BYTES", "check_body_size", "decode_json", "decode_object", "decode_yaml"]

#: kube-apiserver's default ``--max-request-body-bytes`` for writes (3 MiB).
MAX_BODY_BYTES = 3 * 1024 * 1024

_ACCEPTED = "application/json, application/yaml, application/vnd.kubernetes.protobuf"


def check_body_size(length: int) -> None:
    """413 RequestEntityTooLarge for a body over :data:`MAX_BODY_BYTES`."""
    if length > MAX_BODY_BYTES:
        raise StatusError(413, "RequestEntityTooLarge",
                          f"Request entity too large: limit is {MAX_BODY_BYTES}")


def decode_object(request: Request, kind: str = "") -> dict[str, Any]:
    """An object body in the media type its ``Content-Type`` names; for a ``kind``, a body
    that is no JSON object is refused as kube-apiserver refuses it (:func:`_unrecognized`)."""
    media = (request.content_type or "").split(";", 1)[0].strip().lower()
    if kind and media in ("", "application/json", "*/*", "application/yaml"):
        _unrecognized(request.body or b"", kind, media == "application/yaml")
    if media in ("", "application/json", "*/*"):
        value = decode_json(request)
    elif media == "application/yaml":
        value = decode_yaml(request.body)
    elif media == PROTOBUF:
        value = decode_protobuf(request.body or b"")
    else:  # the message kube-apiserver v1.36 sent (fidelity transcripts, errors.jsonl #63)
        raise StatusError(415, "UnsupportedMediaType",
                          f"the body of the request was in an unknown format - accepted media "
                          f"types include: {_ACCEPTED}")
    if not isinstance(value, dict):
        raise StatusError.bad_request("the request body must be a JSON object")
    return value


def _unrecognized(body: bytes, kind: str, is_yaml: bool) -> None:
    """The 400 of a body whose apiVersion and kind cannot be read: the json serializer's
    ``couldn't get version/kind; json parse error`` (encoding/json's own error, see
    :mod:`._go_json`) in handlers' ``transformDecodeError`` with ``summarizeData``'s view of
    the body. A YAML body is first turned into JSON (sigs.k8s.io/yaml); its errors are not
    Go's here."""
    if is_yaml:
        try:
            value = yaml.safe_load(body)
        except yaml.YAMLError:
            return
        error = None
    else:
        error = syntax_error(body)
        if error is None:
            try:
                value = orjson.loads(body)
            except orjson.JSONDecodeError:
                return
    if error is None:
        found = unmarshal_type(value)
        if found is None:
            return
        error = (f"json: cannot unmarshal {found} into Go value of type struct {{ APIVersion "
                 'string "json:\\"apiVersion,omitempty\\""; Kind string '
                 '"json:\\"kind,omitempty\\"" }')
    raise StatusError.bad_request(
        f"the object provided is unrecognized (must be of type {kind}): couldn't get "
        f"version/kind; json parse error: {error} ({_summary(body)})")


def _summary(body: bytes, limit: int = 30) -> str:
    """summarizeData: ``<empty>``, an object's first bytes as text, else hex."""
    if not body:
        return "<empty>"
    shown = body[:limit]
    text = shown.decode(errors="replace") if body[:1] == b"{" else shown.hex()
    return text + (" ..." if len(body) > limit else "")


def decode_json(request: Request, *, require_object: bool = True) -> Any:
    try:
        value = orjson.loads(request.body or b"")
    except orjson.JSONDecodeError as error:
        raise StatusError.bad_request(f"the request body is not valid JSON: {error}") from None
    if require_object and not isinstance(value, dict):
        raise StatusError.bad_request("the request body must be a JSON object")
    return value


def decode_yaml(body: bytes | None) -> Any:
    """Apply bodies are YAML; JSON (what clients send) takes the fast path."""
    try:
        return orjson.loads(body or b"")
    except orjson.JSONDecodeError:
        pass
    try:
        return yaml.safe_load(body or b"")
    except yaml.YAMLError as error:
        raise StatusError.bad_request(f"error decoding YAML: {error}") from None
