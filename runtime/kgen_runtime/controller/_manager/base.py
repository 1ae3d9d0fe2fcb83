"""What the blocking :class:`~kgen_runtime.controller.Manager` and the
:class:`~kgen_runtime.controller.AsyncManager` share: their configuration, none of the running.

Both take the same options, serve the same ``/healthz`` and ``/readyz`` (:class:`HealthServer`,
on a thread of its own beside either, with ``/metrics`` too only when ``health_metrics`` asks)
and ``/metrics`` on their :class:`MetricsServer` (HTTPS, authorised), run webhooks on the same
:class:`WebhookServer`, record Events through an :class:`EventBroadcaster`, refuse two
controllers of one name and add up the same RBAC rules; this class holds that once.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from datetime import datetime
from typing import TYPE_CHECKING, Generic, TypeVar

from prometheus_client import CollectorRegistry

from kgen_runtime.controller._manager.health import HealthCheck, HealthServer
from kgen_runtime.controller._manager.metrics_server import MetricsServer
from kgen_runtime.controller._manager.sharding import (
    ShardingConfig,
    add_lease_rules,
    check_sharding,
)
from kgen_runtime.controller._rbac import LEASE_VERBS, PermissionSet
from kgen_runtime.events import EventBroadcaster, EventRecorder
from kgen_runtime.leaderelection import LeaderElectionConfig
from kgen_runtime.util.clock import Clock
from kgen_runtime.util.runtime import handle_error
from kgen_runtime.webhook import WebhookServer

if TYPE_CHECKING:
    from kgen_runtime.api.rbac.v1.models import PolicyRule

__all__ = ["ManagerBase"]

_log = logging.getLogger("kgen_runtime.controller.manager")

LockT = TypeVar("LockT")
ClusterT = TypeVar("ClusterT")


class ManagerBase(Generic[ClusterT, LockT]):
    """The configuration half of a manager (see the module docstring).

    Health and readiness checks run on the health server's thread: they must only read
    state (thread-safely), never block or await.
    """

    def __init__(
        self,
        *,
        cluster: ClusterT | None,
        leader_election: LeaderElectionConfig[LockT] | None,
        health_address: tuple[str, int] | None,
        metrics_registry: CollectorRegistry,
        metrics_server: MetricsServer | None,
        health_metrics: bool,
        webhook_server: WebhookServer | None,
        cache_sync_timeout: float | None,
        graceful_shutdown_timeout: float | None,
        clock: Clock,
        now: Callable[[], datetime],
        sharding: ShardingConfig | None = None,
    ) -> None:
        check_sharding(sharding, leader_election, cluster)
        self._sharding = sharding
        self._cluster = cluster
        self._permissions = PermissionSet()
        self._controller_names: set[str] = set()
        self._leader_election = leader_election
        self._cache_sync_timeout = cache_sync_timeout
        self._graceful_timeout = graceful_shutdown_timeout
        self._now = now
        self._metrics_registry = metrics_registry
        self._webhooks = webhook_server
        self._synced = threading.Event()
        self._healthz: dict[str, HealthCheck] = {}
        self._readyz: dict[str, HealthCheck] = {"informers": self._synced.is_set}
        self._errors: list[Exception] = []
        self._errors_lock = threading.Lock()
        self.event_broadcaster = EventBroadcaster(clock=clock, now=now)
        """Fans out the Events of :meth:`event_recorder`; shut down by the manager."""
        self._server = (
            None
            if health_address is None
            else HealthServer(health_address, {"healthz": self._healthz, "readyz": self._readyz},
                              metrics_registry if health_metrics else None)
        )
        self._metrics_server = metrics_server

    @property
    def health_address(self) -> tuple[str, int] | None:
        """The bound address of the health server while the manager runs."""
        return None if self._server is None else self._server.address

    @property
    def metrics_address(self) -> tuple[str, int] | None:
        """The bound address of the metrics server while the manager runs."""
        return None if self._metrics_server is None else self._metrics_server.address

    @property
    def graceful_shutdown_timeout(self) -> float | None:
        """The bound on the whole shutdown, in seconds (``None``: none)."""
        return self._graceful_timeout

    @property
    def webhooks(self) -> WebhookServer:
        """The admission and conversion webhook server, run on every replica (webhooks do
        not wait for leadership) and started before the informers, whose caches may need
        its conversions."""
        if self._webhooks is None:
            self._webhooks = WebhookServer(registry=self._metrics_registry)
        return self._webhooks

    @property
    def sharding(self) -> ShardingConfig | None:
        """The manager's shard ring membership, if it shards."""
        return self._sharding

    @property
    def cluster(self) -> ClusterT:
        """The manager's cluster (scheme, cache, client).

        Raises:
            RuntimeError: the manager was made without one.
        """
        if self._cluster is None:
            manager = type(self).__name__
            cluster = manager.replace("Manager", "Cluster")
            raise RuntimeError(f"this manager has no cluster: {manager}(cluster={cluster}(...))")
        return self._cluster

    def event_recorder(self, component: str) -> EventRecorder:
        """A recorder of Events from ``component``, written to the manager's ``event_sink``
        while the manager runs (and until its runnables have stopped)."""
        return self.event_broadcaster.new_recorder(component)

    def rbac_rules(self, *, leader_election: bool | None = None) -> list[PolicyRule]:
        """What the controllers added so far need, and (if this manager elects a leader, or
        ``leader_election``, or shards) Leases; one rule per group and resource, sorted."""
        permissions = PermissionSet()
        permissions.update(self._permissions.rules())
        elects = self._leader_election is not None if leader_election is None else leader_election
        if elects:
            permissions.add("coordination.k8s.io", "leases", LEASE_VERBS)
        if self._sharding is not None:
            add_lease_rules(permissions)
        return permissions.rules()

    def add_health_check(self, name: str, check: HealthCheck) -> None:
        """Serve ``check`` under ``/healthz`` (run on the server's thread)."""
        self._healthz[name] = check

    def add_ready_check(self, name: str, check: HealthCheck) -> None:
        """Serve ``check`` under ``/readyz`` (run on the server's thread)."""
        self._readyz[name] = check

    def _claim_controller(self, name: str, rbac_rules: Sequence[PolicyRule]) -> None:
        if name in self._controller_names:
            raise ValueError(f"a controller named {name!r} was already added: "
                             "controller names must be unique")
        self._controller_names.add(name)
        self._permissions.update(rbac_rules)

    def _record_error(self, err: Exception) -> None:
        """Log and keep a fatal error (the first one is what ``start`` raises)."""
        handle_error(err, "manager: stopping")
        with self._errors_lock:
            self._errors.append(err)

    def _start_servers(self) -> None:
        """Start the health and metrics servers (blocking briefly: binding, certificates)."""
        if self._server is not None:
            self._server.start()
            _log.info("serving health probes on %s", self._server.address)
        if self._metrics_server is not None:
            self._metrics_server.start()

    def _stop_servers(self) -> None:
        """Stop the metrics and health servers (blocking: waits for their threads)."""
        if self._metrics_server is not None:
            self._metrics_server.stop()
        if self._server is not None:
            self._server.stop()

    def _serve_webhooks(self) -> WebhookServer | None:
        """The webhook server to run, if any webhook is registered; its check is served."""
        webhooks = self._webhooks
        if webhooks is None or not webhooks.paths:
            return None
        self._healthz["webhook"] = self._readyz["webhook"] = webhooks.check
        return webhooks
