"""Optimistic concurrency under contention: many threads, one object, no lost writes."""

from __future__ import annotations

import threading
from collections.abc import Callable

from foo_api.samplecontroller.v1alpha1 import Foo

from kgen_runtime.rest.errors import AlreadyExistsError
from kgen_runtime.util.retry import retry_on_conflict
from kgen_runtime.util.wait import Backoff
from tests.conformance._backends import BOUND, Backend
from tests.conformance._foos import foo

THREADS = 8
INCREMENTS = 5
#: Contention among 8 writers: retry promptly and often, with jitter to break lockstep.
CONTENDED = Backoff(duration=0.002, factor=1.0, jitter=1.0, steps=200)


def run_together(count: int, work: Callable[[int], None]) -> list[BaseException]:
    """Run ``work(i)`` in ``count`` threads released at once; return what they raised."""
    barrier = threading.Barrier(count)
    failures: list[BaseException] = []

    def body(index: int) -> None:
        try:
            barrier.wait(BOUND)
            work(index)
        except BaseException as error:  # collected for the assertion in the test
            failures.append(error)

    threads = [threading.Thread(target=body, args=(i,), daemon=True) for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(BOUND * 3)
    assert not any(thread.is_alive() for thread in threads), "a writer is stuck"
    return failures


def test_concurrent_read_modify_write_loses_no_update(backend: Backend) -> None:
    backend.foos.create(foo("a"))
    written: list[Foo] = []
    lock = threading.Lock()

    def bump() -> Foo:
        current = backend.foos.get("a")
        annotations = dict(current.metadata.annotations or {})
        annotations["count"] = str(int(annotations.get("count", "0")) + 1)
        current.metadata.annotations = annotations
        return backend.foos.update(current)  # Conflict if another writer came first

    def work(_: int) -> None:
        for _ in range(INCREMENTS):
            updated = retry_on_conflict(CONTENDED, bump)
            with lock:
                written.append(updated)

    assert run_together(THREADS, work) == []

    final = backend.foos.get("a")
    assert (final.metadata.annotations or {})["count"] == str(THREADS * INCREMENTS)
    counts = sorted(int((obj.metadata.annotations or {})["count"]) for obj in written)
    assert counts == list(range(1, THREADS * INCREMENTS + 1))
    assert len({obj.metadata.resource_version for obj in written}) == THREADS * INCREMENTS


def test_concurrent_creates_of_one_name_have_one_winner(backend: Backend) -> None:
    winners: list[Foo] = []

    def work(index: int) -> None:
        winners.append(backend.foos.create(foo("a", 1 + index % 10)))

    failures = run_together(THREADS * 2, work)

    assert len(winners) == 1
    assert len(failures) == THREADS * 2 - 1
    assert [e for e in failures if not isinstance(e, AlreadyExistsError)] == []
    assert backend.foos.get("a").metadata.uid == winners[0].metadata.uid
