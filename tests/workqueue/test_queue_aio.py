"""AsyncQueue, AsyncDelayingQueue and AsyncRateLimitingQueue: the blocking queues' guarantees
on one event loop, cancellation included, plus a bounded stress test."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Awaitable, Callable
from typing import TypeVar

import pytest

from kgen_runtime.util.clock_aio import FakeAsyncClock
from kgen_runtime.workqueue import (
    AsyncDelayingQueue,
    AsyncQueue,
    AsyncRateLimitingQueue,
    ItemExponentialFailureRateLimiter,
)

BOUND = 10.0
R = TypeVar("R")


def run(main: Callable[[], Awaitable[R]]) -> R:
    """Run ``main`` on a new loop, bounded in time."""

    async def bounded() -> R:
        async with asyncio.timeout(BOUND):
            return await main()

    return asyncio.run(bounded())


async def settle() -> None:
    """Let every runnable task take its steps."""
    for _ in range(10):
        await asyncio.sleep(0)


def test_fifo_dedup_and_requeue_after_done() -> None:
    async def main() -> list[object]:
        queue: AsyncQueue[str] = AsyncQueue()
        for key in ("a", "b", "a", "c", "b"):
            queue.add(key)
        assert len(queue) == 3
        first = await queue.get()
        queue.add("a")  # re-added while processed: queued again only on done
        assert len(queue) == 2
        rest = [await queue.get(), await queue.get()]
        queue.done("a")
        again = await queue.get()
        return [first, *rest, again, len(queue)]

    assert run(main) == [("a", False), ("b", False), ("c", False), ("a", False), 0]


def test_done_of_an_item_not_processed_raises() -> None:
    async def main() -> None:
        queue: AsyncQueue[str] = AsyncQueue()
        with pytest.raises(ValueError, match="not being processed"):
            queue.done("x")

    run(main)


def test_getters_wait_and_are_served_in_order() -> None:
    async def main() -> list[tuple[int, object]]:
        queue: AsyncQueue[str] = AsyncQueue()
        served: list[tuple[int, object]] = []

        async def getter(index: int) -> None:
            served.append((index, (await queue.get())[0]))

        tasks = [asyncio.create_task(getter(i)) for i in range(3)]
        await settle()
        assert served == []
        for key in ("x", "y", "z"):
            queue.add(key)
        await asyncio.gather(*tasks)
        return served

    assert run(main) == [(0, "x"), (1, "y"), (2, "z")]


def test_get_timeout() -> None:
    async def main() -> None:
        queue: AsyncQueue[str] = AsyncQueue()
        with pytest.raises(TimeoutError):
            await queue.get(timeout=0.01)

    run(main)


def test_a_getter_cancelled_after_its_wake_up_hands_it_on() -> None:
    async def main() -> object:
        queue: AsyncQueue[str] = AsyncQueue()
        first = asyncio.create_task(queue.get())
        second = asyncio.create_task(queue.get())
        await settle()
        queue.add("x")  # wakes the first getter...
        first.cancel()  # ...which is cancelled before it runs
        with pytest.raises(asyncio.CancelledError):
            await first
        return await second

    assert run(main) == ("x", False)


def test_shutdown_hands_out_what_is_queued_then_reports_shutdown() -> None:
    async def main() -> list[object]:
        queue: AsyncQueue[str] = AsyncQueue()
        waiting = asyncio.create_task(queue.get())
        await settle()
        queue.add("a")
        got = await waiting
        queue.add("b")
        queue.shut_down()
        queue.add("c")  # ignored
        return [got, await queue.get(), await queue.get(), queue.shutting_down()]

    assert run(main) == [("a", False), ("b", False), (None, True), True]


def test_shutdown_wakes_every_waiting_getter() -> None:
    async def main() -> list[object]:
        queue: AsyncQueue[str] = AsyncQueue()
        getters = [asyncio.create_task(queue.get()) for _ in range(5)]
        await settle()
        queue.shut_down()
        return list(await asyncio.gather(*getters))

    assert run(main) == [(None, True)] * 5


def test_drain_waits_for_items_in_flight() -> None:
    async def main() -> list[object]:
        queue: AsyncQueue[str] = AsyncQueue()
        queue.add("a")
        queue.add("b")
        item, _ = await queue.get()
        assert item == "a"
        drain = asyncio.create_task(queue.shut_down_with_drain())
        await settle()
        assert not drain.done()
        queue.done("a")  # "b" is still queued: client-go's drain does not wait for it
        return [await drain, len(queue)]

    assert run(main) == [True, 1]


def test_drain_including_queued_items_and_its_timeout() -> None:
    async def main() -> list[object]:
        queue: AsyncQueue[str] = AsyncQueue()
        queue.add("a")
        timed_out = await queue.shut_down_with_drain(include_queued=True, timeout=0.01)
        item, _ = await queue.get()
        drain = asyncio.create_task(queue.shut_down_with_drain(include_queued=True))
        await settle()
        queue.done(item)
        return [timed_out, await drain]

    assert run(main) == [False, True]


def test_shut_down_during_a_drain_ends_it_undrained() -> None:
    async def main() -> bool:
        queue: AsyncQueue[str] = AsyncQueue()
        queue.add("a")
        await queue.get()
        drain = asyncio.create_task(queue.shut_down_with_drain())
        await settle()
        queue.shut_down()
        return await drain

    assert run(main) is False


def test_delaying_queue_adds_each_item_when_its_time_comes() -> None:
    async def main() -> list[object]:
        clock = FakeAsyncClock()
        queue: AsyncDelayingQueue[str] = AsyncDelayingQueue(clock=clock)
        queue.add_after("late", 3.0)
        queue.add_after("soon", 1.0)
        queue.add_after("late", 2.0)  # earlier than before: kept
        queue.add_after("soon", 5.0)  # later than before: ignored
        queue.add_after("now", 0.0)
        await clock.wait_for_sleepers(1)
        seen: list[object] = [len(queue), queue.waiting_count(), (await queue.get())[0]]
        clock.step(1.0)
        seen.append((await queue.get())[0])
        clock.step(1.0)
        seen.append((await queue.get())[0])
        queue.add_after("dropped", 1.0)
        queue.shut_down()
        clock.step(5.0)
        await settle()
        seen += [len(queue), (await queue.get())[1]]
        return seen

    assert run(main) == [1, 2, "now", "soon", "late", 0, True]


def test_rate_limited_retries_back_off_until_forgotten() -> None:
    async def main() -> tuple[list[float], int]:
        clock = FakeAsyncClock()
        limiter: ItemExponentialFailureRateLimiter[str] = ItemExponentialFailureRateLimiter(
            1.0, 100.0
        )
        queue: AsyncRateLimitingQueue[str] = AsyncRateLimitingQueue(limiter, clock=clock)
        for _ in range(3):
            queue.add_rate_limited("x")
            await clock.wait_for_sleepers(1)
            clock.step(100.0)
            item, _ = await queue.get()
            queue.done(item)
        requeues = queue.num_requeues("x")
        queue.forget("x")
        assert queue.num_requeues("x") == 0
        queue.shut_down()
        return [s for s in clock.sleeps if s > 0], requeues

    sleeps, requeues = run(main)
    assert sleeps == [1.0, 2.0, 4.0]
    assert requeues == 3


def test_a_cancelled_worker_leaves_nothing_in_processing() -> None:
    async def main() -> bool:
        queue: AsyncQueue[str] = AsyncQueue()
        started = asyncio.Event()

        async def worker() -> None:
            while True:
                item, shutdown = await queue.get()
                if shutdown:
                    return
                try:
                    started.set()
                    await asyncio.sleep(BOUND * 10)  # a reconcile that never finishes
                finally:
                    queue.done(item)

        task = asyncio.create_task(worker())
        queue.add("a")
        await started.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        queue.add("a")
        assert (await queue.get())[0] == "a"  # handed out again: it was not stuck
        queue.done("a")
        return await queue.shut_down_with_drain(timeout=BOUND)

    assert run(main) is True


def test_stress_many_workers_keep_every_guarantee() -> None:
    """50 workers, 500 keys, 20,000 adds from 10 producers while work is under way: no key is
    ever held by two workers, every key added after its processing began is processed again,
    and all of it finishes within the bound."""
    keys = [f"k{i}" for i in range(500)]

    async def main() -> tuple[int, int]:
        queue: AsyncRateLimitingQueue[str] = AsyncRateLimitingQueue(
            ItemExponentialFailureRateLimiter(0.0001, 0.001)
        )
        held: set[str] = set()
        last_add: dict[str, int] = {}
        last_start: dict[str, int] = {}
        tick = 0
        processed = 0

        async def producer(seed: int) -> None:
            nonlocal tick
            rng = random.Random(seed)
            for _ in range(2_000):
                key = rng.choice(keys)
                tick += 1
                last_add[key] = tick
                if rng.random() < 0.1:
                    queue.add_rate_limited(key)
                    last_add[key] = tick  # counted from the add, wherever it lands
                else:
                    queue.add(key)
                if rng.random() < 0.2:
                    await asyncio.sleep(0)

        async def worker() -> None:
            nonlocal tick, processed
            while True:
                key, shutdown = await queue.get()
                if shutdown or key is None:
                    return
                assert key not in held, f"{key} handed to two workers"
                held.add(key)
                tick += 1
                last_start[key] = tick
                try:
                    await asyncio.sleep(0)
                    processed += 1
                finally:
                    held.discard(key)
                    queue.forget(key)
                    queue.done(key)

        workers = [asyncio.create_task(worker()) for _ in range(50)]
        async with asyncio.TaskGroup() as producers:
            for seed in range(10):
                producers.create_task(producer(seed))
        while len(queue) or queue.waiting_count() or held:
            await asyncio.sleep(0.001)
        assert await queue.shut_down_with_drain(include_queued=True, timeout=BOUND)
        await asyncio.gather(*workers)
        stale = [k for k, added in last_add.items() if last_start.get(k, -1) < added]
        return processed, len(stale)

    processed, stale = run(main)
    assert stale == 0
    assert processed >= 500
