"""TLS: the server is verified by default, client certificates are presented.

Every rule is checked on each way a request can go: the blocking transport's kept-alive
``http.client`` connections (a whole-body request), its urllib3 pool (a stream; every request
of a config with a ``proxy``, here through an HTTP and an HTTPS CONNECT proxy) and the aiohttp
transport. All of them take their TLS settings from ``_policy.tls_context``.
"""

from __future__ import annotations

import asyncio
import contextlib
import select
import socket
import ssl
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from urllib3.exceptions import InsecureRequestWarning

from kgen_runtime.rest import AsyncHTTPTransport, Config, HTTPTransport, Request
from tests._pki import issue, make_ca
from tests.rest.conftest import BOUND, FakeClock, StubServer


@dataclass(frozen=True)
class Pki:
    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path
    #: A server certificate naming kube.local in its subject only, without subjectAltName.
    cn_only_cert: Path
    cn_only_key: Path
    #: The HTTPS proxy's certificate, for 127.0.0.1.
    proxy_cert: Path
    proxy_key: Path


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    directory = tmp_path_factory.mktemp("pki")
    make_ca(directory)
    issue(directory, "server", "/CN=kube.local", "subjectAltName=DNS:kube.local\n")
    issue(directory, "client", "/CN=alice", "extendedKeyUsage=clientAuth\n")
    issue(directory, "cn-only", "/CN=kube.local", "basicConstraints=CA:FALSE\n")
    issue(directory, "proxy", "/CN=proxy", "subjectAltName=IP:127.0.0.1\n")
    return Pki(
        directory / "ca.crt",
        directory / "server.crt",
        directory / "server.key",
        directory / "client.crt",
        directory / "client.key",
        directory / "cn-only.crt",
        directory / "cn-only.key",
        directory / "proxy.crt",
        directory / "proxy.key",
    )


def server_context(pki: Pki, cert: Path, key: Path) -> ssl.SSLContext:
    """A server presenting ``cert`` and requiring a client certificate issued by the CA."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    context.load_verify_locations(pki.ca)
    context.verify_mode = ssl.CERT_REQUIRED
    return context


@pytest.fixture
def tls_server(pki: Pki) -> Iterator[StubServer]:
    stub = StubServer(tls=server_context(pki, pki.server_cert, pki.server_key))
    yield stub
    stub.close()


class ConnectProxy:
    """An HTTP(S) proxy that only tunnels: ``CONNECT host:port``, then bytes both ways.

    Records each tunnel's target. One thread per tunnel; every wait is bounded by ``BOUND``.
    """

    def __init__(self, tls: ssl.SSLContext | None = None) -> None:
        self.tunnels: list[str] = []
        self._tls = tls
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(BOUND)
        self._sockets: list[socket.socket] = []
        self._threads = [threading.Thread(target=self._accept, daemon=True)]
        self._closed = threading.Event()
        self._threads[0].start()

    @property
    def url(self) -> str:
        port = self._listener.getsockname()[1]
        return f"{'https' if self._tls else 'http'}://127.0.0.1:{port}"

    def _accept(self) -> None:
        while not self._closed.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            client.settimeout(BOUND)
            self._sockets.append(client)
            thread = threading.Thread(target=self._tunnel, args=(client,), daemon=True)
            self._threads.append(thread)
            thread.start()

    def _tunnel(self, client: socket.socket) -> None:
        with contextlib.suppress(OSError):  # a client giving up mid-handshake, or close()
            if self._tls is not None:
                client = self._tls.wrap_socket(client, server_side=True)
                self._sockets.append(client)
            head = b""
            while b"\r\n\r\n" not in head:
                chunk = client.recv(4096)
                if not chunk:
                    return
                head += chunk
            method, target, _ = head.split(b"\r\n", 1)[0].decode().split(" ")
            assert method == "CONNECT", method
            self.tunnels.append(target)
            host, port = target.rsplit(":", 1)
            upstream = socket.create_connection((host, int(port)), timeout=BOUND)
            self._sockets.append(upstream)
            client.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
            self._relay(client, upstream)

    def _relay(self, client: socket.socket, upstream: socket.socket) -> None:
        """Copy bytes both ways until either side closes (a TLS client's buffered bytes
        first: ``select`` cannot see them)."""
        peers = {client: upstream, upstream: client}
        while not self._closed.is_set():
            pending = isinstance(client, ssl.SSLSocket) and client.pending() > 0
            readable = [client] if pending else select.select(list(peers), [], [], BOUND)[0]
            if not readable:
                return
            for source in readable:
                data = source.recv(65536)
                if not data:
                    return
                peers[source].sendall(data)

    def close(self) -> None:
        """Wake every thread (shutting a socket down ends a blocked ``accept`` or ``recv``;
        closing it does not), wait for them, then close the sockets."""
        self._closed.set()
        for sock in [self._listener, *self._sockets]:
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        for thread in self._threads:
            thread.join(BOUND)
        for sock in [self._listener, *self._sockets]:
            sock.close()


@dataclass(frozen=True)
class Way:
    """One way a request can go, as a GET of ``/x`` returning its status."""

    get: Callable[[Config], int]
    #: Whether urllib3 sends it, which warns (``InsecureRequestWarning``) on every request
    #: to an unverified server.
    urllib3: bool


def sync_get(config: Config) -> int:
    transport = HTTPTransport(config, clock=FakeClock())
    try:
        return transport.send(Request("GET", "/x")).status
    finally:
        transport.close()


def sync_stream_get(config: Config) -> int:
    transport = HTTPTransport(config, clock=FakeClock())
    try:
        response = transport.send(Request("GET", "/x"), stream=True)
        assert response.read() == b"{}"
        return response.status
    finally:
        transport.close()


def proxied_get(proxy_tls: ssl.SSLContext | None) -> Callable[[Config], int]:
    """A GET through a CONNECT proxy (HTTPS if ``proxy_tls``), which the test asserts the
    request went through."""

    def get(config: Config) -> int:
        proxy = ConnectProxy(proxy_tls)
        try:
            return sync_get(replace(config, proxy=proxy.url))
        finally:
            proxy.close()
            # An HTTPS proxy is verified as the server is: without ca_file, before tunnelling.
            if proxy_tls is None or config.ca_file or not config.verify_tls:
                assert proxy.tunnels == [urlsplit(config.host).netloc]

    return get


def async_get(config: Config) -> int:
    async def main() -> int:
        transport = AsyncHTTPTransport(config)
        try:
            return (await transport.send(Request("GET", "/x"))).status
        finally:
            await transport.aclose()

    return asyncio.run(main())


@pytest.fixture(params=["sync", "sync-stream", "sync-proxy", "sync-https-proxy", "async"])
def way(request: pytest.FixtureRequest, pki: Pki) -> Way:
    """Each way a request can go: the same TLS rules hold on all of them."""
    name: str = request.param
    if name == "sync":
        return Way(sync_get, urllib3=False)
    if name == "sync-stream":
        return Way(sync_stream_get, urllib3=True)
    if name == "sync-proxy":
        return Way(proxied_get(None), urllib3=True)
    if name == "sync-https-proxy":
        proxy_tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        proxy_tls.load_cert_chain(pki.proxy_cert, pki.proxy_key)
        return Way(proxied_get(proxy_tls), urllib3=True)
    return Way(async_get, urllib3=False)


@pytest.fixture
def get(way: Way) -> Callable[[Config], int]:
    return way.get


def test_verified_server_and_client_certificate(
    pki: Pki, tls_server: StubServer, get: Callable[[Config], int]
) -> None:
    config = Config(
        host=tls_server.url,
        ca_file=str(pki.ca),
        cert_file=str(pki.client_cert),
        key_file=str(pki.client_key),
        tls_server_name="kube.local",
        max_retries=0,
    )
    assert get(config) == 200
    assert tls_server.last.path == "/x"


def test_unknown_server_certificate_is_refused(
    pki: Pki, tls_server: StubServer, get: Callable[[Config], int]
) -> None:
    config = Config(
        host=tls_server.url,
        cert_file=str(pki.client_cert),
        key_file=str(pki.client_key),
        tls_server_name="kube.local",
        max_retries=0,
    )
    with pytest.raises(ConnectionError, match="CERTIFICATE_VERIFY_FAILED"):
        get(config)
    assert tls_server.requests == []


def test_server_name_mismatch_is_refused(
    pki: Pki, tls_server: StubServer, get: Callable[[Config], int]
) -> None:
    config = Config(
        host=tls_server.url,
        ca_file=str(pki.ca),
        cert_file=str(pki.client_cert),
        key_file=str(pki.client_key),
        max_retries=0,
    )
    with pytest.raises(ConnectionError):
        get(config)
    assert tls_server.requests == []


def client_config(pki: Pki, server: StubServer, **settings: Any) -> Config:
    """A config presenting the client certificate to ``server``, not retrying."""
    return Config(
        host=server.url,
        cert_file=str(pki.client_cert),
        key_file=str(pki.client_key),
        max_retries=0,
        **settings,
    )


def test_verification_turned_off_accepts_an_unknown_server(
    pki: Pki, tls_server: StubServer, way: Way
) -> None:
    config = client_config(pki, tls_server, verify_tls=False)
    if way.urllib3:
        with pytest.warns(InsecureRequestWarning):
            assert way.get(config) == 200
    else:
        assert way.get(config) == 200
    assert tls_server.last.path == "/x"


def test_a_server_requiring_a_client_certificate_refuses_a_client_without_one(
    pki: Pki, tls_server: StubServer, get: Callable[[Config], int]
) -> None:
    """The server of these tests requires a client certificate: the other tests' requests
    being answered shows that ``cert_file`` was presented."""
    config = Config(
        host=tls_server.url, ca_file=str(pki.ca), tls_server_name="kube.local", max_retries=0
    )
    with pytest.raises(ConnectionError):
        get(config)
    assert tls_server.requests == []


def test_the_server_is_checked_against_tls_server_name(
    pki: Pki, tls_server: StubServer, get: Callable[[Config], int]
) -> None:
    config = client_config(pki, tls_server, ca_file=str(pki.ca), tls_server_name="other.local")
    with pytest.raises(ConnectionError):
        get(config)
    assert tls_server.requests == []


def test_a_name_in_the_subject_only_is_not_checked(pki: Pki, get: Callable[[Config], int]) -> None:
    """A certificate naming the server in its Common Name but in no subjectAltName is
    refused, as urllib3 always did and Go does since 1.15 ("x509: certificate relies on
    legacy Common Name field")."""
    server = StubServer(tls=server_context(pki, pki.cn_only_cert, pki.cn_only_key))
    try:
        config = client_config(pki, server, ca_file=str(pki.ca), tls_server_name="kube.local")
        with pytest.raises(ConnectionError):
            get(config)
        assert server.requests == []
    finally:
        server.close()


def test_requests_over_tls_share_one_connection(pki: Pki, tls_server: StubServer) -> None:
    """The kept-alive TLS connection is reused (TLS 1.3 session tickets read with the first
    response do not make it look closed)."""
    config = client_config(pki, tls_server, ca_file=str(pki.ca), tls_server_name="kube.local")
    transport = HTTPTransport(config, clock=FakeClock())
    try:
        statuses = [transport.send(Request("GET", f"/{i}")).status for i in range(3)]
    finally:
        transport.close()
    assert statuses == [200] * 3
    assert len({r.client_port for r in tls_server.requests}) == 1
