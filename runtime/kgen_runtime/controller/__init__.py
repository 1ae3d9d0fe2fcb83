"""The controller kit: what sample-controller and controller-runtime build on.

Two layers. client-go's, wired by hand (sample-controller style)::

    informer ─► EnqueueHandler / EnqueueOwnerHandler ─► Controller's rate-limited queue
                                                           │ workers (threads)
                                                           ▼
                                               Reconciler.reconcile(key) ─► client writes

    def sync(key: str) -> Result | None:
        namespace, name = split_meta_namespace_key(key)
        ...                                    # read from listers, write through a client

    controller = Controller("foos", ReconcilerFunc(sync), cache_synced=[foos.has_synced])
    foos.add_handler(EnqueueHandler(controller.enqueue))
    deployments.add_handler(EnqueueOwnerHandler(controller.enqueue, FOO_GVK))
    factory.start(stop)
    controller.run(workers=2, stop=stop)       # blocks until stop is set, then drains

and controller-runtime's, on a :class:`Manager` with a :class:`Cluster` (scheme, informer
cache started on demand, cache-backed :class:`Client`)::

    manager = Manager(cluster=Cluster(transport, scheme, cache=CacheOptions(namespaces=["a"])))
    (manager.controller_for(Foo).owns(Deployment)
        .with_event_filter(GenerationChangedPredicate())
        .with_options(max_concurrent_reconciles=2)
        .complete(FooReconciler(manager.cluster.client)))  # reconcile(Request) -> Result
    manager.rbac_rules()                       # the Role the controllers need
    manager.start(stop)

Each module states its own contract: the worker loop and shutdown in :class:`Controller`,
what a reconcile result means in :class:`Reconciler`, the handlers' keys in
:class:`EnqueueOwnerHandler`, expectations in :class:`ControllerExpectations`, claiming
children in :class:`ControllerRefManager`, Events (never blocking a sync) in
:class:`EventBroadcaster` and :class:`EventCorrelator`, leader election in
:class:`LeaderElector`, start-up and phased shutdown of a whole process in :class:`Manager`,
what it serves on ``/metrics`` in :data:`METRICS_REGISTRY`; the builder's wiring in
:class:`Builder`, event filtering in :class:`Predicate`, reads and writes in :class:`Client`,
what is cached in :class:`InformerCache`, finalizers in :func:`handle_finalizer`,
``create_or_update``/``create_or_patch`` in :class:`OperationResult`. Logging context per
reconcile and the formatters are in :mod:`kgen_runtime.log`. Events and leader election are
packages of their own, :mod:`kgen_runtime.events` and :mod:`kgen_runtime.leaderelection`,
whose names are exported here too; docs/architecture.md says which module owns what.

Both layers have asyncio twins named ``AsyncX`` beside ``X``, sharing every decision that
is not I/O: :class:`AsyncController` (worker tasks, an ``async def`` reconcile, the same
settle decision); :class:`AsyncLeaderElector` (the same election state); and a fully async
controller-runtime layer on one event loop::

    async with AsyncClientset.for_config(config) as clientset:
        manager = AsyncManager(cluster=AsyncCluster(clientset.transport, scheme))
        manager.controller_for(Foo).owns(Deployment).complete(reconcile)   # async def
        await manager.start(signals=(signal.SIGTERM, signal.SIGINT))

The blocking Manager can also run an AsyncController with its async informers on a loop of
its own (:meth:`Manager.add_async_controller`), and any coroutine through
:class:`AsyncRunnableFunc`.
"""

from kgen_runtime.controller._builder.builder import Builder
from kgen_runtime.controller._builder.builder_aio import AsyncBuilder
from kgen_runtime.controller._cluster.cache import InformerCache
from kgen_runtime.controller._cluster.cache_aio import AsyncInformerCache
from kgen_runtime.controller._cluster.cache_core import (
    ByObject,
    CacheNotStartedError,
    CacheOptions,
    NamespaceNotCachedError,
)
from kgen_runtime.controller._cluster.client import APIReader, Client, Reader
from kgen_runtime.controller._cluster.client_aio import AsyncAPIReader, AsyncClient, AsyncReader
from kgen_runtime.controller._cluster.cluster import Cluster
from kgen_runtime.controller._cluster.cluster_aio import AsyncCluster
from kgen_runtime.controller._cluster.kinds import Kinds, LabelsLike
from kgen_runtime.controller._controller import DEFAULT_MAX_RETRIES, Controller
from kgen_runtime.controller._controller_aio import AsyncController
from kgen_runtime.controller._controllerutil.controllerutil import (
    OperationResult,
    create_or_patch,
    create_or_update,
    merge_patch,
)
from kgen_runtime.controller._controllerutil.finalizers import (
    add_finalizer,
    contains_finalizer,
    handle_finalizer,
    remove_finalizer,
)
from kgen_runtime.controller._controllerutil.ownerref import (
    AlreadyOwnedError,
    get_controller_of,
    is_controlled_by,
    new_controller_ref,
    set_controller_reference,
    set_owner_reference,
)
from kgen_runtime.controller._expectations import (
    EXPECTATIONS_TIMEOUT,
    ControlleeExpectations,
    ControllerExpectations,
    UIDTrackingControllerExpectations,
)
from kgen_runtime.controller._handler.key_handlers import (
    EnqueueHandler,
    EnqueueOwnerHandler,
    OwnerResolver,
    deleted_object,
)
from kgen_runtime.controller._handler.predicates import (
    AnnotationChangedPredicate,
    CreateEvent,
    DeleteEvent,
    Funcs,
    GenerationChangedPredicate,
    GenericEvent,
    LabelChangedPredicate,
    LabelSelectorPredicate,
    Predicate,
    ResourceVersionChangedPredicate,
    UpdateEvent,
    and_,
    new_predicate_funcs,
    not_,
    or_,
)
from kgen_runtime.controller._handler.request_handlers import (
    EnqueueRequestForObject,
    EnqueueRequestForOwner,
    EnqueueRequestsFromMapFunc,
    EventHandler,
    GenericEventSource,
    MapFunc,
    RequestAdder,
)
from kgen_runtime.controller._manager.health import HealthCheck
from kgen_runtime.controller._manager.manager import (
    Manager,
    Runnable,
    RunnableFunc,
    setup_signal_handler,
)
from kgen_runtime.controller._manager.manager_aio import AsyncManager, AsyncRunnable
from kgen_runtime.controller._manager.metrics_server import (
    DEFAULT_METRICS_CERT_DIR,
    MetricsAuth,
    MetricsServer,
)
from kgen_runtime.controller._manager.runnable_aio import AsyncControllerRunnable, AsyncRunnableFunc
from kgen_runtime.controller._manager.sharding import ShardingConfig
from kgen_runtime.controller._metrics import (
    METRICS_REGISTRY,
    RECONCILE_METRICS,
    WORKQUEUE_METRICS,
    ReconcileMetricsProvider,
)
from kgen_runtime.controller._rbac import PermissionSet
from kgen_runtime.controller._reconciler import (
    Reconciler,
    ReconcilerFunc,
    Request,
    Result,
    TerminalError,
)
from kgen_runtime.controller._reconciler_aio import AsyncReconciler, AsyncReconcilerFunc
from kgen_runtime.controller._refmanager import (
    ControllerRefManager,
    PatchClient,
    recheck_deletion_timestamp,
)
from kgen_runtime.events import (
    EVENT_METRICS,
    EVENT_TYPE_NORMAL,
    EVENT_TYPE_WARNING,
    AsyncClientEventSink,
    AsyncEventClient,
    AsyncEventSink,
    ClientEventSink,
    CorrelatedEvent,
    EventBroadcaster,
    EventClient,
    EventCorrelator,
    EventMetrics,
    EventRecorder,
    EventSink,
    EventWatcher,
)
from kgen_runtime.leaderelection import (
    JITTER_FACTOR,
    AsyncLeaderElector,
    AsyncLeaseClient,
    AsyncLeaseLock,
    LeaderElectionConfig,
    LeaderElectionRecord,
    LeaderElector,
    LeaseClient,
    LeaseLock,
)

__all__ = [
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_METRICS_CERT_DIR",
    "EVENT_METRICS",
    "EVENT_TYPE_NORMAL",
    "EVENT_TYPE_WARNING",
    "EXPECTATIONS_TIMEOUT",
    "JITTER_FACTOR",
    "METRICS_REGISTRY",
    "RECONCILE_METRICS",
    "WORKQUEUE_METRICS",
    "APIReader",
    "AlreadyOwnedError",
    "AnnotationChangedPredicate",
    "AsyncAPIReader",
    "AsyncBuilder",
    "AsyncClient",
    "AsyncClientEventSink",
    "AsyncCluster",
    "AsyncController",
    "AsyncControllerRunnable",
    "AsyncEventClient",
    "AsyncEventSink",
    "AsyncInformerCache",
    "AsyncLeaderElector",
    "AsyncLeaseClient",
    "AsyncLeaseLock",
    "AsyncManager",
    "AsyncReader",
    "AsyncReconciler",
    "AsyncReconcilerFunc",
    "AsyncRunnable",
    "AsyncRunnableFunc",
    "Builder",
    "ByObject",
    "CacheNotStartedError",
    "CacheOptions",
    "Client",
    "ClientEventSink",
    "Cluster",
    "ControlleeExpectations",
    "Controller",
    "ControllerExpectations",
    "ControllerRefManager",
    "CorrelatedEvent",
    "CreateEvent",
    "DeleteEvent",
    "EnqueueHandler",
    "EnqueueOwnerHandler",
    "EnqueueRequestForObject",
    "EnqueueRequestForOwner",
    "EnqueueRequestsFromMapFunc",
    "EventBroadcaster",
    "EventClient",
    "EventCorrelator",
    "EventHandler",
    "EventMetrics",
    "EventRecorder",
    "EventSink",
    "EventWatcher",
    "Funcs",
    "GenerationChangedPredicate",
    "GenericEvent",
    "GenericEventSource",
    "HealthCheck",
    "InformerCache",
    "Kinds",
    "LabelChangedPredicate",
    "LabelSelectorPredicate",
    "LabelsLike",
    "LeaderElectionConfig",
    "LeaderElectionRecord",
    "LeaderElector",
    "LeaseClient",
    "LeaseLock",
    "Manager",
    "MapFunc",
    "MetricsAuth",
    "MetricsServer",
    "NamespaceNotCachedError",
    "OperationResult",
    "OwnerResolver",
    "PatchClient",
    "PermissionSet",
    "Predicate",
    "Reader",
    "ReconcileMetricsProvider",
    "Reconciler",
    "ReconcilerFunc",
    "Request",
    "RequestAdder",
    "ResourceVersionChangedPredicate",
    "Result",
    "Runnable",
    "RunnableFunc",
    "ShardingConfig",
    "TerminalError",
    "UIDTrackingControllerExpectations",
    "UpdateEvent",
    "add_finalizer",
    "and_",
    "contains_finalizer",
    "create_or_patch",
    "create_or_update",
    "deleted_object",
    "get_controller_of",
    "handle_finalizer",
    "is_controlled_by",
    "merge_patch",
    "new_controller_ref",
    "new_predicate_funcs",
    "not_",
    "or_",
    "recheck_deletion_timestamp",
    "remove_finalizer",
    "set_controller_reference",
    "set_owner_reference",
    "setup_signal_handler",
]
