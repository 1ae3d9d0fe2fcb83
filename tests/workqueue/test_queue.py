"""Queue: the dirty/processing dance, FIFO, shutdown, draining, timeouts."""

from __future__ import annotations

import threading

import pytest

from kgen_runtime.util import FakeClock
from kgen_runtime.workqueue import Queue
from tests.util._support import eventually


def test_fifo_among_distinct_items() -> None:
    q: Queue[str] = Queue()
    for key in ["c", "a", "b"]:
        q.add(key)
    assert len(q) == 3
    assert [q.get() for _ in range(3)] == [("c", False), ("a", False), ("b", False)]
    assert len(q) == 0


def test_dirty_processing_dance_item_by_item() -> None:
    q: Queue[str] = Queue()
    q.add("a")
    q.add("a")  # already waiting: a no-op
    assert len(q) == 1

    assert q.get() == ("a", False)
    assert len(q) == 0
    q.add("a")  # being processed: marked dirty, not queued
    assert len(q) == 0
    q.add("a")  # dirty already: still nothing
    assert len(q) == 0

    q.add("b")
    assert q.get() == ("b", False)  # a is not handed out while a worker holds it

    q.done("a")  # dirty while processing: queued again, exactly once
    assert len(q) == 1
    assert q.get() == ("a", False)
    q.done("a")
    q.done("b")
    assert len(q) == 0
    q.add("a")  # after done, a fresh add queues again
    assert q.get() == ("a", False)


def test_done_of_an_item_not_being_processed_raises() -> None:
    q: Queue[str] = Queue()
    q.add("a")
    with pytest.raises(ValueError, match=r"done\('a'\)"):
        q.done("a")
    assert q.get() == ("a", False)
    q.done("a")
    with pytest.raises(ValueError):
        q.done("a")


def test_readd_after_done_keeps_fifo_position_at_the_back() -> None:
    q: Queue[int] = Queue()
    q.add(1)
    assert q.get() == (1, False)
    q.add(1)
    q.add(2)
    q.done(1)  # 1 re-queued behind 2, which was added while 1 was processing
    assert [q.get(), q.get()] == [(2, False), (1, False)]


def test_shutdown_ignores_adds_and_hands_out_what_is_queued() -> None:
    q: Queue[str] = Queue()
    q.add("a")
    q.add("b")
    assert not q.shutting_down()
    q.shut_down()
    assert q.shutting_down()
    q.add("c")
    assert q.get() == ("a", False)
    assert q.get() == ("b", False)
    assert q.get() == (None, True)
    assert q.get(timeout=0) == (None, True)


def test_shutdown_requeues_dirty_item_on_done() -> None:
    q: Queue[str] = Queue()
    q.add("a")
    assert q.get() == ("a", False)
    q.add("a")
    q.shut_down()
    q.done("a")
    assert q.get() == ("a", False)
    q.done("a")
    assert q.get() == (None, True)


def test_shutdown_wakes_every_blocked_getter() -> None:
    q: Queue[str] = Queue()
    results: list[object] = []
    threads = [threading.Thread(target=lambda: results.append(q.get())) for _ in range(8)]
    for t in threads:
        t.start()
    eventually(lambda: q._getters == 8)
    q.shut_down()
    for t in threads:
        t.join(5)
    assert results == [(None, True)] * 8


def test_blocked_getter_receives_added_item() -> None:
    q: Queue[str] = Queue()
    got: list[object] = []
    t = threading.Thread(target=lambda: got.append(q.get()))
    t.start()
    eventually(lambda: q._getters == 1)
    q.add("x")
    t.join(5)
    assert got == [("x", False)]


def test_get_timeout_uses_the_clock() -> None:
    clock = FakeClock()
    q: Queue[str] = Queue(clock=clock)
    errors: list[BaseException] = []

    def get() -> None:
        try:
            q.get(timeout=10)
        except TimeoutError as err:
            errors.append(err)

    t = threading.Thread(target=get)
    t.start()
    assert clock.wait_for_sleepers(1)
    clock.step(9.5)
    assert clock.wait_for_sleepers(1)
    assert t.is_alive()
    clock.step(0.5)
    t.join(5)
    assert [str(e) for e in errors] == ["no work item within 10 s"]
    assert q._getters == 0


def test_get_timeout_zero_on_empty_queue_raises_at_once() -> None:
    q: Queue[str] = Queue(clock=FakeClock())
    with pytest.raises(TimeoutError):
        q.get(timeout=0)


def test_drain_waits_for_items_in_flight_only() -> None:
    q: Queue[str] = Queue()
    for key in "abc":
        q.add(key)
    assert q.get() == ("a", False)
    finished = threading.Event()
    result: list[bool] = []

    def drain() -> None:
        result.append(q.shut_down_with_drain())
        finished.set()

    t = threading.Thread(target=drain)
    t.start()
    eventually(q.shutting_down)
    assert not finished.wait(0.05)  # "a" is still held by a worker
    q.add("d")  # ignored: shutting down
    q.done("a")
    t.join(5)
    assert result == [True]
    assert [q.get(), q.get(), q.get()] == [("b", False), ("c", False), (None, True)]


def test_drain_with_include_queued_waits_for_queued_items_too() -> None:
    q: Queue[int] = Queue()
    for i in range(5):
        q.add(i)
    result: list[bool] = []
    drainer = threading.Thread(target=lambda: result.append(
        q.shut_down_with_drain(include_queued=True)))
    drainer.start()
    eventually(q.shutting_down)
    processed = []
    while True:
        item, shutdown = q.get()
        if shutdown:
            break
        assert not result  # the drainer waits while anything is queued or in flight
        processed.append(item)
        q.done(item)  # type: ignore[arg-type]
    drainer.join(5)
    assert processed == [0, 1, 2, 3, 4]
    assert result == [True]


def test_drain_returns_false_on_timeout() -> None:
    clock = FakeClock()
    q: Queue[str] = Queue(clock=clock)
    q.add("a")
    assert q.get() == ("a", False)
    result: list[bool] = []
    t = threading.Thread(target=lambda: result.append(q.shut_down_with_drain(timeout=30)))
    t.start()
    assert clock.wait_for_sleepers(1)
    clock.step(30)
    t.join(5)
    assert result == [False]
    q.done("a")  # still allowed after giving up


def test_shut_down_cuts_a_drain_short() -> None:
    q: Queue[str] = Queue()
    q.add("a")
    assert q.get() == ("a", False)
    result: list[bool] = []
    t = threading.Thread(target=lambda: result.append(q.shut_down_with_drain()))
    t.start()
    eventually(q.shutting_down)
    q.shut_down()
    t.join(5)
    assert result == [False]


def test_drain_of_idle_queue_returns_at_once() -> None:
    q: Queue[str] = Queue()
    assert q.shut_down_with_drain(include_queued=True) is True
