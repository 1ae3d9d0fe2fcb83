"""The warnings a built-in kind's strategy gives a valid write (``WarningsOnCreate`` and
``WarningsOnUpdate``), sent back in ``Warning`` headers.

A ``kubernetes.io/tls`` Secret whose certificate and key Go's ``tls.X509KeyPair`` refuses is
stored with that refusal as a warning (pkg/api/secret/util.go ``GetWarningsForSecret``). Only
``X509KeyPair``'s PEM stage is followed (crypto/tls/tls.go): finding a ``CERTIFICATE`` block,
then a ``PRIVATE KEY`` one; the certificate and key themselves are not parsed.
"""

from __future__ import annotations

import base64
import binascii
import re
from typing import Any

__all__ = ["builtin_warnings"]

Obj = dict[str, Any]

_PEM_BLOCK = re.compile(
    rb"-----BEGIN ([^\r\n-]*)-----\r?\n(.*?)-----END \1-----", re.DOTALL)


def builtin_warnings(group: str, kind: str, obj: Obj) -> list[str]:
    """The warnings of a valid create or update of a built-in object."""
    if (group, kind) == ("", "Secret") and obj.get("type") == "kubernetes.io/tls":
        data = obj.get("data") or {}
        refusal = _x509_key_pair(_decoded(data.get("tls.crt")), _decoded(data.get("tls.key")))
        return [refusal] if refusal else []
    return []


def _decoded(value: Any) -> bytes:
    try:
        return base64.b64decode(value or "", validate=True)
    except (binascii.Error, ValueError):
        return b""


def _x509_key_pair(cert: bytes, key: bytes) -> str | None:
    """``tls.X509KeyPair``'s error up to its PEM blocks, None past them."""
    cert_types = [m.group(1).decode() for m in _PEM_BLOCK.finditer(cert)]
    if "CERTIFICATE" not in cert_types:
        if not cert_types:
            return "tls: failed to find any PEM data in certificate input"
        if len(cert_types) == 1 and cert_types[0].endswith("PRIVATE KEY"):
            return ("tls: failed to find certificate PEM data in certificate input, but did "
                    "find a private key; PEM inputs may have been switched")
        return ('tls: failed to find "CERTIFICATE" PEM block in certificate input after '
                f"skipping PEM blocks of the following types: [{' '.join(cert_types)}]")
    skipped: list[str] = []
    for match in _PEM_BLOCK.finditer(key):
        block_type = match.group(1).decode()
        if block_type == "PRIVATE KEY" or block_type.endswith(" PRIVATE KEY"):
            return None
        skipped.append(block_type)
    if not skipped:
        return "tls: failed to find any PEM data in key input"
    if skipped == ["CERTIFICATE"]:
        return "tls: found a certificate rather than a key in the PEM for the private key"
    return ('tls: failed to find PEM block with type ending in "PRIVATE KEY" in key input '
            f"after skipping PEM blocks of the following types: [{' '.join(skipped)}]")
