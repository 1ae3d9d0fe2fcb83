"""Test helpers shared by the util and workqueue tests."""

from __future__ import annotations

import threading
from collections.abc import Callable

from kgen_runtime.util import poll_until


class RecordingClock:
    """A Clock whose sleeps return at once, advancing time and recording each duration.

    For code that sleeps in the calling thread (retries, backoff): the test sees the exact
    delays without waiting for them.
    """

    def __init__(self) -> None:
        self.time = 0.0
        self.sleeps: list[float] = []

    def now(self) -> float:
        return self.time

    def wait_until(self, cond: threading.Condition, deadline: float | None) -> None:
        raise AssertionError("not used by the code under test")

    def sleep(self, stop: threading.Event, seconds: float) -> bool:
        self.sleeps.append(seconds)
        self.time += max(seconds, 0.0)
        return stop.is_set()


def eventually(condition: Callable[[], bool], timeout: float = 5.0) -> None:
    """Wait (real time, checking every millisecond) until ``condition()`` holds."""
    poll_until(condition, 0.001, timeout=timeout, immediate=True)
