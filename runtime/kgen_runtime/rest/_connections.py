"""Kept-alive ``http.client`` connections to one API server: how the blocking transport sends
a request whose whole body it reads at once (every request but a watch).

A request through urllib3's pool costs about twice the client CPU of the same request on a
kept-alive ``http.client`` connection (its pool, URL parsing, header dictionaries, timeout and
retry objects and response wrapper, per request; ``bench/request.py``), and a controller sends
several per object it reconciles. So :class:`Connections` keeps a small stack of connections
and sends on them directly, through ``http.client``'s public API only.

It cannot do everything a :class:`~kgen_runtime.rest.Config` may ask: :func:`supports` says
when it can (no ``proxy``, an ``http`` or ``https`` host); otherwise, and for every stream, the
transport uses urllib3. What it does the same way as urllib3 under the transport:

* **TLS**: the ``ssl`` context urllib3 is given too (``_policy.tls_context``: ``ca_file``,
  else the system store, ``cert_file`` and ``key_file``); the server is checked against
  ``tls_server_name`` (else the host) unless
  ``verify_tls`` is off (without urllib3's ``InsecureRequestWarning`` per request, as the
  aiohttp transport); ``http/1.1`` is offered by ALPN.
* **Bodies as sent**: requests ask for the ``identity`` encoding (``http.client``'s default,
  which urllib3 sent too, and kube-apiserver honours). One difference: a body a server
  compressed unasked is returned as sent, where urllib3 decoded it.
* **A host's path** (``https://gateway/k8s/clusters/c-1``) prefixes every request.
* **Timeouts**: ``connect_timeout`` for opening the connection (TCP and TLS) and sending the
  request, the request's read timeout for the response.
* **A server that stops reading** (an early 413, a reset) may have answered already: a send
  failing with a broken pipe or a reset goes on to read the response, which is returned if
  there is one (else the read fails: ``BROKEN``).
* **Reuse**: a connection goes back to the stack once its response is read, unless the server
  said it would close it; one the server closed while idle (readable before a request: end of
  file or stray bytes) is dropped rather than reused. At most ``pool_size`` idle connections
  are kept; more may be open at once.
* **Failures** come out as :class:`RequestFailed` with the :class:`Failure` the transport's
  retry rules need: ``CONNECT`` when the TCP connection could not be opened (nothing was
  sent), ``BROKEN`` when the connection broke after that (reset, closed before the response
  ended), ``OTHER`` for a TLS failure or a timeout other than a connect timeout.
"""

from __future__ import annotations

import contextlib
import http.client
import ssl
import threading
import weakref
from collections.abc import Iterator, Mapping
from urllib.parse import urlsplit

from urllib3.util import wait_for_read

from kgen_runtime.rest._policy import Failure, LineSplitter, tls_context
from kgen_runtime.rest.config import Config

__all__ = ["Connections", "PlainResponse", "RequestFailed", "supports"]

_DEFAULT_PORTS = {"http": 80, "https": 443}


def supports(config: Config) -> bool:
    """Whether :class:`Connections` can reach ``config.host`` as ``config`` asks (no proxy)."""
    return not config.proxy and urlsplit(config.host).scheme in _DEFAULT_PORTS


class RequestFailed(Exception):
    """A request got no complete response; ``failure`` says how far it went, ``error`` is
    what ``socket``, ``ssl`` or ``http.client`` raised."""

    def __init__(self, failure: Failure, error: BaseException, timed_out: bool) -> None:
        super().__init__(f"{type(error).__name__}: {error}")
        self.failure = failure
        self.error = error
        self.timed_out = timed_out
        """The socket timed out (connecting, or waiting for the response)."""


class _Headers(Mapping[str, str]):
    """A response's headers as urllib3 gives them (case-insensitive, a repeated header's
    values joined by ``", "``), read from ``http.client``'s parsed message when asked rather
    than copied for every response."""

    __slots__ = ("_message",)

    def __init__(self, message: http.client.HTTPMessage) -> None:
        self._message = message

    def __getitem__(self, name: str) -> str:
        values = self._message.get_all(name)
        if not values:
            raise KeyError(name)
        return ", ".join(values)

    def __iter__(self) -> Iterator[str]:
        seen: set[str] = set()
        for name in self._message:
            if (folded := name.lower()) not in seen:
                seen.add(folded)
                yield name

    def __len__(self) -> int:
        return len({name.lower() for name in self._message})

    def __repr__(self) -> str:
        return f"{type(self).__name__}({dict(self.items())!r})"


class PlainResponse:
    """A response read in full, behind the :class:`~kgen_runtime.rest.Response` protocol."""

    __slots__ = ("_body", "_message", "headers", "status")

    def __init__(self, status: int, message: http.client.HTTPMessage, body: bytes) -> None:
        self.status = status
        self.headers: Mapping[str, str] = _Headers(message)
        self._body = body
        self._message = message

    def header_values(self, name: str) -> list[str]:
        """Every value of header ``name``, in order."""
        return self._message.get_all(name) or []

    def read(self) -> bytes:
        return self._body

    def iter_lines(self) -> Iterator[bytes]:
        """The body's non-empty lines."""
        lines = LineSplitter()
        yield from lines.feed(self._body)
        if (last := lines.end()) is not None:
            yield last

    def discard(self) -> None:
        """Drop a response that will be retried: nothing to release, as for :meth:`close`."""

    def close(self) -> None:
        """Nothing to release: the connection went back to the pool when the body was read."""


class _ConnectFailed(Exception):
    """The TCP connection could not be opened (wraps the ``OSError``)."""


class _Connection(http.client.HTTPConnection):
    """An HTTP/1.1 connection, over TLS when given a context. Opening it raises
    :class:`_ConnectFailed` for the TCP part, so a connection never opened can be told
    from a failed TLS handshake."""

    def __init__(
        self,
        host: str,
        port: int,
        timeout: float,
        tls: ssl.SSLContext | None,
        server_name: str,
    ) -> None:
        super().__init__(host, port, timeout=timeout)
        self._tls = tls
        self._server_name = server_name

    def connect(self) -> None:
        try:
            super().connect()
        except OSError as error:
            raise _ConnectFailed(error) from error
        if self._tls is not None:
            self.sock = self._tls.wrap_socket(self.sock, server_hostname=self._server_name)


class Connections:
    """Kept-alive connections to ``config.host``; thread-safe (each request has its own
    connection while it runs)."""

    def __init__(self, config: Config) -> None:
        parts = urlsplit(config.host)
        self._host = parts.hostname or ""
        self._port = parts.port or _DEFAULT_PORTS[parts.scheme]
        self._prefix = parts.path.rstrip("/")  # a host behind a path (a proxying gateway)
        self._tls = _tls_context(config) if parts.scheme == "https" else None
        self._server_name = config.tls_server_name or self._host
        self._connect_timeout = config.connect_timeout
        self._size = config.pool_size
        self._idle: list[_Connection] = []
        self._lock = threading.Lock()
        self._closed = False
        # A transport dropped without close() still closes its sockets (as urllib3's pools do).
        weakref.finalize(self, _close_all, self._idle)

    def request(
        self,
        method: str,
        target: str,
        body: bytes | None,
        headers: dict[str, str],
        read_timeout: float | None,
    ) -> PlainResponse:
        """Send one request (``target``: path and query, below the host's own path) and read
        its whole response.

        Raises:
            RequestFailed: No complete response; the connection is closed.
        """
        connection = self._take()
        try:
            if connection.sock is None:
                connection.connect()
            # A server that stopped reading may have answered already: read that.
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                connection.request(method, self._prefix + target, body, headers)
            if connection.sock is not None:
                connection.sock.settimeout(read_timeout)
            response = connection.getresponse()
            data = response.read()
        except _ConnectFailed as error:
            connection.close()
            cause = error.__cause__ or error
            raise RequestFailed(
                Failure.CONNECT, cause, isinstance(cause, TimeoutError)
            ) from cause
        except TimeoutError as error:  # the socket's timeout (socket.timeout is an alias)
            connection.close()
            raise RequestFailed(Failure.OTHER, error, True) from error
        except ssl.SSLError as error:
            connection.close()
            raise RequestFailed(Failure.OTHER, error, False) from error
        except (OSError, http.client.HTTPException) as error:
            connection.close()
            raise RequestFailed(Failure.BROKEN, error, False) from error
        except BaseException:
            connection.close()
            raise
        self._give_back(connection)
        return PlainResponse(response.status, response.msg, data)

    def _take(self) -> _Connection:
        """An idle connection the server has not closed, else a new unopened one."""
        while True:
            with self._lock:
                connection = self._idle.pop() if self._idle else None
            if connection is None:
                return _Connection(
                    self._host, self._port, self._connect_timeout, self._tls, self._server_name
                )
            sock = connection.sock
            if sock is not None and not wait_for_read(sock, timeout=0.0):
                sock.settimeout(self._connect_timeout)
                return connection
            connection.close()  # closed by the server while idle (or sent stray bytes)

    def _give_back(self, connection: _Connection) -> None:
        """Keep ``connection`` for the next request if it is open and there is room."""
        if connection.sock is not None:  # None: the server said it closes the connection
            with self._lock:
                if not self._closed and len(self._idle) < self._size:
                    self._idle.append(connection)
                    return
        connection.close()

    def close(self) -> None:
        """Close the idle connections; those in use are closed when their request ends."""
        with self._lock:
            self._closed = True
            idle = self._idle[:]
            self._idle.clear()
        _close_all(idle)


def _close_all(connections: list[_Connection]) -> None:
    for connection in connections:
        connection.close()


def _tls_context(config: Config) -> ssl.SSLContext:
    context = tls_context(config)
    context.set_alpn_protocols(["http/1.1"])
    return context

