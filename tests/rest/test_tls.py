"""TLS: the server is verified by default, client certificates are presented."""

from __future__ import annotations

import asyncio
import ssl
import subprocess
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from kgen_runtime.rest import AsyncHTTPTransport, Config, HTTPTransport, Request
from tests.rest.conftest import FakeClock, StubServer


@dataclass(frozen=True)
class Pki:
    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path


def openssl(*args: str, cwd: Path) -> None:
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True, timeout=20)


def issue(directory: Path, name: str, subject: str, extensions: str) -> None:
    openssl("req", "-new", "-newkey", "rsa:2048", "-nodes", "-keyout", f"{name}.key",
            "-out", f"{name}.csr", "-subj", subject, cwd=directory)  # fmt: skip
    (directory / f"{name}.ext").write_text(extensions)
    openssl("x509", "-req", "-in", f"{name}.csr", "-CA", "ca.crt", "-CAkey", "ca.key",
            "-CAcreateserial", "-days", "2", "-out", f"{name}.crt",
            "-extfile", f"{name}.ext", cwd=directory)  # fmt: skip


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    directory = tmp_path_factory.mktemp("pki")
    openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key",
            "-out", "ca.crt", "-days", "2", "-subj", "/CN=test-ca", cwd=directory)  # fmt: skip
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
