"""The fenced-counter test's checks (``_fence_check``) on hand-made logs: each catches the
violation it is there for, and passes what fencing allows."""

from __future__ import annotations

from typing import Any

import pytest

from tests.sharding._fence_check import Faults, check, intervals


def reconcile(replica: str, seq: int, start: int, end: int | None, *, read: int | None = None,
              outcome: str = "accepted", name: str = "cm") -> list[dict[str, Any]]:
    """The records of one reconcile of ``name``: start, read of counter ``read``, its write
    (unless a noop), and its end at ``end`` (none: it never ended)."""
    records: list[dict[str, Any]] = [{"e": "start", "r": replica, "seq": seq, "name": name,
                                      "t": start}]
    if read is not None:
        records.append({"e": "read", "r": replica, "seq": seq, "name": name, "t": start + 1,
                        "read_counter": read, "rv": "1"})
        if outcome != "noop":
            records.append({"e": "write", "r": replica, "seq": seq, "name": name,
                            "t": start + 2, "id": f"{replica}:{seq}"})
    if end is not None:
        records.append({"e": "end", "r": replica, "seq": seq, "name": name, "t": end,
                        "outcome": outcome})
    return records


def final(*writes: str) -> dict[str, dict[str, str]]:
    return {"cm": {"counter": str(len(writes)), "writes": ",".join(writes)}}


def test_a_chain_of_writes_in_turn_passes() -> None:
    records = (reconcile("a", 0, 10, 20, read=0) + reconcile("b", 0, 30, 40, read=1)
               + reconcile("a", 1, 50, 60, read=2, outcome="noop"))
    verdict = check(intervals(records, Faults()), final("a:0", "b:0"))
    assert (verdict.violations, verdict.overlaps, verdict.accepted) == ([], [], 2)


def test_overlapping_reconciles_without_a_fault_are_a_violation() -> None:
    records = reconcile("a", 0, 10, 30, read=0) + reconcile("b", 0, 20, 40, read=1)
    verdict = check(intervals(records, Faults()), final("a:0", "b:0"))
    assert verdict.violations == ["cm: a:0 and b:0 overlap and neither replica was faulted"]


def test_a_paused_replicas_stale_write_rejected_passes() -> None:
    faults = Faults()
    faults.paused("a", 15, 35)
    records = (reconcile("a", 0, 10, 40, read=0, outcome="conflict")
               + reconcile("b", 0, 20, 30, read=0))
    verdict = check(intervals(records, faults), final("b:0"))
    assert (verdict.violations, len(verdict.overlaps), verdict.stale_rejected) == ([], 1, 1)


def test_two_accepted_writes_from_one_read_are_a_violation_even_with_a_fault() -> None:
    faults = Faults()
    faults.paused("a", 15, 35)
    records = reconcile("a", 0, 10, 40, read=0) + reconcile("b", 0, 20, 30, read=0)
    verdict = check(intervals(records, faults), final("b:0", "a:0"))
    assert verdict.violations == [
        "cm: a:0 and b:0 overlap and both writes were accepted from counter 0",
        "cm: two accepted writes read one counter: [0, 0]",
    ]


def test_a_lost_or_unlogged_write_and_a_wrong_counter_are_violations() -> None:
    records = reconcile("a", 0, 10, 20, read=0) + reconcile("b", 0, 30, 40, read=1)
    lost = check(intervals(records, Faults()), final("b:0"))
    assert lost.violations == ["cm: accepted writes lost: ['a:0']"]
    unlogged = check(intervals(records, Faults()), final("a:0", "b:0", "c:9"))
    assert unlogged.violations == ["cm: writes no log accepted: ['c:9']"]
    miscounted = check(intervals(records, Faults()),
                       {"cm": {"counter": "1", "writes": "a:0,b:0"}})
    assert miscounted.violations == ["cm: counter 1 but 2 writes listed"]


def test_a_killed_replicas_open_reconcile_ends_at_the_kill_and_may_have_written() -> None:
    faults = Faults()
    faults.killed("a", 25)
    records = reconcile("a", 0, 10, None, read=0) + reconcile("b", 0, 30, 40, read=1)
    found = intervals(records, faults)
    assert [(i.key, i.end, i.outcome, i.faulted) for i in found] == [
        ("a:0", 25, "killed", True), ("b:0", 40, "accepted", False)]
    # Its PUT may have reached the server before the kill: listed, though never logged.
    assert check(found, final("a:0", "b:0")).violations == []


def test_an_open_reconcile_of_a_live_replica_is_an_error() -> None:
    with pytest.raises(AssertionError, match=r"reconcile a:0 of cm never ended"):
        intervals(reconcile("a", 0, 10, None, read=0), Faults())
