"""The longest event-loop steps of the async client, informer and manager under load, by CPU.

Run: ``.venv/bin/python bench/event_loop_steps.py`` (about 1 min). The three loads are the
default suite's (``tests/rest/test_event_loop_aio.py``, ``tests/cache/test_event_loop_aio.py``,
``tests/controller/test_event_loop_async_manager.py``), against a test API server in a child
process seeded with 3,000 Foos: paged lists, 100 writes and five watches at once through the
async client; an informer factory syncing the Foos (pages of 500) while an async controller
reconciles every key and 200 Foos are created; an AsyncManager with leader election doing the
same. Each runs on a loop in debug mode with the heap frozen first (``gc.freeze()``, as a
latency-minded service does after start-up).

Every loop step (``Handle._run``: a callback or one step of a task) is timed by the thread's
CPU time, not the wall clock: on the shared machine the wall clock mostly measures the OS
preempting the process. Printed: the longest steps of each load, what ran them, and how many
steps took 10 ms or more. No step should come near 50 ms (asyncio's slow-callback threshold).
"""

from __future__ import annotations

import asyncio
import gc
import heapq
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from _common import REPO, print_load  # bench/ is on sys.path when this file is run

sys.path.insert(0, str(REPO))  # the loads are the tests'

from tests.cache.test_event_loop_aio import informer_and_controller
from tests.controller.test_event_loop_async_manager import manager_under_load
from tests.rest.test_event_loop_aio import load, server_process

TOP = 5
NOTED = 0.010  # steps of 10 ms CPU or more are counted


class StepTimes:
    """The CPU time of every loop step while installed: the ``TOP`` longest kept with what
    ran them, the ones over ``NOTED`` counted."""

    def __init__(self) -> None:
        self.longest: list[tuple[float, int, str]] = []
        self.noted = 0
        self.steps = 0
        self._run = asyncio.events.Handle._run

    def __enter__(self) -> StepTimes:
        run = self._run

        def timed_run(handle: asyncio.Handle) -> None:
            start = time.thread_time()
            try:
                run(handle)
            finally:
                spent = time.thread_time() - start
                self.steps += 1
                if spent >= NOTED:
                    self.noted += 1
                if len(self.longest) < TOP or spent > self.longest[0][0]:
                    entry = (spent, self.steps, _described(handle))
                    if len(self.longest) < TOP:
                        heapq.heappush(self.longest, entry)
                    else:
                        heapq.heapreplace(self.longest, entry)

        asyncio.events.Handle._run = timed_run  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: object) -> None:
        asyncio.events.Handle._run = self._run  # type: ignore[method-assign]


def _described(handle: asyncio.Handle) -> str:
    """The coroutine a task's step stopped in (the innermost one it awaits, and its line),
    else the callback. (A step that ended its task names the task's coroutine only.)"""
    owner = getattr(getattr(handle, "_callback", None), "__self__", None)
    if not isinstance(owner, asyncio.Task):
        return repr(handle)[:120]
    coro: Any = owner.get_coro()
    where = getattr(coro, "__qualname__", repr(coro))
    while coro is not None and getattr(coro, "cr_frame", None) is not None:
        where = f"{coro.__qualname__} line {coro.cr_frame.f_lineno}"
        coro = getattr(coro, "cr_await", None)
    return where


def measure(name: str, scenario: Callable[[str], Awaitable[Any]]) -> None:
    with server_process() as url:
        gc.collect()
        gc.freeze()
        try:
            with StepTimes() as times:
                asyncio.run(scenario(url), debug=True)  # type: ignore[arg-type]
        finally:
            gc.unfreeze()
    print(f"\n{name}: {times.steps:,} steps, {times.noted} of them >= {NOTED * 1000:.0f} ms CPU")
    for spent, _, what in sorted(times.longest, reverse=True):
        print(f"  {spent * 1000:6.1f} ms  {what}")


def main() -> None:
    print_load()
    measure("client: lists, writes, watches", load)
    measure("informer + controller", informer_and_controller)
    measure("manager", manager_under_load)
    print_load()


if __name__ == "__main__":
    main()
