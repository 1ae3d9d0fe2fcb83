"""The public surface of kgen_runtime.leaderelection is pinned here."""

from __future__ import annotations

from kgen_runtime import leaderelection

API = {
    "JITTER_FACTOR",
    "AsyncLeaderElector",
    "AsyncLeaseClient",
    "AsyncLeaseLock",
    "LeaderElectionConfig",
    "LeaderElectionRecord",
    "LeaderElector",
    "LeaseClient",
    "LeaseLock",
}


def test_public_names_are_pinned() -> None:
    assert set(leaderelection.__all__) == API
    assert len(leaderelection.__all__) == len(API)
    assert all(getattr(leaderelection, name) is not None for name in API)


def test_machinery_modules_are_private() -> None:
    assert {n for n in vars(leaderelection) if not n.startswith("_")} - API == set()
