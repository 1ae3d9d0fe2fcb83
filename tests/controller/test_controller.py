"""The worker loop: forget, bounded retries, crash protection, terminal errors, requeue_after,
cache-sync gating and phased shutdown."""

from __future__ import annotations

import logging
import threading
import time

import pytest

from kgen_runtime.controller import Controller, ReconcilerFunc, Result, TerminalError
from kgen_runtime.util import FakeClock
from kgen_runtime.workqueue import ItemExponentialFailureRateLimiter
from tests.controller._support import Running, eventually

NO_DELAY = ItemExponentialFailureRateLimiter[str](0.0, 0.0)  # retries are queued at once


def make(sync: object, **kwargs: object) -> Controller[str]:
    kwargs.setdefault("rate_limiter", ItemExponentialFailureRateLimiter[str](0.0, 0.0))
    return Controller("test", ReconcilerFunc(sync), **kwargs)  # type: ignore[arg-type]


def test_success_forgets_the_keys_backoff() -> None:
    attempts: list[str] = []

    def sync(key: str) -> None:
        attempts.append(key)
        if len(attempts) == 1:
            raise ValueError("first try fails")

    c = make(sync)
    c.enqueue("a")
    assert c.process_next_work_item()
    assert c.queue.num_requeues("a") == 1
    assert c.process_next_work_item()
    assert attempts == ["a", "a"]
    assert c.queue.num_requeues("a") == 0
    assert len(c.queue) == 0
    c.queue.shut_down()
    assert not c.process_next_work_item()


def test_failures_are_retried_up_to_max_retries_then_dropped(
    caplog: pytest.LogCaptureFixture,
) -> None:
    attempts: list[str] = []

    def sync(key: str) -> None:
        attempts.append(key)
        raise ValueError(f"cannot sync {key}")

    c = make(sync, max_retries=3)
    c.enqueue("a")
    with caplog.at_level(logging.ERROR):
        for _ in range(4):
            assert c.process_next_work_item()
    assert attempts == ["a"] * 4  # the first try and three retries
    assert len(c.queue) == 0 and c.queue.waiting_count() == 0
    assert c.queue.num_requeues("a") == 0  # forgotten when dropped
    dropped = [r for r in caplog.records if "dropping 'a' after 3 retries" in r.getMessage()]
    assert len(dropped) == 1
    assert "cannot sync a" in dropped[0].getMessage()
    c.queue.shut_down()


def test_unbounded_retries_keep_requeueing() -> None:
    attempts = 0

    def sync(key: str) -> None:
        nonlocal attempts
        attempts += 1
        raise ValueError("always")

    c = make(sync, max_retries=None)
    c.enqueue("a")
    for _ in range(30):
        assert c.process_next_work_item()
    assert attempts == 30 and c.queue.num_requeues("a") == 30
    c.queue.shut_down()


def test_terminal_error_is_logged_and_not_requeued(caplog: pytest.LogCaptureFixture) -> None:
    def sync(key: str) -> None:
        raise TerminalError("spec.size must be positive")

    c = make(sync)
    c.enqueue("a")
    with caplog.at_level(logging.ERROR):
        assert c.process_next_work_item()
    assert len(c.queue) == 0 and c.queue.waiting_count() == 0
    assert c.queue.num_requeues("a") == 0
    assert any("terminal error for 'a'" in r.getMessage() for r in caplog.records)
    c.queue.shut_down()


def test_requeue_true_backs_off_through_the_rate_limiter() -> None:
    clock = FakeClock()
    c: Controller[str] = Controller(
        "t", ReconcilerFunc(lambda key: Result(requeue=True)),
        rate_limiter=ItemExponentialFailureRateLimiter(1.0, 100.0), clock=clock,
    )
    c.enqueue("a")
    assert c.process_next_work_item()
    assert c.queue.num_requeues("a") == 1 and c.queue.waiting_count() == 1
    clock.step(1.0)
    eventually(lambda: len(c.queue) == 1)
    c.queue.shut_down()


def test_requeue_after_waits_exactly_that_long_on_the_clock() -> None:
    clock = FakeClock()
    calls: list[str] = []

    def sync(key: str) -> Result | None:
        calls.append(key)
        return Result(requeue_after=10.0) if len(calls) == 1 else None

    c = make(sync, clock=clock)
    c.enqueue("a")
    assert c.process_next_work_item()
    assert c.queue.num_requeues("a") == 0  # a planned requeue is not a retry
    assert c.queue.waiting_count() == 1 and len(c.queue) == 0
    clock.step(9.99)
    time.sleep(0.02)  # give a wrongly early waiter the chance to fire (asserted absent below)
    assert len(c.queue) == 0
    clock.step(0.01)
    eventually(lambda: len(c.queue) == 1)
    assert c.process_next_work_item()
    assert calls == ["a", "a"]
    c.queue.shut_down()


def test_a_raising_sync_never_kills_the_single_worker() -> None:
    done: list[str] = []
    threads: set[str] = set()

    def sync(key: str) -> None:
        threads.add(threading.current_thread().name)
        if key.startswith("bad"):
            raise RuntimeError(f"{key} exploded")
        done.append(key)

    c = make(sync, max_retries=0)
    running = Running(c, workers=1)
    for i in range(20):
        c.enqueue(f"bad-{i}")
        c.enqueue(f"good-{i}")
    eventually(lambda: len(done) == 20)
    running.stop()
    assert done == [f"good-{i}" for i in range(20)]
    assert threads == {"test-worker-0"}  # the one worker survived every exception
    assert running.error is None


def test_a_crash_outside_the_reconciler_is_logged_and_the_worker_goes_on(
    caplog: pytest.LogCaptureFixture,
) -> None:
    done: list[str] = []
    garbage_calls = 0

    def sync(key: str) -> object:
        nonlocal garbage_calls
        if key == "garbage":
            garbage_calls += 1
            return "not a Result"  # breaks the loop's own handling of the result
        done.append(key)
        return None

    c = make(sync)
    running = Running(c, workers=1)
    with caplog.at_level(logging.ERROR):
        c.enqueue("garbage")
        c.enqueue("next")
        eventually(lambda: done == ["next"])
        c.enqueue("garbage")  # taken again: the crash marked it done, it is not stuck
        eventually(lambda: garbage_calls == 2)
    running.stop()
    assert any(r.getMessage().startswith("observed a crash: AttributeError")
               for r in caplog.records)


def test_workers_start_only_after_the_caches_sync() -> None:
    synced = threading.Event()
    seen: list[str] = []
    c = make(lambda key: seen.append(key), cache_synced=[synced.is_set])
    c.enqueue("a")
    running = Running(c, workers=2)
    time.sleep(0.05)  # a wrongly started worker would have taken "a" by now
    assert seen == []
    synced.set()
    eventually(lambda: seen == ["a"])
    running.stop()


def test_cache_sync_timeout_raises_and_shuts_the_queue() -> None:
    c = make(lambda key: None, cache_synced=[lambda: False], cache_sync_timeout=0.05)
    with pytest.raises(TimeoutError, match="caches did not sync"):
        c.run(1, threading.Event())
    assert c.queue.shutting_down()


def test_stop_before_sync_returns_quietly() -> None:
    c = make(lambda key: None, cache_synced=[lambda: False])
    stop = threading.Event()
    stop.set()
    c.run(1, stop)
    assert c.queue.shutting_down()


def test_run_checks_its_arguments_and_runs_once() -> None:
    c = make(lambda key: None)
    with pytest.raises(ValueError, match="at least 1"):
        c.run(0, threading.Event())
    stop = threading.Event()
    stop.set()
    c.run(1, stop)
    with pytest.raises(RuntimeError, match="already run"):
        c.run(1, stop)


def test_phased_shutdown_finishes_in_flight_and_queued_keys_under_load() -> None:
    lock = threading.Lock()
    counts: dict[str, int] = {}
    active = 0
    max_active = 0
    release = threading.Event()

    def sync(key: str) -> None:
        nonlocal active, max_active
        with lock:
            active += 1
            max_active = max(max_active, active)
        release.wait(5)
        with lock:
            counts[key] = counts.get(key, 0) + 1
            active -= 1

    c = make(sync)
    keys = [f"ns/k{i}" for i in range(3000)]
    running = Running(c, workers=16)

    def produce(part: list[str]) -> None:
        for key in part:
            c.enqueue(key)

    producers = [threading.Thread(target=produce, args=(keys[i::8],)) for i in range(8)]
    for p in producers:
        p.start()
    for p in producers:
        p.join(5)
    eventually(lambda: active == 16)  # every worker holds a key
    running.stop_event.set()
    eventually(c.queue.shutting_down)  # intake stopped ...
    c.enqueue("late")  # ... so this is ignored
    release.set()  # let the in-flight keys finish; the queued ones drain after them
    running.stop(timeout=20)
    assert running.error is None
    assert counts == dict.fromkeys(keys, 1)  # every key reconciled exactly once, none lost
    assert max_active == 16
    assert len(c.queue) == 0
    alive = [t for t in threading.enumerate() if t.name.startswith("test-worker-")]
    assert alive == []  # the workers were joined


def test_shutdown_timeout_bounds_a_stuck_worker(caplog: pytest.LogCaptureFixture) -> None:
    stuck = threading.Event()
    release = threading.Event()

    def sync(key: str) -> None:
        stuck.set()
        release.wait(5)

    c = make(sync, shutdown_timeout=0.1)
    c.enqueue("a")
    running = Running(c, workers=1)
    stuck.wait(5)
    with caplog.at_level(logging.ERROR):
        started = time.monotonic()
        running.stop(timeout=5)
        assert time.monotonic() - started < 2
    assert any("shutdown timed out" in r.getMessage() for r in caplog.records)
    release.set()


def test_controller_as_a_base_class() -> None:
    class Recording(Controller[str]):
        def __init__(self) -> None:
            super().__init__("sub")
            self.seen: list[str] = []

        def reconcile(self, key: str) -> Result | None:
            self.seen.append(key)
            return None

    c = Recording()
    c.enqueue("a")
    assert c.process_next_work_item()
    assert c.seen == ["a"] and c.reconciler is c
    c.queue.shut_down()
    with pytest.raises(TypeError, match=r"override Controller\.reconcile"):
        Controller("plain")
