"""The controller worker loop on these pieces: a crashing sync never stops the workers."""

from __future__ import annotations

import threading

from kgen_runtime.util import until
from kgen_runtime.workqueue import ItemExponentialFailureRateLimiter, RateLimitingQueue
from tests.util._support import eventually


def test_workers_survive_crashes_and_retry_failures() -> None:
    q: RateLimitingQueue[str] = RateLimitingQueue(ItemExponentialFailureRateLimiter(0.001, 0.01))
    lock = threading.Lock()
    attempts: dict[str, int] = {}
    synced: set[str] = set()

    def sync(key: str) -> None:
        with lock:
            attempts[key] = attempts.get(key, 0) + 1
            n = attempts[key]
        if key.startswith("crash") and n == 1:
            raise RuntimeError(f"{key} crashed the worker")  # escapes the worker function
        if key.startswith("fail") and n <= 2:
            raise ValueError(f"{key} failed")  # handled: retried with backoff
        with lock:
            synced.add(key)

    def process_next_item() -> bool:
        item, shutdown = q.get()
        if shutdown:
            return False
        assert item is not None
        try:
            try:
                sync(item)
            except ValueError:
                q.add_rate_limited(item)
                return True
            except RuntimeError:
                q.add(item)  # retried, but the exception still ends this worker function
                raise
            q.forget(item)
            return True
        finally:
            q.done(item)

    def run_worker() -> None:
        while process_next_item():
            pass

    keys = [f"ok-{i}" for i in range(50)] + [f"crash-{i}" for i in range(5)] + [
        f"fail-{i}" for i in range(5)
    ]
    for key in keys:
        q.add(key)
    stop = threading.Event()
    workers = [threading.Thread(target=until, args=(run_worker, 0.001, stop)) for _ in range(4)]
    for t in workers:
        t.start()
    try:
        eventually(lambda: len(synced) == len(keys))
    finally:
        q.shut_down()
        stop.set()
        for t in workers:
            t.join(5)
    assert synced == set(keys)
    assert {k: n for k, n in attempts.items() if n > 1} == {
        **{f"crash-{i}": 2 for i in range(5)},
        **{f"fail-{i}": 3 for i in range(5)},
    }
    assert all(q.num_requeues(k) == 0 for k in keys)
    assert not any(t.is_alive() for t in workers)
