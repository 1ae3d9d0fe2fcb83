"""A :class:`TestAPIServer` in a child process, for tests that run clients in several processes.

A server in the test's own process shares its interpreter (and GIL) with every client there,
and dies with it; a test that kills, pauses or adds controller processes, or that measures
them, needs the server apart. The child is started with multiprocessing's ``spawn`` method
(no forked locks or threads) and talks to the parent over a pipe; it exits when the parent
says so or when the pipe breaks, so a parent that dies never leaves a server behind.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import pickle
import threading
from collections.abc import Iterable
from multiprocessing.connection import Connection
from types import TracebackType
from typing import TYPE_CHECKING, Any, Self

if TYPE_CHECKING:
    from multiprocessing.process import BaseProcess

    from kgen_runtime.rest.config import Config

__all__ = ["TestAPIServerProcess"]


class TestAPIServerProcess:
    """A :class:`TestAPIServer` served by a child process; a context manager.

    ::

        with TestAPIServerProcess(sharded_list_and_watch=True, crds=[FOO_CRD]) as server:
            clientset = Clientset.for_config(server.config())

    Args:
        crds: CustomResourceDefinition manifests installed before the server is reported
            ready (:meth:`TestAPIServer.install_crd`).
        start_timeout: Seconds to wait for the child to serve; it is stopped and
            ``TimeoutError`` raised after that.
        stop_timeout: Seconds :meth:`stop` waits for each step of the child's end (a clean
            exit, then SIGTERM, then SIGKILL).
        **options: :class:`TestAPIServer`'s keyword arguments, pickled to the child (so a
            custom ``clock`` must be picklable).
    """

    __test__ = False  # not a pytest test class, despite the name

    def __init__(
        self,
        *,
        crds: Iterable[dict[str, Any]] = (),
        start_timeout: float = 60.0,
        stop_timeout: float = 10.0,
        **options: Any,
    ) -> None:
        self._crds = list(crds)
        self._options = options
        self._start_timeout = start_timeout
        self._stop_timeout = stop_timeout
        self._process: BaseProcess | None = None
        self._conn: Connection | None = None
        self._url: str | None = None
        self._lock = threading.Lock()  # one request on the pipe at a time

    def start(self) -> Self:
        """Spawn the child and wait until it serves. Returns ``self``; starts once."""
        if self._process is not None:
            raise RuntimeError("the server process is already started or was stopped")
        context = multiprocessing.get_context("spawn")
        parent, child = context.Pipe()
        process = context.Process(target=_serve, args=(child, self._options, self._crds),
                                  name="kgen-test-apiserver", daemon=True)
        self._process, self._conn = process, parent
        process.start()
        child.close()  # the child's end lives in the child: EOF here once it exits
        try:
            self._url = self._answer(self._start_timeout, "serve")
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Ask the child to stop its server and exit; after ``stop_timeout`` seconds terminate
        it, then kill it. Returns once the child is gone. Idempotent."""
        process, conn = self._process, self._conn
        if process is None or conn is None or conn.closed:
            return
        with self._lock:
            with contextlib.suppress(OSError):  # the child may be gone already
                conn.send(("stop",))
            conn.close()
        for end in (None, process.terminate, process.kill):
            if end is not None:
                end()
            process.join(self._stop_timeout)
            if process.exitcode is not None:
                break

    def call(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """Run ``TestAPIServer.<method>(*args, **kwargs)`` in the child and return its result:
        fault injection (``drop_watches``, ``fail_next``, ...) or its request log
        (``sharding_requests``). Arguments and result are pickled; the server's exception is
        raised here."""
        if self._conn is None or self._conn.closed:
            raise RuntimeError("the server process is not running")
        with self._lock:
            try:
                self._conn.send(("call", method, args, kwargs))
            except OSError:
                raise RuntimeError(f"the API server process exited before {method}") from None
            return self._answer(self._stop_timeout, method)

    @property
    def pid(self) -> int:
        """The child's process id."""
        if self._process is None or self._process.pid is None:
            raise RuntimeError("the server process is not started")
        return self._process.pid

    @property
    def url(self) -> str:
        """``http://127.0.0.1:<port>`` of the child's server (it must be started)."""
        if self._url is None:
            raise RuntimeError("the server process is not started")
        return self._url

    def config(self, **overrides: Any) -> Config:
        """A rest ``Config`` for the child's server: no TLS, no auth, no client-side
        throttling (as :meth:`TestAPIServer.config`)."""
        from kgen_runtime.testing._server import client_config

        return client_config(self.url, **overrides)

    def _answer(self, timeout: float, what: str) -> Any:
        """The child's answer to the last request; its exception re-raised, TimeoutError if
        it does not answer in ``timeout`` seconds, RuntimeError if it died."""
        assert self._conn is not None
        try:
            if not self._conn.poll(timeout):
                raise TimeoutError(f"the API server process did not {what} in {timeout} s")
            status, value = self._conn.recv()
        except (EOFError, OSError):
            raise RuntimeError(f"the API server process exited during {what}") from None
        if status == "error":
            raise value
        return value

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()


def _serve(conn: Connection, options: dict[str, Any], crds: list[dict[str, Any]]) -> None:
    """The child: serve until the parent says ``stop`` or its end of the pipe closes."""
    from kgen_runtime.testing._server import TestAPIServer

    try:
        server = TestAPIServer(**options).start()
    except Exception as error:  # reported to the parent, which raises it
        _send_error(conn, error)
        return
    try:
        for crd in crds:
            server.install_crd(crd)
        conn.send(("ok", server.url))
        while True:
            try:
                request = conn.recv()
            except (EOFError, OSError):
                return
            if request[0] == "stop":
                return
            _, method, args, kwargs = request
            try:
                conn.send(("ok", getattr(server, method)(*args, **kwargs)))
            except Exception as error:
                _send_error(conn, error)
    except Exception as error:
        _send_error(conn, error)
    finally:
        server.stop()


def _send_error(conn: Connection, error: Exception) -> None:
    """Send ``error`` to the parent, or a RuntimeError with its text if it cannot be
    pickled."""
    try:
        conn.send(("error", error))
    except (pickle.PicklingError, TypeError, AttributeError):
        conn.send(("error", RuntimeError(f"{type(error).__name__}: {error}")))
