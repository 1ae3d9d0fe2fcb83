"""Watch over HTTP: event decoding, errors, read timeouts and stopping from another thread."""

from __future__ import annotations

import json
import threading
import time
from typing import Any, cast

import pytest

from kgen_runtime.meta import Status
from kgen_runtime.rest import ListOptions, ResourceClient
from kgen_runtime.rest.errors import ExpiredError, GoneError
from kgen_runtime.rest.transport import HTTPTransport
from tests.rest.conftest import BOUND, FOO_RESOURCE, Foo, FooList, FooSpec, StubServer


def event(kind: str, obj: dict[str, Any]) -> bytes:
    return json.dumps({"type": kind, "object": obj}).encode() + b"\n"


def foo(name: str, rv: str) -> dict[str, Any]:
    return {
        "apiVersion": "samplecontroller.k8s.io/v1alpha1",
        "kind": "Foo",
        "metadata": {"name": name, "resourceVersion": rv},
        "spec": {"replicas": int(rv)},
        "status": {"availableReplicas": 0},
    }


@pytest.fixture
def foos(transport: HTTPTransport) -> ResourceClient[Foo, FooList]:
    return ResourceClient(transport, FOO_RESOURCE, "ns")


def test_events_are_decoded_in_order(
    server: StubServer, foos: ResourceClient[Foo, FooList]
) -> None:
    expired = {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "code": 410,
        "reason": "Expired",
        "message": "too old resource version: 1 (5)",
    }
    server.stream(
        [
            event("ADDED", foo("a", "1")),
            event("MODIFIED", foo("a", "2"))
            + event("BOOKMARK", {"kind": "Foo", "metadata": {"resourceVersion": "3"}}),
            event("DELETED", foo("a", "4")),
            event("ERROR", expired),
        ]
    )
    watcher = foos.watch(
        ListOptions(resource_version="1", allow_watch_bookmarks=True, timeout_seconds=60)
    )
    seen = server.last
    assert (seen.method, seen.path) == (
        "GET",
        "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/ns/foos",
    )
    assert seen.query == [
        ("watch", "true"),
        ("resourceVersion", "1"),
        ("timeoutSeconds", "60"),
        ("allowWatchBookmarks", "true"),
    ]
    events = list(watcher)
    assert [e.type for e in events] == ["ADDED", "MODIFIED", "BOOKMARK", "DELETED", "ERROR"]
    assert all(isinstance(e.object, Foo) for e in events[:4])
    assert [e.object.metadata.resource_version for e in events[:4]] == ["1", "2", "3", "4"]
    assert events[1].object.spec == FooSpec(replicas=2)
    assert (events[4].type, cast(object, events[4].object)) == (
        "ERROR",
        Status.model_validate(expired),
    )


def test_keep_is_asked_about_object_events_only_and_its_rejects_are_skipped(
    server: StubServer, foos: ResourceClient[Foo, FooList]
) -> None:
    bookmark = {"kind": "Foo", "metadata": {"resourceVersion": "3"}}
    gone = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 410}
    server.stream([event("ADDED", foo("a", "1")), event("MODIFIED", foo("b", "2")),
                   event("BOOKMARK", bookmark), event("DELETED", foo("a", "4")),
                   event("ERROR", gone)])
    asked: list[tuple[str, Any]] = []

    def keep(kind: str, document: dict[str, Any]) -> bool:
        asked.append((kind, document))
        return document["metadata"]["name"] == "a"

    events = list(foos.watch(ListOptions(allow_watch_bookmarks=True), keep=keep))
    assert asked == [("ADDED", foo("a", "1")), ("MODIFIED", foo("b", "2")),
                     ("DELETED", foo("a", "4"))]
    assert [(e.type, e.object.metadata.resource_version) for e in events[:3]] == [
        ("ADDED", "1"), ("BOOKMARK", "3"), ("DELETED", "4")]
    assert [e.type for e in events[3:]] == ["ERROR"]


def test_an_undecodable_line_ends_the_watch_with_an_error_event(
    server: StubServer, foos: ResourceClient[Foo, FooList]
) -> None:
    server.stream([event("ADDED", foo("a", "1")), b"{not json\n", event("ADDED", foo("b", "2"))])
    events = list(foos.watch())
    assert [e.type for e in events] == ["ADDED", "ERROR"]
    status = events[1].object
    assert isinstance(status, Status)
    assert (status.code, status.reason) == (500, "InternalError")
    assert (status.message or "").startswith("unable to decode an event from the watch stream")


def test_an_unknown_event_type_is_a_decode_error(
    server: StubServer, foos: ResourceClient[Foo, FooList]
) -> None:
    server.stream([event("EXPLODED", foo("a", "1"))])
    [only] = list(foos.watch())
    assert only.type == "ERROR"
    assert "unknown watch event type 'EXPLODED'" in (only.object.message or "")  # type: ignore[attr-defined]


@pytest.mark.parametrize(("reason", "cls"), [("Gone", GoneError), ("Expired", ExpiredError)])
def test_a_refused_watch_raises(
    server: StubServer, foos: ResourceClient[Foo, FooList], reason: str, cls: type[Exception]
) -> None:
    server.reply(410, {"kind": "Status", "code": 410, "reason": reason})
    with pytest.raises(cls):
        foos.watch(ListOptions(resource_version="1"))


def test_a_stalled_watch_raises_timeout_within_the_read_timeout(
    server: StubServer, foos: ResourceClient[Foo, FooList]
) -> None:
    server.stream([event("ADDED", foo("a", "1"))], hold=True)
    watcher = foos.watch(read_timeout=0.3)
    events = iter(watcher)
    assert next(events).type == "ADDED"
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        next(events)
    assert 0.25 <= time.monotonic() - started < 3.0


def test_stop_from_another_thread_ends_the_iteration(
    server: StubServer, foos: ResourceClient[Foo, FooList]
) -> None:
    server.stream([event("ADDED", foo("a", "1"))], hold=True)
    watcher = foos.watch(ListOptions(timeout_seconds=300))
    got: list[str] = []
    first = threading.Event()
    errors: list[BaseException] = []

    def consume() -> None:
        try:
            for e in watcher:
                got.append(e.type)
                first.set()
        except BaseException as error:
            errors.append(error)

    reader = threading.Thread(target=consume)
    reader.start()
    assert first.wait(BOUND)
    started = time.monotonic()
    watcher.stop()
    reader.join(BOUND)
    assert not reader.is_alive() and errors == []
    assert time.monotonic() - started < 2.0
    assert got == ["ADDED"]
    watcher.stop()


def test_many_watches_stopped_concurrently(server: StubServer, transport: HTTPTransport) -> None:
    foos: ResourceClient[Foo, FooList] = ResourceClient(transport, FOO_RESOURCE, "ns")
    count = 12
    for _ in range(count):
        server.stream([event("ADDED", foo("a", "1"))], hold=True)
    watchers = [foos.watch() for _ in range(count)]
    firsts = [threading.Event() for _ in range(count)]
    results: list[list[str]] = [[] for _ in range(count)]

    def consume(i: int) -> None:
        for e in watchers[i]:
            results[i].append(e.type)
            firsts[i].set()

    readers = [threading.Thread(target=consume, args=(i,)) for i in range(count)]
    for reader in readers:
        reader.start()
    assert all(f.wait(BOUND) for f in firsts)
    stoppers = [threading.Thread(target=w.stop) for w in watchers]
    for stopper in stoppers:
        stopper.start()
    for thread in stoppers + readers:
        thread.join(BOUND)
        assert not thread.is_alive()
    assert results == [["ADDED"]] * count


def test_context_manager_stops(server: StubServer, foos: ResourceClient[Foo, FooList]) -> None:
    server.stream([event("ADDED", foo("a", "1")), event("ADDED", foo("b", "2"))], hold=True)
    names = []
    with foos.watch() as watcher:
        for e in watcher:
            names.append(e.object.metadata.name)
            if len(names) == 2:
                break
    assert names == ["a", "b"]
    assert list(watcher) == []
