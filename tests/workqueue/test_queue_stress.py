"""Many producers and workers: exclusivity, no lost adds, draining shutdown."""

from __future__ import annotations

import random
import sys
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from kgen_runtime.workqueue import (
    DelayingQueue,
    ItemExponentialFailureRateLimiter,
    Queue,
    RateLimitingQueue,
)
from tests.util._support import eventually

PRODUCERS = 8
WORKERS = 8
ADDS_PER_PRODUCER = 12_500  # 100k adds in all
KEYS = [f"ns-{i % 5}/obj-{i}" for i in range(300)]


@pytest.fixture(autouse=True)
def frequent_thread_switches() -> Iterator[None]:
    """Switch threads every few microseconds instead of every 5 ms, to force interleavings."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-5)
    yield
    sys.setswitchinterval(interval)


def run_producers_and_workers(
    q: Queue[str], add: Callable[[random.Random, str], None]
) -> None:
    """8 producers call ``add`` 100k times over 300 keys while 8 workers process; then drain.

    Asserts that no key is ever held by two workers and that every key was processed after
    its last add (each add bumps the key's version first; a processing records the version it
    sees when it starts).
    """
    lock = threading.Lock()
    added_version = dict.fromkeys(KEYS, 0)
    seen_version: dict[str, int] = {}
    in_flight: set[str] = set()
    violations: list[str] = []

    def produce(seed: int) -> None:
        rng = random.Random(seed)
        for _ in range(ADDS_PER_PRODUCER):
            key = rng.choice(KEYS)
            with lock:
                added_version[key] += 1
            add(rng, key)

    def work() -> None:
        while True:
            item, shutdown = q.get()
            if shutdown:
                return
            assert item is not None
            with lock:
                if item in in_flight:
                    violations.append(item)
                in_flight.add(item)
                seen_version[item] = added_version[item]
            time.sleep(0)  # let other threads run while this worker holds the item
            with lock:
                in_flight.discard(item)
            q.done(item)

    workers = [threading.Thread(target=work) for _ in range(WORKERS)]
    producers = [threading.Thread(target=produce, args=(i,)) for i in range(PRODUCERS)]
    for t in workers + producers:
        t.start()
    for t in producers:
        t.join(20)
    if isinstance(q, DelayingQueue):
        eventually(lambda: q.waiting_count() == 0)
    assert q.shut_down_with_drain(include_queued=True, timeout=20)
    for t in workers:
        t.join(5)
        assert not t.is_alive()

    assert violations == []
    assert sum(added_version.values()) == PRODUCERS * ADDS_PER_PRODUCER
    assert seen_version == {k: v for k, v in added_version.items() if v}
    assert len(q) == 0


def test_no_key_processed_concurrently_and_no_add_lost() -> None:
    q: Queue[str] = Queue()
    run_producers_and_workers(q, lambda rng, key: q.add(key))


def test_delayed_adds_under_contention_are_neither_lost_nor_concurrent() -> None:
    q: DelayingQueue[str] = DelayingQueue()

    def add(rng: random.Random, key: str) -> None:
        if rng.random() < 0.5:
            q.add_after(key, rng.random() * 0.003)
        else:
            q.add(key)

    run_producers_and_workers(q, add)


def test_rate_limited_retries_under_contention_end_in_success() -> None:
    """Workers fail each key a few times and retry through the limiter until it succeeds."""
    failures_wanted = 3
    # Not the default limiter: its 10 qps bucket would spread 600 retries over 50 s.
    q: RateLimitingQueue[int] = RateLimitingQueue(ItemExponentialFailureRateLimiter(0.001, 0.01))
    for key in range(200):
        q.add(key)
    attempts = dict.fromkeys(range(200), 0)
    succeeded: set[int] = set()
    lock = threading.Lock()
    all_done = threading.Event()

    def work() -> None:
        while True:
            item, shutdown = q.get()
            if shutdown:
                return
            assert item is not None
            with lock:
                attempts[item] += 1
                failed = attempts[item] <= failures_wanted
                if not failed:
                    succeeded.add(item)
                    if len(succeeded) == len(attempts):
                        all_done.set()
            if failed:
                q.add_rate_limited(item)
            else:
                q.forget(item)
            q.done(item)

    workers = [threading.Thread(target=work) for _ in range(WORKERS)]
    for t in workers:
        t.start()
    assert all_done.wait(20)
    q.shut_down()
    for t in workers:
        t.join(5)
    assert attempts == dict.fromkeys(range(200), failures_wanted + 1)
    assert all(q.num_requeues(k) == 0 for k in range(200))
