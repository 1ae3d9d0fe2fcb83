"""Connection settings for a cluster (client-go's ``rest.Config``).

Kubeconfig and in-cluster loading go through the ``kubernetes`` package, which owns the file
format, auth providers, exec plugins and token refresh. The loaded
``kubernetes.client.Configuration`` is kept behind :attr:`Config.auth`, which asks it for the
``Authorization`` header on every request, so refreshed and rotated tokens are picked up
without reloading anything.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["DEFAULT_USER_AGENT", "UNTHROTTLED", "AuthProvider", "Config", "ConfigError"]

#: Returns the headers that authenticate one request; called per request, must be thread-safe.
AuthProvider = Callable[[], Mapping[str, str]]

DEFAULT_USER_AGENT = "kgen-runtime/0.1"

#: ``Config.qps`` of a loaded config: no client-side throttling (see :attr:`Config.qps`).
UNTHROTTLED = -1.0


class ConfigError(Exception):
    """No usable cluster configuration was found (no kubeconfig, not in a pod, bad context)."""


@dataclass(frozen=True, kw_only=True, slots=True)
class Config:
    """How to reach and authenticate to an API server. Immutable; share it freely.

    Attributes:
        host: Base URL, e.g. ``https://10.0.0.1:6443`` (no trailing slash needed).
        ca_file: PEM bundle to verify the server with; ``None`` uses the system trust store.
        cert_file: Client certificate (PEM) for mutual TLS.
        key_file: Key of ``cert_file``.
        verify_tls: Verify the server certificate (default). ``False`` is for tests only.
        tls_server_name: Name to verify the server certificate against, if not the host.
        proxy: HTTP(S) proxy URL.
        auth: Supplies the authentication headers of each request (bearer token, basic auth).
        qps: Sustained client-side requests per second; ``<= 0`` disables throttling. A
            ``Config`` built directly has client-go's default (5); the loaders
            (:meth:`from_kubeconfig`, :meth:`in_cluster`, :meth:`load`) turn throttling off
            unless told otherwise, as controller-runtime's ``GetConfig`` does, leaving overload
            protection to the server's API Priority and Fairness (GA since v1.29).
        burst: Requests allowed at once above ``qps`` (client-go default 10).
        user_agent: ``User-Agent`` header value.
        connect_timeout: Seconds to establish a connection.
        read_timeout: Seconds a non-streaming response may stay silent before ``TimeoutError``;
            ``None`` waits indefinitely. Watches set their own (see ``ResourceClient.watch``).
        max_retries: Retries of one request after ``Retry-After``, transient 5xx or connection
            failures (client-go default 10); 0 disables retrying.
        pool_size: Connections kept open per host; one per concurrent request (each watch holds
            one for its lifetime). The blocking transport keeps up to this many for watches and
            as many again for other requests.
    """

    host: str
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    verify_tls: bool = True
    tls_server_name: str | None = None
    proxy: str | None = None
    auth: AuthProvider | None = None
    qps: float = 5.0
    burst: int = 10
    user_agent: str = DEFAULT_USER_AGENT
    connect_timeout: float = 30.0
    read_timeout: float | None = 60.0
    max_retries: int = 10
    pool_size: int = 32

    @classmethod
    def from_kubeconfig(
        cls, path: str | None = None, context: str | None = None, **overrides: Any
    ) -> Config:
        """Load a kubeconfig file: ``path``, else ``$KUBECONFIG``, else ``~/.kube/config``.

        ``context`` picks a context other than the current one. ``overrides`` set any other
        field (``qps=50``; client-side throttling is off unless ``qps`` is given). Raises
        :class:`ConfigError` when the file or context is unusable.
        """
        import yaml  # type: ignore[import-untyped,unused-ignore]
        from kubernetes.config import ConfigException, kube_config

        configuration = _new_configuration()
        config_file = path or os.environ.get("KUBECONFIG") or "~/.kube/config"
        try:
            kube_config.load_kube_config(  # type: ignore[no-untyped-call]
                config_file=config_file,
                context=context,
                client_configuration=configuration,
                persist_config=False,
            )
        except (ConfigException, OSError, yaml.YAMLError) as error:
            raise ConfigError(f"cannot load kubeconfig {config_file}: {error}") from error
        return cls._from_configuration(configuration, overrides)

    @classmethod
    def in_cluster(cls, **overrides: Any) -> Config:
        """The pod's service account: ``KUBERNETES_SERVICE_HOST``/``_PORT`` and mounted token.

        The token file is re-read when it rotates. Raises :class:`ConfigError` outside a pod.
        """
        from kubernetes.config import ConfigException, incluster_config

        configuration = _new_configuration()
        try:
            incluster_config.load_incluster_config(  # type: ignore[no-untyped-call]
                client_configuration=configuration
            )
        except (ConfigException, OSError) as error:
            raise ConfigError(f"not running in a cluster: {error}") from error
        return cls._from_configuration(configuration, overrides)

    @classmethod
    def load(cls, **overrides: Any) -> Config:
        """In-cluster configuration when inside a pod, else the default kubeconfig."""
        if os.environ.get("KUBERNETES_SERVICE_HOST"):
            return cls.in_cluster(**overrides)
        return cls.from_kubeconfig(**overrides)

    @classmethod
    def _from_configuration(cls, configuration: Any, overrides: Mapping[str, Any]) -> Config:
        fields: dict[str, Any] = {
            "host": configuration.host,
            "ca_file": configuration.ssl_ca_cert,
            "cert_file": configuration.cert_file,
            "key_file": configuration.key_file,
            "verify_tls": bool(configuration.verify_ssl),
            "tls_server_name": getattr(configuration, "tls_server_name", None),
            "proxy": configuration.proxy,
            "auth": _ConfigurationAuth(configuration),
            # controller-runtime's loadConfig (pkg/client/config): a QPS left unset becomes -1,
            # "disable client-side ratelimiter by default, we can rely on API priority and
            # fairness". kubeconfig files carry no QPS, so every loaded config starts there.
            "qps": UNTHROTTLED,
        }
        fields.update(overrides)
        return cls(**fields)


def _new_configuration() -> Any:
    from kubernetes.client import Configuration

    # ``Configuration()`` may return a copy of the process-wide default; start from a blank one.
    return type.__call__(Configuration)


class _ConfigurationAuth:
    """Reads the Authorization header from a ``kubernetes`` Configuration on each call.

    The Configuration's refresh hook (exec plugins, expiring tokens, rotated service-account
    tokens) runs inside the lookup; the lock keeps concurrent requests from running it twice.
    """

    def __init__(self, configuration: Any) -> None:
        self._configuration = configuration
        self._lock = threading.Lock()

    def __call__(self) -> Mapping[str, str]:
        with self._lock:
            token = self._configuration.get_api_key_with_prefix(
                "BearerToken", alias="authorization"
            )
            if token:
                return {"Authorization": str(token)}
            if self._configuration.username or self._configuration.password:
                return {"Authorization": str(self._configuration.get_basic_auth_token())}
        return {}
