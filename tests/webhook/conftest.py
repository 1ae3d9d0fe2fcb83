"""A CA and a serving certificate for 127.0.0.1, and a running webhook server."""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry

from kgen_runtime.webhook import WebhookServer
from tests._pki import issue, make_ca


@dataclass(frozen=True)
class Certs:
    ca: Path
    directory: Path  # holds tls.crt and tls.key

    def client_context(self) -> ssl.SSLContext:
        return ssl.create_default_context(cafile=str(self.ca))

    def renew(self, subject: str) -> None:
        """Issue a new serving certificate in place, as cert-manager rotates one."""
        cert, key = issue(self.directory.parent, "renewed", subject,
                          "subjectAltName=IP:127.0.0.1\n")
        (self.directory / "tls.key").write_bytes(key.read_bytes())
        (self.directory / "tls.crt").write_bytes(cert.read_bytes())


@pytest.fixture(scope="module")
def module_certs(tmp_path_factory: pytest.TempPathFactory) -> Certs:
    root = tmp_path_factory.mktemp("pki")
    ca = make_ca(root)
    cert, key = issue(root, "server", "/CN=webhook", "subjectAltName=IP:127.0.0.1\n")
    serving = root / "serving"
    serving.mkdir()
    cert.rename(serving / "tls.crt")
    key.rename(serving / "tls.key")
    return Certs(ca, serving)


@pytest.fixture
def certs(module_certs: Certs, tmp_path: Path) -> Certs:
    """A per-test copy of the serving pair, which a test may rotate."""
    (tmp_path / "serving").mkdir()
    for name in ("tls.crt", "tls.key"):
        (tmp_path / "serving" / name).write_bytes((module_certs.directory / name).read_bytes())
    for name in ("ca.crt", "ca.key"):
        (tmp_path / name).write_bytes((module_certs.ca.parent / name).read_bytes())
    return Certs(tmp_path / "ca.crt", tmp_path / "serving")


@pytest.fixture
def registry() -> CollectorRegistry:
    return CollectorRegistry()


@pytest.fixture
def server(certs: Certs, registry: CollectorRegistry) -> Iterator[WebhookServer]:
    webhooks = WebhookServer("127.0.0.1", 0, cert_dir=certs.directory, registry=registry)
    yield webhooks
    webhooks.stop()
