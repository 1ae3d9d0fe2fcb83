"""The same client code over the real HTTP transport to the test API server and over the fake.

A smoke check of the shared ``Transport`` contract; the full conformance suite lives with the
test server.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from kgen_runtime.meta import ObjectMeta, Status
from kgen_runtime.rest import HTTPTransport, ListOptions, Preconditions, StatusClientMixin
from kgen_runtime.rest._request import Transport
from kgen_runtime.rest.errors import (
    AlreadyExistsError,
    ConflictError,
    GoneError,
    NotFoundError,
    api_error_from_status,
)
from kgen_runtime.testing import APIServerCore, FakeTransport, ServedResource, TestAPIServer
from tests.rest.conftest import BOUND, FOO_RESOURCE, Foo, FooList, FooSpec, FooStatus

HISTORY = 5


class FooClient(StatusClientMixin[Foo, FooList]):
    pass


@pytest.fixture(params=["http", "fake"])
def transport(request: pytest.FixtureRequest) -> Iterator[Transport]:
    if request.param == "fake":
        core = APIServerCore(history_size=HISTORY)
        core.serve(ServedResource.from_resource(FOO_RESOURCE))
        yield FakeTransport(core)
        core.shutdown()
        return
    with TestAPIServer(history_size=HISTORY) as server:
        server.register(FOO_RESOURCE)
        http = HTTPTransport(server.config())
        yield http
        http.close()


def foo(name: str, replicas: int = 1) -> Foo:
    return Foo(
        metadata=ObjectMeta(name=name), spec=FooSpec(deployment_name=name, replicas=replicas)
    )


def test_crud_round_trip(transport: Transport) -> None:
    foos = FooClient(transport, FOO_RESOURCE, "ns")
    created = foos.create(foo("a"))
    assert created.metadata.uid and created.metadata.resource_version
    with pytest.raises(AlreadyExistsError):
        foos.create(foo("a"))

    fetched = foos.get("a")
    assert fetched == created
    fetched.spec = FooSpec(deployment_name="a", replicas=3)
    updated = foos.update(fetched)
    assert updated.spec is not None and updated.spec.replicas == 3
    with pytest.raises(ConflictError):
        foos.update(fetched)  # stale resourceVersion

    patched = foos.patch("a", {"spec": {"replicas": 4}})
    assert patched.spec is not None and patched.spec.replicas == 4
    patched.status = FooStatus(available_replicas=4)
    assert foos.update_status(patched).status == FooStatus(available_replicas=4)

    foos.create(foo("b"))
    assert [f.metadata.name for f in foos.list().items] == ["a", "b"]
    with pytest.raises(ConflictError):
        foos.delete("a", preconditions=Preconditions(uid="not-the-uid"))
    foos.delete("a")
    with pytest.raises(NotFoundError):
        foos.get("a")


def test_watch_sees_writes(transport: Transport) -> None:
    foos = FooClient(transport, FOO_RESOURCE, "ns")
    start = foos.list().metadata.resource_version
    watcher = foos.watch(ListOptions(resource_version=start, timeout_seconds=30))
    foos.create(foo("a"))
    foos.patch("a", {"spec": {"replicas": 2}})
    foos.delete("a")
    seen: list[tuple[str, str | None]] = []
    done = threading.Event()

    def consume() -> None:
        for event in watcher:
            seen.append((event.type, event.object.metadata.name))
            if len(seen) == 3:
                done.set()
                return

    reader = threading.Thread(target=consume)
    reader.start()
    assert done.wait(BOUND)
    watcher.stop()
    reader.join(BOUND)
    assert seen == [("ADDED", "a"), ("MODIFIED", "a"), ("DELETED", "a")]


def test_watch_from_a_compacted_resource_version_is_gone(transport: Transport) -> None:
    foos = FooClient(transport, FOO_RESOURCE, "ns")
    first = foos.create(foo("a")).metadata.resource_version
    for replicas in range(2, 2 + HISTORY * 2):
        foos.patch("a", {"spec": {"replicas": replicas}})
    # Like the real API server: the watch is accepted, then ends with one 410 ERROR event.
    with foos.watch(ListOptions(resource_version=first)) as watcher:
        event = next(iter(watcher))
    assert event.type == "ERROR"
    assert isinstance(event.object, Status)
    assert (event.object.code, event.object.reason) == (410, "Expired")
    assert isinstance(api_error_from_status(event.object), GoneError)
