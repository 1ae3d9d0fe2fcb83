"""The manager's metrics endpoint: ``/metrics`` over HTTPS, for authenticated and authorised
callers only (controller-runtime's ``metrics/server`` with ``SecureServing`` and the filter
of ``metrics/filters.WithAuthenticationAndAuthorization``).

- **TLS**: the pair in ``cert_dir`` (``tls.crt``/``tls.key``, reloaded when renewed) when it
  is there, else a self-signed certificate for ``localhost``/``127.0.0.1`` made at start,
  as controller-runtime falls back to (``certutil.GenerateSelfSignedCertKeyWithFixtures``).
- **Authentication** (:class:`MetricsAuth`): the request's ``Authorization: Bearer <token>``
  goes to the API server as a TokenReview; no token, or one it does not authenticate, is
  401 ``Unauthorized``; a failed review is 500 ``Authentication failed``.
- **Authorisation**: a SubjectAccessReview for the user on the non-resource URL (the path,
  verb ``get`` for a GET), which RBAC grants with a ``nonResourceURLs: ["/metrics"]`` rule;
  refused is 403 ``Authorization denied for user <name>``, a failed review 500
  ``Authorization for user <name> failed``.
- **Caching**, as the delegating authenticator and authorizer controller-runtime configures:
  token reviews for a minute, allowed decisions for five minutes, denied ones for 30 s.
  (controller-runtime also retries a failed review with backoff; here it fails at once and
  the scraper's next scrape asks again.)
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import os
import tempfile
import threading
from collections.abc import Callable
from dataclasses import dataclass
from email.message import Message
from http.server import ThreadingHTTPServer
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

from kgen_runtime.controller._manager.serving import Answer, ServingThread, get_handler
from kgen_runtime.rest import AsyncTransport, Transport
from kgen_runtime.util.clock import REAL_CLOCK, Clock
from kgen_runtime.webhook._certs import CertWatcher
from kgen_runtime.webhook._selfsigned import write_self_signed_certificate
from kgen_runtime.webhook._server import _TLSServer

__all__ = ["DEFAULT_METRICS_CERT_DIR", "MetricsAuth", "MetricsServer"]

_log = logging.getLogger("kgen_runtime.controller.metrics")

DEFAULT_METRICS_CERT_DIR = Path(os.environ.get("TMPDIR") or "/tmp", "k8s-metrics-server",
                                "serving-certs")
"""controller-runtime's default, ``filepath.Join(os.TempDir(), ...)`` (as the webhook
server's ``DEFAULT_CERT_DIR``)."""

# DelegatingAuthenticatorConfig.CacheTTL and DelegatingAuthorizerConfig's AllowCacheTTL and
# DenyCacheTTL in controller-runtime's pkg/metrics/filters/filters.go.
AUTHENTICATION_TTL = 60.0
ALLOW_TTL = 300.0
DENY_TTL = 30.0
_PLAIN_TEXT = "text/plain; charset=utf-8"
# TokenAccessReviewTimeout there; the SubjectAccessReview gets the same bound here.
REVIEW_TIMEOUT = 10.0


@dataclass(frozen=True)
class _User:
    name: str
    uid: str
    groups: tuple[str, ...]
    extra: tuple[tuple[str, tuple[str, ...]], ...]


class MetricsAuth:
    """Authenticates (TokenReview) and authorises (SubjectAccessReview) metrics requests
    through the API server of ``transport``. The operator's ServiceAccount needs ``create``
    on ``tokenreviews`` and ``subjectaccessreviews``. Thread-safe.

    The checks run on the metrics server's threads: with a blocking transport they send from
    there; with an :class:`AsyncTransport` (an AsyncManager's) they are sent on the event loop
    that started the server (the manager's), and waited for from the server's thread.
    """

    def __init__(self, transport: Transport | AsyncTransport, *, clock: Clock = REAL_CLOCK) -> None:
        from kgen_runtime.api.clientset import AsyncClientset, Clientset  # API models need us

        self._asynchronous = inspect.iscoroutinefunction(transport.send)
        self._kube: Any = (AsyncClientset(transport) if self._asynchronous  # type: ignore[arg-type]
                           else Clientset(transport))  # type: ignore[arg-type]
        self._loop: asyncio.AbstractEventLoop | None = None
        self._clock = clock
        self._lock = threading.Lock()
        self._tokens: dict[str, tuple[float, _User | None]] = {}
        self._decisions: dict[tuple[_User, str, str], tuple[float, bool]] = {}

    def attach_loop(self) -> None:
        """Remember the running event loop, where an async transport's reviews are sent
        (:meth:`MetricsServer.start` calls it; a no-op without a running loop)."""
        try:
            self._loop = asyncio.get_running_loop()
        except RuntimeError:
            self._loop = None

    def _create(self, client: Any, review: Any) -> dict[str, Any]:
        """``client.create(review)``'s answer as wire JSON, sent as the transport wants."""
        if not self._asynchronous:
            return dict(client.create(review).model_dump())
        if self._loop is None:
            raise RuntimeError("an async MetricsAuth is used by a server started off its loop")
        future = asyncio.run_coroutine_threadsafe(client.create(review), self._loop)
        return dict(future.result(REVIEW_TIMEOUT).model_dump())

    def check(self, authorization: str | None, verb: str, path: str) -> tuple[int, str] | None:
        """``None`` if the request may be served, else its HTTP status and message."""
        token = _bearer_token(authorization)
        if token is None:
            return 401, "Unauthorized"
        try:
            user = self._authenticate(token)
        except Exception:
            _log.exception("metrics: authentication failed")
            return 500, "Authentication failed"
        if user is None:
            return 401, "Unauthorized"
        try:
            allowed = self._authorize(user, verb, path)
        except Exception:
            _log.exception("metrics: authorization for user %s failed", user.name)
            return 500, f"Authorization for user {user.name} failed"
        if not allowed:
            _log.debug("metrics: authorization denied for user %s", user.name)
            return 403, f"Authorization denied for user {user.name}"
        return None

    def _authenticate(self, token: str) -> _User | None:
        now = self._clock.now()
        with self._lock:
            cached = self._tokens.get(token)
        if cached is not None and cached[0] > now:
            return cached[1]
        from kgen_runtime.api.authentication.v1 import TokenReview

        review = self._create(self._kube.authentication_v1.tokenreviews(),
                              TokenReview.model_validate({"spec": {"token": token}}))
        status = review.get("status") or {}
        user = None
        if status.get("authenticated"):
            info = status.get("user") or {}
            extra = info.get("extra") or {}
            user = _User(str(info.get("username", "")), str(info.get("uid", "")),
                         tuple(info.get("groups") or ()),
                         tuple(sorted((k, tuple(v)) for k, v in extra.items())))
        with self._lock:
            self._tokens[token] = (now + AUTHENTICATION_TTL, user)
        return user

    def _authorize(self, user: _User, verb: str, path: str) -> bool:
        now = self._clock.now()
        key = (user, verb, path)
        with self._lock:
            cached = self._decisions.get(key)
        if cached is not None and cached[0] > now:
            return cached[1]
        from kgen_runtime.api.authorization.v1 import SubjectAccessReview

        spec: dict[str, Any] = {"user": user.name, "groups": list(user.groups),
                                "nonResourceAttributes": {"path": path, "verb": verb}}
        if user.uid:
            spec["uid"] = user.uid
        if user.extra:
            spec["extra"] = {k: list(v) for k, v in user.extra}
        review = self._create(self._kube.authorization_v1.subjectaccessreviews(),
                              SubjectAccessReview.model_validate({"spec": spec}))
        allowed = bool((review.get("status") or {}).get("allowed"))
        with self._lock:
            self._decisions[key] = (now + (ALLOW_TTL if allowed else DENY_TTL), allowed)
        return allowed


def _bearer_token(header: str | None) -> str | None:
    """The token of ``Authorization: Bearer <token>`` (apiserver's bearertoken
    authenticator: the scheme case-insensitive, a non-empty token), else ``None``."""
    parts = (header or "").strip().split(" ")
    if len(parts) < 2 or parts[0].lower() != "bearer" or not parts[1]:
        return None
    return parts[1]


class MetricsServer:
    """Serves ``registry`` at ``/metrics`` on ``address`` (port 0: a free port) from its own
    thread, between :meth:`start` and :meth:`stop` (see the module docstring).

    Args:
        secure: HTTPS (controller-runtime's ``SecureServing``); false serves plain HTTP.
        cert_dir: Where ``tls.crt`` and ``tls.key`` are looked for.
        auth: Who may read; ``None`` lets anyone.
    """

    def __init__(
        self,
        address: tuple[str, int],
        registry: CollectorRegistry,
        *,
        secure: bool = True,
        cert_dir: Path | str = DEFAULT_METRICS_CERT_DIR,
        auth: MetricsAuth | None = None,
    ) -> None:
        self._address = address
        self._registry = registry
        self._secure = secure
        self._cert_dir = Path(cert_dir)
        self._auth = auth
        self._serving = ServingThread("kgen-metrics-server")
        self._scratch: tempfile.TemporaryDirectory[str] | None = None

    @property
    def address(self) -> tuple[str, int] | None:
        """The bound ``(host, port)`` while serving, else ``None``."""
        return self._serving.address

    def start(self) -> None:
        """Bind and serve from a new thread.

        Raises:
            OSError, ssl.SSLError, RuntimeError: no socket or no certificate.
        """
        if self._auth is not None:
            self._auth.attach_loop()
        handler = get_handler(_respond(self._registry, self._auth))
        self._serving.serve(
            _TLSServer(self._address, handler, self._certificates()) if self._secure
            else ThreadingHTTPServer(self._address, handler))
        _log.info("serving metrics on %s (%s)", self.address, "https" if self._secure else "http")

    def stop(self) -> None:
        """Stop serving and close the socket; waits for the serving thread."""
        self._serving.stop()
        if self._scratch is not None:
            self._scratch.cleanup()
            self._scratch = None

    def _certificates(self) -> CertWatcher:
        cert, key = self._cert_dir / "tls.crt", self._cert_dir / "tls.key"
        if cert.exists() and key.exists():
            return CertWatcher(cert, key)
        self._scratch = tempfile.TemporaryDirectory(prefix="kgen-metrics-certs-")
        _log.info("no certificate in %s: serving metrics with a self-signed one", self._cert_dir)
        made = write_self_signed_certificate(self._scratch.name)
        return CertWatcher(made, made.parent / "tls.key")


def _respond(
    registry: CollectorRegistry, auth: MetricsAuth | None
) -> Callable[[str, Message], Answer]:
    """The metrics server's answers: ``/metrics`` to whom ``auth`` lets read it."""

    def respond(path: str, headers: Message) -> Answer:
        path = path.split("?", 1)[0]
        if path != "/metrics":
            return 404, _PLAIN_TEXT, b"404 page not found\n"
        refusal = None if auth is None else auth.check(headers.get("Authorization"), "get", path)
        if refusal is not None:
            status, message = refusal
            return status, _PLAIN_TEXT, f"{message}\n".encode()
        return 200, CONTENT_TYPE_LATEST, generate_latest(registry)

    return respond
