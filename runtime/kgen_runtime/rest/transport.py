"""The real :class:`~kgen_runtime.rest.Transport`: HTTP(S) to an API server.

A request whose body is read at once goes over a kept-alive ``http.client`` connection
(:mod:`kgen_runtime.rest._connections`: half the client CPU of urllib3's pool); a stream
(watch), and every request when ``Config.proxy`` is set, goes through urllib3.
What the transport adds on top of the connections, following client-go's ``rest`` package:

* **TLS verified by default** against ``Config.ca_file`` (or the system store), with optional
  client certificates; ``verify_tls=False`` must be asked for.
* **Client-side throttling**: a token bucket of ``Config.qps``/``Config.burst`` shared by every
  request sent through one transport (so share one transport per process, like a clientset).
* **Retries**, at most ``Config.max_retries`` per request:

  - a 429 or 5xx response carrying ``Retry-After: <seconds>`` is retried for *every* verb after
    that delay — the server is saying it did not process the request (client-go does the same);
  - a 502/503/504 without ``Retry-After`` and a connection reset are retried with exponential
    backoff (0.2 s doubling to 5 s) for ``GET`` and ``HEAD`` only. Writes, ``PUT`` and
    ``DELETE`` included, are not: if the lost response was a success, a replay would report a
    misleading 409 Conflict or 404 Not Found;
  - a connection that could not be opened at all (refused, unresolvable, connect timeout) is
    retried for every verb, since nothing was sent.

  Read timeouts are never retried. After the last attempt the error surfaces: an ``ApiError``
  response is returned as it is (the client maps it), a connection failure raises the built-in
  ``ConnectionError`` and a silent server the built-in ``TimeoutError``.
* **Server warnings** (``Warning`` headers: deprecated API versions, unknown fields under
  ``fieldValidation=Warn``) are logged at WARNING on the ``kgen_runtime.rest.transport`` logger.
* **Metrics**: every attempt, retry, request latency and rate-limiter wait is recorded with
  client-go's metric names (see :mod:`kgen_runtime.rest._metrics`).
* **Streaming** (watch): ``Response.iter_lines()`` yields one line per event and raises
  ``TimeoutError`` once the read timeout passes with no data; ``Response.close()`` may be called
  from another thread and wakes a blocked read at once.

Every wait (throttling, retry backoff) uses the injectable :class:`Clock` and is woken by
:meth:`HTTPTransport.close`.
"""

from __future__ import annotations

import contextlib
import http.client
import logging
import threading
from collections.abc import Callable, Iterator, Mapping
from http.client import HTTPException
from typing import Any
from urllib.parse import urlsplit

import urllib3
from urllib3.exceptions import (
    ConnectTimeoutError,
    HTTPError,
    NewConnectionError,
    ProtocolError,
)
from urllib3.exceptions import TimeoutError as Urllib3TimeoutError

from kgen_runtime.rest._call import cancellation
from kgen_runtime.rest._connections import Connections, PlainResponse, RequestFailed, supports
from kgen_runtime.rest._metrics import REST_CLIENT_METRICS, RestClientMetrics
from kgen_runtime.rest._policy import (
    Failure,
    LineSplitter,
    log_retry,
    log_server_warnings,
    request_headers,
    request_target,
    retry_delay_after_failure,
    retry_delay_after_response,
    tls_context,
)
from kgen_runtime.rest._ratelimit import TokenBucket, accept
from kgen_runtime.rest._request import Request, Response
from kgen_runtime.rest.config import Config
from kgen_runtime.util.clock import REAL_CLOCK, Clock

__all__ = ["HTTPTransport"]

_log = logging.getLogger(__name__)

_CANCEL_POLL_SECONDS = 0.05
"""While a cancellable request waits to retry, how often it also looks at ``close()``."""

_READ_SIZE = 64 * 1024


class HTTPTransport:
    """Sends :class:`Request` s to ``config.host``. Thread-safe; one per process is typical.

    Args:
        config: Where and how to connect.
        clock: Time source for throttling, retry delays and latencies (tests pass a fake one).
        metrics: Where to record the ``rest_client_*`` metrics (the process-wide set).
    """

    def __init__(
        self,
        config: Config,
        *,
        clock: Clock | None = None,
        metrics: RestClientMetrics = REST_CLIENT_METRICS,
    ) -> None:
        self._config = config
        self._base = config.host.rstrip("/")
        self._host = urlsplit(self._base).netloc
        self._metrics = metrics
        self._clock = clock or REAL_CLOCK
        self._closed = threading.Event()
        self._bucket = (
            TokenBucket(config.qps, config.burst, self._clock) if config.qps > 0 else None
        )
        self._pool = _pool_manager(config)
        self._connections = Connections(config) if supports(config) else None

    def send(
        self,
        request: Request,
        *,
        stream: bool = False,
        read_timeout: float | None = None,
    ) -> Response:
        """Send ``request``, throttled and retried as the module docstring describes.

        Blocks for the throttle, the retries and (unless ``stream``) the whole body. A response
        is returned for every HTTP status; the caller maps error statuses.

        Args:
            request: What to send; ``path`` is appended to ``Config.host``.
            stream: Leave the body unread for :meth:`Response.iter_lines`.
            read_timeout: Seconds without data before ``TimeoutError``. ``None`` means
                ``Config.read_timeout`` for a normal request and no limit for a stream.

        Raises:
            ConnectionError: The server could not be reached, or the transport is closed.
            TimeoutError: The server accepted the request but stayed silent too long.
        """
        if read_timeout is None and not stream:
            read_timeout = self._config.read_timeout
        target = request_target(request)
        method = request.method
        attempt = 0
        cancel = cancellation()
        started = self._clock.now()
        while True:
            self._throttle(method)
            if self._closed.is_set():
                raise ConnectionError("transport is closed")
            if cancel is not None and cancel.is_set():
                raise ConnectionError("request cancelled")
            try:
                response = self._attempt(request, target, stream, read_timeout)
            except (HTTPError, RequestFailed) as error:
                failure = _classify(error)
                delay = retry_delay_after_failure(self._config, method, failure, attempt)
                self._record_attempt(None, method, delay, started)
                if delay is None:
                    raise _translate(error) from error
            else:
                status = response.status
                retry_after = (
                    response.headers.get("Retry-After") if status == 429 or status >= 500
                    else None
                )
                delay = retry_delay_after_response(
                    self._config, method, status, retry_after, attempt
                )
                self._record_attempt(status, method, delay, started)
                if delay is None:
                    log_server_warnings(request, response.header_values("Warning"))
                    return response
                response.discard()
            attempt += 1
            log_retry(request, delay, attempt)
            if self._pause(delay, cancel):
                raise ConnectionError("transport is closed or request cancelled")

    def _attempt(
        self, request: Request, target: str, stream: bool, read_timeout: float | None
    ) -> _HTTPResponse | PlainResponse:
        """Send once: on a kept-alive ``http.client`` connection when the whole body is read
        at once and :mod:`._connections` supports the config, else through urllib3."""
        headers = request_headers(self._config, request, self._auth_headers())
        if not stream and self._connections is not None:
            return self._connections.request(
                request.method, target, request.body, headers, read_timeout
            )
        return _HTTPResponse(self._pool.request(
            request.method,
            self._base + target,
            body=request.body,
            headers=headers,
            timeout=urllib3.Timeout(connect=self._config.connect_timeout, read=read_timeout),
            preload_content=not stream,
            retries=False,
            redirect=False,
        ))

    def _throttle(self, method: str) -> None:
        """Wait for the client-side rate limiter (if any) and record the wait."""
        if self._bucket is None:
            return
        waiting_since = self._clock.now()
        accepted = accept(self._bucket, self._clock, self._closed)
        self._metrics.rate_limiter_latency(method, self._host, self._clock.now() - waiting_since)
        if not accepted:
            raise ConnectionError("transport is closed")

    def _record_attempt(
        self, code: int | None, method: str, delay: float | None, started: float
    ) -> None:
        self._metrics.attempt_ended(
            code, method, self._host, retried=delay is not None,
            elapsed=self._clock.now() - started,
        )

    def _pause(self, seconds: float, cancel: threading.Event | None) -> bool:
        """Wait ``seconds`` before a retry; ``True`` if the transport closed or the request
        was cancelled (:func:`cancel_on`) meanwhile."""
        if cancel is None:
            return self._clock.sleep(self._closed, seconds)
        deadline = self._clock.now() + seconds
        while not self._closed.is_set():
            remaining = deadline - self._clock.now()
            if remaining <= 0:
                return False
            if self._clock.sleep(cancel, min(remaining, _CANCEL_POLL_SECONDS)):
                return True
        return True

    def close(self) -> None:
        """Close pooled connections and wake every throttled or retrying caller. Idempotent.

        Later ``send`` calls raise ``ConnectionError``; open streams are not interrupted.
        """
        self._closed.set()
        self._pool.clear()
        if self._connections is not None:
            self._connections.close()

    def _auth_headers(self) -> dict[str, str] | None:
        return dict(self._config.auth()) if self._config.auth is not None else None


def _pool_manager(config: Config) -> urllib3.PoolManager:
    """urllib3's pool, with the TLS settings of the transport's other paths: ``tls_context``.

    What urllib3 2.x does with a context (read in 2.8.0: ``urllib3/connection.py``,
    ``HTTPSConnection``'s ``__init__``, ``connect`` and ``_connect_tls_proxy``, and
    ``_ssl_wrap_socket_and_match_hostname``; ``urllib3/util/ssl_.py``, ``ssl_wrap_socket``):
    it takes ``cert_reqs`` from the context's ``verify_mode``, loads no certificates into it
    (neither ``ca_certs`` nor the system store), turns its ``check_hostname`` off only when
    given ``assert_hostname`` or ``assert_fingerprint`` (neither is: ``ssl`` checks the name),
    sends ``server_hostname`` (``tls_server_name``; else the host) as SNI and the name to
    check, and skips its own name check when ``verify_mode`` is ``CERT_NONE``. It sets ALPN
    ``http/1.1`` on the context.

    An HTTPS proxy is verified with the same context (``proxy_ssl_context``: given none,
    urllib3 would build its own from ``ca_certs``): against ``ca_file``, or not at all without
    ``verify_tls``, as when the settings were urllib3 keywords; the client certificate is
    offered to it too, as Go's ``http.Transport`` offers its ``TLSClientConfig``'s.

    A plain-HTTP server without a proxy gets no context: building one loads the system's
    certificate store (~20 ms per transport), for connections that never use it.
    """
    if urlsplit(config.host).scheme != "https" and not config.proxy:
        return urllib3.PoolManager(maxsize=config.pool_size)
    context = tls_context(config)
    tls: dict[str, Any] = {"ssl_context": context, "server_hostname": config.tls_server_name}
    if config.proxy:
        return urllib3.ProxyManager(
            config.proxy, maxsize=config.pool_size, proxy_ssl_context=context, **tls
        )
    return urllib3.PoolManager(maxsize=config.pool_size, **tls)


def _classify(error: HTTPError | RequestFailed) -> Failure:
    if isinstance(error, RequestFailed):
        return error.failure
    if isinstance(error, ConnectTimeoutError):  # includes refused: nothing was sent
        return Failure.CONNECT
    if isinstance(error, ProtocolError):
        return Failure.BROKEN
    return Failure.OTHER


def _translate(error: HTTPError | RequestFailed) -> OSError:
    if isinstance(error, RequestFailed):
        return TimeoutError(str(error)) if error.timed_out else ConnectionError(str(error))
    if isinstance(error, Urllib3TimeoutError) and not isinstance(error, NewConnectionError):
        return TimeoutError(str(error))
    return ConnectionError(str(error))


class _HTTPResponse:
    """A urllib3 response behind the :class:`Response` protocol."""

    def __init__(self, raw: urllib3.BaseHTTPResponse) -> None:
        self._raw = raw
        self._lock = threading.Lock()
        self._closed = False
        self._reading = False

    @property
    def status(self) -> int:
        return self._raw.status

    @property
    def headers(self) -> Mapping[str, str]:
        return self._raw.headers

    def header_values(self, name: str) -> list[str]:
        """Every value of header ``name``, in order."""
        return self._raw.headers.getlist(name)

    def discard(self) -> None:
        """Read and drop the body of a response that will be retried; release the
        connection."""
        self._raw.drain_conn()
        self._raw.release_conn()

    def read(self) -> bytes:
        try:
            return self._raw.data  # preloaded, or read in full now for a stream
        except Urllib3TimeoutError as error:
            raise TimeoutError(str(error)) from error
        except (HTTPError, OSError) as error:
            raise ConnectionError(str(error)) from error
        finally:
            self._raw.release_conn()

    def iter_lines(self) -> Iterator[bytes]:
        """Yield non-empty lines; end quietly at the end of the body or after :meth:`close`.

        A connection that breaks mid-stream (reset, truncated chunk) also ends the iteration
        quietly, dropping any partial last line: like client-go's StreamWatcher, which treats
        an unexpected EOF as the end of the watch, so the caller simply watches again.

        Raises:
            TimeoutError: No data for the request's read timeout.
        """
        with self._lock:
            if self._closed:
                return
            self._reading = True
        complete = False
        lines = LineSplitter()
        read1 = _plain_read1(self._raw)
        try:
            while (chunk := self._read_chunk(read1)) is not None:
                if not chunk:
                    complete = True
                    if (last := lines.end()) is not None:
                        yield last
                    return
                yield from lines.feed(chunk)
        finally:
            with self._lock:
                self._reading = False
            if complete:
                self._raw.release_conn()
            else:
                self._raw.close()

    def _read_chunk(self, read1: Callable[[int], bytes]) -> bytes | None:
        """The next bytes; ``b""`` at the end of the body, ``None`` if closed or broken."""
        if self._closed:
            return None
        try:
            chunk = read1(_READ_SIZE)
        except (Urllib3TimeoutError, TimeoutError) as error:  # TimeoutError: socket's own
            if self._closed:
                return None
            raise TimeoutError(f"no data from the server: {error}") from error
        except (HTTPError, HTTPException, OSError, ValueError, AttributeError) as error:
            # ValueError/AttributeError: http.client reading a socket another thread shut down.
            if not self._closed:
                _log.debug("stream ended by a broken connection: %s", error)
            return None
        return None if self._closed else chunk

    def close(self) -> None:
        """End the response; safe from any thread and idempotent.

        A reader blocked in :meth:`iter_lines` is woken by shutting the socket down; the reader
        then releases the connection itself.
        """
        with self._lock:
            if self._closed:
                return
            self._closed = True
            reading = self._reading
        if reading:
            _shutdown(self._raw)
        else:
            self._raw.close()


def _plain_read1(raw: urllib3.BaseHTTPResponse) -> Callable[[int], bytes]:
    """``read1`` of the ``http.client`` response under ``raw`` when the body needs no
    decoding (no ``Content-Encoding``), else urllib3's own.

    A watch streams one HTTP chunk per event, and ``read1`` returns one chunk per call:
    urllib3's layers over it (a generator context manager catching errors, a decoded-bytes
    buffer) cost 2-6 µs per event on top of http.client's 4.4 µs (bench/README.md, issue
    22). Its errors are then the socket's and http.client's, which :meth:`_read_chunk`
    handles like urllib3's.
    """
    fp = getattr(raw, "_fp", None)
    if isinstance(fp, http.client.HTTPResponse) and not raw.headers.get("content-encoding"):
        return fp.read1
    return raw.read1


def _shutdown(raw: urllib3.BaseHTTPResponse) -> None:
    """Shut the socket down so a blocked ``recv`` in another thread returns at once."""
    # Already released or closed means nothing is blocked on it.
    with contextlib.suppress(ValueError, RuntimeError, OSError):
        raw.shutdown()
