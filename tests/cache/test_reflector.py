"""The reflector against a scripted ListerWatcher: paging, resume, relist, backoff, stalls."""

from __future__ import annotations

import asyncio
import itertools
import random
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest

from kgen_runtime.cache import AsyncReflector, ExponentialBackoff, Reflector, ReflectorOptions
from kgen_runtime.rest.errors import (
    BadRequestError,
    ExpiredError,
    GatewayTimeoutError,
    GoneError,
    InternalError,
    TooManyRequestsError,
    is_too_large_resource_version,
)
from kgen_runtime.util.clock import FakeClock
from tests.cache._fakes import (
    WAIT,
    FakeListWatch,
    as_async,
    bookmark,
    event,
    eventually,
    obj,
    page,
)
from tests.conformance._blocking import EventLoopThread

REFLECTORS = ("sync", "async")
"""The blocking reflector and its async twin: tests parametrised over both hold them to one
behaviour (the decisions they share live in ``cache/_reflector_state.py``)."""


class RecordingStore:
    """Records the reflector's store calls as (operation, detail) pairs."""

    def __init__(self) -> None:
        self.calls: list[tuple[str, Any]] = []
        self._cond = threading.Condition()

    def _record(self, op: str, detail: Any) -> None:
        with self._cond:
            self.calls.append((op, detail))
            self._cond.notify_all()

    def add(self, o: Any) -> None:
        self._record("add", (o.metadata.name, o.metadata.resource_version))

    def update(self, o: Any) -> None:
        self._record("update", (o.metadata.name, o.metadata.resource_version))

    def delete(self, o: Any) -> None:
        self._record("delete", (o.metadata.name, o.metadata.resource_version))

    def replace(self, objects: Iterable[Any], resource_version: str = "") -> None:
        self._record("replace", (sorted(o.metadata.name for o in objects), resource_version))

    def resync(self) -> None:
        self._record("resync", None)

    def wait_for(self, predicate: Callable[[list[tuple[str, Any]]], bool]) -> None:
        with self._cond:
            assert self._cond.wait_for(lambda: predicate(self.calls), WAIT), self.calls


def gone(reason: str = "Expired") -> GoneError:
    return GoneError({"code": 410, "reason": reason, "message": "too old resource version"})


def collect(errors: list[BaseException]) -> Callable[[Any, BaseException], None]:
    return lambda reflector, err: errors.append(err)


def opts(**changes: Any) -> ReflectorOptions:
    """Options with no backoff delay unless the test asks for one."""
    return ReflectorOptions(**{"initial_backoff": 0.0, **changes})


@contextmanager
def running(reflector: Reflector[Any]) -> Iterator[threading.Event]:
    stop = threading.Event()
    thread = threading.Thread(target=reflector.run, args=(stop,))
    thread.start()
    try:
        yield stop
    finally:
        stop.set()
        thread.join(WAIT)
        assert not thread.is_alive(), "reflector.run did not return after stop"


@contextmanager
def reflecting(kind: str, lw: FakeListWatch, store: Any, **kwargs: Any) -> Iterator[None]:
    """Run a :class:`Reflector` (``kind="sync"``) or an :class:`AsyncReflector` (on an event
    loop in a thread, over ``as_async(lw)``) of ``lw`` into ``store`` for the block."""
    if kind == "sync":
        with running(Reflector(lw, store, **kwargs)):
            yield
        return
    reflector: AsyncReflector[Any] = AsyncReflector(as_async(lw), store, **kwargs)
    runner = EventLoopThread()

    async def start() -> asyncio.Task[None]:
        return asyncio.create_task(reflector.run())

    async def cancel(task: asyncio.Task[None]) -> None:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    task = runner.run(start())
    try:
        yield
    finally:
        runner.run(cancel(task))
        runner.close()


def test_paged_list_then_watch_from_the_list_version() -> None:
    lw = FakeListWatch(
        [page("10", obj("a"), cont="c1"), page("10", obj("b"), cont="c2"), page("10", obj("c"))]
    )
    store = RecordingStore()
    reflector = Reflector(lw, store, options=opts(page_size=1, rng=random.Random(1)))
    with running(reflector):
        watcher = lw.wait_for_watchers(1)
        watcher.push(
            event("ADDED", obj("d", rv="11")),
            event("MODIFIED", obj("a", rv="12")),
            event("DELETED", obj("b", rv="13")),
        )
        store.wait_for(lambda calls: len(calls) == 4)
        assert reflector.last_sync_resource_version == "13"
    assert [(o.resource_version, o.limit, o.continue_) for o in lw.list_calls] == [
        ("0", 1, None),
        (None, 1, "c1"),
        (None, 1, "c2"),
    ]
    assert store.calls == [
        ("replace", (["a", "b", "c"], "10")),
        ("add", ("d", "11")),
        ("update", ("a", "12")),
        ("delete", ("b", "13")),
    ]
    options = watcher.options
    assert options.resource_version == "10"
    assert options.allow_watch_bookmarks is True
    assert options.timeout_seconds is not None and 300 <= options.timeout_seconds < 600
    assert watcher.stopped.is_set()


def test_ended_watch_resumes_from_last_seen_version_without_relist() -> None:
    lw = FakeListWatch([page("5", obj("a"))])
    store = RecordingStore()
    reflector = Reflector(lw, store, options=opts())
    with running(reflector):
        first = lw.wait_for_watchers(1)
        first.push(event("MODIFIED", obj("a", rv="6")), bookmark("9"))
        store.wait_for(lambda calls: len(calls) == 2)
        eventually(lambda: reflector.last_sync_resource_version == "9")
        first.end()
        second = lw.wait_for_watchers(2)
        assert second.options.resource_version == "9"
        second.push(event("MODIFIED", obj("a", rv="10")))
        store.wait_for(lambda calls: len(calls) == 3)
    assert len(lw.list_calls) == 1
    assert store.calls[1:] == [("update", ("a", "6")), ("update", ("a", "10"))]


def test_gone_watch_event_relists_at_last_version_and_reports_the_error() -> None:
    lw = FakeListWatch([page("5", obj("a")), page("20", obj("b"))])
    store = RecordingStore()
    errors: list[BaseException] = []
    reflector = Reflector(lw, store, options=opts(), watch_error_handler=collect(errors))
    with running(reflector):
        first = lw.wait_for_watchers(1)
        first.push(event("MODIFIED", obj("a", rv="7")))
        first.push(event("ERROR", {"kind": "Status", "code": 410, "reason": "Expired"}))
        second = lw.wait_for_watchers(2)
        assert second.options.resource_version == "20"
    assert [o.resource_version for o in lw.list_calls] == ["0", "7"]
    assert [type(e) for e in errors] == [ExpiredError]
    assert store.calls[-1] == ("replace", (["b"], "20"))


def test_list_at_expired_version_retries_at_once_with_latest() -> None:
    lw = FakeListWatch([page("5", obj("a")), InternalError({"code": 500}), gone(), page("30")])
    store = RecordingStore()
    reflector = Reflector(lw, store, options=opts())
    with running(reflector):
        lw.wait_for_watchers(1).push(event("MODIFIED", obj("a", rv="8")))
        store.wait_for(lambda calls: len(calls) == 2)
        lw.watchers[0].push(event("ERROR", {"code": 500, "reason": "InternalError"}))
        watcher = lw.wait_for_watchers(2)
        assert watcher.options.resource_version == "30"
    # After the 500 the relist asks for "8"; 410 ⇒ at once "" (latest).
    assert [o.resource_version for o in lw.list_calls] == ["0", "8", "8", None]


def test_expired_continuation_falls_back_to_one_unpaged_list() -> None:
    lw = FakeListWatch([page("5", obj("a"), cont="c1"), gone(), page("6", obj("a"), obj("b"))])
    store = RecordingStore()
    reflector = Reflector(lw, store, options=opts(page_size=1))
    with running(reflector):
        lw.wait_for_watchers(1)
    assert [(o.resource_version, o.limit, o.continue_) for o in lw.list_calls] == [
        ("0", 1, None),
        (None, 1, "c1"),
        ("0", None, None),
    ]
    assert store.calls[0] == ("replace", (["a", "b"], "6"))


def test_throttled_watch_backs_off_and_retries_without_relist() -> None:
    clock = FakeClock()
    lw = FakeListWatch([page("5")])
    lw.watch_errors.extend([TooManyRequestsError({"code": 429}), ConnectionRefusedError()])
    options = ReflectorOptions(backoff_jitter=0.0)
    reflector = Reflector(lw, RecordingStore(), options=options, clock=clock)
    with running(reflector):
        lw.wait_for(lambda: len(lw.watch_calls) == 1)
        assert clock.wait_for_sleepers(2)  # the watchdog and the backoff sleep
        clock.step(0.8)
        lw.wait_for(lambda: len(lw.watch_calls) == 2)
        assert clock.wait_for_sleepers(2)
        clock.step(1.6)
        lw.wait_for_watchers(1)
    assert len(lw.list_calls) == 1
    assert [o.resource_version for o in lw.watch_calls] == ["5", "5", "5"]


def test_failed_watch_request_ends_the_round_and_relists() -> None:
    lw = FakeListWatch([page("5"), page("6")])
    lw.watch_errors.append(InternalError({"code": 500, "message": "etcd down"}))
    errors: list[str] = []
    reflector = Reflector(
        lw,
        RecordingStore(),
        options=opts(),
        watch_error_handler=lambda r, e: errors.append(str(e)),
    )
    with running(reflector):
        watcher = lw.wait_for_watchers(1)
    assert errors == ["etcd down"]
    assert [o.resource_version for o in lw.list_calls] == ["0", "5"]
    assert watcher.options.resource_version == "6"


def test_very_short_empty_watch_counts_as_failure() -> None:
    lw = FakeListWatch([page("5"), page("6")])
    errors: list[BaseException] = []
    reflector = Reflector(
        lw,
        RecordingStore(),
        options=opts(),
        watch_error_handler=collect(errors),
    )
    with running(reflector):
        lw.wait_for_watchers(1).end()
        lw.wait_for_watchers(2)
    assert len(lw.list_calls) == 2
    assert "very short watch" in str(errors[0])


def test_stalled_watch_is_detected_by_the_read_timeout_and_reopened() -> None:
    clock = FakeClock()
    lw = FakeListWatch([page("5")])
    store = RecordingStore()
    reflector = Reflector(lw, store, clock=clock, options=opts(watch_read_timeout=30.0))
    with running(reflector):
        first = lw.wait_for_watchers(1)
        first.push(event("ADDED", obj("a", rv="6")))
        store.wait_for(lambda calls: len(calls) == 2)
        clock.step(29.0)
        first.push(bookmark("7"))  # any event, even a bookmark, resets the timer
        eventually(lambda: reflector.last_sync_resource_version == "7")
        assert clock.wait_for_sleepers(1)
        clock.step(29.0)
        assert not first.stopped.is_set()
        clock.step(2.0)
        second = lw.wait_for_watchers(2)
        assert first.stopped.is_set()
        assert second.options.resource_version == "7"
    assert len(lw.list_calls) == 1


def test_resync_runs_on_the_clock_when_should_resync_says_so() -> None:
    clock = FakeClock()
    lw = FakeListWatch([page("5", obj("a"))])
    store = RecordingStore()
    allow = threading.Event()
    reflector = Reflector(
        lw, store, resync_period=10.0, should_resync=allow.is_set, clock=clock, options=opts()
    )
    with running(reflector):
        lw.wait_for_watchers(1)
        assert clock.wait_for_sleepers(2)  # watchdog + resync timer
        clock.step(10.0)
        assert clock.wait_for_sleepers(2)
        allow.set()
        clock.step(10.0)
        store.wait_for(lambda calls: ("resync", None) in calls)
    assert store.calls.count(("resync", None)) == 1


def test_stop_during_a_blocked_watch_returns_promptly() -> None:
    lw = FakeListWatch([page("5")])
    reflector = Reflector(lw, RecordingStore(), options=opts())
    with running(reflector):
        watcher = lw.wait_for_watchers(1)
    assert watcher.stopped.is_set()
    assert len(lw.watchers) == 1


def test_crashing_store_is_survived_and_relisted() -> None:
    lw = FakeListWatch([page("5", obj("a")), page("6", obj("a"))])

    class Flaky(RecordingStore):
        broke = False

        def replace(self, objects: Iterable[Any], resource_version: str = "") -> None:
            if not Flaky.broke:
                Flaky.broke = True
                raise RuntimeError("disk full")
            super().replace(objects, resource_version)

    store = Flaky()
    errors: list[str] = []
    reflector = Reflector(
        lw, store, options=opts(), watch_error_handler=lambda r, e: errors.append(str(e))
    )
    with running(reflector):
        lw.wait_for_watchers(1)
    assert errors == ["disk full"]
    assert store.calls[0] == ("replace", (["a"], "6"))


def test_backoff_doubles_caps_and_resets_after_health() -> None:
    clock = FakeClock()
    backoff = ExponentialBackoff(clock=clock, jitter=0.0)
    delays = [backoff.next_delay() for _ in range(8)]
    assert delays == [0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30.0, 30.0]
    clock.step(121.0)
    assert backoff.next_delay() == 0.8
    assert list(itertools.islice(ExponentialBackoff(clock=clock, jitter=0.0), 3)) == [0.8, 1.6, 3.2]
    jittered = ExponentialBackoff(clock=clock, rng=random.Random(3))
    first, second = jittered.next_delay(), jittered.next_delay()
    assert 0.8 <= first <= 1.6 and 1.6 <= second <= 3.2


@pytest.mark.parametrize("status", [{"code": 410, "reason": "Gone"}, {"code": 500}])
def test_error_events_become_typed_errors(status: dict[str, Any]) -> None:
    lw = FakeListWatch([page("5"), page("6")])
    errors: list[BaseException] = []
    reflector = Reflector(
        lw,
        RecordingStore(),
        options=opts(),
        watch_error_handler=collect(errors),
    )
    with running(reflector):
        lw.wait_for_watchers(1).push(event("ERROR", status))
        lw.wait_for_watchers(2)
    expected = GoneError if status["code"] == 410 else InternalError
    assert type(errors[0]) is expected


def test_streaming_list_replaces_at_the_end_bookmark_then_keeps_watching() -> None:
    lw = FakeListWatch()
    store = RecordingStore()
    reflector = Reflector(lw, store, options=opts(use_watch_list=True))
    with running(reflector):
        watcher = lw.wait_for_watchers(1)
        watcher.push(
            event("ADDED", obj("a", rv="3")),
            event("ADDED", obj("b", rv="4")),
            event("MODIFIED", obj("a", rv="5")),
            event("ADDED", obj("c", rv="6")),
            event("DELETED", obj("c", rv="7")),
            bookmark("7"),
        )
        assert store.calls == []  # nothing reaches the store before the end bookmark
        watcher.push(bookmark("8", initial_events_end=True), event("ADDED", obj("d", rv="9")))
        store.wait_for(lambda calls: len(calls) == 2)
        assert reflector.last_sync_resource_version == "9"
    assert store.calls == [("replace", (["a", "b"], "8")), ("add", ("d", "9"))]
    assert lw.list_calls == []
    options = watcher.options
    assert options.send_initial_events is True
    assert options.resource_version_match == "NotOlderThan"
    assert options.resource_version is None
    assert options.allow_watch_bookmarks is True


def test_streaming_list_that_ends_early_falls_back_to_a_list() -> None:
    lw = FakeListWatch([page("20", obj("x"))])
    store = RecordingStore()
    reflector = Reflector(lw, store, options=opts(use_watch_list=True))
    with running(reflector):
        first = lw.wait_for_watchers(1)
        first.push(event("ADDED", obj("a", rv="3")))
        first.end()
        second = lw.wait_for_watchers(2)
        assert second.options.resource_version == "20"
        assert second.options.send_initial_events is None
    assert store.calls == [("replace", (["x"], "20"))]


def test_streaming_list_refused_or_failed_falls_back_to_a_list() -> None:
    lw = FakeListWatch([page("20", obj("x")), page("30", obj("y"))])
    lw.watch_errors.append(BadRequestError({"code": 400, "message": "sendInitialEvents?"}))
    store = RecordingStore()
    reflector = Reflector(lw, store, options=opts(use_watch_list=True))
    with running(reflector):
        watcher = lw.wait_for_watchers(1)  # the watch after the fallback list
        assert watcher.options.resource_version == "20"
        watcher.push(event("ERROR", {"code": 410, "reason": "Expired"}))
        # The next round tries a streaming list again; an ERROR in it falls back to a list.
        lw.wait_for_watchers(2).push(event("ERROR", {"code": 500, "reason": "InternalError"}))
        third = lw.wait_for_watchers(3)
        assert third.options.resource_version == "30"
    assert store.calls == [("replace", (["x"], "20")), ("replace", (["y"], "30"))]


def too_large(requested: str = "30", current: str = "12") -> GatewayTimeoutError:
    """The real server's answer to a resourceVersion it has not reached."""
    return GatewayTimeoutError({
        "kind": "Status", "code": 504, "reason": "Timeout",
        "message": f"Timeout: Too large resource version: {requested}, current: {current}",
        "details": {"causes": [{"reason": "ResourceVersionTooLarge",
                                "message": "Too large resource version"}],
                    "retryAfterSeconds": 1}})


@pytest.mark.parametrize("kind", REFLECTORS)
def test_list_at_too_large_version_retries_at_once_with_latest(kind: str) -> None:
    """After an etcd restore or a fail-over to a lagging server (client-go relists from "")."""
    lw = FakeListWatch([page("5", obj("a")), InternalError({"code": 500}), too_large(),
                        page("3", obj("b"))])
    store = RecordingStore()
    with reflecting(kind, lw, store, options=opts()):
        lw.wait_for_watchers(1).push(event("MODIFIED", obj("a", rv="8")))
        store.wait_for(lambda calls: len(calls) == 2)
        lw.watchers[0].push(event("ERROR", {"code": 500, "reason": "InternalError"}))
        watcher = lw.wait_for_watchers(2)
        assert watcher.options.resource_version == "3"
    assert [o.resource_version for o in lw.list_calls] == ["0", "8", "8", None]
    assert store.calls[-1] == ("replace", (["b"], "3"))


@pytest.mark.parametrize("kind", REFLECTORS)
def test_streaming_list_at_too_large_version_falls_back_to_the_latest(kind: str) -> None:
    lw = FakeListWatch([page("3", obj("b"))])
    store = RecordingStore()
    with reflecting(kind, lw, store, options=opts(use_watch_list=True)):
        first = lw.wait_for_watchers(1)
        first.push(event("ADDED", obj("a", rv="7")), bookmark("8", initial_events_end=True))
        store.wait_for(lambda calls: len(calls) == 1)
        first.push(event("ERROR", {"code": 500, "reason": "InternalError"}))
        second = lw.wait_for_watchers(2)
        assert second.options.resource_version == "8"
        second.push(event("ERROR", too_large("8", "3").status.model_dump(
            by_alias=True, exclude_none=True)))
        assert lw.wait_for_watchers(3).options.resource_version == "3"
    assert [o.resource_version for o in lw.list_calls] == [None]
    assert store.calls == [("replace", (["a"], "8")), ("replace", (["b"], "3"))]


def test_too_large_resource_version_is_recognised_as_client_go_does() -> None:
    assert is_too_large_resource_version(too_large())
    old_server = GatewayTimeoutError({"code": 504, "reason": "Timeout", "message":
                                      "Timeout: Too large resource version: 30, current: 12"})
    assert is_too_large_resource_version(old_server)
    assert not is_too_large_resource_version(GatewayTimeoutError({"code": 504}))
    assert not is_too_large_resource_version(gone())
    assert not is_too_large_resource_version(ValueError("Too large resource version"))


def test_error_event_without_a_status_is_reported_for_what_it_is(
    caplog: pytest.LogCaptureFixture,
) -> None:
    lw = FakeListWatch([page("5"), page("6")])
    reflector = Reflector(lw, RecordingStore(), name="pods", options=opts())
    with caplog.at_level("WARNING", logger="kgen_runtime.cache.reflector"), running(reflector):
        lw.wait_for_watchers(1).push(event("ERROR", {"kind": "Pod", "metadata": {"name": "x"}}))
        lw.wait_for_watchers(2)
    messages = [r.getMessage() for r in caplog.records]
    assert any("unexpected object in a watch ERROR event" in m and "'kind': 'Pod'" in m
               for m in messages), messages
    assert not any("API error 0" in m for m in messages)


@pytest.mark.parametrize("freeze", [False, True])
def test_freezing_the_heap_after_the_first_list_is_opt_in_and_happens_once(
    freeze: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    freezes: list[list[tuple[str, Any]]] = []
    promotions: list[list[tuple[str, Any]]] = []
    store = RecordingStore()
    monkeypatch.setattr("gc.freeze", lambda: freezes.append(list(store.calls)))
    monkeypatch.setattr(
        "kgen_runtime.cache._reflector_state.promote_to_oldest_generation",
        lambda: promotions.append(list(store.calls)),
    )
    lw = FakeListWatch([page("10", obj("a")), page("20", obj("a"), obj("b"))])
    reflector = Reflector(lw, store, options=opts(freeze_initial_list=freeze))
    with running(reflector):
        lw.wait_for_watchers(1).push(event("ERROR", gone()))  # the watch ends: relist
        store.wait_for(lambda calls: len(calls) == 2)
    assert store.calls == [("replace", (["a"], "10")), ("replace", (["a", "b"], "20"))]
    first, both = store.calls[:1], store.calls
    # frozen once, right after the first list reached the store; never by default; every
    # other list's objects are promoted to the oldest generation once it reached the store
    assert promotions == ([both] if freeze else [first, both])
    assert freezes == ([[("replace", (["a"], "10"))]] if freeze else [])
