"""The builder's Foo controller on asyncio: :class:`~foo_controller.FooReconciler`'s reconcile,
step for step, with ``await`` where it reads or writes, on an
:class:`~kgen_runtime.controller.AsyncManager`::

    manager.controller_for(Foo).owns(Deployment).with_options(...).complete(
        AsyncFooReconciler(cluster.client, recorder))

The behaviour is the blocking controller's, event for event (the end-to-end tests run all
three against the same assertions): the same Deployment (:func:`new_deployment`), the same
events and errors, the same rate limiter, the same status write only when the status changed.
Reads come from the async informer cache without I/O; writes and Events go through one
``AsyncClientset``'s connections on the manager's loop.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import threading
from collections.abc import Sequence
from dataclasses import dataclass

from foo_api.samplecontroller.v1alpha1 import Foo
from foo_api.samplecontroller.v1alpha1.models import FooStatus

from foo_controller._controller import (
    CONTROLLER_AGENT_NAME,
    ERR_RESOURCE_EXISTS,
    FIELD_MANAGER,
    MESSAGE_RESOURCE_EXISTS,
    MESSAGE_RESOURCE_SYNCED,
    SUCCESS_SYNCED,
    EventRecorder,
    ResourceExistsError,
    new_deployment,
    new_rate_limiter,
)
from foo_controller._reconciler import new_scheme
from foo_controller._webhooks import add_webhooks
from kgen_runtime.api.apps.v1 import Deployment
from kgen_runtime.api.clientset import AsyncClientset as AsyncKubeClientset
from kgen_runtime.controller import (
    EVENT_TYPE_NORMAL,
    EVENT_TYPE_WARNING,
    AsyncClient,
    AsyncClientEventSink,
    AsyncCluster,
    AsyncController,
    AsyncManager,
    CacheOptions,
    Request,
    Result,
    is_controlled_by,
)
from kgen_runtime.rest import Config
from kgen_runtime.rest.errors import NotFoundError
from kgen_runtime.util.runtime import handle_error
from kgen_runtime.webhook import WebhookServer

__all__ = ["AsyncFooReconciler", "AsyncManagerSetup", "run_async_manager"]

_log = logging.getLogger("foo_controller")


class AsyncFooReconciler:
    """Reconciles one Foo into its Deployment, awaited (see :class:`FooReconciler`, whose
    steps and errors these are). Runs on the manager's loop, never twice at once for the
    same Foo."""

    def __init__(self, client: AsyncClient, recorder: EventRecorder) -> None:
        self.client = client
        self.recorder = recorder

    async def reconcile(self, request: Request) -> Result | None:
        """Bring the Foo of ``request`` and its Deployment to the desired state.

        Raises:
            ResourceExistsError: the Deployment exists and is not controlled by the Foo
                (after recording an ``ErrResourceExists`` warning event).
            ApiError: a read or write failed; the request is retried with backoff.
        """
        try:
            foo = await self.client.get(Foo, request.namespace, request.name)
        except NotFoundError:
            _log.info("Foo %s no longer exists", request)
            return None
        deployment_name = foo.spec.deployment_name if foo.spec is not None else None
        if not deployment_name:
            handle_error(ValueError(f"{request}: deployment name must be specified"),
                         "Deployment name missing from object reference")
            return None
        try:
            deployment = await self.client.get(Deployment, request.namespace, deployment_name)
        except NotFoundError:
            deployment = await self.client.create(new_deployment(foo))
        if not is_controlled_by(deployment, foo):
            message = MESSAGE_RESOURCE_EXISTS % deployment_name
            self.recorder.event(foo, EVENT_TYPE_WARNING, ERR_RESOURCE_EXISTS, message)
            raise ResourceExistsError(message)
        wanted = foo.spec.replicas if foo.spec is not None else None
        current = deployment.spec.replicas if deployment.spec is not None else None
        if wanted is not None and wanted != current:
            _log.info("updating Deployment %s/%s: replicas %s -> %s",
                      request.namespace, deployment_name, current, wanted)
            deployment = await self.client.update(new_deployment(foo))
        available = deployment.status.available_replicas if deployment.status else None
        status = FooStatus(available_replicas=available or 0)
        if foo.status != status:  # an unchanged status would be a round trip for a no-op
            foo.status = status
            await self.client.update_status(foo)
        self.recorder.event(foo, EVENT_TYPE_NORMAL, SUCCESS_SYNCED, MESSAGE_RESOURCE_SYNCED)
        return None


@dataclass(frozen=True)
class AsyncManagerSetup:
    """An async manager running the Foo controller built with the async builder (compare
    :class:`~foo_controller.ManagerSetup`)."""

    manager: AsyncManager
    controller: AsyncController[Request]

    @classmethod
    def new(
        cls,
        clientset: AsyncKubeClientset,
        *,
        workers: int,
        resync: float,
        namespace: str | None = None,
        graceful_shutdown_timeout: float = 10.0,
        webhooks: WebhookServer | None = None,
    ) -> AsyncManagerSetup:
        """A manager over ``clientset``'s transport whose cache watches ``namespace`` (all
        when ``None``), resyncing every ``resync`` seconds, with the Foo controller added
        (``workers`` concurrent reconciles) and, given ``webhooks``, the Foo's webhooks
        served there. Nothing runs yet; ``clientset`` stays the caller's to close after the
        manager stopped."""
        namespaces = [namespace] if namespace else []
        cluster = AsyncCluster(clientset.transport, new_scheme(), field_manager=FIELD_MANAGER,
                               cache=CacheOptions(namespaces=namespaces, resync_period=resync))
        manager = AsyncManager(cluster=cluster,
                               event_sink=AsyncClientEventSink(clientset.core_v1.events),
                               graceful_shutdown_timeout=graceful_shutdown_timeout,
                               webhook_server=webhooks)
        if webhooks is not None:
            add_webhooks(manager.webhooks)
        reconciler = AsyncFooReconciler(cluster.client,
                                        manager.event_recorder(CONTROLLER_AGENT_NAME))
        controller = (
            manager.controller_for(Foo)
            .owns(Deployment)
            .with_options(max_concurrent_reconciles=workers, rate_limiter=new_rate_limiter())
            .complete(reconciler)
        )
        return cls(manager, controller)

    async def run(self, *, signals: Sequence[signal.Signals] = ()) -> None:
        """Run the manager until it is stopped (or one of ``signals`` arrives), then shut it
        down."""
        await self.manager.start(signals=signals)
        _log.info("shut down cleanly")

    async def cached_foo(self, namespace: str, name: str) -> Foo:
        """The Foo as the controller's cache holds it (``NotFoundError`` if it does not)."""
        return await self.manager.cluster.cache.get(Foo, namespace, name)


def run_async_manager(
    config: Config,
    stop: threading.Event,
    *,
    workers: int,
    resync: float,
    signals: Sequence[signal.Signals] = (),
    webhooks: WebhookServer | None = None,
) -> None:
    """Run the async Foo controller on a new event loop until ``stop`` is set (from any
    thread) or one of ``signals`` arrives (blocks); the counterpart of
    :func:`~foo_controller.run_manager`, serving the Foo's webhooks on ``webhooks`` if
    given."""

    async def main() -> None:
        async with AsyncKubeClientset.for_config(config) as clientset:
            setup = AsyncManagerSetup.new(clientset, workers=workers, resync=resync,
                                          webhooks=webhooks)
            stop_on_event(stop, setup.manager)
            await setup.run(signals=signals)

    asyncio.run(main())


def stop_on_event(stop: threading.Event, manager: AsyncManager) -> None:
    """Stop ``manager`` once ``stop`` is set (a daemon thread waits for it: the manager's
    ``stop`` is thread-safe)."""

    def wait() -> None:
        stop.wait()
        manager.stop()

    threading.Thread(target=wait, name="foo-controller-stop", daemon=True).start()
