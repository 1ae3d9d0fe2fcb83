"""The manager's HTTP endpoints: ``/healthz``, ``/readyz`` and ``/metrics``.

``/healthz`` and ``/readyz`` answer 200 ``ok`` when every named check passes, otherwise 500
with one line per check (``[+]name ok`` / ``[-]name failed: reason``), like the Kubernetes
components; ``?verbose`` lists the checks on success too, and ``/healthz/<name>`` runs one
check. A check is a callable that returns normally (or ``True``) when healthy and returns
``False`` or raises when not. ``/metrics`` serves a prometheus_client registry in the text
exposition format.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from http.server import ThreadingHTTPServer
from urllib.parse import urlsplit

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from kgen_runtime.controller._manager.serving import ServingThread, get_handler

__all__ = ["HealthCheck", "HealthServer"]

HealthCheck = Callable[[], bool | None]
"""A health or readiness check: ``False`` or an exception means unhealthy."""


class HealthServer:
    """Serves the endpoints on ``address`` (port 0: an ephemeral port) from its own thread,
    between :meth:`start` and :meth:`stop`.

    ``checks`` maps each endpoint (``"healthz"``, ``"readyz"``) to its named checks; the
    mappings are read on every request, so checks added later are served. Thread-safe.
    """

    def __init__(
        self,
        address: tuple[str, int],
        checks: Mapping[str, Mapping[str, HealthCheck]],
        registry: CollectorRegistry | None,
    ) -> None:
        self._address = address
        self._checks = checks
        self._registry = registry
        self._serving = ServingThread("kgen-manager-http")

    @property
    def address(self) -> tuple[str, int] | None:
        """The bound ``(host, port)`` while serving, else ``None``."""
        return self._serving.address

    def start(self) -> None:
        """Bind the socket and serve from a new thread.

        Raises:
            OSError: the address cannot be bound.
        """
        handler = get_handler(lambda path, headers: self._respond(path))
        self._serving.serve(ThreadingHTTPServer(self._address, handler))

    def stop(self) -> None:
        """Stop serving and close the socket; waits for the serving thread."""
        self._serving.stop()

    def _respond(self, path: str) -> tuple[int, str, bytes]:
        url = urlsplit(path)
        parts = [p for p in url.path.split("/") if p]
        if parts == ["metrics"] and self._registry is not None:
            return 200, CONTENT_TYPE_LATEST, generate_latest(self._registry)
        if not parts or parts[0] not in self._checks or len(parts) > 2:
            return 404, "text/plain; charset=utf-8", b"404 page not found\n"
        checks = dict(self._checks[parts[0]])
        if len(parts) == 2:
            if parts[1] not in checks:
                return 404, "text/plain; charset=utf-8", b"404 page not found\n"
            checks = {parts[1]: checks[parts[1]]}
        lines: list[str] = []
        healthy = True
        for name in sorted(checks):
            reason = _run_check(checks[name])
            healthy = healthy and reason is None
            lines.append(f"[+]{name} ok" if reason is None else f"[-]{name} failed: {reason}")
        verbose = "verbose" in url.query
        if healthy and not verbose:
            return 200, "text/plain; charset=utf-8", b"ok"
        verdict = f"{parts[0]} check passed" if healthy else f"{parts[0]} check failed"
        body = "\n".join([*lines, verdict]) + "\n"
        return (200 if healthy else 500), "text/plain; charset=utf-8", body.encode()


def _run_check(check: HealthCheck) -> str | None:
    """``None`` if healthy, else the reason."""
    try:
        result = check()
    except Exception as err:
        return str(err) or type(err).__name__
    return "check returned false" if result is False else None
