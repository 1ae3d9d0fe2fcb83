"""The public surface of kgen_runtime.testing, pinned: changing it is a deliberate act."""

from __future__ import annotations

import kgen_runtime.testing as testing
from kgen_runtime.testing import pytest_plugin


def test_public_names() -> None:
    assert sorted(testing.__all__) == [
        "APIServerCore", "Action", "AsyncFakeClientsetBase", "AsyncFakeTransport", "BUILTINS",
        "Cause", "FakeClientsetBase", "FakeTransport",
        "FakeWatch", "ObjectTracker", "Reactor", "ServedResource", "ShardRequest", "StatusError",
        "TestAPIServer", "TestAPIServerProcess", "WatchReactor",
    ]
    assert all(hasattr(testing, name) for name in testing.__all__)
    assert pytest_plugin.__all__ == ["api_server"]


def test_builtins_cover_the_kinds_controllers_touch() -> None:
    served = {(r.group, r.plural) for r in testing.BUILTINS}
    assert {("", "namespaces"), ("", "pods"), ("", "events"), ("events.k8s.io", "events"),
            ("apps", "deployments"), ("coordination.k8s.io", "leases"),
            ("apiextensions.k8s.io", "customresourcedefinitions")} <= served
