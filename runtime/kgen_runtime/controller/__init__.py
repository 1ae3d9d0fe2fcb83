"""The controller kit: what sample-controller and controller-runtime build on.

Data flow::

    informer ─► EnqueueHandler / EnqueueOwnerHandler ─► Controller's rate-limited queue
                                                           │ workers (threads)
                                                           ▼
                                               Reconciler.reconcile(key) ─► client writes

Typical use::

    def sync(key: str) -> Result | None:
        namespace, name = split_meta_namespace_key(key)
        ...                                    # read from listers, write through a client

    controller = Controller("foos", ReconcilerFunc(sync), cache_synced=[foos.has_synced])
    foos.add_handler(EnqueueHandler(controller.enqueue))
    deployments.add_handler(EnqueueOwnerHandler(controller.enqueue, FOO_GVK))
    factory.start(stop)
    controller.run(workers=2, stop=stop)       # blocks until stop is set, then drains

Each module states its own contract: the worker loop and shutdown in :class:`Controller`,
what a reconcile result means in :class:`Reconciler`, the handlers' keys in
:class:`EnqueueOwnerHandler`, expectations in :class:`ControllerExpectations`, claiming
children in :class:`ControllerRefManager`, Events (never blocking a sync) in
:class:`EventBroadcaster` and :class:`EventCorrelator`, leader election in
:class:`LeaderElector`, start-up and phased shutdown of a whole process in :class:`Manager`.
"""

from kgen_runtime.controller._controller import DEFAULT_MAX_RETRIES, Controller
from kgen_runtime.controller._controller_aio import (
    AsyncController,
    AsyncReconciler,
    AsyncReconcilerFunc,
)
from kgen_runtime.controller._correlator import CorrelatedEvent, EventCorrelator
from kgen_runtime.controller._events import (
    EVENT_TYPE_NORMAL,
    EVENT_TYPE_WARNING,
    ClientEventSink,
    EventBroadcaster,
    EventClient,
    EventRecorder,
    EventSink,
    EventWatcher,
)
from kgen_runtime.controller._expectations import (
    EXPECTATIONS_TIMEOUT,
    ControlleeExpectations,
    ControllerExpectations,
    UIDTrackingControllerExpectations,
)
from kgen_runtime.controller._handlers import (
    EnqueueHandler,
    EnqueueOwnerHandler,
    OwnerResolver,
    deleted_object,
)
from kgen_runtime.controller._health import HealthCheck
from kgen_runtime.controller._leaderelection import (
    JITTER_FACTOR,
    LeaderElectionRecord,
    LeaderElector,
    LeaseClient,
    LeaseLock,
)
from kgen_runtime.controller._manager import (
    LeaderElectionConfig,
    Manager,
    Runnable,
    RunnableFunc,
    setup_signal_handler,
)
from kgen_runtime.controller._metrics import ReconcileMetricsProvider
from kgen_runtime.controller._ownerref import (
    get_controller_of,
    is_controlled_by,
    new_controller_ref,
)
from kgen_runtime.controller._reconciler import Reconciler, ReconcilerFunc, Result, TerminalError
from kgen_runtime.controller._refmanager import (
    ControllerRefManager,
    PatchClient,
    recheck_deletion_timestamp,
)

__all__ = [
    "DEFAULT_MAX_RETRIES",
    "EVENT_TYPE_NORMAL",
    "EVENT_TYPE_WARNING",
    "EXPECTATIONS_TIMEOUT",
    "JITTER_FACTOR",
    "AsyncController",
    "AsyncReconciler",
    "AsyncReconcilerFunc",
    "ClientEventSink",
    "ControlleeExpectations",
    "Controller",
    "ControllerExpectations",
    "ControllerRefManager",
    "CorrelatedEvent",
    "EnqueueHandler",
    "EnqueueOwnerHandler",
    "EventBroadcaster",
    "EventClient",
    "EventCorrelator",
    "EventRecorder",
    "EventSink",
    "EventWatcher",
    "HealthCheck",
    "LeaderElectionConfig",
    "LeaderElectionRecord",
    "LeaderElector",
    "LeaseClient",
    "LeaseLock",
    "Manager",
    "OwnerResolver",
    "PatchClient",
    "ReconcileMetricsProvider",
    "Reconciler",
    "ReconcilerFunc",
    "Result",
    "Runnable",
    "RunnableFunc",
    "TerminalError",
    "UIDTrackingControllerExpectations",
    "deleted_object",
    "get_controller_of",
    "is_controlled_by",
    "new_controller_ref",
    "recheck_deletion_timestamp",
    "setup_signal_handler",
]
