"""The runtime's typed clients end to end: over HTTP to the test server, and over the fake.

The same scenarios run on both transports, since both answer from the same core.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kgen_runtime.meta import ObjectMeta
from kgen_runtime.rest import (
    BaseClientset,
    HTTPTransport,
    ListOptions,
    Preconditions,
    ScaleClientMixin,
    StatusClientMixin,
)
from kgen_runtime.rest.errors import (
    AlreadyExistsError,
    ConflictError,
    ExpiredError,
    InvalidError,
    NotFoundError,
)
from kgen_runtime.testing import FakeClientsetBase, TestAPIServer
from tests.testing._support import BAR, Bar, BarList


class BarClient(StatusClientMixin[Bar, BarList], ScaleClientMixin[Bar, BarList]):
    """What the generator emits for a kind with status and scale subresources."""


class Clientset(BaseClientset):
    def bars(self, namespace: str) -> BarClient:
        return BarClient(self.transport, BAR, namespace)


class FakeClientset(FakeClientsetBase, Clientset):
    """What the generator emits for the fake."""

    resources = (BAR,)


class Setup:
    def __init__(self, clientset: Clientset, compact: Any) -> None:
        self.clientset = clientset
        self.bars = clientset.bars("ns")
        self.compact = compact


@pytest.fixture(params=["http", "fake"])
def setup(request: pytest.FixtureRequest) -> Iterator[Setup]:
    if request.param == "fake":
        fake = FakeClientset()
        yield Setup(fake, fake.core.store.compact)
        return
    with TestAPIServer() as server:
        server.register(BAR)
        transport = HTTPTransport(server.config(read_timeout=5.0))
        try:
            yield Setup(Clientset(transport), server.compact)
        finally:
            transport.close()


def bar(name: str, **spec: Any) -> Bar:
    return Bar(metadata=ObjectMeta(name=name), spec=spec)


def test_crud_and_typed_errors(setup: Setup) -> None:
    bars = setup.bars
    created = bars.create(bar("a", replicas=1))
    assert created.metadata.namespace == "ns" and created.metadata.generation == 1
    with pytest.raises(AlreadyExistsError):
        bars.create(bar("a"))
    fetched = bars.get("a")
    fetched.spec = {"replicas": 2}
    updated = bars.update(fetched)
    assert updated.metadata.generation == 2
    with pytest.raises(ConflictError):
        bars.update(fetched)  # stale resourceVersion
    with pytest.raises(InvalidError):
        bars.create(Bar(metadata=ObjectMeta(name="Bad_Name")))
    with pytest.raises(ConflictError):
        bars.delete("a", preconditions=Preconditions(uid="wrong"))
    bars.delete("a")
    with pytest.raises(NotFoundError):
        bars.get("a")


def test_status_patch_apply_and_scale(setup: Setup) -> None:
    bars = setup.bars
    created = bars.create(bar("a", replicas=1))
    created.status = {"replicas": 1}
    with_status = bars.update_status(created)
    assert with_status.status == {"replicas": 1} and with_status.metadata.generation == 1
    patched = bars.patch("a", [{"op": "replace", "path": "/spec/replicas", "value": 3}],
                         patch_type="json")
    assert patched.spec == {"replicas": 3}
    applied = bars.apply(bar("a", mode="fast"), field_manager="test")
    assert applied.spec == {"replicas": 3, "mode": "fast"}
    scale = bars.get_scale("a")
    assert (scale.spec.replicas, scale.status.replicas if scale.status else None) == (3, 1)
    scale.spec.replicas = 5
    assert bars.update_scale("a", scale).spec.replicas == 5
    assert bars.get("a").spec == {"replicas": 5, "mode": "fast"}


def test_paged_list_watch_and_expiry(setup: Setup) -> None:
    bars = setup.bars
    for name in "cba":
        bars.create(bar(name))
    first = bars.list(ListOptions(limit=2))
    assert [b.metadata.name for b in first.items] == ["a", "b"]
    rest = bars.list(ListOptions(limit=2, continue_=first.metadata.continue_))
    assert [b.metadata.name for b in rest.items] == ["c"]
    version = first.metadata.resource_version
    watcher = bars.watch(ListOptions(resource_version=version, timeout_seconds=30))
    bars.delete("b")
    events = iter(watcher)
    event = next(events)
    assert (event.type, event.object.metadata.name) == ("DELETED", "b")
    watcher.stop()
    setup.compact()
    with pytest.raises(ExpiredError):
        bars.list(ListOptions(resource_version=version, resource_version_match="Exact"))


def test_fake_records_typed_client_actions() -> None:
    fake = FakeClientset(Bar(metadata=ObjectMeta(name="a", namespace="ns"), spec={}))
    fake.prepend_reactor("update", "bars", lambda action: (True, action.object))
    bars = fake.bars("ns")
    current = bars.get("a")
    current.spec = {"x": 1}
    assert bars.update(current).spec == {"x": 1}  # answered by the reactor...
    assert bars.get("a").spec == {}  # ...so the tracker never saw the update
    assert [(a.verb, a.name) for a in fake.actions()] == [
        ("get", "a"), ("update", "a"), ("get", "a")]
