"""Sharded controllers under faults (issue 21, "proof under faults"): three replica processes
(``_fenced_replica``), each a sharded Manager, against a test API server in a process of its
own, while a driver creates, changes and deletes ConfigMaps. One replica is killed in the
middle of a reconcile and replaced, one is paused in the middle of a reconcile for longer than
its Lease lasts and then resumed, and a fourth joins. Then, from the replicas' reconcile logs
(``_fence_check``):

(a) no two replicas' reconciles of one object overlap unless one replica was paused or killed
    during its reconcile, and of two overlapping reconciles never both wrote from the same
    read (the paused replica's stale write gets 409 Conflict: this test makes it happen);
(b) no update is lost: each object's counter is the number of writes it lists, which are the
    writes the logs accepted;
(c) every surviving object converges to its last spec, and deleted objects stay deleted;
(d) the ring settles on the live replicas, every range is owned: objects created afterwards
    are each reconciled by the replica whose share holds their hash.
"""

from __future__ import annotations

import itertools
import os
import random
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from kgen_runtime.api.clientset import Clientset
from kgen_runtime.api.core.v1 import ConfigMap, Namespace
from kgen_runtime.meta import ObjectMeta
from kgen_runtime.rest import ListOptions
from kgen_runtime.rest.errors import ConflictError, NotFoundError
from kgen_runtime.sharding import (
    HASH_SPACE,
    HELD_ANNOTATION,
    RING_LABEL,
    HashRange,
    HashRing,
    fnv1a64,
)
from kgen_runtime.sharding._coordinator import parse_held
from kgen_runtime.shardranges import merge
from kgen_runtime.testing import TestAPIServerProcess
from kgen_runtime.util.wait import WaitTimeoutError, poll_until
from tests.sharding._fence_check import Faults, check, intervals, read_log
from tests.sharding._fenced_replica import LEASE_NAMESPACE, NS, RING

ROOT = Path(__file__).resolve().parents[2]
WAIT = 60.0  # seconds any one condition may take (replica start-up, Lease expiry, relists)
PACE = 0.05  # seconds between the driver's operations
INITIAL = 30  # objects before the replicas start
LATE = 20  # objects created once the ring has settled after the faults


class Replica:
    """One replica process: member ``name`` of the ring; ``label`` (``name`` unless a process
    of that name ran before) names its log records, its log and its output in
    ``directory``."""

    def __init__(self, url: str, name: str, directory: Path, label: str | None = None) -> None:
        self.name = name
        self.label = label or name
        self.log = directory / f"{self.label}.jsonl"
        self._output = open(directory / f"{self.label}.out", "wb")  # noqa: SIM115 (in stop)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.sharding._fenced_replica", url, name, str(self.log),
             self.label], cwd=ROOT, stdin=subprocess.PIPE, stdout=self._output,
            stderr=subprocess.STDOUT)
        self._paused_at: int | None = None

    def records(self) -> list[dict[str, Any]]:
        return read_log(self.log) if self.log.exists() else []

    def kill(self, faults: Faults) -> None:
        faults.killed(self.label, time.monotonic_ns())
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(WAIT)

    def pause(self) -> None:
        self._paused_at = time.monotonic_ns()
        self.process.send_signal(signal.SIGSTOP)

    def resume(self, faults: Faults) -> None:
        assert self._paused_at is not None
        self.process.send_signal(signal.SIGCONT)
        faults.paused(self.label, self._paused_at, time.monotonic_ns())
        self._paused_at = None

    def stop(self) -> None:
        """Stop gracefully (SIGTERM: the member leaves the ring), killing it if it hangs."""
        if self.process.poll() is None:
            if self._paused_at is not None:
                self.process.send_signal(signal.SIGCONT)
            self.process.terminate()
            try:
                self.process.wait(WAIT)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(WAIT)
        assert self.process.stdin is not None
        self.process.stdin.close()
        self._output.close()


class Driver(threading.Thread):
    """Creates, changes and deletes ConfigMaps in NS every PACE seconds until stopped;
    remembers each live object's last spec and the deleted ones."""

    def __init__(self, clients: Clientset, seed: int) -> None:
        super().__init__(name="driver", daemon=True)
        self.configmaps = clients.core_v1.configmaps(NS)
        self.random = random.Random(seed)
        self.lock = threading.Lock()
        self.spec: dict[str, int] = {}
        self.uids: dict[str, str] = {}
        self.deleted: set[str] = set()
        self.slow: set[str] = set()  # the fault scenarios' objects: never deleted
        self.names = itertools.count()
        self.halt = threading.Event()
        self.error: BaseException | None = None

    def create(self, *, slow: bool = False) -> str:
        with self.lock:
            name = f"cm-{next(self.names):04}"
        data = {"spec": "1", **({"slow": "1"} if slow else {})}
        made = self.configmaps.create(ConfigMap(metadata=ObjectMeta(name=name), data=data))
        assert made.metadata is not None and made.metadata.uid
        with self.lock:
            self.spec[name], self.uids[name] = 1, made.metadata.uid
            if slow:
                self.slow.add(name)
        return name

    def change(self, name: str) -> None:
        for _ in range(100):  # retried on conflicts with the replicas' writes
            cm = self.configmaps.get(name)
            data = dict(cm.data or {})
            spec = int(data["spec"]) + 1
            data["spec"] = str(spec)
            try:
                self.configmaps.update(cm.model_copy(update={"data": data}))
            except ConflictError:
                continue
            with self.lock:
                self.spec[name] = spec
            return
        raise AssertionError(f"{name}: 100 conflicts in a row")

    def delete(self, name: str) -> None:
        with self.lock:
            del self.spec[name]
            self.deleted.add(name)
        self.configmaps.delete(name)

    def run(self) -> None:
        try:
            while not self.halt.wait(PACE):
                with self.lock:
                    live = sorted(self.spec)
                    deletable = sorted(set(live) - self.slow)
                roll = self.random.random()
                if roll < 0.7 and live:
                    self.change(self.random.choice(live))
                elif roll < 0.85 or len(deletable) < 10:
                    self.create()
                else:
                    self.delete(self.random.choice(deletable))
        except BaseException as err:  # reported by the test
            self.error = err

    def finish(self) -> None:
        self.halt.set()
        self.join(WAIT)
        assert not self.is_alive()
        if self.error is not None:
            raise self.error


@pytest.fixture
def replicas() -> Iterator[list[Replica]]:
    """Every replica the test starts; all stopped (or killed) at the end."""
    started: list[Replica] = []
    try:
        yield started
    finally:
        for replica in started:
            replica.stop()


def open_reconciles(replica: Replica, name: str) -> set[int]:
    """The reconciles of ``name`` the replica has read for and not yet ended or written."""
    reading: set[int] = set()
    for record in replica.records():
        if record.get("name") != name:
            continue
        if record["e"] == "read":
            reading.add(record["seq"])
        elif record["e"] in ("write", "end"):
            reading.discard(record["seq"])
    return reading


def catch_mid_reconcile(driver: Driver, live: list[Replica]) -> tuple[Replica, str, int]:
    """Create a slow object and return the replica that reconciles it, caught (paused) after
    its read and before its write, with the object's name and the reconcile's seq. Tries new
    objects until a pause lands in that window."""
    for _ in range(10):
        name = driver.create(slow=True)
        caught: list[tuple[Replica, int]] = []

        def reading(name: str = name, caught: list[tuple[Replica, int]] = caught) -> bool:
            for replica in live:
                if seqs := open_reconciles(replica, name):
                    caught.append((replica, min(seqs)))
                    return True
            return False

        wait_for(f"a replica reads {name}", reading, 0.005)
        replica, seq = caught[0]
        replica.pause()
        if seq in open_reconciles(replica, name):  # its log is final while it is stopped
            return replica, name, seq
        replica.resume(Faults())  # too late: not a fault worth recording; try again
    raise AssertionError("never caught a replica between its read and its write")


def written_by_another(live: list[Replica], victim: Replica, name: str) -> bool:
    return any(record["e"] == "end" and record["name"] == name
               and record["outcome"] == "accepted"
               for replica in live if replica is not victim for record in replica.records())


def ring_claims(clients: Clientset) -> dict[str, str]:
    """The ring's Leases: each member's claims (its held annotation)."""
    leases = clients.coordination_v1.leases(LEASE_NAMESPACE).list(
        ListOptions(label_selector=f"{RING_LABEL}={RING}")).items
    return {lease.metadata.name or "": (lease.metadata.annotations or {}).get(HELD_ANNOTATION, "")
            for lease in leases if lease.metadata is not None}


def ring_settled(clients: Clientset, members: set[str]) -> bool:
    """Each of ``members`` claims exactly its share of the ring of ``members``."""
    claims = ring_claims(clients)
    ring = HashRing(members)
    return members <= set(claims) and all(
        parse_held(claims[name], name) == ring.ranges_of(name) for name in members)


def unconverged(clients: Clientset, driver: Driver) -> dict[str, object]:
    """The objects not (yet) as the driver left them and reconciled: each with its data."""
    listed = {cm.metadata.name: dict(cm.data or {})
              for cm in clients.core_v1.configmaps(NS).list().items if cm.metadata}
    with driver.lock:
        expected = dict(driver.spec)
    return {name: listed.get(name, "missing") for name in sorted(set(listed) | set(expected))
            if name not in expected or name not in listed
            or not listed[name].get("observed") == listed[name].get("spec") == str(expected[name])}


def wait_for(what: str, condition: Callable[[], bool], interval: float = 0.1,
             detail: Callable[[], object] = lambda: "") -> None:
    """poll_until ``condition`` for at most WAIT seconds; the failure names ``what`` and
    ``detail()``."""
    try:
        poll_until(condition, interval, WAIT, immediate=True)
    except WaitTimeoutError:
        raise AssertionError(f"not within {WAIT} s: {what} {detail()}") from None


def run_with_faults(clients: Clientset, url: str, replicas: list[Replica], directory: Path,
                    seed: int, restart: str) -> None:
    faults = Faults()
    driver = Driver(clients, seed)
    for _ in range(INITIAL):
        driver.create()
    live = [Replica(url, f"r{i}", directory) for i in range(3)]
    replicas.extend(live)
    wait_for("the ring settles on r0-r2", lambda: ring_settled(clients, {r.name for r in live}),
             detail=lambda: ring_claims(clients))
    driver.start()
    try:
        # Kill a replica in the middle of a reconcile; another takes the object over once
        # the dead replica's Lease expired. A replacement joins: a new member (a Deployment's
        # new pod), or the dead one's name again (a StatefulSet's pod, a restarted container).
        victim, name, _ = catch_mid_reconcile(driver, live)
        victim.kill(faults)
        live.remove(victim)
        wait_for(f"another replica writes {name} after {victim.label} was killed",
                 lambda: written_by_another(live, victim, name), 0.05)
        replacement = (Replica(url, "r3", directory) if restart == "new-name"
                       else Replica(url, victim.name, directory, f"{victim.name}-again"))
        replicas.append(replacement)
        live.append(replacement)

        # Pause a replica in the middle of a reconcile, past its Lease's expiry: another
        # takes the object over and writes; resumed, the paused one's write is stale.
        paused, name, seq = catch_mid_reconcile(driver, live)
        wait_for(f"another replica writes {name} while {paused.label} is paused",
                 lambda: written_by_another(live, paused, name), 0.05)
        paused.resume(faults)
        ended: list[dict[str, Any]] = []

        def paused_ended() -> bool:
            ended[:] = [r for r in paused.records()
                        if r["e"] == "end" and r["name"] == name and r["seq"] == seq]
            return bool(ended)

        wait_for(f"{paused.label} ends its reconcile of {name} once resumed", paused_ended, 0.05)
        assert ended[0]["outcome"] == "conflict"  # the fence: its read was stale

        # A fourth replica joins.
        fourth = Replica(url, "r4" if restart == "new-name" else "r3", directory)
        replicas.append(fourth)
        live.append(fourth)
        members = {r.name for r in live}
        wait_for(f"the ring settles on {sorted(members)}", lambda: ring_settled(clients, members),
                 detail=lambda: ring_claims(clients))
    finally:
        driver.finish()

    # (d) Every range is owned: late objects are each written by their hash's owner.
    late = [driver.create() for _ in range(LATE)]
    wait_for("every object converges", lambda: not unconverged(clients, driver),
             detail=lambda: unconverged(clients, driver))
    assert ring_settled(clients, members)
    ring = HashRing(members)
    owner = {name: ring.owner_of(fnv1a64(driver.uids[name])) for name in late}
    writers = {(record["name"], replica.name) for replica in live
               for record in replica.records()
               if record["e"] == "end" and record["outcome"] == "accepted"
               and record["name"] in owner}
    assert writers == set(owner.items())
    assert merge(r for name in members for r in ring.ranges_of(name)) == (
        HashRange(0, HASH_SPACE),)

    # (c) Survivors converged (above); the deleted stay deleted.
    final = {cm.metadata.name: dict(cm.data or {})
             for cm in clients.core_v1.configmaps(NS).list().items if cm.metadata}
    assert not set(final) & driver.deleted
    for name in sorted(driver.deleted):
        with pytest.raises(NotFoundError):
            clients.core_v1.configmaps(NS).get(name)

    for replica in live:
        replica.stop()
    leases = clients.coordination_v1.leases(LEASE_NAMESPACE).list(
        ListOptions(label_selector=f"{RING_LABEL}={RING}")).items
    left = [lease.metadata.name for lease in leases if lease.metadata]
    assert left == ([victim.name] if restart == "new-name" else [])  # its own, else reused

    # (a), (b) from the logs.
    records = [record for replica in replicas for record in replica.records()]
    verdict = check(intervals(records, faults), final)
    assert verdict.violations == []
    assert verdict.stale_rejected >= 1
    print(f"seed {seed}: {len(driver.spec)} objects live, {len(driver.deleted)} deleted, "
          f"{verdict.accepted} accepted writes, {len(verdict.overlaps)} overlaps (all "
          f"faulted), {verdict.stale_rejected} stale writes rejected; killed {victim.name} "
          f"mid-reconcile and restarted it as {replacement.label}, paused {paused.label} "
          f"mid-reconcile, added {fourth.name}")


@pytest.mark.slow
@pytest.mark.timeout(600)
@pytest.mark.parametrize("restart", ["new-name", "same-name"])
def test_fenced_counter_under_kill_pause_and_join(
    tmp_path: Path, replicas: list[Replica], restart: str,
) -> None:
    seed = int(os.environ.get("FENCED_SEED", "0")) or random.randrange(1 << 30)
    print(f"FENCED_SEED={seed} ({restart})", flush=True)
    with (TestAPIServerProcess(sharded_list_and_watch=True) as server,
          Clientset.for_config(server.config()) as clients):
        clients.core_v1.namespaces().create(Namespace(metadata=ObjectMeta(name=NS)))
        run_with_faults(clients, server.url, replicas, tmp_path, seed, restart)
