"""The fenced-counter test's verdicts, from the replicas' reconcile logs (see
``_fenced_replica``) and the faults the test injected; kept apart so a fast test can show each
check catches what it should.

A reconcile *interval* runs from just before the shard gate's ``begin`` to the reconcile's
``end`` record (for a killed replica's open reconcile, to the kill). It is *faulted* if its
replica was paused (SIGSTOP to SIGCONT) or killed during it. What fencing guarantees, and so
what :func:`check` demands:

* two replicas' intervals over one object overlap only if one of them is faulted: the gate
  starts a reconcile only while its member holds the object's range, and ranges move only
  after the previous holder released them or its Lease expired;
* a faulted reconcile can outlive its hold, and then only the resourceVersion precondition
  fences it: of two overlapping intervals, never two accepted writes that read the same
  counter (the stale one gets 409 Conflict);
* no lost update: the counter an object ends with is the number of writes it lists, those are
  every write the logs accepted (plus, perhaps, a killed replica's write whose answer it never
  logged), and no two accepted writes read the same counter.
"""

from __future__ import annotations

import json
import math
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass
class Interval:
    """One reconcile of one object by one replica."""

    replica: str
    seq: int
    name: str
    start: int
    end: float = math.inf  # monotonic ns; inf while open
    outcome: str = "open"
    read_counter: int | None = None
    write: str | None = None  # the id of the write it sent, if it sent one
    faulted: bool = False

    @property
    def key(self) -> str:
        return f"{self.replica}:{self.seq}"


@dataclass
class Faults:
    """When each replica was paused or killed: (from, to) in monotonic ns, ``inf`` for a
    kill."""

    windows: dict[str, list[tuple[int, float]]] = field(default_factory=lambda: defaultdict(list))

    def paused(self, replica: str, start: int, end: int) -> None:
        self.windows[replica].append((start, end))

    def killed(self, replica: str, at: int) -> None:
        self.windows[replica].append((at, math.inf))

    def kill_time(self, replica: str) -> int | None:
        return next((int(a) for a, b in self.windows.get(replica, ()) if b == math.inf), None)

    def during(self, interval: Interval) -> bool:
        return any(a <= interval.end and interval.start <= b
                   for a, b in self.windows.get(interval.replica, ()))


def read_log(path: Path) -> list[dict[str, Any]]:
    """A replica's records; a last line cut short by a kill is dropped."""
    records = []
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            records.append(json.loads(line))
        except json.JSONDecodeError:
            continue
    return records


def intervals(records: Iterable[dict[str, Any]], faults: Faults) -> list[Interval]:
    """The reconciles the records describe, in start order, each marked faulted or not."""
    found: dict[tuple[str, int], Interval] = {}
    for record in records:
        key = (record["r"], record["seq"])
        if record["e"] == "start":
            found[key] = Interval(record["r"], record["seq"], record["name"], record["t"])
            continue
        interval = found[key]
        if record["e"] == "read":
            interval.read_counter = record["read_counter"]
        elif record["e"] == "write":
            interval.write = record["id"]
        elif record["e"] == "end":
            interval.end, interval.outcome = record["t"], record["outcome"]
    for interval in found.values():
        if interval.outcome == "open":
            killed = faults.kill_time(interval.replica)
            if killed is None:
                raise AssertionError(f"reconcile {interval.key} of {interval.name} never "
                                     "ended, and its replica was not killed")
            interval.end, interval.outcome = killed, "killed"
        interval.faulted = faults.during(interval)
    return sorted(found.values(), key=lambda i: i.start)


@dataclass
class Verdict:
    """What the checks found; :attr:`violations` must be empty."""

    violations: list[str] = field(default_factory=list)
    overlaps: list[tuple[Interval, Interval]] = field(default_factory=list)
    stale_rejected: int = 0  # overlapping pairs where a faulted writer's stale write got 409
    accepted: int = 0


def check(found: list[Interval], final: Mapping[str, Mapping[str, str]]) -> Verdict:
    """Check the intervals against fencing's guarantees (module docstring); ``final`` maps each
    surviving object's name to its final ``data``."""
    verdict = Verdict()
    by_name: dict[str, list[Interval]] = defaultdict(list)
    for interval in found:
        by_name[interval.name].append(interval)
    for name, its in by_name.items():
        for i, a in enumerate(its):
            for b in its[i + 1:]:
                if b.start >= a.end:
                    break  # in start order: the rest start after a ended too
                if a.replica == b.replica:
                    continue
                verdict.overlaps.append((a, b))
                if not (a.faulted or b.faulted):
                    verdict.violations.append(
                        f"{name}: {a.key} and {b.key} overlap and neither replica was faulted")
                if {a.outcome, b.outcome} == {"accepted"} and a.read_counter == b.read_counter:
                    verdict.violations.append(
                        f"{name}: {a.key} and {b.key} overlap and both writes were accepted "
                        f"from counter {a.read_counter}")
                if "accepted" in (a.outcome, b.outcome) and "conflict" in (a.outcome, b.outcome):
                    stale = a if a.outcome == "conflict" else b
                    verdict.stale_rejected += stale.faulted
        accepted = [i for i in its if i.outcome == "accepted"]
        verdict.accepted += len(accepted)
        counters = sorted(i.read_counter or 0 for i in accepted)
        if len(set(counters)) != len(counters):
            verdict.violations.append(f"{name}: two accepted writes read one counter: {counters}")
        if name not in final:
            continue
        data = final[name]
        writes = [w for w in data.get("writes", "").split(",") if w]
        if int(data.get("counter", "0")) != len(writes):
            verdict.violations.append(
                f"{name}: counter {data.get('counter')} but {len(writes)} writes listed")
        accepted_ids = {i.write for i in accepted}
        unanswered = {i.write for i in its if i.outcome in ("killed", "error") and i.write}
        if missing := accepted_ids - set(writes):
            verdict.violations.append(f"{name}: accepted writes lost: {sorted(missing)}")
        if unknown := set(writes) - accepted_ids - unanswered:
            verdict.violations.append(f"{name}: writes no log accepted: {sorted(unknown)}")
    return verdict
