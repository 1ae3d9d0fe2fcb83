"""AsyncController: the worker loop's contract on one event loop, phased shutdown on
cancellation (a cancelled reconcile never leaves a key in the processing set), stress."""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable
from typing import Any

import pytest

from kgen_runtime.controller import AsyncController, AsyncReconcilerFunc, Result, TerminalError
from kgen_runtime.workqueue import ItemExponentialFailureRateLimiter

BOUND = 10.0
FAST: Callable[[], ItemExponentialFailureRateLimiter[str]] = lambda: (  # noqa: E731
    ItemExponentialFailureRateLimiter(0.001, 0.01)
)


def run(main: Callable[[], Any]) -> Any:
    async def bounded() -> Any:
        async with asyncio.timeout(BOUND * 2):
            return await main()

    return asyncio.run(bounded())


async def until(predicate: Callable[[], bool]) -> None:
    async with asyncio.timeout(BOUND):
        while not predicate():
            await asyncio.sleep(0.001)


async def stop(task: asyncio.Task[None]) -> None:
    """Cancel ``run`` and wait for its phased shutdown to finish."""
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task


def test_results_and_errors_follow_the_reconciler_contract() -> None:
    async def main() -> dict[str, int]:
        calls: dict[str, int] = {}

        async def reconcile(key: str) -> Result | None:
            calls[key] = calls.get(key, 0) + 1
            if key == "fails":
                raise RuntimeError("boom")
            if key == "terminal":
                raise TerminalError("bad spec")
            if key == "requeue" and calls[key] < 3:
                return Result(requeue=True)
            if key == "later" and calls[key] < 2:
                return Result(requeue_after=0.01)
            return None

        controller = AsyncController(
            "foos", AsyncReconcilerFunc(reconcile), rate_limiter=FAST(), max_retries=3
        )
        task = asyncio.create_task(controller.run(workers=2))
        for key in ("ok", "fails", "terminal", "requeue", "later"):
            controller.enqueue(key)
        await until(lambda: calls.get("fails") == 4 and calls.get("requeue") == 3)
        await until(lambda: calls.get("later") == 2)
        await until(lambda: not len(controller.queue) and not controller.queue.waiting_count())
        await stop(task)
        assert controller.queue.num_requeues("fails") == 0  # dropped: backoff forgotten
        return calls

    assert run(main) == {"ok": 1, "fails": 4, "terminal": 1, "requeue": 3, "later": 2}


def test_a_key_is_never_reconciled_twice_at_once_and_re_adds_are_not_lost() -> None:
    async def main() -> list[str]:
        events: list[str] = []
        entered = asyncio.Event()
        release = asyncio.Event()

        async def reconcile(key: str) -> None:
            events.append(f"start {key}")
            if len(events) == 1:
                entered.set()
                await release.wait()
            events.append(f"end {key}")

        controller = AsyncController("foos", AsyncReconcilerFunc(reconcile), rate_limiter=FAST())
        task = asyncio.create_task(controller.run(workers=4))
        controller.enqueue("a")
        await entered.wait()
        controller.enqueue("a")  # while "a" is being reconciled: once more afterwards
        controller.enqueue("a")
        await asyncio.sleep(0.01)
        release.set()
        await until(lambda: len(events) == 4)
        await stop(task)
        return events

    assert run(main) == ["start a", "end a", "start a", "end a"]


def test_workers_wait_for_the_caches() -> None:
    async def main() -> list[str]:
        synced = False
        seen: list[str] = []

        async def reconcile(key: str) -> None:
            seen.append(key)

        controller = AsyncController(
            "foos", AsyncReconcilerFunc(reconcile), cache_synced=[lambda: synced]
        )
        task = asyncio.create_task(controller.run(workers=1))
        controller.enqueue("a")
        await asyncio.sleep(0.05)
        assert seen == []
        synced = True
        await until(lambda: seen == ["a"])
        await stop(task)
        return seen

    assert run(main) == ["a"]


def test_cancelling_run_drains_queued_keys_first() -> None:
    async def main() -> list[str]:
        seen: list[str] = []
        gate = asyncio.Event()

        async def reconcile(key: str) -> None:
            await gate.wait()
            seen.append(key)

        controller = AsyncController("foos", AsyncReconcilerFunc(reconcile), shutdown_timeout=BOUND)
        task = asyncio.create_task(controller.run(workers=1))
        for key in ("a", "b", "c"):
            controller.enqueue(key)
        await asyncio.sleep(0.01)
        task.cancel()
        await asyncio.sleep(0.01)
        controller.enqueue("late")  # ignored: shutdown has begun
        gate.set()
        with pytest.raises(asyncio.CancelledError):
            await task
        return seen

    assert run(main) == ["a", "b", "c"]


def test_a_reconcile_cancelled_at_the_shutdown_bound_leaves_the_queue_clean() -> None:
    async def main() -> tuple[bool, list[str]]:
        log: list[str] = []
        started = asyncio.Event()

        async def reconcile(key: str) -> None:
            log.append("start")
            started.set()
            try:
                await asyncio.sleep(BOUND * 10)  # never finishes by itself
            except asyncio.CancelledError:
                log.append("cancelled")
                raise

        controller = AsyncController("foos", AsyncReconcilerFunc(reconcile), shutdown_timeout=0.05)
        task = asyncio.create_task(controller.run(workers=2))
        controller.enqueue("stuck")
        await started.wait()
        await stop(task)
        # Nothing is being processed any more: a drain returns at once, drained.
        return await controller.queue.shut_down_with_drain(timeout=0.01), log

    assert run(main) == (True, ["start", "cancelled"])


def test_stress_many_keys_many_workers_random_failures() -> None:
    """1,000 keys, 20 workers, a third of reconciles failing at random (retried forever),
    keys re-added while in flight: every key ends reconciled successfully after its last
    add, no key is ever in two workers, all within the bound."""
    keys = [f"k{i}" for i in range(1_000)]

    async def main() -> tuple[int, int]:
        rng = random.Random(3)
        in_flight: set[str] = set()
        last_add: dict[str, int] = {}
        last_success: dict[str, int] = {}
        tick = 0

        async def reconcile(key: str) -> None:
            nonlocal tick
            assert key not in in_flight
            in_flight.add(key)
            tick += 1
            began = tick
            try:
                await asyncio.sleep(0)
                if rng.random() < 0.33:
                    raise RuntimeError("transient")
                last_success[key] = began
            finally:
                in_flight.discard(key)

        controller = AsyncController(
            "stress", AsyncReconcilerFunc(reconcile), rate_limiter=FAST(), max_retries=None
        )
        task = asyncio.create_task(controller.run(workers=20))
        for _ in range(3):
            for key in rng.sample(keys, len(keys)):
                tick += 1
                last_add[key] = tick
                controller.enqueue(key)
            await asyncio.sleep(0)
        await until(
            lambda: all(last_success.get(k, -1) > last_add[k] for k in keys) and not in_flight
        )
        await stop(task)
        return len(last_success), tick

    successes, _ = run(main)
    assert successes == 1_000


def test_async_controller_as_a_base_class() -> None:
    """The twin of Controller's: a subclass's own ``reconcile`` is its reconciler."""

    class Recording(AsyncController[str]):
        def __init__(self) -> None:
            super().__init__("sub")
            self.seen: list[str] = []

        async def reconcile(self, key: str) -> Result | None:
            self.seen.append(key)
            return None

    async def main() -> None:
        c = Recording()
        c.enqueue("a")
        assert await c.process_next_work_item()
        assert c.seen == ["a"] and c.reconciler is c
        c.queue.shut_down()

    run(main)
    with pytest.raises(TypeError, match=r"override AsyncController\.reconcile"):
        AsyncController("plain")
