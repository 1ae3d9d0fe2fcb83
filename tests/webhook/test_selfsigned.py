"""write_self_signed_certificate: a pair the webhook server serves with and that verifies
itself as the caBundle of a client, as the API server uses it."""

from __future__ import annotations

import base64
import ssl
import urllib.request
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry

from kgen_runtime.webhook import WebhookServer, write_self_signed_certificate


def test_the_server_serves_it_and_a_client_trusting_it_connects(tmp_path: Path) -> None:
    cert = write_self_signed_certificate(tmp_path / "certs", ["localhost", "127.0.0.1"])
    assert sorted(p.name for p in cert.parent.iterdir()) == ["tls.crt", "tls.key"]
    server = WebhookServer("127.0.0.1", 0, cert_dir=cert.parent, registry=CollectorRegistry())
    server.start()
    try:
        assert server.address is not None
        for host in ("127.0.0.1", "localhost"):
            context = ssl.create_default_context(cadata=cert.read_text())
            request = urllib.request.Request(
                f"https://{host}:{server.address[1]}/missing", data=b"{}",
                headers={"Content-Type": "application/json"})
            with pytest.raises(urllib.error.HTTPError) as answer:
                urllib.request.urlopen(request, context=context, timeout=5)
            answer.value.close()
            assert answer.value.code == 404  # TLS verified: the handshake got through
    finally:
        server.stop()
    # The PEM base64-encoded is what a webhook configuration's caBundle holds.
    assert base64.b64decode(base64.b64encode(cert.read_bytes())).startswith(b"-----BEGIN")


def test_a_client_checking_another_name_refuses_it(tmp_path: Path) -> None:
    cert = write_self_signed_certificate(tmp_path, ["webhook.example.svc"])
    server = WebhookServer("127.0.0.1", 0, cert_dir=tmp_path, registry=CollectorRegistry())
    server.start()
    try:
        assert server.address is not None
        context = ssl.create_default_context(cadata=cert.read_text())
        with pytest.raises(urllib.error.URLError) as refused:
            urllib.request.urlopen(f"https://127.0.0.1:{server.address[1]}/missing",
                                   context=context, timeout=5)
        assert isinstance(refused.value.reason, ssl.SSLCertVerificationError)
    finally:
        server.stop()


def test_no_host_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="at least one host"):
        write_self_signed_certificate(tmp_path, [])
