"""List continue tokens in kube-apiserver's format, and the errors it answers for bad ones.

A token is ``base64.RawURLEncoding`` of ``{"v":"meta.k8s.io/v1","rv":<rv>,"start":<key>}``
(``k8s.io/apiserver/pkg/storage/continue.go`` ``EncodeContinue``): the list's resourceVersion
and the storage key to go on from, relative to the listed prefix (``name`` within a
namespace, ``namespace/name`` across namespaces) with a NUL appended, so the next page starts
after the last key returned. ``rv`` -1 (what a 410 for an expired token hands back) means
"continue at the latest resourceVersion".
"""

from __future__ import annotations

import base64
import binascii
import json
import re

from kgen_runtime.testing._status import StatusError

__all__ = ["decode_continue", "encode_continue"]

_VERSION = "meta.k8s.io/v1"
_INVALID = "continue key is not valid"
_BASE64URL = re.compile(r"[A-Za-z0-9_-]*")


def encode_continue(rv: int, start: str) -> str:
    """The token for a list read at ``rv`` whose next page starts at key ``start``."""
    token = json.dumps({"v": _VERSION, "rv": rv, "start": start}, separators=(",", ":"))
    return base64.urlsafe_b64encode(token.encode()).decode().rstrip("=")


def decode_continue(token: str) -> tuple[int, str]:
    """``(rv, start)`` of a token, or 400 with the message of ``DecodeContinue`` behind
    ``invalid continue token: `` (the storage layer's ``NewBadRequest``)."""
    padded = token + "=" * (-len(token) % 4)
    invalid_at = _BASE64URL.match(token)
    if invalid_at is None or invalid_at.end() != len(token) or len(token) % 4 == 1:
        at = invalid_at.end() if invalid_at is not None else 0
        raise _bad(f"{_INVALID}: illegal base64 data at input byte {at}")
    try:
        data = base64.urlsafe_b64decode(padded)
    except binascii.Error:
        raise _bad(f"{_INVALID}: illegal base64 data at input byte {len(token)}") from None
    try:
        decoded = json.loads(data)
    except (ValueError, UnicodeDecodeError):
        raise _bad(f"{_INVALID}: {_json_error(data)}") from None
    if not isinstance(decoded, dict) or decoded.get("v") != _VERSION:
        version = decoded.get("v", "") if isinstance(decoded, dict) else ""
        raise _bad(f"{_INVALID}: server does not recognize this encoded version {version}")
    rv, start = decoded.get("rv"), decoded.get("start")
    if not isinstance(rv, int) or rv == 0:
        raise _bad(f"{_INVALID}: incorrect encoded start resourceVersion (version {_VERSION})")
    if not isinstance(start, str) or not start:
        raise _bad(f"{_INVALID}: encoded start key empty (version {_VERSION})")
    return rv, start


def _bad(why: str) -> StatusError:
    return StatusError.bad_request(f"invalid continue token: {why}")


def _json_error(data: bytes) -> str:
    """Go ``encoding/json``'s error for a token that is not JSON, in its commonest form: the
    first byte cannot begin a value (``quoteChar``: Go's ``strconv.Quote`` of the byte as a
    rune). Other malformed JSON gets ``unexpected end of JSON input``, Go's word for a
    truncated document."""
    text = data.lstrip(b" \t\r\n")
    if not text or chr(text[0]) in '{["-0123456789tfn':
        return "unexpected end of JSON input"
    first = text[0]
    if first == ord("'"):
        quoted = "\\'"
    elif 0x20 <= first < 0x7F or (first > 0xA0 and first != 0xAD):
        quoted = chr(first)
    else:
        quoted = f"\\u{first:04x}" if first >= 0x7F else f"\\x{first:02x}"
    return f"invalid character '{quoted}' looking for beginning of value"
