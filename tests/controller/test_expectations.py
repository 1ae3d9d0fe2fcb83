"""ControllerExpectations: raise, lower, satisfied, TTL expiry, concurrent observers."""

from __future__ import annotations

import logging
import threading

import pytest

from kgen_runtime.controller import (
    EXPECTATIONS_TIMEOUT,
    ControlleeExpectations,
    ControllerExpectations,
    UIDTrackingControllerExpectations,
)
from kgen_runtime.util import FakeClock


def test_unknown_keys_are_satisfied() -> None:
    e = ControllerExpectations()
    assert e.satisfied("ns/a")
    assert e.get("ns/a") is None


def test_creations_must_all_be_observed() -> None:
    clock = FakeClock()
    e = ControllerExpectations(clock=clock)
    e.expect_creations("k", 2)
    assert e.get("k") == ControlleeExpectations(2, 0, clock.now())
    assert not e.satisfied("k")
    e.creation_observed("k")
    assert not e.satisfied("k")
    e.creation_observed("k")
    assert e.satisfied("k")
    e.creation_observed("k")  # more than expected: still satisfied
    assert e.get("k") == ControlleeExpectations(-1, 0, clock.now())


def test_deletions_raise_and_lower() -> None:
    e = ControllerExpectations()
    e.expect_deletions("k", 1)
    e.raise_expectations("k", 2, 1)
    exp = e.get("k")
    assert exp is not None and (exp.add, exp.delete) == (2, 2)
    e.lower_expectations("k", 2, 1)
    assert not e.satisfied("k")
    e.deletion_observed("k")
    assert e.satisfied("k")


def test_adjusting_unknown_keys_does_nothing() -> None:
    e = ControllerExpectations()
    e.raise_expectations("k", 1, 1)
    e.creation_observed("k")
    e.deletion_observed("k")
    assert e.get("k") is None and e.satisfied("k")


def test_delete_forgets() -> None:
    e = ControllerExpectations()
    e.set("k", 3, 3)
    e.delete("k")
    e.delete("k")  # idempotent
    assert e.get("k") is None and e.satisfied("k")


def test_expectations_expire_after_the_ttl() -> None:
    clock = FakeClock()
    e = ControllerExpectations(clock=clock)
    assert e.ttl == EXPECTATIONS_TIMEOUT == 300.0
    e.expect_creations("k", 1)
    clock.step(150)
    e.raise_expectations("k", 1, 0)  # adjusting keeps the original timestamp
    clock.step(150)
    assert not e.satisfied("k")  # exactly at the TTL: not yet expired
    clock.step(0.001)
    assert e.satisfied("k")
    e.expect_creations("k", 1)  # setting again restarts the clock
    assert not e.satisfied("k")


def test_custom_ttl() -> None:
    clock = FakeClock()
    e = ControllerExpectations(ttl=1.0, clock=clock)
    e.expect_deletions("k", 1)
    clock.step(1.5)
    assert e.satisfied("k")


def test_concurrent_observers_lose_no_update() -> None:
    e = ControllerExpectations()
    keys = [f"ns/k{i}" for i in range(10)]
    for key in keys:
        e.set(key, 16 * 500, 16 * 500)
    start = threading.Barrier(16)

    def observer(n: int) -> None:
        start.wait(5)
        for i in range(500):
            key = keys[(n + i) % len(keys)]
            e.creation_observed(key)
            e.deletion_observed(key)
            e.satisfied(key)

    threads = [threading.Thread(target=observer, args=(n,)) for n in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    assert not any(t.is_alive() for t in threads)
    remaining = {k: e.get(k) for k in keys}
    total_add = sum(x.add for x in remaining.values() if x is not None)
    total_delete = sum(x.delete for x in remaining.values() if x is not None)
    assert total_add == total_delete == 10 * 16 * 500 - 16 * 500


def test_uid_tracking_lowers_once_per_child(caplog: pytest.LogCaptureFixture) -> None:
    e = UIDTrackingControllerExpectations()
    e.expect_deletions_of("rs", ["ns/p1", "ns/p2"])
    assert e.tracked("rs") == {"ns/p1", "ns/p2"}
    e.deletion_observed_of("rs", "ns/p1")  # the update that set deletionTimestamp
    e.deletion_observed_of("rs", "ns/p1")  # the final delete: not counted again
    e.deletion_observed_of("rs", "ns/other")  # never expected
    assert not e.satisfied("rs")
    exp = e.get("rs")
    assert exp is not None and exp.delete == 1
    e.deletion_observed_of("rs", "ns/p2")
    assert e.satisfied("rs") and e.tracked("rs") == frozenset()
    e.expect_deletions_of("rs", ["ns/p3"])  # all previous ones observed: allowed again
    with caplog.at_level(logging.ERROR):
        e.expect_deletions_of("rs", ["ns/p4"])  # p3 not observed yet: replaced, logged
    assert e.tracked("rs") == {"ns/p4"}
    assert [r.getMessage() for r in caplog.records] == [
        "clobbering existing delete keys of 'rs': ['ns/p3']"]
    e.delete("rs")
    assert e.get("rs") is None and e.tracked("rs") == frozenset()
    e.deletion_observed_of("rs", "ns/p3")  # after delete: ignored
