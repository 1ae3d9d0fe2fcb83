"""urllib3 connection pools whose responses parse their headers without the ``email`` package.

``http.client`` hands every response's header block to ``email.parser`` (a feed parser
built for mail): a fifth of the CPU a controller spends per request. An API server's headers
are plain ``Name: value`` lines, for which the parse reduces to splitting each line at its
first colon; :func:`parse_headers` does that and builds the same
:class:`http.client.HTTPMessage` (same headers in the same order, the same empty payload, no
defects), and hands any other block (folded or malformed lines, a ``multipart``/``message``
content type, a block not ended by a blank line) to ``http.client.parse_headers`` itself,
so urllib3 sees and reports exactly what it did before.
"""

from __future__ import annotations

import http.client
import re
from typing import IO, Any

from urllib3 import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.connection import HTTPConnection, HTTPSConnection

__all__ = ["POOL_CLASSES_BY_SCHEME", "parse_headers"]

# A field name as email's feed parser reads one (printable ASCII, no colon): RFC 5322.
_NAME = re.compile(r"[\041-\071\073-\176]+")
_BLANK = (b"\r\n", b"\n")


def parse_headers(fp: IO[bytes]) -> http.client.HTTPMessage:
    """Read a header block from ``fp`` as ``http.client.parse_headers`` does (same limits on
    line length and count, the same message), plain lines without the email parser."""
    lines = http.client._read_headers(fp)  # type: ignore[attr-defined]
    if lines[-1] not in _BLANK:
        return _parsed_by_email(lines)
    message = http.client.HTTPMessage()
    for line in lines[:-1]:
        text = line.decode("iso-8859-1")
        text = text[:-2] if text.endswith("\r\n") else text[:-1]  # every line ends in "\n"
        name, colon, value = text.partition(":")
        if not colon or _NAME.fullmatch(name) is None or "\r" in value or "\n" in value:
            return _parsed_by_email(lines)
        message.set_raw(name, value.lstrip(" \t"))
    content_type = message.get("content-type", "").lower().lstrip()
    if content_type.startswith(("multipart/", "message/")):
        return _parsed_by_email(lines)
    message.set_payload("")
    return message


def _parsed_by_email(lines: list[bytes]) -> http.client.HTTPMessage:
    import email.parser

    text = b"".join(lines).decode("iso-8859-1")
    return email.parser.Parser(_class=http.client.HTTPMessage).parsestr(text)


class _Response(http.client.HTTPResponse):
    """``http.client.HTTPResponse`` reading its headers with :func:`parse_headers`."""

    def begin(self) -> None:
        """``http.client.HTTPResponse.begin`` (CPython 3.11-3.13) with the header parse
        swapped; ``self.debuglevel`` printing left out."""
        if self.headers is not None:
            return
        while True:
            version, status, reason = self._read_status()
            if status != http.client.CONTINUE:
                break
            http.client._read_headers(self.fp)
        self.code = self.status = status
        self.reason = reason.strip()
        if version in ("HTTP/1.0", "HTTP/0.9"):
            self.version = 10
        elif version.startswith("HTTP/1."):
            self.version = 11
        else:
            raise http.client.UnknownProtocol(version)
        self.headers = self.msg = parse_headers(self.fp)
        transfer_encoding = self.headers.get("transfer-encoding")
        self.chunked = bool(transfer_encoding and transfer_encoding.lower() == "chunked")
        if self.chunked:
            self.chunk_left = None
        self.will_close = self._check_close()
        self.length = None
        length = self.headers.get("content-length")
        if length and not self.chunked:
            try:
                self.length = int(length)
            except ValueError:
                self.length = None
            else:
                if self.length < 0:
                    self.length = None
        if (
            status in (http.client.NO_CONTENT, http.client.NOT_MODIFIED)
            or 100 <= status < 200
            or self._method == "HEAD"
        ):
            self.length = 0
        if not self.will_close and not self.chunked and self.length is None:
            self.will_close = True


class _Connection(HTTPConnection):
    response_class = _Response


class _TLSConnection(HTTPSConnection):
    response_class = _Response


class _Pool(HTTPConnectionPool):
    ConnectionCls = _Connection


class _TLSPool(HTTPSConnectionPool):
    ConnectionCls = _TLSConnection


#: For ``PoolManager.pool_classes_by_scheme``.
POOL_CLASSES_BY_SCHEME: dict[str, Any] = {"http": _Pool, "https": _TLSPool}
