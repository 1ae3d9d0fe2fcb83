"""The webhook server over HTTPS: routing, bad input, handler failures, timeouts,
certificate rotation, metrics, and its place in the Manager."""

from __future__ import annotations

import http.client
import os
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

import orjson
import pytest
from prometheus_client import CollectorRegistry

from kgen_runtime.api.apps.v1 import Deployment
from kgen_runtime.controller import Manager
from kgen_runtime.webhook import AdmissionDenied, Warnings, WebhookServer
from tests.webhook.conftest import Certs
from tests.webhook.test_admission import DEPLOYMENT

REVIEW = {
    "apiVersion": "admission.k8s.io/v1",
    "kind": "AdmissionReview",
    "request": {
        "uid": "7f0b2891-916f-4ed6-b7cd-27bff1815a8c",
        "kind": {"group": "apps", "version": "v1", "kind": "Deployment"},
        "resource": {"group": "apps", "version": "v1", "resource": "deployments"},
        "operation": "CREATE",
        "userInfo": {"username": "alice"},
        "object": DEPLOYMENT,
    },
}


def post(server: WebhookServer, certs: Certs, path: str, body: bytes,
         content_type: str = "application/json") -> tuple[int, Any]:
    assert server.address is not None
    connection = http.client.HTTPSConnection(*server.address, context=certs.client_context(),
                                             timeout=10)
    try:
        connection.request("POST", path, body, {"Content-Type": content_type})
        response = connection.getresponse()
        data = response.read()
    finally:
        connection.close()
    is_json = response.getheader("Content-Type") == "application/json"
    return response.status, orjson.loads(data) if is_json else data.decode()


def refuse_all(d: Deployment) -> Warnings:
    raise AdmissionDenied(f"{d.metadata.name if d.metadata else ''} is not welcome")


def test_paths_follow_kubebuilder_and_answers_carry_the_request_uid(
    server: WebhookServer, certs: Certs
) -> None:
    assert server.validator(Deployment, on_create=refuse_all) == "/validate-apps-v1-deployment"
    assert server.defaulter(Deployment, lambda d: None) == "/mutate-apps-v1-deployment"
    server.start()
    status, answer = post(server, certs, "/validate-apps-v1-deployment", orjson.dumps(REVIEW))
    assert status == 200
    assert answer == {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "response": {
            "uid": "7f0b2891-916f-4ed6-b7cd-27bff1815a8c",
            "allowed": False,
            "status": {"apiVersion": "v1", "kind": "Status", "metadata": {},
                       "status": "Failure", "message": "web is not welcome",
                       "reason": "Forbidden", "code": 403},
        },
    }
    assert post(server, certs, "/mutate-apps-v1-deployment", orjson.dumps(REVIEW))[1][
        "response"] == {"uid": "7f0b2891-916f-4ed6-b7cd-27bff1815a8c", "allowed": True}


def test_registering_a_path_twice_is_refused(server: WebhookServer) -> None:
    server.defaulter(Deployment, lambda d: None)
    with pytest.raises(ValueError, match="already registered at /mutate-apps-v1-deployment"):
        server.defaulter(Deployment, lambda d: None)


@pytest.mark.parametrize(
    ("body", "content_type", "message"),
    [
        (b"{not json", "application/json", "malformed AdmissionReview"),
        (b'{"request": {"uid": 5, "operation": "EXPLODE"}}', "application/json",
         "malformed AdmissionReview: request.uid"),
        (b'{"kind": "AdmissionReview"}', "application/json", "has no request"),
        (orjson.dumps(REVIEW), "text/plain", "Content-Type must be application/json"),
    ],
)
def test_malformed_reviews_get_400(server: WebhookServer, certs: Certs, body: bytes,
                                   content_type: str, message: str) -> None:
    server.validator(Deployment)
    server.start()
    status, answer = post(server, certs, "/validate-apps-v1-deployment", body, content_type)
    assert status == 400
    assert message in str(answer)


def test_unknown_paths_get_404(server: WebhookServer, certs: Certs) -> None:
    server.validator(Deployment)
    server.start()
    assert post(server, certs, "/validate-apps-v1-replicaset", orjson.dumps(REVIEW)) == (
        404, "404 page not found\n")


def test_a_handler_that_raises_is_refused_with_500_and_the_server_keeps_serving(
    server: WebhookServer, certs: Certs
) -> None:
    def broken(d: Deployment) -> Warnings:
        raise RuntimeError("boom")

    server.validator(Deployment, on_create=broken)
    server.defaulter(Deployment, lambda d: None)
    server.start()
    status, answer = post(server, certs, "/validate-apps-v1-deployment", orjson.dumps(REVIEW))
    assert status == 200
    assert answer["response"]["allowed"] is False
    assert answer["response"]["status"]["code"] == 500
    assert answer["response"]["status"]["message"] == "boom"
    assert post(server, certs, "/mutate-apps-v1-deployment", orjson.dumps(REVIEW))[1][
        "response"]["allowed"] is True


def test_a_slow_handler_is_cut_at_the_api_servers_timeout(
    server: WebhookServer, certs: Certs
) -> None:
    release = threading.Event()

    def slow(d: Deployment) -> Warnings:
        release.wait(30)
        return None

    server.validator(Deployment, on_create=slow)
    server.start()
    started = time.monotonic()
    try:
        status, answer = post(server, certs, "/validate-apps-v1-deployment?timeout=1s",
                              orjson.dumps(REVIEW))
    finally:
        release.set()
    assert time.monotonic() - started < 10
    assert status == 200
    assert answer["response"]["uid"] == REVIEW["request"]["uid"]  # type: ignore[index]
    assert answer["response"]["allowed"] is False
    assert answer["response"]["status"]["message"] == (
        "the webhook handler did not answer within 1.0s")


def peer_subject(server: WebhookServer, certs: Certs) -> str:
    assert server.address is not None
    connection = http.client.HTTPSConnection(*server.address, context=certs.client_context(),
                                             timeout=10)
    try:
        connection.connect()
        cert = connection.sock.getpeercert()  # type: ignore[union-attr]
    finally:
        connection.close()
    return dict(pair[0] for pair in cert["subject"])["commonName"]


def test_a_rotated_certificate_is_served_from_the_next_connection(
    server: WebhookServer, certs: Certs
) -> None:
    server.validator(Deployment)
    server.start()
    assert peer_subject(server, certs) == "webhook"
    certs.renew("/CN=webhook-renewed")
    assert peer_subject(server, certs) == "webhook-renewed"


def test_metrics_count_requests_by_webhook_and_code(
    server: WebhookServer, certs: Certs, registry: CollectorRegistry
) -> None:
    path = server.validator(Deployment)
    server.start()
    for _ in range(3):
        post(server, certs, path, orjson.dumps(REVIEW))
    post(server, certs, path, b"{")
    sample = registry.get_sample_value
    total = "controller_runtime_webhook_requests_total"
    assert sample(total, {"webhook": path, "code": "200"}) == 3
    assert sample(total, {"webhook": path, "code": "400"}) == 1
    assert sample("controller_runtime_webhook_latency_seconds_count", {"webhook": path}) == 4
    assert sample("controller_runtime_webhook_requests_in_flight", {"webhook": path}) == 0


def test_the_manager_serves_its_webhooks_before_its_informers_and_checks_them(
    certs: Certs,
) -> None:
    registry = CollectorRegistry()
    webhooks = WebhookServer("127.0.0.1", 0, cert_dir=certs.directory, registry=registry)
    manager = Manager(health_address=("127.0.0.1", 0), metrics_registry=registry,
                      health_metrics=True,
                      webhook_server=webhooks)
    assert manager.webhooks is webhooks
    manager.webhooks.validator(Deployment, on_create=refuse_all)
    stop = threading.Event()
    runner = threading.Thread(target=manager.start, args=(stop,))
    runner.start()
    try:
        deadline = time.monotonic() + 10
        while manager.health_address is None or webhooks.address is None:
            assert time.monotonic() < deadline, "the manager did not start serving"
            time.sleep(0.01)
        host, port = manager.health_address
        with urllib.request.urlopen(f"http://{host}:{port}/healthz?verbose", timeout=10) as r:
            assert "[+]webhook ok" in r.read().decode()
        status, answer = post(webhooks, certs, "/validate-apps-v1-deployment",
                              orjson.dumps(REVIEW))
        assert (status, answer["response"]["allowed"]) == (200, False)
    finally:
        stop.set()
        runner.join(30)
    assert not runner.is_alive()
    assert webhooks.address is None


def test_a_manager_without_webhooks_makes_the_default_server_on_first_use() -> None:
    manager = Manager(metrics_registry=CollectorRegistry())
    assert (manager.webhooks.port, manager.webhooks.cert_dir) == (
        9443, Path(os.environ.get("TMPDIR") or "/tmp", "k8s-webhook-server", "serving-certs"))
