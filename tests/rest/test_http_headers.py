"""The sync transport's header parse builds what ``http.client.parse_headers`` builds, for
plain blocks (its own parse) and for every block it hands back to the email parser."""

from __future__ import annotations

import http.client
import io
from typing import Any

import pytest

from kgen_runtime.rest._http import parse_headers
from kgen_runtime.rest.config import Config
from kgen_runtime.rest.transport import _pool_manager

BLOCKS = [
    # what kube-apiserver sends (a JSON response, a warning, audit ids)
    b"Audit-Id: 8c3e\r\nCache-Control: no-cache, private\r\nContent-Type: application/json\r\n"
    b'Warning: 299 - "unknown field \\"spec.x\\""\r\nWarning: 299 - "second"\r\n'
    b"Date: Sun, 29 Nov 2026 09:00:00 GMT\r\nContent-Length: 12\r\n\r\nbody-not-read",
    b"Content-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n",
    b"A:b\nB:  \t spaced value  \n\n",  # bare LF endings, no space, leading blanks
    b"Empty:\r\nX-Odd-Chars: caf\xe9 \x7f\r\n\r\n",
    b"\r\n",  # no headers at all
    # handed to the email parser: folded, no colon, bad name, bare CR, multipart, no end
    b"Folded: one\r\n two\r\nNext: x\r\n\r\n",
    b"No colon here\r\nA: b\r\n\r\n",
    b"Bad Name: x\r\n\r\n",
    b": no name\r\n\r\n",
    b"A: b\rc\r\n\r\n",
    b"A: b\r\r\n\r\n",
    b"Content-Type: multipart/mixed\r\n\r\n",
    b"Content-Type: message/rfc822\r\n\r\n",
    b"A: b\r\n",
]


def summary(message: Any) -> tuple[object, ...]:
    payload = message.get_payload()
    return (
        type(message),
        message.items(),
        [summary(part) for part in payload] if isinstance(payload, list) else payload,
        [type(d) for d in message.defects],
        message.get_unixfrom(),
        message.is_multipart(),
    )


@pytest.mark.parametrize("block", BLOCKS)
def test_the_same_message_as_http_client(block: bytes) -> None:
    ours, theirs = io.BytesIO(block), io.BytesIO(block)
    assert summary(parse_headers(ours)) == summary(http.client.parse_headers(theirs))
    assert ours.tell() == theirs.tell()  # the body is left unread


def test_the_same_limits_as_http_client() -> None:
    with pytest.raises(http.client.LineTooLong):
        parse_headers(io.BytesIO(b"A: " + b"x" * 70000 + b"\r\n\r\n"))
    with pytest.raises(http.client.HTTPException, match="got more than 100 headers"):
        parse_headers(io.BytesIO(b"A: b\r\n" * 101 + b"\r\n"))


@pytest.mark.parametrize("proxy", [None, "http://proxy.invalid:3128"])
@pytest.mark.parametrize("url", ["http://api.invalid", "https://api.invalid"])
def test_the_transport_pools_parse_with_it(proxy: str | None, url: str) -> None:
    pools = _pool_manager(Config(host=url, proxy=proxy))
    connection = pools.connection_from_url(url).ConnectionCls
    assert connection.response_class.begin is not http.client.HTTPResponse.begin
    assert connection.response_class.__module__ == parse_headers.__module__
