"""DelayingQueue on a fake clock: ready times, ordering, earlier-wins, shutdown."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kgen_runtime.util import FakeClock
from kgen_runtime.workqueue import DelayingQueue
from tests.util._support import eventually


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def queue(clock: FakeClock) -> Iterator[DelayingQueue[str]]:
    q: DelayingQueue[str] = DelayingQueue(clock=clock)
    assert clock.wait_for_sleepers(1)  # the waiter thread is parked with nothing to wait for
    yield q
    q.shut_down()
    q._waiter.join(5)


def drain(q: DelayingQueue[str]) -> list[str]:
    items = []
    while len(q):
        item, _ = q.get()
        assert item is not None
        items.append(item)
        q.done(item)
    return items


def test_item_appears_only_once_its_delay_has_passed(
    clock: FakeClock, queue: DelayingQueue[str]
) -> None:
    queue.add_after("a", 10)
    assert queue.waiting_count() == 1
    clock.step(9.999)
    assert clock.wait_for_sleepers(1)
    assert len(queue) == 0
    clock.step(0.001)
    eventually(lambda: len(queue) == 1)
    assert queue.waiting_count() == 0
    assert queue.get() == ("a", False)


def test_items_become_ready_in_ready_time_order(
    clock: FakeClock, queue: DelayingQueue[str]
) -> None:
    queue.add_after("late", 30)
    queue.add_after("early", 10)
    queue.add_after("middle", 20)
    clock.step(25)
    eventually(lambda: len(queue) == 2)
    assert drain(queue) == ["early", "middle"]
    clock.step(5)
    eventually(lambda: len(queue) == 1)
    assert drain(queue) == ["late"]


def test_readding_a_waiting_item_keeps_the_earlier_time(
    clock: FakeClock, queue: DelayingQueue[str]
) -> None:
    queue.add_after("a", 10)
    queue.add_after("a", 20)  # later: ignored
    queue.add_after("b", 10)
    queue.add_after("b", 5)  # sooner: wins and wakes the waiter early
    assert queue.waiting_count() == 2
    clock.step(5)
    eventually(lambda: len(queue) == 1)
    assert drain(queue) == ["b"]
    clock.step(5)
    eventually(lambda: len(queue) == 1)
    assert drain(queue) == ["a"]
    clock.step(100)  # the superseded entries fire nothing
    assert clock.wait_for_sleepers(1)
    assert len(queue) == 0 and queue.waiting_count() == 0


def test_sooner_item_wakes_a_waiter_sleeping_for_a_later_one(
    clock: FakeClock, queue: DelayingQueue[str]
) -> None:
    queue.add_after("later", 100)
    queue.add_after("sooner", 1)
    clock.step(1)
    eventually(lambda: len(queue) == 1)
    assert queue.get() == ("sooner", False)


def test_non_positive_delay_adds_at_once(queue: DelayingQueue[str]) -> None:
    queue.add_after("now", 0)
    queue.add_after("past", -1)
    assert queue.waiting_count() == 0
    assert drain(queue) == ["now", "past"]


def test_plain_add_of_a_waiting_item_queues_it_now_and_the_timer_dedups(
    clock: FakeClock, queue: DelayingQueue[str]
) -> None:
    queue.add_after("a", 10)
    queue.add("a")
    assert queue.get() == ("a", False)
    clock.step(10)
    eventually(lambda: queue.waiting_count() == 0)
    assert len(queue) == 0  # marked dirty while being processed
    queue.done("a")
    assert drain(queue) == ["a"]


def test_shutdown_stops_the_waiter_and_ignores_add_after(
    clock: FakeClock, queue: DelayingQueue[str]
) -> None:
    queue.add_after("a", 10)
    queue.shut_down()
    queue._waiter.join(5)
    assert not queue._waiter.is_alive()
    queue.add_after("b", 0)
    queue.add_after("c", 1)
    clock.step(10)
    assert len(queue) == 0
    assert queue.get() == (None, True)


def test_shutdown_with_drain_stops_the_waiter(
    clock: FakeClock, queue: DelayingQueue[str]
) -> None:
    queue.add_after("a", 10)
    assert queue.shut_down_with_drain()
    queue._waiter.join(5)
    assert not queue._waiter.is_alive()


def test_real_clock_short_delay() -> None:
    q: DelayingQueue[int] = DelayingQueue()
    try:
        q.add_after(1, 0.01)
        assert q.get(timeout=5) == (1, False)
    finally:
        q.shut_down()
