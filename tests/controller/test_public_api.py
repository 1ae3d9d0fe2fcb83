"""The public surface of kgen_runtime.controller is pinned here."""

from __future__ import annotations

import kgen_runtime.controller as controller

API = {
    "AsyncController",
    "AsyncReconciler",
    "AsyncReconcilerFunc",
    "DEFAULT_MAX_RETRIES",
    "EVENT_TYPE_NORMAL",
    "EVENT_TYPE_WARNING",
    "EXPECTATIONS_TIMEOUT",
    "JITTER_FACTOR",
    "HealthCheck",
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
    "LeaderElectionConfig",
    "LeaderElectionRecord",
    "LeaderElector",
    "LeaseClient",
    "LeaseLock",
    "Manager",
    "OwnerResolver",
    "PatchClient",
    "Reconciler",
    "ReconcileMetricsProvider",
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
}


def test_public_names_are_pinned() -> None:
    assert set(controller.__all__) == API
    assert len(controller.__all__) == len(API)
    for name in API:
        assert getattr(controller, name) is not None


def test_machinery_modules_are_private() -> None:
    public_modules = {n for n in vars(controller) if not n.startswith("_")} - API
    assert public_modules == set()
