"""Work-queue throughput: kgen's Queue against two baselines without metrics.

Run: ``.venv/bin/python bench/workqueue.py`` (about 40 s; ``--quick``: a fifth of the items,
threaded runs best of 2). Every side does the same job per item: ``add`` (dropping the item
if it is already waiting), ``get``, ``done``. The baselines:

* ``queue.Queue+set``: what one would write without a work queue: a ``queue.Queue`` for FIFO
  and blocking, a ``threading.Lock``-protected ``set`` for dedup, ``task_done`` as ``done``.
* ``lean``: client-go's ``workqueue.Typed`` semantics with nothing else (issue 22): a deque,
  the dirty and processing sets and one ``threading.Condition``, so an item added while it is
  processed waits for its ``done`` — what kgen's queue does, minus metrics and clock reads.
  A check before the timing verifies those semantics. It enters its ``Condition`` and
  calls ``notify()`` on every add (client-go's ``Signal``); kgen's queue takes its lock
  directly and notifies only when a getter waits.

Runs are interleaved (collector paused): single-threaded ones best of 8 by CPU time (the same
work as wall time on one thread, and it moves far less with other work on the machine: wall
timings of ``--quick`` moved the ratios by ±0.5 at load 7), threaded ones best of 5 (quick:
2) by wall time; the queue with metrics records into a ``PrometheusMetricsProvider`` on its
own registry, and a check before the timing scrapes a registry to see that the numbers are
exact.
"""

from __future__ import annotations

import queue
import sys
import threading
from collections import deque
from collections.abc import Callable

from _common import best_times, print_load, report  # bench/ is on sys.path when this file is run
from prometheus_client import CollectorRegistry

from kgen_runtime.workqueue import PrometheusMetricsProvider, Queue

QUICK = "--quick" in sys.argv[1:]
BATCH = 1_000  # distinct keys added before they are drained, single-threaded
ROUNDS = 40 if QUICK else 200  # batches per timing: 200k items (40k quick)
THREADS = 4  # producers, and as many workers
PER_PRODUCER = 10_000 if QUICK else 50_000  # distinct keys added by each producer
REPEAT = 2 if QUICK else 5
SINGLE_REPEAT = 8  # single-threaded timings are short (~60 ms quick) and CPU-timed


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


class LeanQueue:
    """client-go's ``workqueue.Typed`` (queue.go) and nothing else: no metrics, no clock.

    ``dirty`` holds the items waiting (dedup), ``processing`` those between ``get`` and
    ``done``; an item added while processing goes back on the deque at its ``done``. After
    ``shut_down`` the waiting items still drain, then ``get`` reports the shutdown.
    """

    def __init__(self) -> None:
        self._cond = threading.Condition(threading.Lock())
        self._queue: deque[str] = deque()
        self._dirty: set[str] = set()
        self._processing: set[str] = set()
        self._shutting_down = False

    def add(self, item: str) -> None:
        with self._cond:
            if self._shutting_down or item in self._dirty:
                return
            self._dirty.add(item)
            if item in self._processing:
                return
            self._queue.append(item)
            self._cond.notify()

    def get(self) -> tuple[str | None, bool]:
        with self._cond:
            while not self._queue and not self._shutting_down:
                self._cond.wait()
            if not self._queue:
                return None, True
            item = self._queue.popleft()
            self._processing.add(item)
            self._dirty.discard(item)
            return item, False

    def done(self, item: str) -> None:
        with self._cond:
            self._processing.discard(item)
            if item in self._dirty:
                self._queue.append(item)
                self._cond.notify()

    def shut_down(self) -> None:
        with self._cond:
            self._shutting_down = True
            self._cond.notify_all()


def check_lean() -> None:
    """The lean queue keeps client-go's semantics: dedup, and no item in two workers."""
    q = LeanQueue()
    q.add("a")
    q.add("a")
    assert q.get() == ("a", False)
    q.add("a")  # while processing: waits for done
    q.add("b")
    assert q.get() == ("b", False)
    q.done("a")
    q.shut_down()
    assert q.get() == ("a", False)  # drained after the shutdown
    assert q.get() == (None, True)


KEYS = [f"namespace-{i % 7}/object-{i}" for i in range(BATCH)]
METRICS = PrometheusMetricsProvider(CollectorRegistry())


def single(q: Queue[str] | LeanQueue) -> None:
    """Add the batch, then drain it, ``ROUNDS`` times (kgen's queue or the lean one)."""
    add, get, done = q.add, q.get, q.done
    for _ in range(ROUNDS):
        for key in KEYS:
            add(key)
        for _ in KEYS:
            item, _shutdown = get()
            done(item)  # type: ignore[arg-type]


def single_kgen() -> None:
    single(Queue())


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
    single(Queue(name="bench", metrics_provider=METRICS))


def single_lean() -> None:
    single(LeanQueue())


def single_baseline() -> None:
    q = DedupBaseline()
    add, get, done = q.add, q.get, q.done
    for _ in range(ROUNDS):
        for key in KEYS:
            add(key)
        for _ in KEYS:
            item = get()
            done(item)  # type: ignore[arg-type]


Worker = tuple[Callable[[str], None], Callable[[], None], Callable[[], None]]
"""``add``, a worker loop, ``shut_down``: one side of the threaded run."""


def threaded(make_worker: Callable[[], Worker]) -> None:
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


def workers_over(q: Queue[str] | LeanQueue) -> Worker:
    """Workers over ``q``, kgen's queue or the lean one (the same add/get/done calls)."""

    def work() -> None:
        get, done = q.get, q.done
        while True:
            item, shutdown = get()
            if shutdown:
                return
            done(item)  # type: ignore[arg-type]

    return q.add, work, q.shut_down


def baseline_threaded() -> Worker:
    q = DedupBaseline()

    def work() -> None:
        get, done = q.get, q.done
        while (item := get()) is not None:
            done(item)

    return q.add, work, q.shut_down


def main() -> None:
    print_load()
    check_scrape()
    check_lean()
    items = BATCH * ROUNDS
    ours, with_metrics, base, lean = (
        items / seconds
        for seconds in best_times(
            single_kgen,
            single_kgen_with_metrics,
            single_baseline,
            single_lean,
            repeat=SINGLE_REPEAT,
            cpu=True,
        )
    )
    report("single thread add+get+done", "items", ours, base, "queue.Queue+set")
    report("  same, kgen with prometheus metrics", "items", with_metrics, base, "queue.Queue+set")
    print(f"  (target with metrics: >= 1.5x; metrics cost {ours / with_metrics - 1:.0%})")
    report("  kgen vs the lean client-go queue", "items", ours, lean, "lean")
    report("  kgen with metrics vs the lean queue", "items", with_metrics, lean, "lean")
    items = THREADS * PER_PRODUCER
    ours, with_metrics, base, lean = (
        items / seconds
        for seconds in best_times(
            lambda: threaded(lambda: workers_over(Queue())),
            lambda: threaded(
                lambda: workers_over(Queue(name="bench-threaded", metrics_provider=METRICS))
            ),
            lambda: threaded(baseline_threaded),
            lambda: threaded(lambda: workers_over(LeanQueue())),
            repeat=min(REPEAT, 3),
        )
    )
    title = f"{THREADS} producers + {THREADS} workers"
    report(title, "items", ours, base, "queue.Queue+set")
    report("  same, kgen with prometheus metrics", "items", with_metrics, base, "queue.Queue+set")
    report("  kgen vs the lean client-go queue", "items", ours, lean, "lean")
    report("  kgen with metrics vs the lean queue", "items", with_metrics, lean, "lean")
    print_load()


if __name__ == "__main__":
    main()
