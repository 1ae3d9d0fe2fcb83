"""watch: typed ADDED/MODIFIED/DELETED events in order, selectors, bookmarks, stop()."""

from __future__ import annotations

import threading

from foo_api.samplecontroller.v1alpha1 import Foo

from kgen_runtime.rest import ListOptions
from kgen_runtime.watch import WatchEvent
from tests.conformance._backends import BOUND, Backend
from tests.conformance._foos import foo, next_events

INITIAL_EVENTS_END = "k8s.io/initial-events-end"


def test_watch_streams_typed_changes_in_order(backend: Backend) -> None:
    start = backend.foos.list().metadata.resource_version
    with backend.foos.watch(ListOptions(resource_version=start), read_timeout=BOUND) as watch:
        created = backend.foos.create(foo("a", 1))
        patched = backend.foos.patch("a", {"spec": {"replicas": 2}})
        backend.foos.delete("a")

        events = next_events(iter(watch), 3)

    assert [kind for kind, _ in events] == ["ADDED", "MODIFIED", "DELETED"]
    assert all(type(obj) is Foo for _, obj in events)
    added, modified, deleted = (obj for _, obj in events)
    assert added.metadata.resource_version == created.metadata.resource_version
    assert modified.metadata.resource_version == patched.metadata.resource_version
    assert modified.spec is not None and modified.spec.replicas == 2
    assert deleted.metadata.name == "a" and deleted.metadata.uid == created.metadata.uid
    assert deleted.spec is not None and deleted.spec.replicas == 2


def test_watch_from_a_resource_version_replays_what_came_after(backend: Backend) -> None:
    first = backend.foos.create(foo("a", 1))
    backend.foos.patch("a", {"spec": {"replicas": 3}})
    backend.foos.create(foo("b", 1))

    with backend.foos.watch(
        ListOptions(resource_version=first.metadata.resource_version), read_timeout=BOUND
    ) as watch:
        events = next_events(iter(watch), 2)

    assert [(kind, obj.metadata.name) for kind, obj in events] == [
        ("MODIFIED", "a"),
        ("ADDED", "b"),
    ]


def test_watch_with_selectors_sees_only_matching_objects(backend: Backend) -> None:
    """An object that stops matching arrives as DELETED, one that starts matching as ADDED."""
    start = backend.foos.list().metadata.resource_version
    by_label = ListOptions(resource_version=start, label_selector="app=x")
    by_name = ListOptions(resource_version=start, field_selector="metadata.name=b")
    with (
        backend.foos.watch(by_label, read_timeout=BOUND) as labelled,
        backend.foos.watch(by_name, read_timeout=BOUND) as named,
    ):
        backend.foos.create(foo("a", labels={"app": "y"}))
        backend.foos.create(foo("b", labels={"app": "x"}))
        backend.foos.create(foo("c", labels={"app": "x"}))
        backend.foos.patch("c", {"spec": {"replicas": 4}})
        backend.foos.patch("b", {"metadata": {"labels": {"app": "z"}}})  # leaves the selection
        backend.foos.patch("a", {"metadata": {"labels": {"app": "x"}}})  # enters it

        label_events = next_events(iter(labelled), 5)
        name_events = next_events(iter(named), 1)

    assert [(kind, obj.metadata.name) for kind, obj in label_events] == [
        ("ADDED", "b"),
        ("ADDED", "c"),
        ("MODIFIED", "c"),
        ("DELETED", "b"),
        ("ADDED", "a"),
    ]
    assert [(kind, obj.metadata.name) for kind, obj in name_events] == [("ADDED", "b")]


def test_initial_events_end_with_a_bookmark(backend: Backend) -> None:
    backend.foos.create(foo("a"))
    backend.foos.create(foo("b"))
    later = backend.foos.create(foo("c"))
    options = ListOptions(
        send_initial_events=True,
        allow_watch_bookmarks=True,
        resource_version_match="NotOlderThan",
    )

    with backend.foos.watch(options, read_timeout=BOUND) as watch:
        events = next_events(iter(watch), 4)

    assert [(kind, obj.metadata.name) for kind, obj in events[:3]] == [
        ("ADDED", "a"),
        ("ADDED", "b"),
        ("ADDED", "c"),
    ]
    kind, bookmark = events[3]
    assert kind == "BOOKMARK" and type(bookmark) is Foo
    assert (bookmark.metadata.annotations or {}).get(INITIAL_EVENTS_END) == "true"
    assert int(bookmark.metadata.resource_version or 0) >= int(later.metadata.resource_version or 0)


def test_stop_ends_a_blocked_iteration_from_another_thread(backend: Backend) -> None:
    start = backend.foos.list().metadata.resource_version
    watch = backend.foos.watch(ListOptions(resource_version=start), read_timeout=BOUND)
    received: list[WatchEvent[Foo]] = []
    first = threading.Event()
    failures: list[BaseException] = []

    def consume() -> None:
        try:
            for event in watch:
                received.append(event)
                first.set()
        except BaseException as error:  # reported below, not lost in the thread
            failures.append(error)

    consumer = threading.Thread(target=consume, daemon=True)
    consumer.start()
    backend.foos.create(foo("a"))
    assert first.wait(BOUND)

    watch.stop()  # the consumer is blocked reading the silent stream
    consumer.join(BOUND)

    assert not consumer.is_alive() and failures == []
    assert [(event.type, event.object.metadata.name) for event in received] == [("ADDED", "a")]
    watch.stop()  # idempotent
