"""SharedIndexInformer end to end over a scripted ListerWatcher."""

from __future__ import annotations

import logging
import random
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from kgen_runtime.cache import (
    FilteringResourceEventHandler,
    ReflectorOptions,
    ResourceEventHandlerFuncs,
    SharedIndexInformer,
    wait_for_cache_sync,
)
from kgen_runtime.cache._processor import AddAllNotification, AddNotification, Listener
from kgen_runtime.rest.errors import GoneError
from kgen_runtime.util.clock import FakeClock
from tests.cache._fakes import (
    CHANGES,
    WAIT,
    FakeListWatch,
    Obj,
    Recorder,
    event,
    eventually,
    obj,
    page,
)


@contextmanager
def running(informer: SharedIndexInformer[Any]) -> Iterator[threading.Event]:
    stop = threading.Event()
    before = threading.active_count()
    thread = threading.Thread(target=informer.run, args=(stop,))
    thread.start()
    try:
        yield stop
    finally:
        stop.set()
        thread.join(WAIT)
        assert not thread.is_alive(), "informer.run did not return after stop"
    eventually(lambda: threading.active_count() <= before)


def synced(informer: SharedIndexInformer[Any], stop: threading.Event) -> None:
    assert wait_for_cache_sync(stop, informer.has_synced, timeout=WAIT)


def cache_state(informer: SharedIndexInformer[Obj]) -> dict[str, str | None]:
    return {o.metadata.name: o.metadata.resource_version for o in informer.indexer.list()}


NO_BACKOFF = ReflectorOptions(initial_backoff=0.0)


def fast_informer(lw: FakeListWatch, **kwargs: Any) -> SharedIndexInformer[Obj]:
    kwargs.setdefault("reflector_options", NO_BACKOFF)
    informer: SharedIndexInformer[Obj] = SharedIndexInformer(lw, name="test", **kwargs)
    informer.set_watch_error_handler(lambda r, e: None)
    return informer


def test_initial_list_syncs_and_reaches_every_handler() -> None:
    objects = [obj(f"o{i}", rv="5") for i in range(100)]
    lw = FakeListWatch([page("5", *objects)])
    informer = fast_informer(lw)
    a, b = Recorder(), Recorder()
    reg_a = informer.add_handler(a)
    reg_b = informer.add_handler(b)
    assert not informer.has_synced() and not reg_a.has_synced()
    with running(informer) as stop:
        synced(informer, stop)
        assert wait_for_cache_sync(stop, reg_a.has_synced, reg_b.has_synced, timeout=WAIT)
        assert len(a.events) == len(b.events) == 100
        assert a.initial_flags == [True] * 100
        assert sorted(informer.indexer.list_keys()) == sorted(f"ns/o{i}" for i in range(100))
        assert informer.last_sync_resource_version == "5"
        assert informer.indexer.get_by_key("ns/o7") is objects[7]  # the cache's own object


def test_events_reach_every_handler_in_order_and_a_slow_one_blocks_nobody() -> None:
    lw = FakeListWatch([page("1")])
    informer = fast_informer(lw)
    release = threading.Event()
    slow, fast = Recorder(block=release), Recorder()
    informer.add_handler(slow)
    informer.add_handler(fast)
    with running(informer) as stop:
        synced(informer, stop)
        watcher = lw.wait_for_watchers(1)
        watcher.push(
            event("ADDED", obj("a", rv="2")),
            event("ADDED", obj("b", rv="3")),
            event("MODIFIED", obj("a", rv="4")),
            event("DELETED", obj("b", rv="5")),
            event("MODIFIED", obj("a", rv="6")),
        )
        fast.wait_for_count(5)
        assert slow.events == []
        release.set()
        slow.wait_for_count(5)
    expected = [
        ("add", "a", "2"),
        ("add", "b", "3"),
        ("update", "a", "4"),
        ("delete", "b", "5"),
        ("update", "a", "6"),
    ]
    assert fast.events == expected
    assert slow.events == expected
    assert fast.initial_flags == [False, False]


def test_a_failing_handler_is_logged_and_keeps_receiving(caplog: pytest.LogCaptureFixture) -> None:
    lw = FakeListWatch([page("1")])
    informer = fast_informer(lw)
    seen: list[str] = []
    done = threading.Event()

    def on_add(o: Obj) -> None:
        seen.append(o.metadata.name)
        if o.metadata.name == "boom":
            raise ValueError("handler bug")
        if o.metadata.name == "after":
            done.set()

    informer.add_event_handler(on_add=on_add)
    with caplog.at_level(logging.ERROR), running(informer) as stop:
        synced(informer, stop)
        lw.wait_for_watchers(1).push(
            event("ADDED", obj("boom", rv="2")), event("ADDED", obj("after", rv="3"))
        )
        assert done.wait(WAIT)
    assert seen == ["boom", "after"]
    assert any("handler bug" in str(r.exc_info[1]) for r in caplog.records if r.exc_info)


def test_late_handler_gets_existing_objects_once_then_live_events() -> None:
    lw = FakeListWatch([page("5", obj("a", rv="5"), obj("b", rv="5"))])
    informer = fast_informer(lw)
    early = Recorder()
    informer.add_handler(early)
    with running(informer) as stop:
        synced(informer, stop)
        watcher = lw.wait_for_watchers(1)
        watcher.push(event("MODIFIED", obj("a", rv="6")))
        early.wait_for_count(3)
        late = Recorder()
        reg = informer.add_handler(late)
        assert wait_for_cache_sync(stop, reg.has_synced, timeout=WAIT)
        watcher.push(event("ADDED", obj("c", rv="7")))
        late.wait_for_count(3)
        early.wait_for_count(4)
    assert sorted(late.events[:2]) == [("add", "a", "6"), ("add", "b", "5")]
    assert late.events[2:] == [("add", "c", "7")]
    assert late.initial_flags == [True, True, False]


def test_late_handler_under_event_stream_sees_no_gap_and_no_duplicate() -> None:
    lw = FakeListWatch([page("1")])
    informer = fast_informer(lw)
    with running(informer) as stop:
        synced(informer, stop)
        watcher = lw.wait_for_watchers(1)
        late: list[Recorder] = []
        rng = random.Random(7)
        rv = 1
        for step in range(1500):
            rv += 1
            name = f"o{rng.randrange(40)}"
            kind = rng.choice(CHANGES)
            watcher.push(event(kind, obj(name, rv=str(rv))))
            if step % 300 == 150:
                recorder = Recorder()
                informer.add_handler(recorder)
                late.append(recorder)
        eventually(lambda: informer.last_sync_resource_version == str(rv))
        # Every late handler's replay converges on exactly the cache.
        eventually(lambda: all(r.state() == cache_state(informer) for r in late))
        assert len(late) == 5


def test_relist_after_gone_tombstones_deleted_and_updates_changed_only() -> None:
    first = page("10", obj("keep", rv="3"), obj("change", rv="4"), obj("gone", rv="5"))
    second = page("20", obj("keep", rv="3"), obj("change", rv="15"), obj("new", rv="18"))
    lw = FakeListWatch([first, second])
    informer = fast_informer(lw)
    rec = Recorder()
    informer.add_handler(rec)
    with running(informer) as stop:
        synced(informer, stop)
        lw.wait_for_watchers(1).push(
            event("ERROR", {"kind": "Status", "code": 410, "reason": "Expired"})
        )
        rec.wait_for_count(6)
        lw.wait_for_watchers(2)
    assert sorted(rec.events[:3]) == [
        ("add", "change", "4"),
        ("add", "gone", "5"),
        ("add", "keep", "3"),
    ]
    assert rec.events[3:] == [
        ("tombstone", "gone", "5"),
        ("update", "change", "15"),
        ("add", "new", "18"),
    ]
    assert sorted(informer.indexer.list_keys()) == ["ns/change", "ns/keep", "ns/new"]


def test_resync_reaches_only_handlers_that_asked_for_it() -> None:
    clock = FakeClock()
    lw = FakeListWatch([page("5", obj("a", rv="5"))])
    informer = fast_informer(lw, clock=clock)
    syncing, quiet = Recorder(), Recorder()
    informer.add_handler(syncing, resync_period=30.0)
    informer.add_handler(quiet)
    with running(informer) as stop:
        synced(informer, stop)
        watcher = lw.wait_for_watchers(1)
        syncing.wait_for_count(1)
        assert clock.wait_for_sleepers(2)  # watchdog + resync timer
        clock.step(30.0)
        syncing.wait_for_count(2)
        # Stopping drops what a handler has not been handed yet, and the quiet handler's
        # thread may not have run at all so far. Handlers hear events in order: wait for an
        # event that comes after the resync, which would reach the quiet handler first.
        watcher.push(event("ADDED", obj("b", rv="6")))
        syncing.wait_for_count(3)
        quiet.wait_for_count(2)
    assert syncing.events == [("add", "a", "5"), ("update", "a", "5"), ("add", "b", "6")]
    assert quiet.events == [("add", "a", "5"), ("add", "b", "6")]


def test_short_resync_periods_are_raised_to_the_minimum() -> None:
    informer = fast_informer(FakeListWatch())
    assert informer.add_handler(Recorder(), resync_period=0.2).resync_period == 1.0
    assert informer.add_handler(Recorder()).resync_period == 0.0


def test_transform_drops_managed_fields_and_is_fixed_at_start() -> None:
    a = obj("a", rv="5")
    a.metadata.managed_fields = [{"manager": "kubectl"}]
    lw = FakeListWatch([page("5", a)])
    informer = fast_informer(lw)

    def strip(o: Any) -> Any:
        o.metadata.managed_fields = None
        return o

    informer.set_transform(strip)
    with running(informer) as stop:
        synced(informer, stop)
        cached = informer.indexer.get_by_key("ns/a")
        assert cached is not None and cached.metadata.managed_fields is None
        with pytest.raises(RuntimeError, match="before the informer starts"):
            informer.set_transform(None)


def test_removed_handler_stops_receiving() -> None:
    lw = FakeListWatch([page("1")])
    informer = fast_informer(lw)
    kept, removed = Recorder(), Recorder()
    informer.add_handler(kept)
    reg = informer.add_handler(removed)
    with running(informer) as stop:
        synced(informer, stop)
        watcher = lw.wait_for_watchers(1)
        watcher.push(event("ADDED", obj("a", rv="2")))
        removed.wait_for_count(1)
        reg.remove()
        watcher.push(event("ADDED", obj("b", rv="3")))
        kept.wait_for_count(2)
    assert removed.events == [("add", "a", "2")]


def test_filtering_handler_turns_updates_into_adds_and_deletes() -> None:
    lw = FakeListWatch([page("1")])
    informer = fast_informer(lw)
    rec = Recorder()
    informer.add_handler(FilteringResourceEventHandler(lambda o: o.spec == "mine", rec))
    with running(informer) as stop:
        synced(informer, stop)
        lw.wait_for_watchers(1).push(
            event("ADDED", obj("a", rv="2", spec="other")),
            event("MODIFIED", obj("a", rv="3", spec="mine")),
            event("MODIFIED", obj("a", rv="4", spec="mine")),
            event("MODIFIED", obj("a", rv="5", spec="other")),
        )
        rec.wait_for_count(3)
    assert rec.events == [("add", "a", "3"), ("update", "a", "4"), ("delete", "a", "4")]


def test_indexers_can_be_added_while_running() -> None:
    lw = FakeListWatch([page("5", obj("a", spec="x"), obj("b", spec="y"))])
    informer = fast_informer(lw)
    with running(informer) as stop:
        synced(informer, stop)
        informer.add_indexers({"spec": lambda o: [o.spec]})
        assert informer.indexer.index_keys("spec", "x") == ["ns/a"]
        assert sorted(informer.indexer.list_index_func_values("namespace")) == ["ns"]


def test_lifecycle_errors() -> None:
    lw = FakeListWatch([page("1")])
    informer = fast_informer(lw)
    with running(informer) as stop:
        synced(informer, stop)
        with pytest.raises(RuntimeError, match="already started"):
            informer.run(threading.Event())
    assert informer.is_stopped
    with pytest.raises(RuntimeError, match="has stopped"):
        informer.add_handler(Recorder())


def test_broken_stream_resumes_without_relist() -> None:
    lw = FakeListWatch([page("1")])
    informer = fast_informer(lw)
    rec = Recorder()
    informer.add_handler(rec)
    with running(informer) as stop:
        synced(informer, stop)
        first = lw.wait_for_watchers(1)
        first.push(event("ADDED", obj("a", rv="2")))
        first.fail(ConnectionResetError("peer reset"))
        second = lw.wait_for_watchers(2)
        assert second.options.resource_version == "2"
        second.push(event("MODIFIED", obj("a", rv="3")))
        rec.wait_for_count(2)
    assert len(lw.list_calls) == 1
    assert rec.events == [("add", "a", "2"), ("update", "a", "3")]


def test_stress_many_handlers_replay_to_the_cache() -> None:
    lw = FakeListWatch([page("1", *[obj(f"o{i}", rv="1") for i in range(50)]), page("1")])
    informer = fast_informer(lw)
    recorders = [Recorder() for _ in range(8)]
    for r in recorders:
        informer.add_handler(r)
    rng = random.Random(11)
    with running(informer) as stop:
        synced(informer, stop)
        watcher = lw.wait_for_watchers(1)
        rv = 1
        pushers = []

        lock = threading.Lock()

        def push_some(seed: int) -> None:
            nonlocal rv
            local = random.Random(seed)
            for _ in range(300):
                with lock:  # one server: versions increase in stream order
                    rv += 1
                    name = f"o{local.randrange(80)}"
                    kind = local.choice(CHANGES)
                    watcher.push(event(kind, obj(name, rv=str(rv))))

        for seed in range(6):
            t = threading.Thread(target=push_some, args=(rng.randrange(1000) + seed,))
            pushers.append(t)
            t.start()
        for t in pushers:
            t.join(WAIT)
        eventually(lambda: informer.last_sync_resource_version == str(rv))
        eventually(lambda: all(r.state() == cache_state(informer) for r in recorders))
        first_events = recorders[0].events
        assert all(r.events == first_events for r in recorders)


def test_gone_error_type_is_what_handlers_of_watch_errors_see() -> None:
    lw = FakeListWatch([page("1"), page("2")])
    informer: SharedIndexInformer[Obj] = SharedIndexInformer(
        lw, name="t", reflector_options=NO_BACKOFF
    )
    errors: list[BaseException] = []
    informer.set_watch_error_handler(lambda r, e: errors.append(e))
    with running(informer) as stop:
        synced(informer, stop)
        lw.wait_for_watchers(1).push(event("ERROR", {"code": 410, "reason": "Gone"}))
        lw.wait_for_watchers(2)
    assert [type(e) for e in errors] == [GoneError]


def test_stress_handlers_added_and_removed_concurrently_with_events() -> None:
    lw = FakeListWatch([page("1", *[obj(f"o{i}", rv="1") for i in range(20)])])
    informer = fast_informer(lw)
    with running(informer) as stop:
        synced(informer, stop)
        watcher = lw.wait_for_watchers(1)
        kept: list[Recorder] = []
        kept_lock = threading.Lock()
        rv = 1
        rv_lock = threading.Lock()

        def churn(seed: int) -> None:
            local = random.Random(seed)
            for i in range(30):
                recorder = Recorder()
                reg = informer.add_handler(recorder)
                if i % 3 == 0:
                    with kept_lock:
                        kept.append(recorder)
                else:
                    reg.remove()
                if local.random() < 0.5:
                    nonlocal rv
                    with rv_lock:
                        rv += 1
                        name = f"o{local.randrange(30)}"
                        kind = local.choice(CHANGES)
                        watcher.push(event(kind, obj(name, rv=str(rv))))

        threads = [threading.Thread(target=churn, args=(seed,)) for seed in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(WAIT)
            assert not t.is_alive()
        eventually(lambda: informer.last_sync_resource_version == str(rv))
        eventually(lambda: all(r.state() == cache_state(informer) for r in kept))
        assert len(kept) == 8 * 10


def test_each_handler_resyncs_on_its_own_period() -> None:
    from kgen_runtime.cache._processor import SharedProcessor, UpdateNotification

    clock = FakeClock()
    processor = SharedProcessor("p", clock)
    every10, every30, never = Recorder(), Recorder(), Recorder()
    processor.add_listener(every10, 10.0)
    processor.add_listener(every30, 30.0)
    processor.add_listener(never, 0.0)
    processor.start()
    try:
        due: list[bool] = []
        for _ in range(3):
            clock.step(10.0)
            due.append(processor.should_resync())
            a = obj("a", rv=str(len(due)))
            processor.distribute([(UpdateNotification(a, a), True)])
        every10.wait_for_count(3)
        every30.wait_for_count(1)
    finally:
        processor.stop()
    assert due == [True, True, True]
    assert [rv for _, _, rv in every10.events] == ["1", "2", "3"]
    assert [rv for _, _, rv in every30.events] == ["3"]
    assert never.events == []


def test_readers_never_see_half_of_a_relist() -> None:
    """A relist is filed into the cache in one step (the informer's queue is atomic, as
    client-go's ``AtomicFIFO``): readers racing 20 relists between two disjoint sets of
    2,000 objects only ever see one whole set, and handlers hear each relist as every
    tombstone, then every add, in list order."""
    first = [obj(f"a{i}", rv="1") for i in range(2000)]
    second = [obj(f"b{i}", rv="2") for i in range(2000)]
    lists = [page("1", *first)] + [page("2", *(second if n % 2 == 0 else first)) for n in range(20)]
    lw = FakeListWatch(lists)
    informer = fast_informer(lw)
    rec = Recorder()
    informer.add_handler(rec)
    whole = [frozenset(f"ns/{o.metadata.name}" for o in objects) for objects in (first, second)]
    sets_seen: set[int] = set()
    partial: list[int] = []  # the sizes of snapshots that were neither set
    reading = threading.Event()

    def read() -> None:
        while not reading.is_set():
            keys = frozenset(informer.indexer.list_keys())
            if keys in whole:
                sets_seen.add(whole.index(keys))
            else:
                partial.append(len(keys))

    with running(informer) as stop:
        synced(informer, stop)
        readers = [threading.Thread(target=read) for _ in range(4)]
        for reader in readers:
            reader.start()
        try:
            for relist in range(1, 21):
                lw.wait_for_watchers(relist).push(
                    event("ERROR", {"kind": "Status", "code": 410, "reason": "Expired"})
                )
            rec.wait_for_count(2000 + 20 * 4000)
        finally:
            reading.set()
            for reader in readers:
                reader.join(WAIT)
    assert partial == []
    assert sets_seen == {0, 1}
    assert [(kind, name) for kind, name, _ in rec.events[2000:6000]] == [
        *(("tombstone", f"a{i}") for i in range(2000)),
        *(("add", f"b{i}") for i in range(2000)),
    ]


def test_a_relist_an_index_function_rejects_is_applied_object_by_object(
    caplog: pytest.LogCaptureFixture,
) -> None:
    def by_spec(o: Obj) -> list[str]:
        if o.spec == "bad":
            raise ValueError("index function bug")
        return [o.spec]

    listed = [obj("a", spec="x"), obj("bad", spec="bad"), obj("c", spec="y")]
    lw = FakeListWatch([page("5", *listed)])
    informer = fast_informer(lw, indexers={"spec": by_spec})
    rec = Recorder()
    informer.add_handler(rec)
    with caplog.at_level(logging.ERROR), running(informer) as stop:
        synced(informer, stop)
        rec.wait_for_count(2)
    assert rec.events == [("add", "a", "1"), ("add", "c", "1")]
    assert sorted(informer.indexer.list_keys()) == ["ns/a", "ns/c"]
    assert informer.indexer.index_keys("spec", "y") == ["ns/c"]
    failures = [r.getMessage() for r in caplog.records if r.exc_info]
    assert failures == [
        "test: failed to apply a relist in one step; applying each object: index function bug",
        "test: failed to apply a Replaced delta: index function bug",
    ]


def test_a_batch_of_adds_reaches_the_handler_one_by_one_past_a_failure(
    caplog: pytest.LogCaptureFixture,
) -> None:
    seen: list[str] = []

    def on_add(o: str) -> None:
        seen.append(o)
        if o == "boom":
            raise ValueError("handler bug")

    listener = Listener(ResourceEventHandlerFuncs(on_add), 0.0, 0.0, "test")
    listener.add([AddAllNotification(["a", "boom", "c"], True), AddNotification("d", False)])
    assert listener.pending_initial() == 3
    with caplog.at_level(logging.ERROR):
        listener.start()
        eventually(lambda: len(seen) == 4 and listener.pending_initial() == 0)
        listener.stop()
    assert seen == ["a", "boom", "c", "d"]
    assert [str(r.exc_info[1]) for r in caplog.records if r.exc_info] == ["handler bug"]
