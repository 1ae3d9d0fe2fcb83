"""Work-queue throughput: kgen's Queue against queue.Queue plus a lock-protected dedup set.

Run: ``.venv/bin/python bench/workqueue.py`` (about 20 s). Both sides do the same job per
item: ``add`` (dropping the item if it is already waiting), ``get``, ``done``. The baseline is
what one would write without a work queue: a ``queue.Queue`` for FIFO and blocking, a
``threading.Lock``-protected ``set`` for dedup, and ``task_done`` as the ``done``. Runs are
interleaved (best of 5, collector paused); the queue with metrics records into a
``PrometheusMetricsProvider`` on its own registry, and a check before the timing scrapes a
registry to see that the numbers are exact.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable

from _common import best_times, print_load, report  # bench/ is on sys.path when this file is run
from prometheus_client import CollectorRegistry

from kgen_runtime.workqueue import PrometheusMetricsProvider, Queue

BATCH = 1_000  # distinct keys added before they are drained, single-threaded
ROUNDS = 200  # batches per timing: 200k items
THREADS = 4  # producers, and as many workers
PER_PRODUCER = 50_000  # distinct keys added by each producer: 200k items


class DedupBaseline:
    """queue.Queue + a lock-protected set of waiting items: add/get/done with dedup."""

    def __init__(self) -> None:
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._lock = threading.Lock()
        self._waiting: set[str] = set()

    def add(self, item: str) -> None:
        with self._lock:
            if item in self._waiting:
                return
            self._waiting.add(item)
        self._queue.put(item)

    def get(self) -> str | None:
        item = self._queue.get()
        if item is not None:
            with self._lock:
                self._waiting.discard(item)
        return item

    def done(self, item: str) -> None:
        self._queue.task_done()

    def shut_down(self) -> None:
        for _ in range(THREADS):
            self._queue.put(None)


KEYS = [f"namespace-{i % 7}/object-{i}" for i in range(BATCH)]
METRICS = PrometheusMetricsProvider(CollectorRegistry())


def single_kgen() -> None:
    q: Queue[str] = Queue()
    add, get, done = q.add, q.get, q.done
    for _ in range(ROUNDS):
        for key in KEYS:
            add(key)
        for _ in KEYS:
            item, _shutdown = get()
            done(item)  # type: ignore[arg-type]


def check_scrape() -> None:
    """The provider's numbers after the runs: every item added, got and done exactly once."""
    registry = CollectorRegistry()
    provider = PrometheusMetricsProvider(registry)
    q: Queue[str] = Queue(name="check", metrics_provider=provider)
    for key in KEYS:
        q.add(key)
    for _ in KEYS:
        item, _shutdown = q.get()
        q.done(item)  # type: ignore[arg-type]
    labels = {"name": "check"}
    assert registry.get_sample_value("workqueue_adds_total", labels) == BATCH
    assert registry.get_sample_value("workqueue_depth", labels) == 0
    assert registry.get_sample_value("workqueue_work_duration_seconds_count", labels) == BATCH


def single_kgen_with_metrics() -> None:
    q: Queue[str] = Queue(name="bench", metrics_provider=METRICS)
    add, get, done = q.add, q.get, q.done
    for _ in range(ROUNDS):
        for key in KEYS:
            add(key)
        for _ in KEYS:
            item, _shutdown = get()
            done(item)  # type: ignore[arg-type]


def single_baseline() -> None:
    q = DedupBaseline()
    add, get, done = q.add, q.get, q.done
    for _ in range(ROUNDS):
        for key in KEYS:
            add(key)
        for _ in KEYS:
            item = get()
            done(item)  # type: ignore[arg-type]


def threaded(make_worker: Callable[[], tuple[Callable[[str], None], Callable[[], None],
                                             Callable[[], None]]]) -> None:
    """4 producers add distinct keys; 4 workers process until the queue is shut down."""
    add, work, shut_down = make_worker()
    keys = [[f"p{p}/k{i}" for i in range(PER_PRODUCER)] for p in range(THREADS)]

    def produce(mine: list[str]) -> None:
        for key in mine:
            add(key)

    producers = [threading.Thread(target=produce, args=(k,)) for k in keys]
    workers = [threading.Thread(target=work) for _ in range(THREADS)]
    for t in workers + producers:
        t.start()
    for t in producers:
        t.join()
    shut_down()
    for t in workers:
        t.join()


def kgen_threaded() -> tuple[Callable[[str], None], Callable[[], None], Callable[[], None]]:
    q: Queue[str] = Queue()

    def work() -> None:
        get, done = q.get, q.done
        while True:
            item, shutdown = get()
            if shutdown:
                return
            done(item)  # type: ignore[arg-type]

    return q.add, work, q.shut_down


def baseline_threaded() -> tuple[Callable[[str], None], Callable[[], None], Callable[[], None]]:
    q = DedupBaseline()

    def work() -> None:
        get, done = q.get, q.done
        while (item := get()) is not None:
            done(item)

    return q.add, work, q.shut_down


def main() -> None:
    print_load()
    check_scrape()
    items = BATCH * ROUNDS
    ours, with_metrics, base = (
        items / seconds
        for seconds in best_times(single_kgen, single_kgen_with_metrics, single_baseline)
    )
    report("single thread add+get+done", "items", ours, base, "queue.Queue+set")
    report("  same, kgen with prometheus metrics", "items", with_metrics, base, "queue.Queue+set")
    print(f"  (target with metrics: >= 1.5x; metrics cost {ours / with_metrics - 1:.0%})")
    items = THREADS * PER_PRODUCER
    ours, base = (
        items / seconds
        for seconds in best_times(
            lambda: threaded(kgen_threaded), lambda: threaded(baseline_threaded), repeat=3
        )
    )
    report(f"{THREADS} producers + {THREADS} workers", "items", ours, base, "queue.Queue+set")
    print_load()


if __name__ == "__main__":
    main()
