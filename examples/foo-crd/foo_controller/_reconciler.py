"""The same controller written controller-runtime's way: a reconciler on the builder.

:class:`FooController` (``_controller.py``) spells out what sample-controller's Go file
does: two informers, handlers, a queue, listers, clients per group. Here the
:class:`~kgen_runtime.controller.Manager` owns all of that; the controller is one statement
and a reconciler that reads through the manager's cached client::

    manager.controller_for(Foo).owns(Deployment).with_options(...).complete(FooReconciler(...))

Behaviour is the same, event for event (the end-to-end tests run against both): a Foo gets a
Deployment it controls, scaled to ``spec.replicas``; its status follows the Deployment's;
a Deployment of that name the Foo does not control gets an ``ErrResourceExists`` warning
and the reconcile fails (retried with backoff). One difference in wiring: ``owns`` enqueues
the controlling Foo of a Deployment without looking it up first (controller-runtime's
``EnqueueRequestForOwner``); a reconcile of a Foo that is gone finds nothing and stops.

One difference in requests: the Foo's status is written only when it differs from the one
read, as controller-runtime's users do, where sample-controller writes it on every sync.
kube-apiserver answers an unchanged write as a no-op (the same resourceVersion, no watch
event: ``IgnoreManagedFieldsTimestampsTransformer`` keeps the managedFields times, then etcd3
``store.go`` ``GuaranteedUpdate`` skips a write whose bytes equal the stored ones; crd #21 in
../shared/fidelity), so it only cost a round trip; the reconcile that the Foo's own status
write brings back now sends none. The end-to-end tests compare what the controllers leave in
the cluster (Deployments, statuses, Events), not their requests, so they hold for both write
patterns.
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass

from foo_api.samplecontroller.v1alpha1 import Foo
from foo_api.samplecontroller.v1alpha1.models import FooStatus
from foo_api.scheme import add_to_scheme as add_foo_kinds

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
from foo_controller._webhooks import add_webhooks
from kgen_runtime.api.apps.v1 import Deployment
from kgen_runtime.api.clientset import Clientset as KubeClientset
from kgen_runtime.api.scheme import add_to_scheme as add_builtin_kinds
from kgen_runtime.controller import (
    EVENT_TYPE_NORMAL,
    EVENT_TYPE_WARNING,
    CacheOptions,
    Client,
    ClientEventSink,
    Cluster,
    Controller,
    Manager,
    Request,
    Result,
    is_controlled_by,
)
from kgen_runtime.rest.errors import NotFoundError
from kgen_runtime.scheme import Scheme
from kgen_runtime.util.runtime import handle_error
from kgen_runtime.webhook import WebhookServer

__all__ = ["FooReconciler", "ManagerSetup", "new_scheme", "run_manager"]

_log = logging.getLogger("foo_controller")


def new_scheme() -> Scheme:
    """A scheme with the built-in kinds and the Foo package's."""
    scheme = Scheme()
    add_builtin_kinds(scheme)
    add_foo_kinds(scheme)
    return scheme


class FooReconciler:
    """Reconciles one Foo into its Deployment (sample-controller's ``syncHandler``).

    Reads come from ``client``'s reader (the manager's cache: copies, safe to change),
    writes go to the API server. Thread-safe: the manager runs it on several workers, never
    twice at once for the same Foo.
    """

    def __init__(self, client: Client, recorder: EventRecorder) -> None:
        self.client = client
        self.recorder = recorder

    def reconcile(self, request: Request) -> Result | None:
        """Bring the Foo of ``request`` and its Deployment to the desired state.

        Raises:
            ResourceExistsError: the Deployment exists and is not controlled by the Foo
                (after recording an ``ErrResourceExists`` warning event).
            ApiError: a read or write failed; the request is retried with backoff.
        """
        try:
            foo = self.client.get(Foo, request.namespace, request.name)
        except NotFoundError:
            _log.info("Foo %s no longer exists", request)
            return None
        deployment_name = foo.spec.deployment_name if foo.spec is not None else None
        if not deployment_name:
            handle_error(ValueError(f"{request}: deployment name must be specified"),
                         "Deployment name missing from object reference")
            return None
        try:
            deployment = self.client.get(Deployment, request.namespace, deployment_name)
        except NotFoundError:
            deployment = self.client.create(new_deployment(foo))
        if not is_controlled_by(deployment, foo):
            message = MESSAGE_RESOURCE_EXISTS % deployment_name
            self.recorder.event(foo, EVENT_TYPE_WARNING, ERR_RESOURCE_EXISTS, message)
            raise ResourceExistsError(message)
        wanted = foo.spec.replicas if foo.spec is not None else None
        current = deployment.spec.replicas if deployment.spec is not None else None
        if wanted is not None and wanted != current:
            _log.info("updating Deployment %s/%s: replicas %s -> %s",
                      request.namespace, deployment_name, current, wanted)
            deployment = self.client.update(new_deployment(foo))
        available = deployment.status.available_replicas if deployment.status else None
        status = FooStatus(available_replicas=available or 0)
        if foo.status != status:  # an unchanged status would be a round trip for a no-op
            foo.status = status
            self.client.update_status(foo)
        self.recorder.event(foo, EVENT_TYPE_NORMAL, SUCCESS_SYNCED, MESSAGE_RESOURCE_SYNCED)
        return None


@dataclass(frozen=True)
class ManagerSetup:
    """A manager running the Foo controller built with the builder (compare
    :class:`~foo_controller.ControllerSetup`)."""

    manager: Manager
    controller: Controller[Request]

    @classmethod
    def new(
        cls,
        kube: KubeClientset,
        *,
        workers: int,
        resync: float,
        namespace: str | None = None,
        graceful_shutdown_timeout: float = 10.0,
        webhooks: WebhookServer | None = None,
    ) -> ManagerSetup:
        """A manager over ``kube``'s transport whose cache watches ``namespace`` (all when
        ``None``), resyncing every ``resync`` seconds, with the Foo controller added
        (``workers`` concurrent reconciles) and, given ``webhooks``, the Foo's webhooks
        served there by the manager. Nothing runs yet."""
        namespaces = [namespace] if namespace else []
        cluster = Cluster(kube.transport, new_scheme(), field_manager=FIELD_MANAGER,
                          cache=CacheOptions(namespaces=namespaces, resync_period=resync))
        manager = Manager(cluster=cluster, event_sink=ClientEventSink(kube.core_v1.events),
                          graceful_shutdown_timeout=graceful_shutdown_timeout,
                          webhook_server=webhooks)
        if webhooks is not None:
            add_webhooks(manager.webhooks)
        reconciler = FooReconciler(cluster.client, manager.event_recorder(CONTROLLER_AGENT_NAME))
        controller = (
            manager.controller_for(Foo)
            .owns(Deployment)
            .with_options(max_concurrent_reconciles=workers, rate_limiter=new_rate_limiter())
            .complete(reconciler)
        )
        return cls(manager, controller)

    def run(self, stop: threading.Event) -> None:
        """Run the manager until ``stop`` is set, then shut it down (blocks)."""
        self.manager.start(stop)
        _log.info("shut down cleanly")

    def cached_foo(self, namespace: str, name: str) -> Foo:
        """The Foo as the controller's cache holds it (``NotFoundError`` if it does not)."""
        return self.manager.cluster.cache.get(Foo, namespace, name)


def run_manager(
    kube: KubeClientset,
    stop: threading.Event,
    *,
    workers: int,
    resync: float,
    webhooks: WebhookServer | None = None,
) -> None:
    """Run the builder's Foo controller on a manager until ``stop`` is set (blocks); the
    counterpart of :func:`~foo_controller.run_controller`. Given ``webhooks``, the manager
    serves the Foo's webhooks there too."""
    ManagerSetup.new(kube, workers=workers, resync=resync, webhooks=webhooks).run(stop)
