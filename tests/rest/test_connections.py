"""HTTPTransport's kept-alive ``http.client`` connections (``rest._connections``): reuse, a
server closing them, and the urllib3 path a proxy takes. TLS settings: ``test_tls.py``."""

from __future__ import annotations

import gc
import http.client
import io

import pytest
from urllib3 import HTTPHeaderDict

from kgen_runtime.rest import Config, HTTPTransport, Request
from kgen_runtime.rest._connections import PlainResponse
from tests.rest.conftest import BOUND, FakeClock, StubServer


def test_requests_one_after_another_share_one_connection(
    server: StubServer, transport: HTTPTransport
) -> None:
    for method in ("GET", "PUT", "POST", "PATCH", "DELETE", "GET"):
        assert transport.send(Request(method, "/x", (), b"{}")).status == 200
    assert len({r.client_port for r in server.requests}) == 1


@pytest.mark.parametrize("method", ["GET", "PUT"])
def test_a_connection_the_server_closed_while_idle_is_replaced_without_a_retry(
    server: StubServer, transport: HTTPTransport, clock: FakeClock, method: str
) -> None:
    server.hang_up(after_reply=True)
    assert transport.send(Request(method, "/x", (), b"{}")).read() == b"{}"
    assert server.hung_up.wait(BOUND)
    assert transport.send(Request(method, "/y", (), b"{}")).status == 200
    assert [r.path for r in server.requests] == ["/x", "/y"]
    assert server.requests[0].client_port != server.requests[1].client_port
    assert clock.sleeps == []


def test_a_read_whose_connection_breaks_before_the_response_is_retried(
    server: StubServer, transport: HTTPTransport, clock: FakeClock
) -> None:
    transport.send(Request("GET", "/warm")).close()  # the kept-alive connection that breaks
    server.hang_up(after_reply=False)
    assert transport.send(Request("GET", "/x")).status == 200
    assert [r.path for r in server.requests] == ["/warm", "/x", "/x"]
    assert clock.sleeps == [0.2]


@pytest.mark.parametrize("method", ["POST", "PUT", "PATCH", "DELETE"])
def test_a_write_whose_connection_breaks_before_the_response_is_not_retried(
    server: StubServer, transport: HTTPTransport, clock: FakeClock, method: str
) -> None:
    transport.send(Request("GET", "/warm")).close()
    server.hang_up(after_reply=False)
    with pytest.raises(ConnectionError):
        transport.send(Request(method, "/x", (), b"{}"))
    assert [r.path for r in server.requests] == ["/warm", "/x"]
    assert clock.sleeps == []
    assert transport.send(Request(method, "/after", (), b"{}")).status == 200


def test_an_answer_sent_before_the_body_was_read_is_returned(
    server: StubServer, transport: HTTPTransport, clock: FakeClock
) -> None:
    """A server may answer (413) and close before reading a large body: the send fails
    with a broken pipe or a reset, and the answer is still read and returned, as urllib3
    does, rather than a ConnectionError."""
    server.reject_unread(413)
    response = transport.send(Request("PUT", "/x", (), b"x" * (32 << 20)))
    assert (response.status, response.read()) == (413, b"{}")
    assert clock.sleeps == [] and len(server.requests) == 1
    assert transport.send(Request("GET", "/after")).status == 200


def test_a_host_with_a_path_prefixes_every_request(
    server: StubServer, clock: FakeClock
) -> None:
    """As a gateway proxying to clusters expects (``https://rancher/k8s/clusters/c-1``)."""
    transport = HTTPTransport(Config(host=f"{server.url}/k8s/clusters/c-1/"), clock=clock)
    assert transport.send(Request("GET", "/api/v1/pods", (("limit", "5"),))).status == 200
    assert server.last.path == "/k8s/clusters/c-1/api/v1/pods"
    assert server.last.query == [("limit", "5")]
    transport.close()


def test_a_transport_dropped_without_close_closes_its_connections(
    server: StubServer, clock: FakeClock
) -> None:
    """As urllib3's pools do; an unclosed socket would fail this test with a
    ResourceWarning (warnings are errors in this suite)."""
    transport = HTTPTransport(Config(host=server.url), clock=clock)
    assert transport.send(Request("GET", "/x")).status == 200
    del transport
    gc.collect()


def test_a_proxy_is_used_through_urllib3(server: StubServer, clock: FakeClock) -> None:
    """``http.client`` connections do not do proxies: with ``Config.proxy`` the request
    goes to the proxy with the API server's URL in its request line."""
    transport = HTTPTransport(
        Config(host="http://kube.invalid:6443", proxy=server.url), clock=clock
    )
    assert transport.send(Request("GET", "/api/v1/pods", (("limit", "5"),))).status == 200
    assert (server.last.path, server.last.query) == ("/api/v1/pods", [("limit", "5")])
    assert server.last.headers["host"] == "kube.invalid:6443"
    transport.close()


def test_response_headers_read_as_urllib3_gives_them() -> None:
    """Case-insensitive, a repeated header's values joined, one name per header."""
    message = http.client.parse_headers(io.BytesIO(
        b"Warning: 299 - one\r\nContent-Type: application/json\r\nwarning: 299 - two\r\n\r\n"
    ))
    response = PlainResponse(200, message, b"{}")
    assert dict(response.headers) == dict(HTTPHeaderDict(message.items())) == {
        "Warning": "299 - one, 299 - two",
        "Content-Type": "application/json",
    }
    assert response.headers["WARNING"] == "299 - one, 299 - two"
    assert len(response.headers) == 2 and "content-type" in response.headers
    assert response.headers.get("Retry-After") is None and "retry-after" not in response.headers
    assert response.header_values("warning") == ["299 - one", "299 - two"]
    assert (response.read(), list(response.iter_lines())) == (b"{}", [b"{}"])
