"""The transports' ``rest_client_*`` metrics, against the test API server: the blocking and
the async transport record the same samples for the same requests."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from kgen_runtime.api.core.v1 import ConfigMap
from kgen_runtime.api.core.v1.client import AsyncCoreV1Client, CoreV1Client
from kgen_runtime.meta import ObjectMeta
from kgen_runtime.rest import (
    REST_CLIENT_METRICS,
    AsyncHTTPTransport,
    Config,
    HTTPTransport,
    RestClientMetrics,
)
from kgen_runtime.rest.errors import NotFoundError
from kgen_runtime.testing import TestAPIServer
from tests.conformance._blocking import Blocking, EventLoopThread

TRANSPORTS = ("sync", "async")


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


@contextmanager
def configmaps_over(kind: str, config: Config, metrics: RestClientMetrics) -> Iterator[Any]:
    """ConfigMaps of namespace ``ns`` through the ``kind`` ("sync"/"async") transport; the
    async client is called through a blocking face (its coroutines run on a loop thread)."""
    if kind == "sync":
        transport = HTTPTransport(config, metrics=metrics)
        try:
            yield CoreV1Client(transport).configmaps("ns")
        finally:
            transport.close()
        return
    runner = EventLoopThread()
    async_transport = AsyncHTTPTransport(config, metrics=metrics)
    try:
        yield Blocking(AsyncCoreV1Client(async_transport).configmaps("ns"), runner)
    finally:
        runner.run(async_transport.aclose())
        runner.close()


@pytest.mark.parametrize("kind", TRANSPORTS)
def test_results_by_code_method_and_host_and_latency_by_verb(
    server: TestAPIServer, kind: str
) -> None:
    metrics = RestClientMetrics()
    registry = CollectorRegistry()
    registry.register(metrics)
    host = server.url.removeprefix("http://")
    with configmaps_over(kind, server.config(), metrics) as configmaps:
        configmaps.create(ConfigMap(metadata=ObjectMeta(name="a")))
        configmaps.get("a")
        with pytest.raises(NotFoundError):
            configmaps.get("missing")
        server.fail_next(1, 503, "ServiceUnavailable")  # a GET is retried after a backoff
        configmaps.list()

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


@pytest.mark.parametrize("kind", TRANSPORTS)
def test_a_refused_connection_is_counted_as_error(server: TestAPIServer, kind: str) -> None:
    metrics = RestClientMetrics()
    registry = CollectorRegistry()
    registry.register(metrics)
    config = server.config(max_retries=0)
    host = server.url.removeprefix("http://")
    server.stop()
    with configmaps_over(kind, config, metrics) as configmaps, pytest.raises(ConnectionError):
        configmaps.get("a")
    assert _samples(registry, "rest_client_requests_total") == {
        (("code", "<error>"), ("host", host), ("method", "GET")): 1.0,
    }


@pytest.mark.parametrize("kind", TRANSPORTS)
def test_the_rate_limiter_wait_is_measured_per_attempt(server: TestAPIServer, kind: str) -> None:
    metrics = RestClientMetrics()
    registry = CollectorRegistry()
    registry.register(metrics)
    host = server.url.removeprefix("http://")
    with configmaps_over(kind, server.config(qps=5.0, burst=1), metrics) as configmaps:
        for _ in range(3):
            configmaps.list()
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
