"""The in-order FIFO: delta order, replace tombstones, resync, has_synced, close."""

from __future__ import annotations

import threading
from typing import Any

import pytest

from kgen_runtime.cache import (
    DeletedFinalStateUnknown,
    Delta,
    DeltaType,
    FIFOClosedError,
    Indexer,
    RealFIFO,
    ReplacedAllInfo,
    drop_managed_fields,
)
from tests.cache._fakes import Obj, obj


def summary(deltas: list[Delta]) -> list[tuple[str, str, str | None]]:
    out = []
    for d in deltas:
        o = d.object
        if isinstance(o, DeletedFinalStateUnknown):
            out.append((d.type.value, f"tombstone:{o.key}", o.obj.metadata.resource_version))
        else:
            out.append((d.type.value, o.metadata.name, o.metadata.resource_version))
    return out


def drain(fifo: RealFIFO, store: Indexer[Obj]) -> list[tuple[Delta, bool]]:
    """Pop everything, applying deltas to ``store`` like the informer does."""
    popped: list[tuple[Delta, bool]] = []

    def process(delta: Delta, initial: bool) -> None:
        popped.append((delta, initial))
        if delta.type is DeltaType.DELETED:
            store.delete(delta.object)
        else:
            store.update(delta.object)

    while len(fifo):
        fifo.pop(process)
    return popped


def test_events_pop_in_arrival_order_across_keys() -> None:
    store: Indexer[Obj] = Indexer()
    fifo = RealFIFO(store)
    fifo.add(obj("a", rv="1"))
    fifo.add(obj("b", rv="2"))
    fifo.update(obj("a", rv="3"))
    fifo.delete(obj("b", rv="4"))
    assert summary([d for d, _ in drain(fifo, store)]) == [
        ("Added", "a", "1"),
        ("Added", "b", "2"),
        ("Updated", "a", "3"),
        ("Deleted", "b", "4"),
    ]
    assert store.list_keys() == ["ns/a"]


def test_replace_tombstones_exactly_the_missing_keys() -> None:
    store: Indexer[Obj] = Indexer()
    fifo = RealFIFO(store)
    fifo.replace([obj("a", rv="1"), obj("b", rv="1"), obj("c", rv="1")], "1")
    drain(fifo, store)
    fifo.update(obj("d", rv="2"))  # queued, not yet in the store
    fifo.replace([obj("b", rv="5")], "5")
    assert summary(fifo.list_deltas()) == [
        ("Updated", "d", "2"),
        ("Deleted", "tombstone:ns/d", "2"),
        ("Deleted", "tombstone:ns/a", "1"),
        ("Deleted", "tombstone:ns/c", "1"),
        ("Replaced", "b", "5"),
    ]
    drain(fifo, store)
    assert store.list_keys() == ["ns/b"]


def test_replace_does_not_repeat_a_queued_delete() -> None:
    store: Indexer[Obj] = Indexer()
    fifo = RealFIFO(store)
    fifo.replace([obj("a")], "1")
    drain(fifo, store)
    fifo.delete(obj("a", rv="2"))
    fifo.replace([], "3")
    assert summary(fifo.list_deltas()) == [("Deleted", "a", "2")]


def test_has_synced_after_initial_list_is_popped() -> None:
    store: Indexer[Obj] = Indexer()
    fifo = RealFIFO(store)
    assert not fifo.has_synced()
    fifo.replace([obj("a"), obj("b")], "1")
    fifo.add(obj("c"))  # arrived after the list: not part of the initial population
    assert not fifo.has_synced()
    popped = drain(fifo, store)
    assert [initial for _, initial in popped] == [True, True, False]
    assert fifo.has_synced()


def test_empty_initial_list_is_synced_at_once() -> None:
    fifo = RealFIFO(Indexer())
    fifo.replace([], "1")
    assert fifo.has_synced()


def test_resync_skips_keys_with_pending_deltas() -> None:
    store: Indexer[Obj] = Indexer()
    fifo = RealFIFO(store)
    fifo.replace([obj("a"), obj("b")], "1")
    drain(fifo, store)
    fifo.update(obj("a", rv="2"))
    fifo.resync()
    assert summary(fifo.list_deltas()) == [("Updated", "a", "2"), ("Sync", "b", "1")]


def test_an_atomic_queue_queues_a_relist_as_one_delta_with_its_keys() -> None:
    store: Indexer[Obj] = Indexer()
    store.add(obj("gone", rv="1"))
    fifo = RealFIFO(store, atomic_events=True)
    listed = [obj("b", rv="5"), obj("a", rv="5", namespace="other")]
    fifo.replace(listed, "5")
    fifo.update(obj("a", rv="6", namespace="other"))
    deltas = fifo.list_deltas()
    assert [d.type for d in deltas] == [DeltaType.REPLACED_ALL, DeltaType.UPDATED]
    info = deltas[0].object
    assert info == ReplacedAllInfo(listed, ["ns/b", "other/a"], "5")
    assert info.objects[0] is listed[0]
    # no tombstone is queued: the consumer works deletions out against the cache it applies to
    assert all(not isinstance(d.object, DeletedFinalStateUnknown) for d in deltas)
    popped: list[tuple[Delta, bool]] = []
    while len(fifo):
        fifo.pop(lambda d, initial: popped.append((d, initial)))
    # the list is the initial population; the update after it is not
    assert [initial for _, initial in popped] == [True, False]
    assert fifo.has_synced()


def test_an_atomic_queue_resyncs_nothing_while_a_relist_is_queued() -> None:
    store: Indexer[Obj] = Indexer()
    store.add(obj("a", rv="1"))
    store.add(obj("b", rv="1"))
    fifo = RealFIFO(store, atomic_events=True)
    fifo.replace([obj("a", rv="1")], "2")  # b is to go: a Sync for it would bring it back
    fifo.resync()
    assert [d.type for d in fifo.list_deltas()] == [DeltaType.REPLACED_ALL]
    fifo.pop(lambda d, initial: None)
    fifo.update(obj("a", rv="3"))
    fifo.resync()
    assert summary(fifo.list_deltas()) == [("Updated", "a", "3"), ("Sync", "b", "1")]


def test_transform_applies_once_on_entry_not_to_sync_or_tombstones() -> None:
    seen: list[Any] = []

    def strip(o: Any) -> Any:
        seen.append(o)
        o.metadata.managed_fields = None
        return o

    store: Indexer[Obj] = Indexer()
    fifo = RealFIFO(store, transform=strip)
    a = obj("a")
    a.metadata.managed_fields = [{"manager": "x"}]
    fifo.replace([a], "1")
    drain(fifo, store)
    assert store.get_by_key("ns/a") is a and a.metadata.managed_fields is None
    fifo.resync()
    fifo.replace([], "2")
    assert len(seen) == 1


def test_event_transform_follows_the_transform_on_events_only() -> None:
    calls: list[tuple[str, str]] = []

    def transform(o: Any) -> Any:
        calls.append(("transform", o.metadata.name))
        return o

    def event_transform(o: Any) -> Any:
        calls.append(("event", o.metadata.name))
        return o

    store: Indexer[Obj] = Indexer()
    fifo = RealFIFO(store, transform=transform, event_transform=event_transform)
    fifo.replace([obj("a"), obj("b")], "1")
    assert calls == [("transform", "a"), ("transform", "b")]
    drain(fifo, store)
    calls.clear()
    fifo.update(obj("a", rv="2"))
    fifo.delete(obj("b"))
    fifo.replace([], "3")  # a's tombstone: neither transform
    assert calls == [("transform", "a"), ("event", "a"), ("transform", "b"), ("event", "b")]


def test_deltas_carry_the_key_the_queue_computed_and_compare_without_it() -> None:
    store: Indexer[Obj] = Indexer()
    fifo = RealFIFO(store)
    fifo.replace([obj("a")], "1")
    fifo.add(obj("b", namespace="other"))
    fifo.replace([], "2")
    deltas = fifo.list_deltas()
    assert [d.key for d in deltas] == ["ns/a", "other/b", "ns/a", "other/b"]
    assert deltas[0] == Delta(DeltaType.REPLACED, deltas[0].object)
    assert repr(deltas[0]) == repr(Delta(DeltaType.REPLACED, deltas[0].object))


def test_unkeyable_object_is_rejected_by_the_producer() -> None:
    fifo = RealFIFO(Indexer())
    with pytest.raises(ValueError, match=r"no metadata\.name"):
        fifo.add(obj(""))
    assert len(fifo) == 0


def test_close_wakes_a_blocked_pop() -> None:
    fifo = RealFIFO(Indexer())
    raised = threading.Event()

    def consumer() -> None:
        try:
            fifo.pop(lambda d, i: None)
        except FIFOClosedError:
            raised.set()

    t = threading.Thread(target=consumer)
    t.start()
    fifo.close()
    t.join(timeout=5)
    assert raised.is_set()
    assert fifo.is_closed


def test_process_error_propagates_and_the_delta_is_dropped() -> None:
    fifo = RealFIFO(Indexer())
    fifo.add(obj("a"))

    def fail(delta: Delta, initial: bool) -> None:
        raise RuntimeError("handler broke")

    with pytest.raises(RuntimeError, match="handler broke"):
        fifo.pop(fail)
    assert len(fifo) == 0


def test_concurrent_producers_single_consumer_keeps_per_producer_order() -> None:
    store: Indexer[Obj] = Indexer()
    fifo = RealFIFO(store)
    received: list[tuple[str, int]] = []
    done = threading.Event()
    all_in = threading.Event()

    def consume() -> None:
        def process(delta: Delta, initial: bool) -> None:
            received.append((delta.object.metadata.name, int(delta.object.spec)))
            if len(received) == 4000:
                all_in.set()

        try:
            while True:
                fifo.pop(process)
        except FIFOClosedError:
            done.set()

    consumer = threading.Thread(target=consume)
    consumer.start()

    def produce(p: int) -> None:
        for i in range(500):
            fifo.update(obj(f"p{p}", spec=str(i)))

    producers = [threading.Thread(target=produce, args=(p,)) for p in range(8)]
    for t in producers:
        t.start()
    for t in producers:
        t.join(timeout=20)
    assert all_in.wait(10)
    fifo.close()
    consumer.join(timeout=5)
    assert done.is_set()
    assert len(received) == 4000
    for p in range(8):
        assert [i for n, i in received if n == f"p{p}"] == list(range(500))


def test_drop_managed_fields_leaves_them_unset_on_the_wire() -> None:
    from tests.cache._foo import Foo

    foo = Foo.model_validate(
        {"metadata": {"name": "a", "managedFields": [{"manager": "kubectl"}]}, "spec": {}}
    )
    assert drop_managed_fields(foo) is foo
    assert foo.metadata.managed_fields is None
    assert "managedFields" not in foo.model_dump()["metadata"]
    assert drop_managed_fields(foo) is foo  # nothing to drop: fine


def test_drop_managed_fields_of_a_wire_decoded_object() -> None:
    from tests.cache._foo import Foo

    document = {"metadata": {"name": "a", "managedFields": [{"manager": "m"}]}, "spec": {}}
    foo = Foo.model_from_wire(document)
    assert drop_managed_fields(foo) is foo
    assert foo.metadata.managed_fields is None
    assert foo.metadata.model_fields_set == {"name"}
    assert foo.model_dump()["metadata"] == {"name": "a"}
