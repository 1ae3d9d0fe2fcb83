"""The asyncio twin of :mod:`kgen_runtime.rest.transport`: HTTP(S) to an API server over aiohttp.

:class:`AsyncHTTPTransport` behaves as :class:`~kgen_runtime.rest.HTTPTransport` does — same
TLS defaults, client-side token bucket, retry policy (``Retry-After`` for every verb, transient
5xx and broken connections for GET/HEAD, connections never opened for every verb; read
timeouts never), server warnings logged on ``kgen_runtime.rest.transport``, the same
``rest_client_*`` metrics — because every such decision comes from
:mod:`kgen_runtime.rest._policy` and every recording from :mod:`kgen_runtime.rest._metrics`;
only the I/O is aiohttp's.
aiohttp was chosen over httpx by ``bench/async_http.py`` (see bench/README.md).

Differences that come from asyncio:

* Waits (throttling, retry backoff) are ``await`` s on the injectable :class:`AsyncClock`,
  woken by :meth:`AsyncHTTPTransport.aclose`; cancelling the calling task cancels the request
  at once (Go's ``ctx.Done()``), so there is no ``cancel_on`` here.
* ``Config.auth`` (which may refresh a token or run an exec plugin through the ``kubernetes``
  package, both blocking) is called in a worker thread, never on the event loop.
* The aiohttp session is created on first use and belongs to that event loop; use one
  transport per loop. ``Config.pool_size`` bounds idle connections kept, not concurrency: a
  thousand watches on one loop each hold their own connection.
"""

from __future__ import annotations

import asyncio
import ssl
from collections.abc import AsyncIterator, Mapping
from urllib.parse import urlsplit

import aiohttp

from kgen_runtime.rest._metrics import REST_CLIENT_METRICS, RestClientMetrics
from kgen_runtime.rest._policy import (
    Failure,
    LineSplitter,
    log_retry,
    log_server_warnings,
    request_headers,
    request_url,
    retry_delay_after_failure,
    retry_delay_after_response,
    tls_context,
)
from kgen_runtime.rest._ratelimit import TokenBucket, accept_async
from kgen_runtime.rest._request import Request
from kgen_runtime.rest._request_aio import AsyncResponse
from kgen_runtime.rest.config import Config
from kgen_runtime.util.clock_aio import ASYNC_REAL_CLOCK, AsyncClock

__all__ = ["AsyncHTTPTransport"]


class AsyncHTTPTransport:
    """Sends :class:`Request` s to ``config.host`` from coroutines of one event loop.

    Args:
        config: Where and how to connect.
        clock: Time source for throttling, retry delays and latencies (tests pass a fake one).
        metrics: Where to record the ``rest_client_*`` metrics (the process-wide set).
    """

    def __init__(
        self,
        config: Config,
        *,
        clock: AsyncClock | None = None,
        metrics: RestClientMetrics = REST_CLIENT_METRICS,
    ) -> None:
        self._config = config
        self._base = config.host.rstrip("/")
        self._host = urlsplit(self._base).netloc
        self._metrics = metrics
        self._clock = clock or ASYNC_REAL_CLOCK
        self._closed = asyncio.Event()
        self._bucket = (
            TokenBucket(config.qps, config.burst, self._clock) if config.qps > 0 else None
        )
        self._ssl = _ssl_context(config)
        self._session: aiohttp.ClientSession | None = None

    async def send(
        self,
        request: Request,
        *,
        stream: bool = False,
        read_timeout: float | None = None,
    ) -> AsyncResponse:
        """Send ``request``, throttled and retried as :class:`~kgen_runtime.rest.HTTPTransport`.

        Returns once the whole body is in (unless ``stream``). A response is returned for
        every HTTP status; the caller maps error statuses.

        Raises:
            ConnectionError: The server could not be reached, or the transport is closed.
            TimeoutError: The server accepted the request but stayed silent too long.
        """
        if read_timeout is None and not stream:
            read_timeout = self._config.read_timeout
        timeout = aiohttp.ClientTimeout(
            total=None, sock_connect=self._config.connect_timeout, sock_read=read_timeout
        )
        url = request_url(self._base, request)
        method = request.method
        attempt = 0
        started = self._clock.now()
        while True:
            await self._throttle(method)
            if self._closed.is_set():
                raise ConnectionError("transport is closed")
            auth = await asyncio.to_thread(self._config.auth) if self._config.auth else None
            try:
                raw = await self._open_session().request(
                    method,
                    url,
                    data=request.body,
                    headers=request_headers(self._config, request, dict(auth or {})),
                    timeout=timeout,
                    allow_redirects=False,
                    proxy=self._config.proxy,
                    ssl=self._ssl,
                    server_hostname=self._config.tls_server_name,
                    auto_decompress=False,
                )
                body = None if stream else await _read_all(raw)
            except aiohttp.ClientError as error:
                failure = _classify(error)
                delay = retry_delay_after_failure(self._config, method, failure, attempt)
                self._record_attempt(None, method, delay, started)
                if delay is None:
                    raise _translate(error) from error
            else:
                retry_after = raw.headers.get("Retry-After")
                delay = retry_delay_after_response(
                    self._config, method, raw.status, retry_after, attempt
                )
                self._record_attempt(raw.status, method, delay, started)
                if delay is None:
                    log_server_warnings(request, raw.headers.getall("Warning", ()))
                    return _AsyncHTTPResponse(raw, body)
                raw.release()
            attempt += 1
            log_retry(request, delay, attempt)
            if await self._clock.sleep(self._closed, delay):
                raise ConnectionError("transport is closed")

    async def _throttle(self, method: str) -> None:
        """Wait for the client-side rate limiter (if any) and record the wait."""
        if self._bucket is None:
            return
        waiting_since = self._clock.now()
        accepted = await accept_async(self._bucket, self._clock, self._closed)
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

    async def aclose(self) -> None:
        """Close pooled connections and wake every throttled or retrying caller. Idempotent.

        Later ``send`` calls raise ``ConnectionError``.
        """
        self._closed.set()
        if self._session is not None:
            await self._session.close()

    def _open_session(self) -> aiohttp.ClientSession:
        if self._session is None:
            connector = aiohttp.TCPConnector(limit=0, limit_per_host=0)
            self._session = aiohttp.ClientSession(
                connector=connector, skip_auto_headers=("Accept-Encoding",)
            )
        return self._session


def _ssl_context(config: Config) -> ssl.SSLContext | bool:
    """The TLS settings of ``config``: verified against ``ca_file`` or the system store."""
    if not config.host.startswith("https") and config.cert_file is None:
        return True  # plain HTTP: aiohttp's default, no context to build
    return tls_context(config)


async def _read_all(raw: aiohttp.ClientResponse) -> bytes:
    try:
        return await raw.read()
    finally:
        raw.release()


def _classify(error: aiohttp.ClientError) -> Failure:
    if isinstance(error, aiohttp.ClientSSLError):
        return Failure.OTHER
    if isinstance(error, aiohttp.ClientConnectorError | aiohttp.ConnectionTimeoutError):
        return Failure.CONNECT  # nothing was sent
    if isinstance(error, aiohttp.ServerTimeoutError):
        return Failure.OTHER
    if isinstance(error, aiohttp.ClientOSError | aiohttp.ServerDisconnectedError):
        return Failure.BROKEN
    if isinstance(error, aiohttp.ClientPayloadError):
        return Failure.BROKEN
    return Failure.OTHER


def _translate(error: aiohttp.ClientError) -> OSError:
    if isinstance(error, aiohttp.ServerTimeoutError):  # connect and read timeouts
        return TimeoutError(str(error))
    return ConnectionError(str(error) or type(error).__name__)


class _AsyncHTTPResponse:
    """An aiohttp response behind the :class:`AsyncResponse` protocol."""

    def __init__(self, raw: aiohttp.ClientResponse, body: bytes | None) -> None:
        self._raw = raw
        self._body = body
        self._closed = False

    @property
    def status(self) -> int:
        return self._raw.status

    @property
    def headers(self) -> Mapping[str, str]:
        return self._raw.headers

    async def read(self) -> bytes:
        if self._body is None:
            try:
                self._body = await _read_all(self._raw)
            except aiohttp.ClientError as error:
                raise _translate(error) from error
        return self._body

    async def aiter_lines(self) -> AsyncIterator[bytes]:
        """Yield non-empty lines; end quietly at the end of the body, after :meth:`close`, or
        when the connection breaks (dropping a partial last line), like client-go's
        StreamWatcher.

        Raises:
            TimeoutError: No data for the request's read timeout.
        """
        if self._closed or self._body is not None:
            return
        lines = LineSplitter()
        complete = False
        try:
            while not self._closed:
                try:
                    chunk = await self._raw.content.readany()
                except aiohttp.ServerTimeoutError as error:
                    if self._closed:
                        return
                    raise TimeoutError(f"no data from the server: {error}") from error
                except (aiohttp.ClientError, OSError):
                    return  # broken, or closed under us
                if not chunk:
                    complete = True
                    if (last := lines.end()) is not None and not self._closed:
                        yield last
                    return
                for line in lines.feed(chunk):
                    if self._closed:
                        return
                    yield line
        finally:
            if complete and not self._closed:
                self._closed = True
                self._raw.release()  # the connection goes back to the pool
            else:
                self.close()

    def close(self) -> None:
        """End the response; a task blocked in :meth:`aiter_lines` wakes. Idempotent."""
        if self._closed:
            return
        self._closed = True
        if self._body is None:
            self._raw.close()
