"""REST client metrics, with the names and labels of client-go's ``tools/metrics`` as
Kubernetes components register them (component-base's ``restclient`` metrics).

Every :class:`~kgen_runtime.rest.HTTPTransport` and
:class:`~kgen_runtime.rest.AsyncHTTPTransport` records into one process-wide
:data:`REST_CLIENT_METRICS` (client-go's global hooks), whether or not a registry serves it;
recording costs a few microseconds against a request's milliseconds. The Manager's registry
serves it (see :mod:`kgen_runtime.controller`); register it in another registry to serve it
elsewhere. Labels are bounded: HTTP method, status code and ``host:port`` — never the path.

- ``rest_client_requests_total{code,method,host}`` (counter): attempts by result; ``code``
  is the HTTP status, or ``<error>`` when no response came (refused, reset, timed out).
- ``rest_client_request_retries_total{code,verb,host}`` (counter): attempts retried, by the
  result that caused the retry.
- ``rest_client_request_duration_seconds{verb,host}`` (histogram): from sending a request to
  its response (all attempts; for a watch, until the response headers).
- ``rest_client_rate_limiter_duration_seconds{verb,host}`` (histogram): time each attempt
  waited for the client-side rate limiter (``Config.qps``/``burst``).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from prometheus_client import Counter, Histogram
from prometheus_client.core import Metric
from prometheus_client.registry import Collector

__all__ = ["REST_CLIENT_METRICS", "RestClientMetrics"]

LATENCY_BUCKETS = (0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0)
"""component-base's buckets of the request and rate-limiter latencies (upper bounds)."""

NO_RESPONSE = "<error>"
"""The ``code`` of an attempt that got no HTTP response (client-go's value)."""


class RestClientMetrics(Collector):
    """The numbers behind the ``rest_client_*`` metrics; a collector for any registry.

    Thread-safe; each recording method takes prometheus_client's per-series lock.
    """

    def __init__(self) -> None:
        latency = ["verb", "host"]
        self._requests = Counter(
            "rest_client_requests",
            "Number of HTTP requests, partitioned by status code, method, and host.",
            ["code", "method", "host"], registry=None)
        self._retries = Counter(
            "rest_client_request_retries",
            "Number of request retries, partitioned by status code, verb, and host.",
            ["code", "verb", "host"], registry=None)
        self._duration = Histogram(
            "rest_client_request_duration_seconds",
            "Request latency in seconds. Broken down by verb, and host.",
            latency, buckets=LATENCY_BUCKETS, registry=None)
        self._rate_limiter = Histogram(
            "rest_client_rate_limiter_duration_seconds",
            "Client side rate limiter latency in seconds. Broken down by verb, and host.",
            latency, buckets=LATENCY_BUCKETS, registry=None)
        self._metrics = (self._requests, self._retries, self._duration, self._rate_limiter)
        self._series: dict[tuple[object, tuple[str, ...]], Any] = {}

    def request_result(self, code: int | None, method: str, host: str) -> None:
        """One attempt ended with HTTP status ``code`` (``None``: no response)."""
        self._child(self._requests, _code(code), method, host).inc()

    def request_retry(self, code: int | None, verb: str, host: str) -> None:
        """An attempt that ended with ``code`` is being retried."""
        self._child(self._retries, _code(code), verb, host).inc()

    def request_latency(self, verb: str, host: str, seconds: float) -> None:
        """A request (all its attempts) took ``seconds``."""
        self._child(self._duration, verb, host).observe(seconds)

    def rate_limiter_latency(self, verb: str, host: str, seconds: float) -> None:
        """An attempt waited ``seconds`` for the client-side rate limiter."""
        self._child(self._rate_limiter, verb, host).observe(seconds)

    def _child(self, metric: Counter | Histogram, *labels: str) -> Any:
        """``metric.labels(*labels)``, looked up once: ``labels()`` checks its arguments and
        takes a lock on every call, and each request records two series. Series are never
        removed, so a kept one stays the metric's."""
        key = (metric, labels)
        series = self._series.get(key)
        if series is None:
            series = self._series[key] = metric.labels(*labels)
        return series

    def attempt_ended(
        self, code: int | None, method: str, host: str, *, retried: bool, elapsed: float
    ) -> None:
        """One attempt of a request ended with ``code`` (``None``: no response). It is
        counted; then either counted as retried or, being the request's last attempt, the
        request's latency (``elapsed`` since its first attempt) is observed. Both transports
        record through this, so they cannot count differently."""
        self.request_result(code, method, host)
        if retried:
            self.request_retry(code, method, host)
        else:
            self.request_latency(method, host, elapsed)

    def describe(self) -> Iterator[Metric]:
        for metric in self._metrics:
            yield from metric.describe()

    def collect(self) -> Iterator[Metric]:
        for metric in self._metrics:
            yield from metric.collect()


def _code(code: int | None) -> str:
    return NO_RESPONSE if code is None else str(code)


REST_CLIENT_METRICS = RestClientMetrics()
"""What transports record into unless given their own :class:`RestClientMetrics`."""
