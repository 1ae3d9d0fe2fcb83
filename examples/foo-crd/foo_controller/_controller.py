"""sample-controller's ``controller.go`` in Python: keep one nginx Deployment per Foo.

For each Foo the controller makes sure a Deployment named ``spec.deploymentName`` exists,
is controlled by the Foo (a controller owner reference) and runs ``spec.replicas`` nginx
pods; then it copies the Deployment's ``status.availableReplicas`` into the Foo's status and
records a ``Synced`` event. A Deployment of that name that the Foo does not control is left
alone: an ``ErrResourceExists`` warning event is recorded and the sync fails (and is retried
with backoff, as in Go).

Data flow (the Go original's, one to one)::

    Foo informer ────────── add/update ─────────────┐
    Deployment informer ─── add/update/delete ──► owning Foo's key ─► rate-limited queue
                                                                        │ workers
                                                                        ▼
                                     sync_handler("ns/name") ─► Deployment create/update
                                                              └► Foo update_status + Event

Built on :mod:`kgen_runtime.controller` (worker loop, owner-handler, owner-reference helpers,
event recorder) instead of repeating client-go's boilerplate the Go file spells out.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Hashable
from typing import Protocol, TypeVar

from foo_api.clientset import Clientset as SampleClientset
from foo_api.samplecontroller.v1alpha1 import FOO_RESOURCE, Foo
from foo_api.samplecontroller.v1alpha1.informers import FooInformer
from foo_api.samplecontroller.v1alpha1.models import FooStatus

from foo_controller._conversion import deployment_image
from kgen_runtime.api.apps.v1 import Deployment
from kgen_runtime.api.apps.v1.informers import DeploymentInformer
from kgen_runtime.api.apps.v1.models import DeploymentSpec
from kgen_runtime.api.clientset import Clientset as KubeClientset
from kgen_runtime.api.core.v1.models import Container, PodSpec, PodTemplateSpec
from kgen_runtime.cache import meta_namespace_key_func, split_meta_namespace_key
from kgen_runtime.controller import (
    EVENT_TYPE_NORMAL,
    EVENT_TYPE_WARNING,
    ClientEventSink,
    Controller,
    EnqueueOwnerHandler,
    EventBroadcaster,
    ReconcilerFunc,
    is_controlled_by,
    new_controller_ref,
)
from kgen_runtime.meta import KubeObject, LabelSelector, ObjectMeta
from kgen_runtime.rest.errors import NotFoundError
from kgen_runtime.util.clock import REAL_CLOCK, Clock
from kgen_runtime.util.runtime import handle_error
from kgen_runtime.workqueue import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    MaxOfRateLimiter,
)

__all__ = [
    "CONTROLLER_AGENT_NAME",
    "ERR_RESOURCE_EXISTS",
    "FIELD_MANAGER",
    "MESSAGE_RESOURCE_EXISTS",
    "MESSAGE_RESOURCE_SYNCED",
    "SUCCESS_SYNCED",
    "EventRecorder",
    "FooController",
    "ResourceExistsError",
    "new_deployment",
    "new_rate_limiter",
]

_log = logging.getLogger("foo_controller")

CONTROLLER_AGENT_NAME = "sample-controller"
"""The event source's component, and the field manager of every write."""
FIELD_MANAGER = CONTROLLER_AGENT_NAME
SUCCESS_SYNCED = "Synced"
"""Reason of the event recorded when a Foo is synced successfully."""
ERR_RESOURCE_EXISTS = "ErrResourceExists"
"""Reason of the event recorded when the Deployment exists but is not the Foo's."""
MESSAGE_RESOURCE_EXISTS = "Resource %r already exists and is not managed by Foo"
MESSAGE_RESOURCE_SYNCED = "Foo synced successfully"

K = TypeVar("K", bound=Hashable)

_FOO_GVK = FOO_RESOURCE.gvk
_EVENT_FLUSH_TIMEOUT = 10.0
"""Seconds the event broadcaster gets to write the events still queued at shutdown."""


class EventRecorder(Protocol):
    """What the controller records events with (client-go's ``record.EventRecorder``)."""

    def event(self, obj: KubeObject, event_type: str, reason: str, message: str) -> None:
        """Record an event about ``obj``; must not block."""
        ...


class ResourceExistsError(Exception):
    """The Foo's Deployment name is taken by a Deployment the Foo does not control."""


def new_deployment(foo: Foo) -> Deployment:
    """The Deployment ``foo`` wants: nginx (or v1beta1's ``spec.deployment.image``, see
    :func:`~foo_controller.deployment_image`), ``spec.replicas`` of it, controlled by ``foo``.

    Go's ``newDeployment``. ``foo`` must have a name, a uid and a spec (it comes from the
    server). The result shares nothing with ``foo``.

    Raises:
        ValueError: ``foo`` has no spec, or no name or uid.
    """
    if foo.spec is None:
        raise ValueError(f"Foo {foo.metadata.name!r} has no spec")
    labels = {"app": "nginx", "controller": foo.metadata.name or ""}
    return Deployment(
        metadata=ObjectMeta(
            name=foo.spec.deployment_name,
            namespace=foo.metadata.namespace,
            owner_references=[new_controller_ref(foo, _FOO_GVK)],
        ),
        spec=DeploymentSpec(
            replicas=foo.spec.replicas,
            selector=LabelSelector(match_labels=dict(labels)),
            template=PodTemplateSpec(
                metadata=ObjectMeta(labels=dict(labels)),
                spec=PodSpec(containers=[Container(name="nginx", image=deployment_image(foo))]),
            ),
        ),
    )


def new_rate_limiter(clock: Clock = REAL_CLOCK) -> MaxOfRateLimiter[K]:
    """sample-controller's limiter: per-item 5 ms → 1000 s, overall 50 qps / 300 burst."""
    return MaxOfRateLimiter(
        ItemExponentialFailureRateLimiter(0.005, 1000.0),
        BucketRateLimiter(50.0, 300, clock=clock),
    )


class FooController:
    """Reconciles Foos into Deployments (Go's ``Controller``; see the module docstring).

    Construction registers the event handlers on both informers (so make it before the
    factories are started); :meth:`run` waits for their caches, runs the workers until
    ``stop`` is set and then shuts down in phases. :meth:`sync_handler` is the
    reconciliation of one key, callable directly (the Go tests do).

    Args:
        kube: Writes Deployments and (without ``recorder``) Events.
        sample: Writes Foo statuses.
        deployments: The Deployment informer of a kube informer factory.
        foos: The Foo informer of a sample informer factory.
        recorder: Where events go; by default an :class:`EventBroadcaster` made here (its
            threads start at once) writing to ``kube``'s core/v1 Events and logging them,
            shut down at the end of :meth:`run`.
        clock: Time of the work queue and its rate limiter.

    Attributes:
        controller: The runtime :class:`~kgen_runtime.controller.Controller` holding the
            work queue (``controller.queue``) and running the workers.
        recorder: The event recorder in use.

    Thread-safe: handlers run on informer threads, :meth:`sync_handler` on several workers at
    once (never two for the same key). Objects read from the listers are never modified:
    writes start from a copy (:meth:`update_foo_status`) or a fresh object
    (:func:`new_deployment`).
    """

    def __init__(
        self,
        kube: KubeClientset,
        sample: SampleClientset,
        deployments: DeploymentInformer,
        foos: FooInformer,
        *,
        recorder: EventRecorder | None = None,
        clock: Clock = REAL_CLOCK,
    ) -> None:
        self.kube = kube
        self.sample = sample
        self.deployments_lister = deployments.lister
        self.foos_lister = foos.lister
        self._broadcaster: EventBroadcaster | None = None
        if recorder is None:
            self._broadcaster = EventBroadcaster(clock=clock)
            self._broadcaster.start_logging()
            self._broadcaster.start_recording_to_sink(ClientEventSink(kube.core_v1.events))
            recorder = self._broadcaster.new_recorder(CONTROLLER_AGENT_NAME)
        self.recorder = recorder
        # A failing Foo is retried for as long as it fails (no max_retries).
        self.controller: Controller[str] = Controller(
            "foos",
            ReconcilerFunc(self.sync_handler),
            rate_limiter=new_rate_limiter(clock),
            max_retries=None,
            cache_synced=[deployments.informer.has_synced, foos.informer.has_synced],
            clock=clock,
        )
        _log.info("setting up event handlers")
        foos.informer.add_event_handler(
            on_add=self.enqueue_foo, on_update=lambda old, new: self.enqueue_foo(new)
        )
        deployments.informer.add_handler(
            EnqueueOwnerHandler(self.controller.enqueue, _FOO_GVK, resolve=self._foo_of)
        )

    def run(self, workers: int, stop: threading.Event) -> None:
        """Wait for the caches, run ``workers`` workers until ``stop``; then shut down.

        Blocks. On return the queue is drained, the workers joined and (if the controller
        made it) the event broadcaster has flushed its queue (bounded by 10 s).
        """
        _log.info("starting Foo controller")
        try:
            self.controller.run(workers, stop)
        finally:
            if self._broadcaster is not None:
                self._broadcaster.shutdown(_EVENT_FLUSH_TIMEOUT)
        _log.info("Foo controller stopped")

    def enqueue_foo(self, obj: Foo) -> None:
        """Queue ``obj``'s ``namespace/name`` key (Go's ``enqueueFoo``)."""
        self.controller.enqueue(meta_namespace_key_func(obj))

    def sync_handler(self, key: str) -> None:
        """Bring the Foo named ``key`` and its Deployment to the desired state.

        Go's ``syncHandler``. A Foo that no longer exists or names no Deployment is reported
        and left (nothing to retry).

        Raises:
            ResourceExistsError: the Deployment exists and is not controlled by the Foo
                (after recording an ``ErrResourceExists`` warning event).
            ApiError: a read or write failed; the worker loop retries with backoff.
        """
        namespace, name = split_meta_namespace_key(key)
        try:
            foo = self.foos_lister.foos(namespace).get(name)
        except NotFoundError as err:
            handle_error(err, f"Foo {key!r} in work queue no longer exists")
            return
        deployment_name = foo.spec.deployment_name if foo.spec is not None else None
        if not deployment_name:
            handle_error(ValueError(f"{key}: deployment name must be specified"),
                         "Deployment name missing from object reference")
            return
        deployments = self.kube.apps_v1.deployments(namespace)
        try:
            deployment = self.deployments_lister.deployments(namespace).get(deployment_name)
        except NotFoundError:
            deployment = deployments.create(new_deployment(foo), field_manager=FIELD_MANAGER)
        if not is_controlled_by(deployment, foo):
            message = MESSAGE_RESOURCE_EXISTS % deployment_name
            self.recorder.event(foo, EVENT_TYPE_WARNING, ERR_RESOURCE_EXISTS, message)
            raise ResourceExistsError(message)
        wanted = foo.spec.replicas if foo.spec is not None else None
        current = deployment.spec.replicas if deployment.spec is not None else None
        if wanted is not None and wanted != current:
            _log.info("updating Deployment %s/%s: replicas %s -> %s",
                      namespace, deployment_name, current, wanted)
            deployment = deployments.update(new_deployment(foo), field_manager=FIELD_MANAGER)
        self.update_foo_status(foo, deployment)
        self.recorder.event(foo, EVENT_TYPE_NORMAL, SUCCESS_SYNCED, MESSAGE_RESOURCE_SYNCED)

    def update_foo_status(self, foo: Foo, deployment: Deployment) -> None:
        """Write ``deployment``'s available replicas into a copy of ``foo``'s status.

        Through the status subresource, so nothing but the status changes; a stale ``foo``
        raises ``ConflictError`` (and the key is retried). Written on every sync, changed or
        not, as sample-controller's ``updateFooStatus`` does (this file is its port); the
        builder's :class:`~foo_controller.FooReconciler` skips an unchanged status. The
        end-to-end tests run both against the same assertions on the cluster's state, which
        an unchanged write does not move (kube-apiserver answers it as a no-op).
        """
        foo_copy = foo.deepcopy()
        available = deployment.status.available_replicas if deployment.status else None
        foo_copy.status = FooStatus(available_replicas=available or 0)
        self.sample.samplecontroller_v1alpha1.foos(foo.metadata.namespace).update_status(
            foo_copy, field_manager=FIELD_MANAGER
        )

    def _foo_of(self, namespace: str, name: str) -> Foo | None:
        """The cached Foo ``namespace/name``, if any (Go's ``handleObject`` lister check)."""
        try:
            return self.foos_lister.foos(namespace).get(name)
        except NotFoundError:
            _log.debug("ignoring orphaned object of Foo %s/%s", namespace, name)
            return None
