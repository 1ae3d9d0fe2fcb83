"""The webhook server: HTTPS endpoints for admission and conversion reviews (controller-
runtime's ``webhook.Server``), run by the Manager on every replica (no leader election).

Paths follow kubebuilder's markers: ``/mutate-<group>-<version>-<kind>`` for defaulters and
``/validate-<group>-<version>-<kind>`` for validators (dots in the group become dashes,
the kind is lower case), ``/convert`` for conversions. Per request:

- a body that is not a JSON AdmissionReview / ConversionReview gets HTTP 400;
- a handler that raises gets an AdmissionResponse refusing with code 500 and the error,
  and the server keeps serving;
- kube-apiserver appends ``?timeout=<duration>`` (the webhook's ``timeoutSeconds``): a
  handler still running then is abandoned and the request refused with code 500
  (the API server has stopped waiting; the thread finishes on its own);
- metrics with controller-runtime's names: ``controller_runtime_webhook_requests_total``
  ``{webhook, code}``, ``controller_runtime_webhook_latency_seconds{webhook}`` and
  ``controller_runtime_webhook_requests_in_flight{webhook}``.
"""

from __future__ import annotations

import logging
import os
import re
import socket
import ssl
import threading
import time
import weakref
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar, TypeVar
from urllib.parse import parse_qs, urlsplit

import orjson
from prometheus_client import REGISTRY, CollectorRegistry, Counter, Gauge, Histogram
from pydantic import ValidationError

from kgen_runtime.meta import KubeModel, KubeObject, Status
from kgen_runtime.webhook._admission import (
    AdmissionHandler,
    Defaulter,
    DefaultingHandler,
    ValidatingHandler,
    Warnings,
    errored,
)
from kgen_runtime.webhook._certs import CertWatcher
from kgen_runtime.webhook._conversion import Converter, declared_type
from kgen_runtime.webhook._review import (
    ADMISSION_VERSIONS,
    CONVERSION_VERSIONS,
    AdmissionReview,
    ConversionResponse,
    ConversionReview,
)

__all__ = ["DEFAULT_CERT_DIR", "WebhookServer", "webhook_path"]

_log = logging.getLogger("kgen_runtime.webhook")

T = TypeVar("T", bound=KubeModel)

DEFAULT_CERT_DIR = Path(os.environ.get("TMPDIR") or "/tmp", "k8s-webhook-server", "serving-certs")
"""controller-runtime's default, ``filepath.Join(os.TempDir(), ...)`` (Go's ``os.TempDir``:
``$TMPDIR``, else ``/tmp``): where cert-manager or the chart mounts ``tls.crt``/``tls.key``."""

_MAX_BODY = 7 * 1024 * 1024  # the API server's own admission request limit is about 3 MiB x2
_DURATION = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h)")
_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}


def webhook_path(prefix: str, model: type[KubeObject]) -> str:
    """kubebuilder's path for a webhook of ``model``: ``/mutate-apps-v1-deployment``."""
    api_version, kind = declared_type(model)
    group, _, version = api_version.rpartition("/")
    return f"/{prefix}-{group.replace('.', '-') or 'core'}-{version}-{kind.lower()}"


def _parse_duration(text: str) -> float | None:
    """A Go duration such as ``10s`` or ``1m30s`` in seconds; None if it is not one."""
    parts = _DURATION.findall(text)
    if not parts or "".join(a + u for a, u in parts) != text:
        return None
    return sum(float(amount) * _UNITS[unit] for amount, unit in parts)


class _Metrics:
    """The webhook metric families of one registry, shared by every server using it."""

    _by_registry: ClassVar[weakref.WeakKeyDictionary[CollectorRegistry, _Metrics]] = (
        weakref.WeakKeyDictionary())
    _lock: ClassVar[threading.Lock] = threading.Lock()

    @classmethod
    def of(cls, registry: CollectorRegistry | None) -> _Metrics:
        if registry is None:
            return cls(None)
        with cls._lock:
            metrics = cls._by_registry.get(registry)
            if metrics is None:
                metrics = cls._by_registry[registry] = cls(registry)
            return metrics

    def __init__(self, registry: CollectorRegistry | None) -> None:
        self.requests = Counter("controller_runtime_webhook_requests_total",
                                "Total admission requests by HTTP status code.",
                                ["webhook", "code"], registry=registry)
        self.latency = Histogram("controller_runtime_webhook_latency_seconds",
                                 "Histogram of the latency of processing admission requests",
                                 ["webhook"], registry=registry)
        self.in_flight = Gauge("controller_runtime_webhook_requests_in_flight",
                               "Current number of admission requests being served.",
                               ["webhook"], registry=registry)


class WebhookServer:
    """Serves registered webhooks over HTTPS on ``host:port`` (port 0: a free port).

    Args:
        cert_dir: Directory holding ``cert_name`` and ``key_name``; renewed files are picked
            up without a restart.
        registry: Where the webhook metrics are registered (prometheus_client's default; the
            Manager passes its own); servers sharing a registry share the metric families.
        max_workers: Handler threads; a request waiting for one counts towards its timeout.

    Register handlers before :meth:`start` or while serving; both are thread-safe.
    """

    def __init__(
        self,
        host: str = "0.0.0.0",
        port: int = 9443,
        *,
        cert_dir: Path | str = DEFAULT_CERT_DIR,
        cert_name: str = "tls.crt",
        key_name: str = "tls.key",
        registry: CollectorRegistry | None = REGISTRY,
        max_workers: int = 16,
    ) -> None:
        self.host = host
        self.port = port
        self.cert_dir = Path(cert_dir)
        self.cert_name = cert_name
        self.key_name = key_name
        self._routes: dict[str, Callable[[bytes], tuple[int, bytes]]] = {}
        self._routes_lock = threading.Lock()
        self._metrics = _Metrics.of(registry)
        self._max_workers = max_workers
        self._pool: ThreadPoolExecutor | None = None
        self._certs: CertWatcher | None = None
        self._httpd: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- registration -------------------------------------------------------------------------

    def register(self, path: str, handler: AdmissionHandler) -> None:
        """Serve ``handler`` at ``path`` as an admission webhook."""
        self._add_route(path, lambda body: self._admission(path, handler, body))

    def defaulter(self, model: type[T], fn: Defaulter[T], *, path: str | None = None) -> str:
        """Serve ``fn`` as the mutating webhook of ``model``; returns the path."""
        path = path or webhook_path("mutate", model)  # type: ignore[arg-type]
        self.register(path, DefaultingHandler(model, fn))
        return path

    def validator(
        self,
        model: type[T],
        on_create: Callable[[T], Warnings] | None = None,
        on_update: Callable[[T, T], Warnings] | None = None,
        on_delete: Callable[[T], Warnings] | None = None,
        *,
        path: str | None = None,
    ) -> str:
        """Serve the hooks as the validating webhook of ``model``; returns the path."""
        path = path or webhook_path("validate", model)  # type: ignore[arg-type]
        self.register(path, ValidatingHandler(model, on_create, on_update, on_delete))
        return path

    def converter(self, *converters: Converter[Any], path: str = "/convert") -> str:
        """Serve the conversion webhook of the converters' kinds at ``path``."""
        by_kind: Mapping[str, Converter[Any]] = {c.kind: c for c in converters}
        self._add_route(path, lambda body: self._conversion(by_kind, body))
        return path

    @property
    def paths(self) -> list[str]:
        """The registered paths, sorted."""
        with self._routes_lock:
            return sorted(self._routes)

    def _add_route(self, path: str, route: Callable[[bytes], tuple[int, bytes]]) -> None:
        with self._routes_lock:
            if path in self._routes:
                raise ValueError(f"a webhook is already registered at {path}")
            self._routes[path] = route

    # -- serving ------------------------------------------------------------------------------

    @property
    def address(self) -> tuple[str, int] | None:
        """The bound ``(host, port)`` while serving, else ``None``."""
        if self._httpd is None:
            return None
        host, port = self._httpd.server_address[:2]
        return str(host), int(port)

    def start(self) -> None:
        """Load the certificate, bind and serve from a new thread.

        Raises:
            OSError, ssl.SSLError: the certificate cannot be loaded or the port bound.
        """
        self._certs = CertWatcher(self.cert_dir / self.cert_name, self.cert_dir / self.key_name)
        self._pool = ThreadPoolExecutor(self._max_workers, thread_name_prefix="kgen-webhook")
        self._httpd = _TLSServer((self.host, self.port), self._handler_class(), self._certs)
        # A short poll interval: stop() (shutdown) waits up to one interval.
        self._thread = threading.Thread(target=self._httpd.serve_forever, args=(0.05,),
                                        name="kgen-webhook-server", daemon=True)
        self._thread.start()
        _log.info("serving webhooks on %s: %s", self.address, ", ".join(self.paths))

    def stop(self) -> None:
        """Stop accepting, close the socket and wait for the serving thread."""
        if self._httpd is None or self._thread is None:
            return
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)
        self._httpd = self._thread = self._pool = None

    def run(self, stop: threading.Event) -> None:
        """Serve until ``stop`` is set (the Manager's Runnable)."""
        self.start()
        try:
            stop.wait()
        finally:
            self.stop()

    def check(self) -> bool:
        """Health check: the server accepts a TLS connection (controller-runtime's
        ``StartedChecker``)."""
        address = self.address
        if address is None:
            raise RuntimeError("the webhook server is not serving")
        host = "127.0.0.1" if address[0] in ("0.0.0.0", "") else address[0]
        context = ssl.create_default_context()
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
        with socket.create_connection((host, address[1]), timeout=5) as raw, \
                context.wrap_socket(raw, server_hostname=host):
            return True

    # -- requests -----------------------------------------------------------------------------

    def _dispatch(self, raw_path: str, body: bytes) -> tuple[int, bytes]:
        url = urlsplit(raw_path)
        with self._routes_lock:
            route = self._routes.get(url.path)
        if route is None:
            return 404, b"404 page not found\n"
        timeout = _parse_duration((parse_qs(url.query).get("timeout") or [""])[0])
        assert self._pool is not None
        metrics = self._metrics
        metrics.in_flight.labels(url.path).inc()
        started = time.monotonic()
        try:
            status, answer = self._pool.submit(route, body).result(timeout)
        except FutureTimeout:
            _log.error("webhook %s: handler did not answer within %ss", url.path, timeout)
            status, answer = _refusal(
                body, 500, f"the webhook handler did not answer within {timeout}s")
        finally:
            metrics.latency.labels(url.path).observe(time.monotonic() - started)
            metrics.in_flight.labels(url.path).dec()
        metrics.requests.labels(url.path, str(status)).inc()
        return status, answer

    def _admission(self, path: str, handler: AdmissionHandler, body: bytes) -> tuple[int, bytes]:
        try:
            review = _decode(AdmissionReview, ADMISSION_VERSIONS, body)
        except ValueError as err:
            return _refusal(body, 400, f"malformed AdmissionReview: {err}")
        if review.request is None:
            return _refusal(body, 400, "the AdmissionReview has no request")
        request = review.request
        try:
            response = handler.handle(request)
        except Exception as err:
            _log.exception("webhook %s: handler failed on %s %s/%s", path, request.operation,
                           request.namespace, request.name)
            response = errored(request, 500, err)
        response.uid = request.uid
        answer = AdmissionReview(api_version=review.api_version, kind="AdmissionReview",
                                 response=response)
        return 200, answer.model_dump_wire_json()

    def _conversion(self, converters: Mapping[str, Converter[Any]],
                    body: bytes) -> tuple[int, bytes]:
        try:
            review = _decode(ConversionReview, CONVERSION_VERSIONS, body)
        except ValueError as err:
            return 400, f"malformed ConversionReview: {err}\n".encode()
        if review.request is None:
            return 400, b"the ConversionReview has no request\n"
        request = review.request
        kinds = {str(obj.get("kind", "")) for obj in request.objects or ()}
        unknown = sorted(kinds - set(converters))
        if unknown or len(kinds) > 1:
            problem = (f"no conversion for kinds {unknown}" if unknown
                       else f"mixed kinds {sorted(kinds)}")
            response = ConversionResponse(
                uid=request.uid, result=Status(status="Failure", message=problem))
        elif not kinds:
            response = ConversionResponse(uid=request.uid, result=Status(status="Success"))
        else:
            response = converters[kinds.pop()].handle(request)
        answer = ConversionReview(api_version=review.api_version, kind="ConversionReview",
                                  response=response)
        return 200, answer.model_dump_wire_json()

    def _handler_class(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                if not 0 < length <= _MAX_BODY:
                    status, body = 400, b"request body is empty or too large\n"
                    self.close_connection = True
                elif "json" not in (self.headers.get("Content-Type") or ""):
                    self.rfile.read(length)
                    status, body = 400, b"Content-Type must be application/json\n"
                else:
                    status, body = server._dispatch(self.path, self.rfile.read(length))
                self.send_response(status)
                is_json = body.startswith(b"{")
                self.send_header("Content-Type",
                                 "application/json" if is_json else "text/plain; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                _log.debug("webhook request: " + format, *args)

        return Handler


class _TLSServer(ThreadingHTTPServer):
    """Accepts plain sockets and wraps them per connection, so the TLS handshake runs on the
    connection's thread and a renewed certificate is used from the next connection on."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler],
                 certs: CertWatcher) -> None:
        self.certs = certs
        super().__init__(address, handler)

    def get_request(self) -> tuple[socket.socket, Any]:
        raw, address = super().get_request()
        self.certs.refresh()
        return self.certs.context.wrap_socket(raw, server_side=True,
                                              do_handshake_on_connect=False), address

    def handle_error(self, request: Any, client_address: Any) -> None:
        _log.debug("webhook connection from %s failed", client_address, exc_info=True)


_Review = TypeVar("_Review", AdmissionReview, ConversionReview)


def _decode(model: type[_Review], versions: tuple[str, ...], body: bytes) -> _Review:
    """A review decoded leniently (:meth:`KubeModel.model_from_wire_json`), of one of the
    ``versions`` kube-apiserver sends (none given: the first).

    The response stub kube-apiserver sends along with a request is dropped: the answer is
    built afresh.

    Raises:
        ValueError: not JSON, a value of the wrong type, or another apiVersion.
    """
    try:
        review = model.model_from_wire_json(body)
    except ValidationError as err:
        first = err.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ValueError(f"{where}: {first['msg']}" if where else str(first["msg"])) from err
    if review.api_version not in versions:
        raise ValueError(f"apiVersion {review.api_version!r} is not one of {', '.join(versions)}")
    review.response = None
    return review


def _refusal(body: bytes, code: int, message: str) -> tuple[int, bytes]:
    """An AdmissionReview refusing with ``code``, echoing the request's uid if readable.

    Malformed reviews (400) also get HTTP 400, so the API server applies the webhook's
    failurePolicy; a failed handler gets an answer the API server shows to the client.
    """
    uid, api_version = "", ADMISSION_VERSIONS[0]
    try:
        parsed = orjson.loads(body)
        uid = str(((parsed or {}).get("request") or {}).get("uid", ""))
        if parsed.get("apiVersion") in ADMISSION_VERSIONS:
            api_version = parsed["apiVersion"]
    except (orjson.JSONDecodeError, AttributeError):
        pass
    review = {
        "apiVersion": api_version,
        "kind": "AdmissionReview",
        "response": {"uid": uid, "allowed": False,
                     "status": {"status": "Failure", "message": message, "code": code}},
    }
    return (400 if code == 400 else 200), orjson.dumps(review)
