"""The manager's secure metrics: HTTPS, and ``/metrics`` only for callers the API server
authenticates (TokenReview) and authorises (SubjectAccessReview on the non-resource URL
``/metrics``, verb ``get``), as controller-runtime's WithAuthenticationAndAuthorization;
decisions cached. And no ``/metrics`` on the health port unless asked."""

from __future__ import annotations

import asyncio
import ssl
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry, Counter

from kgen_runtime.api.clientset import Clientset
from kgen_runtime.api.rbac.v1 import ClusterRole, ClusterRoleBinding
from kgen_runtime.controller import AsyncManager, Manager, MetricsAuth, MetricsServer
from kgen_runtime.rest import AsyncHTTPTransport, HTTPTransport, Request, Response
from kgen_runtime.testing import TestAPIServer
from kgen_runtime.util import FakeClock
from kgen_runtime.webhook import write_self_signed_certificate


class CountingTransport:
    """An HTTP transport counting the reviews it sends (to see the cache at work)."""

    def __init__(self, server: TestAPIServer) -> None:
        self.inner = HTTPTransport(server.config())
        self.reviews: list[str] = []

    def send(
        self, request: Request, *, stream: bool = False, read_timeout: float | None = None
    ) -> Response:
        self.reviews.append(request.path.rsplit("/", 1)[-1])
        return self.inner.send(request, stream=stream, read_timeout=read_timeout)

    def close(self) -> None:
        self.inner.close()


@pytest.fixture
def server() -> Iterator[TestAPIServer]:
    with TestAPIServer() as api_server:
        api_server.add_token("reader-token", "system:serviceaccount:monitoring:prometheus")
        api_server.add_token("other-token", "alice")
        with Clientset.for_config(api_server.config()) as kube:
            # What the scaffold's deploy/rbac/metrics_reader_role.yaml grants, bound to the
            # scraper (kubebuilder's metrics-reader ClusterRole).
            kube.rbac_v1.clusterroles().create(ClusterRole.model_validate({
                "metadata": {"name": "metrics-reader"},
                "rules": [{"nonResourceURLs": ["/metrics"], "verbs": ["get"]}]}))
            kube.rbac_v1.clusterrolebindings().create(ClusterRoleBinding.model_validate({
                "metadata": {"name": "prometheus-reads-metrics"},
                "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole",
                            "name": "metrics-reader"},
                "subjects": [{"kind": "ServiceAccount", "name": "prometheus",
                              "namespace": "monitoring"}]}))
        yield api_server


@pytest.fixture
def registry() -> CollectorRegistry:
    registry = CollectorRegistry()
    Counter("kgen_test_scrapes", "a test counter", registry=registry).inc(2)
    return registry


def scrape(address: tuple[str, int] | None, token: str | None,
           context: ssl.SSLContext | None = None) -> tuple[int, str]:
    assert address is not None
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    request = urllib.request.Request(f"https://127.0.0.1:{address[1]}/metrics", headers=headers)
    if context is None:
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    try:
        with urllib.request.urlopen(request, context=context, timeout=5) as reply:
            return reply.status, reply.read().decode()
    except urllib.error.HTTPError as err:
        with err:
            return err.code, err.read().decode()


def test_allowed_token_gets_metrics_no_token_401_denied_user_403(
    server: TestAPIServer, registry: CollectorRegistry, tmp_path: Path
) -> None:
    certificate = write_self_signed_certificate(tmp_path, ["127.0.0.1"])
    transport = CountingTransport(server)
    metrics = MetricsServer(("127.0.0.1", 0), registry, cert_dir=tmp_path,
                            auth=MetricsAuth(transport))
    metrics.start()
    try:
        trusted = ssl.create_default_context(cadata=certificate.read_text())
        status, body = scrape(metrics.address, "reader-token", trusted)  # served with tmp_path's
        assert status == 200 and "kgen_test_scrapes_total 2.0" in body
        assert scrape(metrics.address, None) == (401, "Unauthorized\n")
        assert scrape(metrics.address, "unknown-token") == (401, "Unauthorized\n")
        assert scrape(metrics.address, "other-token") == (
            403, "Authorization denied for user alice\n")
        assert transport.reviews == ["tokenreviews", "subjectaccessreviews", "tokenreviews",
                                     "tokenreviews", "subjectaccessreviews"]
        # Cached: a minute for tokens, 5 minutes for allowed, 30 s for denied decisions.
        assert scrape(metrics.address, "reader-token")[0] == 200
        assert scrape(metrics.address, "other-token")[0] == 403
        assert len(transport.reviews) == 5
    finally:
        metrics.stop()
        transport.close()


def test_cached_decisions_expire(server: TestAPIServer, registry: CollectorRegistry) -> None:
    clock = FakeClock()
    transport = CountingTransport(server)
    auth = MetricsAuth(transport, clock=clock)
    try:
        assert auth.check("Bearer other-token", "get", "/metrics") == (
            403, "Authorization denied for user alice")
        clock.step(31)  # the denial is forgotten, the token not yet
        assert auth.check("Bearer other-token", "get", "/metrics") is not None
        assert transport.reviews == ["tokenreviews", "subjectaccessreviews",
                                     "subjectaccessreviews"]
        clock.step(60)
        assert auth.check("bearer reader-token", "get", "/metrics") is None
        assert auth.check("Basic cmVhZGVy", "get", "/metrics") == (401, "Unauthorized")
    finally:
        transport.close()


def test_a_failing_review_is_a_500(server: TestAPIServer) -> None:
    transport = CountingTransport(server)
    try:
        server.fail_next(1)
        assert MetricsAuth(transport).check("Bearer reader-token", "get", "/metrics") == (
            500, "Authentication failed")
    finally:
        transport.close()


def test_without_certificates_it_serves_a_self_signed_one(registry: CollectorRegistry,
                                                          tmp_path: Path) -> None:
    metrics = MetricsServer(("127.0.0.1", 0), registry, cert_dir=tmp_path / "none")
    metrics.start()
    try:
        status, body = scrape(metrics.address, None)  # no auth: anyone may read
        assert status == 200 and "kgen_test_scrapes_total 2.0" in body
        with pytest.raises(urllib.error.URLError) as refused:  # not a certificate we trust
            scrape(metrics.address, None, ssl.create_default_context())
        assert isinstance(refused.value.reason, ssl.SSLCertVerificationError)
    finally:
        metrics.stop()


def test_the_manager_runs_it_and_keeps_metrics_off_the_health_port(
    registry: CollectorRegistry,
) -> None:
    metrics = MetricsServer(("127.0.0.1", 0), registry, secure=False)
    manager = Manager(health_address=("127.0.0.1", 0), metrics_registry=registry,
                      metrics_server=metrics, graceful_shutdown_timeout=5.0)
    stop = threading.Event()
    thread = threading.Thread(target=manager.start, args=(stop,), daemon=True)
    thread.start()
    try:
        assert manager.elected.wait(5)
        assert manager.metrics_address is not None and manager.health_address is not None
        with closing(urllib.request.urlopen(
                f"http://127.0.0.1:{manager.metrics_address[1]}/metrics", timeout=5)) as reply:
            assert "kgen_test_scrapes_total 2.0" in reply.read().decode()
        with pytest.raises(urllib.error.HTTPError) as missing:
            urllib.request.urlopen(f"http://127.0.0.1:{manager.health_address[1]}/metrics",
                                   timeout=5)
        missing.value.close()
        assert missing.value.code == 404
    finally:
        stop.set()
        thread.join(10)
    assert manager.metrics_address is None


def test_an_async_managers_auth_sends_its_reviews_on_the_managers_loop(
    server: TestAPIServer, registry: CollectorRegistry
) -> None:
    async def main() -> tuple[tuple[int, str], tuple[int, str]]:
        transport = AsyncHTTPTransport(server.config())
        metrics = MetricsServer(("127.0.0.1", 0), registry, auth=MetricsAuth(transport))
        manager = AsyncManager(metrics_registry=registry, metrics_server=metrics,
                               graceful_shutdown_timeout=5.0)
        running = asyncio.create_task(manager.start())
        try:
            while manager.metrics_address is None and not running.done():  # its first step
                await asyncio.sleep(0)
            allowed = await asyncio.to_thread(scrape, manager.metrics_address, "reader-token")
            denied = await asyncio.to_thread(scrape, manager.metrics_address, "other-token")
        finally:
            manager.stop()
            await running
            await transport.aclose()
        return allowed, denied

    allowed, denied = asyncio.run(main())
    assert allowed[0] == 200 and "kgen_test_scrapes_total 2.0" in allowed[1]
    assert denied == (403, "Authorization denied for user alice\n")
