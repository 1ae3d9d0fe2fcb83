"""TLS: the server is verified by default, client certificates are presented."""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kgen_runtime.rest import AsyncHTTPTransport, Config, HTTPTransport, Request
from tests._pki import issue, make_ca
from tests.rest.conftest import FakeClock, StubServer


@dataclass(frozen=True)
class Pki:
    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    directory = tmp_path_factory.mktemp("pki")
    make_ca(directory)
    issue(directory, "server", "/CN=kube.local", "subjectAltName=DNS:kube.local\n")
    issue(directory, "client", "/CN=alice", "extendedKeyUsage=clientAuth\n")
    return Pki(
        directory / "ca.crt",
        directory / "server.crt",
        directory / "server.key",
        directory / "client.crt",
        directory / "client.key",
    )


@pytest.fixture
def tls_server(pki: Pki) -> Iterator[StubServer]:
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(pki.server_cert, pki.server_key)
    context.load_verify_locations(pki.ca)
    context.verify_mode = ssl.CERT_REQUIRED
    stub = StubServer(tls=context)
    yield stub
    stub.close()


def sync_get(config: Config) -> int:
    transport = HTTPTransport(config, clock=FakeClock())
    try:
        return transport.send(Request("GET", "/x")).status
    finally:
        transport.close()


def async_get(config: Config) -> int:
    async def main() -> int:
        transport = AsyncHTTPTransport(config)
        try:
            return (await transport.send(Request("GET", "/x"))).status
        finally:
            await transport.aclose()

    return asyncio.run(main())


@pytest.fixture(params=[sync_get, async_get], ids=["sync", "async"])
def get(request: pytest.FixtureRequest) -> Callable[[Config], int]:
    """One GET through the blocking or the async transport: the same TLS rules hold."""
    getter: Callable[[Config], int] = request.param
    return getter


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
    pki: Pki, tls_server: StubServer, get: Callable[[Config], int]
) -> None:
    assert get(client_config(pki, tls_server, verify_tls=False)) == 200


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
