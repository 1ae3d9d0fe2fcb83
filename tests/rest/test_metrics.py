"""The transport's ``rest_client_*`` metrics, against the test API server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from prometheus_client import CollectorRegistry

from kgen_runtime.api.core.v1 import ConfigMap
from kgen_runtime.api.core.v1.client import CoreV1Client
from kgen_runtime.meta import ObjectMeta
from kgen_runtime.rest import REST_CLIENT_METRICS, HTTPTransport, RestClientMetrics
from kgen_runtime.rest.errors import NotFoundError
from kgen_runtime.testing import TestAPIServer


@pytest.fixture
def server() -> Iterator[TestAPIServer]:
    with TestAPIServer() as running:
        yield running


def _samples(registry: CollectorRegistry, name: str) -> dict[tuple[tuple[str, str], ...], float]:
    """Every sample called ``name``, keyed by its sorted labels."""
    return {
        tuple(sorted(sample.labels.items())): sample.value
        for family in registry.collect()
        for sample in family.samples
        if sample.name == name
    }


def test_results_by_code_method_and_host_and_latency_by_verb(server: TestAPIServer) -> None:
    metrics = RestClientMetrics()
    registry = CollectorRegistry()
    registry.register(metrics)
    transport = HTTPTransport(server.config(), metrics=metrics)
    host = server.url.removeprefix("http://")
    configmaps = CoreV1Client(transport).configmaps("ns")
    configmaps.create(ConfigMap(metadata=ObjectMeta(name="a")))
    configmaps.get("a")
    with pytest.raises(NotFoundError):
        configmaps.get("missing")
    server.fail_next(1, 503, "ServiceUnavailable")  # a GET is retried after a backoff
    configmaps.list()
    transport.close()

    assert _samples(registry, "rest_client_requests_total") == {
        (("code", "201"), ("host", host), ("method", "POST")): 1.0,
        (("code", "200"), ("host", host), ("method", "GET")): 2.0,
        (("code", "404"), ("host", host), ("method", "GET")): 1.0,
        (("code", "503"), ("host", host), ("method", "GET")): 1.0,
    }
    assert _samples(registry, "rest_client_request_retries_total") == {
        (("code", "503"), ("host", host), ("verb", "GET")): 1.0,
    }
    # One latency per request, its retries included.
    assert _samples(registry, "rest_client_request_duration_seconds_count") == {
        (("host", host), ("verb", "POST")): 1.0,
        (("host", host), ("verb", "GET")): 3.0,
    }
    retried = _samples(registry, "rest_client_request_duration_seconds_sum")
    assert retried[(("host", host), ("verb", "GET"))] >= 0.2  # the first retry's backoff
    assert _samples(registry, "rest_client_rate_limiter_duration_seconds_count") == {}  # qps=0


def test_a_refused_connection_is_counted_as_error(server: TestAPIServer) -> None:
    metrics = RestClientMetrics()
    registry = CollectorRegistry()
    registry.register(metrics)
    config = server.config(max_retries=0)
    host = server.url.removeprefix("http://")
    server.stop()
    transport = HTTPTransport(config, metrics=metrics)
    with pytest.raises(ConnectionError):
        CoreV1Client(transport).configmaps("ns").get("a")
    transport.close()
    assert _samples(registry, "rest_client_requests_total") == {
        (("code", "<error>"), ("host", host), ("method", "GET")): 1.0,
    }


def test_the_rate_limiter_wait_is_measured_per_attempt(server: TestAPIServer) -> None:
    metrics = RestClientMetrics()
    registry = CollectorRegistry()
    registry.register(metrics)
    transport = HTTPTransport(server.config(qps=5.0, burst=1), metrics=metrics)
    host = server.url.removeprefix("http://")
    configmaps = CoreV1Client(transport).configmaps("ns")
    for _ in range(3):
        configmaps.list()
    transport.close()
    labels = (("host", host), ("verb", "GET"))
    assert _samples(registry, "rest_client_rate_limiter_duration_seconds_count") == {labels: 3.0}
    waited = _samples(registry, "rest_client_rate_limiter_duration_seconds_sum")[labels]
    # The bucket starts with one token and refills one every 200 ms: the second and third
    # requests wait 400 ms in all, less the time the requests themselves took.
    assert 0.25 <= waited <= 0.45


def test_transports_record_into_the_process_wide_metrics_by_default(
    server: TestAPIServer,
) -> None:
    host = server.url.removeprefix("http://")
    transport = HTTPTransport(server.config())
    CoreV1Client(transport).configmaps("ns").list()
    transport.close()
    registry = CollectorRegistry()
    registry.register(REST_CLIENT_METRICS)
    assert _samples(registry, "rest_client_requests_total")[
        (("code", "200"), ("host", host), ("method", "GET"))
    ] == 1.0
