"""AsyncLeaderElector on a Lease in the async fake clientset, with a shared fake async clock:
the same scenarios and records as the blocking elector's tests (test_leaderelection.py)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime

import pytest

from kgen_runtime.api.coordination.v1.models import Lease, LeaseSpec
from kgen_runtime.api.fake import AsyncFakeClientset
from kgen_runtime.leaderelection import AsyncLeaderElector, AsyncLeaseLock, LeaderElectionRecord
from kgen_runtime.meta import ObjectMeta
from kgen_runtime.testing import Action, StatusError
from kgen_runtime.util.clock_aio import FakeAsyncClock

NS = "kube-system"
BOUND = 5.0


async def until(condition: Callable[[], bool]) -> None:
    """Wait (bounded) until ``condition()`` holds."""
    async with asyncio.timeout(BOUND):
        while not condition():
            await asyncio.sleep(0.001)


class Candidate:
    """One elector running as a task, with its callbacks recorded."""

    def __init__(self, world: World, identity: str, **options: object) -> None:
        self.started = asyncio.Event()
        self.leading_cancelled = asyncio.Event()
        self.stopped = asyncio.Event()
        self.leaders: list[str] = []
        lock = AsyncLeaseLock(world.fake.coordination_v1.leases(NS), "ctl", identity)
        clock = world.clock
        self.elector = AsyncLeaderElector(
            lock, on_started_leading=self._lead, on_stopped_leading=self.stopped.set,
            on_new_leader=self.leaders.append, clock=clock, rand=lambda: 0.0,
            now=lambda: datetime.fromtimestamp(1_700_000_000 + clock.now() - 1000, UTC),
            **options,  # type: ignore[arg-type]
        )
        self.task = asyncio.create_task(self.elector.run())

    async def _lead(self) -> None:
        self.started.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            self.leading_cancelled.set()
            raise

    async def halt(self) -> None:
        self.task.cancel()
        async with asyncio.timeout(BOUND):
            with pytest.raises(asyncio.CancelledError):
                await self.task


class World:
    def __init__(self) -> None:
        self.clock = FakeAsyncClock()
        self.fake = AsyncFakeClientset()
        self.leases = self.fake.coordination_v1.leases(NS)

    def candidate(self, identity: str, **options: object) -> Candidate:
        return Candidate(self, identity, **options)

    async def spec(self) -> LeaseSpec:
        spec = (await self.leases.get("ctl")).spec
        assert spec is not None
        return spec

    def gets(self) -> int:
        return sum(1 for a in self.fake.actions() if a.verb == "get")

    async def tick(self, sleepers: int = 1, seconds: float = 2.0) -> None:
        """Step once ``sleepers`` electors sleep, and wait until one of them read the Lease."""
        before = self.gets()
        async with asyncio.timeout(BOUND):
            await self.clock.wait_for_sleepers(sleepers)
        self.clock.step(seconds)
        await until(lambda: self.gets() > before)


def run(test: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(test(), BOUND * 4))


def test_a_single_candidate_acquires_renews_and_stops() -> None:
    async def main() -> None:
        w = World()
        a = w.candidate("a")
        await until(a.started.is_set)
        spec = await w.spec()
        assert (spec.holder_identity, spec.lease_duration_seconds, spec.lease_transitions) == (
            "a", 15, 0)
        assert spec.acquire_time == spec.renew_time == "2023-11-14T22:13:20.000000Z"
        assert a.elector.is_leader() and a.elector.get_leader() == "a"
        await w.clock.wait_for_sleepers(1)
        w.clock.step(2)
        await until(lambda: w.fake.actions()[-1].verb == "update" and len(w.fake.actions()) > 3)
        assert (await w.spec()).renew_time == "2023-11-14T22:13:22.000000Z"
        assert (await w.spec()).acquire_time == "2023-11-14T22:13:20.000000Z"
        assert not a.leading_cancelled.is_set()
        await a.halt()
        assert a.leading_cancelled.is_set() and a.stopped.is_set()
        assert a.leaders == ["a"]
        assert (await w.spec()).holder_identity == "a"  # not released without release_on_cancel

    run(main)


def test_two_candidates_never_lead_at_once_and_release_hands_over() -> None:
    async def main() -> None:
        w = World()
        a = w.candidate("a", release_on_cancel=True)
        await until(a.started.is_set)
        b = w.candidate("b")
        await until(lambda: b.leaders == ["a"])
        for _ in range(5):  # a renews, b keeps finding a valid holder
            await w.tick(sleepers=2)
            assert not b.started.is_set()
            assert [c.elector.is_leader() for c in (a, b)] == [True, False]
        await a.halt()
        assert a.leading_cancelled.is_set()  # stopped leading before the release
        released = await w.spec()
        assert (released.holder_identity, released.lease_duration_seconds) == (None, 1)
        await w.tick()
        await until(b.started.is_set)
        assert ((await w.spec()).holder_identity, (await w.spec()).lease_transitions) == ("b", 1)
        assert b.leaders == ["a", "b"]
        assert not a.elector.is_leader()
        await b.halt()

    run(main)


def test_an_unrenewed_lease_is_taken_over_only_after_lease_duration() -> None:
    async def main() -> None:
        w = World()
        await w.leases.create(Lease(metadata=ObjectMeta(name="ctl"), spec=LeaseSpec(
            holder_identity="dead", lease_duration_seconds=15, lease_transitions=4)))
        b = w.candidate("b")
        await until(lambda: b.leaders == ["dead"])
        for _ in range(7):  # 14 s after b first saw the record: still the dead holder's
            await w.tick()
            assert not b.started.is_set()
        await w.tick()  # 16 s
        await until(b.started.is_set)
        assert ((await w.spec()).holder_identity, (await w.spec()).lease_transitions) == ("b", 5)
        await b.halt()

    run(main)


def test_leadership_is_lost_when_renewal_fails_past_the_deadline() -> None:
    async def main() -> None:
        w = World()
        a = w.candidate("a")
        await until(a.started.is_set)
        await w.clock.wait_for_sleepers(1)  # renewed at t=0, sleeping until t=2
        start = w.clock.now()

        def fail_updates(action: Action) -> tuple[bool, object]:
            raise StatusError.internal("etcd is down")

        w.fake.prepend_reactor("update", "leases", fail_updates)
        for _ in range(6):  # renewals at t=2 .. 12 fail; at 12 the deadline has passed
            await w.tick()
        async with asyncio.timeout(BOUND):
            await a.task  # returns by itself: not cancelled
        assert w.clock.now() - start == 12
        assert a.leading_cancelled.is_set() and a.stopped.is_set()
        assert a.elector.is_leader()  # it still believes it leads: the health check tells
        w.clock.step(3)
        assert a.elector.check()
        w.clock.step(0.5)
        assert not a.elector.check()
        assert a.elector.check(max_tolerable_expired_lease=1.0)

    run(main)


def test_a_hanging_renewal_is_cut_at_the_renew_deadline() -> None:
    async def main() -> None:
        fake = AsyncFakeClientset()
        hang = asyncio.Event()

        class HangingLeases:
            """Lease verbs whose updates hang once ``hang`` is set."""

            def __init__(self) -> None:
                self.leases = fake.coordination_v1.leases(NS)

            async def get(self, name: str) -> Lease:
                return await self.leases.get(name)

            async def create(self, obj: Lease) -> Lease:
                return await self.leases.create(obj)

            async def update(self, obj: Lease) -> Lease:
                if hang.is_set():
                    await asyncio.Event().wait()
                return await self.leases.update(obj)

        stopped = asyncio.Event()
        elector = AsyncLeaderElector(
            AsyncLeaseLock(HangingLeases(), "ctl", "a"), on_started_leading=hang_after_start(hang),
            # A whole second: the Lease stores whole seconds, and kube-apiserver refuses 0.
            on_stopped_leading=stopped.set, lease_duration=1.0, renew_deadline=0.3,
            retry_period=0.1)
        async with asyncio.timeout(BOUND):
            await elector.run()  # acquired, then the first renewal hangs: cut at 0.3 s
        assert stopped.is_set()

    run(main)


def hang_after_start(hang: asyncio.Event) -> Callable[[], Awaitable[None]]:
    async def lead() -> None:
        hang.set()

    return lead


def test_cancelling_a_waiting_candidate_calls_only_on_stopped_leading() -> None:
    async def main() -> None:
        w = World()
        a = w.candidate("a", release_on_cancel=True)
        await until(a.started.is_set)
        b = w.candidate("b", release_on_cancel=True)
        await until(lambda: b.leaders == ["a"])
        await b.halt()
        assert b.stopped.is_set() and not b.started.is_set()
        assert (await w.spec()).holder_identity == "a"  # b held nothing, released nothing
        await a.halt()

    run(main)


def test_configuration_and_the_lock_are_validated() -> None:
    async def main() -> None:
        fake = AsyncFakeClientset()
        lock = AsyncLeaseLock(fake.coordination_v1.leases(NS), "ctl", "a")

        async def nothing() -> None:
            return None

        with pytest.raises(ValueError, match="renew_deadline must be greater than retry_period"):
            AsyncLeaderElector(lock, on_started_leading=nothing, on_stopped_leading=lambda: None,
                               renew_deadline=2.4, retry_period=2.0)
        with pytest.raises(ValueError, match="non-empty identity"):
            AsyncLeaseLock(fake.coordination_v1.leases(NS), "ctl", "")
        with pytest.raises(RuntimeError, match="call get or create first"):
            await lock.update(LeaderElectionRecord())
        record = LeaderElectionRecord("a", 15, "2026-01-01T00:00:01.000000Z",
                                      "2026-01-01T00:00:02.000000Z", 3)
        await lock.create(record)
        assert await lock.get() == record

    run(main)


def test_stress_candidates_come_and_go_and_never_two_lead_at_once() -> None:
    """Five candidates at a time; at random steps the leader (releasing or not) or a waiting
    candidate is cancelled and a new one joins. At no point do two candidates lead, and
    leadership keeps moving on."""

    async def main() -> tuple[list[str], list[str]]:
        import random

        rng = random.Random(7)
        w = World()
        leading: set[str] = set()
        overlaps: list[str] = []
        leaders: list[str] = []
        live: dict[str, asyncio.Task[None]] = {}
        count = 0

        def join() -> None:
            nonlocal count
            count += 1
            identity = f"c{count}"

            async def lead() -> None:
                leading.add(identity)
                leaders.append(identity)
                if len(leading) > 1:
                    overlaps.append(f"{sorted(leading)} at t={w.clock.now()}")
                try:
                    await asyncio.Event().wait()
                finally:
                    leading.discard(identity)

            lock = AsyncLeaseLock(w.fake.coordination_v1.leases(NS), "ctl", identity)
            elector = AsyncLeaderElector(
                lock, on_started_leading=lead, on_stopped_leading=lambda: None,
                release_on_cancel=rng.random() < 0.5, clock=w.clock, rand=rng.random)
            live[identity] = asyncio.create_task(elector.run())

        for _ in range(5):
            join()
        for _ in range(80):
            async with asyncio.timeout(BOUND):
                await w.clock.wait_for_sleepers(len(live))
            if rng.random() < 0.2:
                victim = next(iter(leading)) if leading and rng.random() < 0.7 else (
                    rng.choice(sorted(live)))
                task = live.pop(victim)
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
                join()
                continue
            w.clock.step(2)
            await asyncio.sleep(0)
        for task in live.values():
            task.cancel()
        await asyncio.gather(*live.values(), return_exceptions=True)
        return overlaps, leaders

    overlaps, leaders = asyncio.run(asyncio.wait_for(main(), BOUND * 4))
    assert overlaps == []
    assert len(leaders) >= 4  # leadership moved on after cancelled leaders
    assert len(set(leaders)) == len(leaders)  # each candidate led at most once
