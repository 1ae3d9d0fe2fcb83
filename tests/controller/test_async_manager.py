"""AsyncManager: start-up order, phased shutdown, health endpoints, failures, lost leadership,
two replicas, signals and cancellation — the blocking Manager's tests (test_manager.py) on one
event loop."""

from __future__ import annotations

import asyncio
import http.client
import os
import signal
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable
from typing import Any

import orjson
import pytest
from prometheus_client import CollectorRegistry, Counter

from kgen_runtime.api.apps.v1 import Deployment
from kgen_runtime.api.core.v1 import CONFIG_MAP_RESOURCE, ConfigMap
from kgen_runtime.api.core.v1.models import EventSource
from kgen_runtime.api.fake import AsyncFakeClientset
from kgen_runtime.cache import AsyncSharedInformerFactory
from kgen_runtime.controller import (
    AsyncClientEventSink,
    AsyncController,
    AsyncLeaseLock,
    AsyncManager,
    AsyncReconcilerFunc,
    LeaderElectionConfig,
    LeaseLock,
)
from kgen_runtime.meta import ObjectMeta
from kgen_runtime.testing import Action, StatusError
from kgen_runtime.util.clock_aio import FakeAsyncClock
from kgen_runtime.webhook import AdmissionDenied, Warnings, WebhookServer
from tests._webhooks import Certs, certs, module_certs

__all__ = ["certs", "module_certs"]  # fixtures, used by name

NS = "kube-system"
BOUND = 10.0


def run(main: Callable[[], Awaitable[Any]]) -> Any:
    async def bounded() -> Any:
        async with asyncio.timeout(BOUND * 2):
            return await main()

    return asyncio.run(bounded())


async def until(condition: Callable[[], bool]) -> None:
    async with asyncio.timeout(BOUND):
        while not condition():
            await asyncio.sleep(0.005)


async def get(manager: AsyncManager, path: str) -> tuple[int, str]:
    address = manager.health_address
    assert address is not None

    def fetch() -> tuple[int, str]:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{address[1]}{path}", timeout=5) as r:
                return r.status, r.read().decode()
        except urllib.error.HTTPError as err:
            with err:
                return err.code, err.read().decode()

    return await asyncio.to_thread(fetch)


def recorder(log: list[str], name: str,
             check: Callable[[], Awaitable[None]] | None = None) -> Callable[[], Awaitable[None]]:
    """A runnable logging its start, and its stop after ``check`` (awaited while stopping)."""

    async def runnable() -> None:
        log.append(f"{name} started")
        try:
            await asyncio.Event().wait()
        finally:
            if check is not None:
                await check()
            log.append(f"{name} stopped")

    return runnable


def election(fake: AsyncFakeClientset, identity: str) -> LeaderElectionConfig[AsyncLeaseLock]:
    return LeaderElectionConfig(AsyncLeaseLock(fake.coordination_v1.leases(NS), "mgr", identity))


def lease_gets(fake: AsyncFakeClientset) -> int:
    return sum(1 for a in fake.actions() if a.verb == "get" and a.resource.resource == "leases")


async def stopped(manager: AsyncManager, task: asyncio.Task[None]) -> BaseException | None:
    """Stop the manager and return what ``start`` raised."""
    manager.stop()
    async with asyncio.timeout(BOUND):
        results = await asyncio.gather(task, return_exceptions=True)
    error = results[0]
    return error if isinstance(error, BaseException) else None


def test_startup_and_phased_shutdown_order() -> None:
    async def main() -> None:
        fake = AsyncFakeClientset()
        factory = AsyncSharedInformerFactory(fake.transport)
        informer = factory.informer_for(CONFIG_MAP_RESOURCE)
        seen: list[str] = []
        informer.add_event_handler(on_add=lambda cm: seen.append(cm.metadata.name or ""))
        log: list[str] = []
        manager = AsyncManager(leader_election=election(fake, "me"), clock=FakeAsyncClock(),
                               event_sink=AsyncClientEventSink(fake.core_v1.events))
        manager.add_informer_factory(factory)
        events = manager.event_recorder("mgr-test")

        async def while_other_stops() -> None:
            spec = (await fake.coordination_v1.leases(NS).get("mgr")).spec
            assert spec is not None
            log.append(f"lease holder {spec.holder_identity!r}")
            await fake.core_v1.configmaps("ns").create(
                ConfigMap(metadata=ObjectMeta(name="late", namespace="ns")))
            await until(lambda: "late" in seen)
            log.append("informer running")
            events.event(spec_owner, "Normal", "Stopping", "other stopping")

        spec_owner = ConfigMap(metadata=ObjectMeta(name="cm", namespace="ns"))
        manager.add(recorder(log, "other", while_other_stops), needs_leader_election=False)
        manager.add(recorder(log, "leader"))
        task = asyncio.create_task(manager.start())
        async with asyncio.timeout(BOUND):
            await manager.elected.wait()
        await until(lambda: len(log) == 2)
        assert informer.has_synced()
        assert sorted(log) == ["leader started", "other started"]
        assert await stopped(manager, task) is None
        assert log[2:] == ["leader stopped", "lease holder None", "informer running",
                           "other stopped"]
        # The Event recorded while the other runnables stopped was written before the end.
        [event] = (await fake.core_v1.events("ns").list()).items
        assert (event.reason, event.source) == ("Stopping", EventSource(component="mgr-test"))

    run(main)


def test_controllers_drain_before_the_lease_is_released() -> None:
    async def main() -> None:
        fake = AsyncFakeClientset()
        synced: list[str] = []
        holders: list[str | None] = []
        release = asyncio.Event()
        entered: list[str] = []

        async def sync(key: str) -> None:
            entered.append(key)
            await release.wait()
            spec = (await fake.coordination_v1.leases(NS).get("mgr")).spec
            holders.append(spec.holder_identity if spec else None)
            synced.append(key)

        controller: AsyncController[str] = AsyncController("ctl", AsyncReconcilerFunc(sync))
        manager = AsyncManager(leader_election=election(fake, "me"), clock=FakeAsyncClock())
        manager.add_controller(controller, workers=2)
        task = asyncio.create_task(manager.start())
        async with asyncio.timeout(BOUND):
            await manager.elected.wait()
        for i in range(5):
            controller.enqueue(f"ns/{i}")
        await until(lambda: len(entered) == 2)  # two in flight, three queued
        manager.stop()
        await until(controller.queue.shutting_down)  # the drain has begun
        release.set()
        async with asyncio.timeout(BOUND):
            await task
        assert sorted(synced) == [f"ns/{i}" for i in range(5)]
        assert holders == ["me"] * 5
        spec = (await fake.coordination_v1.leases(NS).get("mgr")).spec
        assert spec is not None and spec.holder_identity is None

    run(main)


def test_health_ready_and_metrics_endpoints() -> None:
    async def main() -> None:
        registry = CollectorRegistry()
        Counter("kgen_test_total", "a test counter", registry=registry).inc(3)
        fake = AsyncFakeClientset()
        manager = AsyncManager(health_address=("127.0.0.1", 0), metrics_registry=registry,
                               health_metrics=True,
                               leader_election=election(fake, "me"), clock=FakeAsyncClock())
        broken = {"on": False}

        def db() -> None:
            if broken["on"]:
                raise ConnectionError("db unreachable")

        manager.add_ready_check("db", db)
        manager.add_health_check("ping", lambda: True)
        task = asyncio.create_task(manager.start())
        async with asyncio.timeout(BOUND):
            await manager.elected.wait()
        assert await get(manager, "/healthz") == (200, "ok")
        assert await get(manager, "/readyz?verbose") == (
            200, "[+]db ok\n[+]informers ok\nreadyz check passed\n")
        assert await get(manager, "/healthz/leader-election") == (200, "ok")
        broken["on"] = True
        assert await get(manager, "/readyz") == (
            500, "[-]db failed: db unreachable\n[+]informers ok\nreadyz check failed\n")
        status, body = await get(manager, "/metrics")
        assert status == 200 and "kgen_test_total 3.0" in body
        address = manager.health_address
        assert address is not None
        assert await stopped(manager, task) is None
        assert manager.health_address is None
        with pytest.raises(OSError):  # the port is closed
            await asyncio.to_thread(
                urllib.request.urlopen, f"http://127.0.0.1:{address[1]}/healthz", timeout=5)

    run(main)


def test_a_failing_runnable_stops_the_manager_with_its_error() -> None:
    async def main() -> None:
        log: list[str] = []

        async def explode() -> None:
            raise ValueError("boom")

        manager = AsyncManager()
        manager.add(recorder(log, "leader"))
        manager.add(explode, needs_leader_election=False)
        with pytest.raises(ValueError, match=r"^boom$"):
            await manager.start()  # no stop needed: the failure stops it
        assert log == ["leader started", "leader stopped"]
        with pytest.raises(RuntimeError, match="already started"):
            await manager.start()

    run(main)


def test_losing_leadership_stops_the_manager_with_an_error() -> None:
    async def main() -> None:
        fake = AsyncFakeClientset()
        clock = FakeAsyncClock()
        log: list[str] = []
        manager = AsyncManager(leader_election=election(fake, "me"), clock=clock)
        manager.add(recorder(log, "leader"))
        task = asyncio.create_task(manager.start())
        async with asyncio.timeout(BOUND):
            await manager.elected.wait()
            await clock.wait_for_sleepers(1)

        def fail(action: Action) -> tuple[bool, object]:
            raise StatusError.internal("etcd is down")

        fake.prepend_reactor("update", "leases", fail)
        for _ in range(6):  # renewals fail for the whole renew deadline
            gets = lease_gets(fake)
            async with asyncio.timeout(BOUND):
                await clock.wait_for_sleepers(1)
            clock.step(2)
            await until(lambda: lease_gets(fake) > gets)  # noqa: B023 - within the iteration
        with pytest.raises(RuntimeError, match=r"^leader election lost$"):
            async with asyncio.timeout(BOUND):
                await task
        assert log == ["leader started", "leader stopped"]

    run(main)


def test_two_replicas_never_lead_at_once_and_the_second_takes_over() -> None:
    async def main() -> None:
        fake = AsyncFakeClientset()
        clock = FakeAsyncClock()
        log: list[str] = []
        first, second = (AsyncManager(leader_election=election(fake, name), clock=clock)
                         for name in ("first", "second"))
        leading: set[str] = set()
        overlaps: list[set[str]] = []

        def replica(name: str) -> Callable[[], Awaitable[None]]:
            async def lead() -> None:
                leading.add(name)
                overlaps.append(set(leading))
                log.append(f"{name} started")
                try:
                    await asyncio.Event().wait()
                finally:
                    log.append(f"{name} stopped")
                    leading.discard(name)

            return lead

        first.add(replica("first"))
        second.add(replica("second"))
        a = asyncio.create_task(first.start())
        async with asyncio.timeout(BOUND):
            await first.elected.wait()
        b = asyncio.create_task(second.start())
        for _ in range(3):  # the first renews, the second keeps finding a valid holder
            gets = lease_gets(fake)
            async with asyncio.timeout(BOUND):
                await clock.wait_for_sleepers(2)
            clock.step(5)  # over the second's jittered retry period (< 2 * 2.2 s)
            await until(lambda: lease_gets(fake) > gets)  # noqa: B023 - the second read
            assert not second.elected.is_set()
        assert await stopped(first, a) is None  # releases the lease on the way out
        async with asyncio.timeout(BOUND):
            await clock.wait_for_sleepers(1)
        clock.step(5)  # the candidate's jittered retry period is under 2 * 2.2 s
        async with asyncio.timeout(BOUND):
            await second.elected.wait()
        assert await stopped(second, b) is None
        assert log == ["first started", "first stopped", "second started", "second stopped"]
        assert overlaps == [{"first"}, {"second"}]

    run(main)


def test_cache_sync_timeout_fails_start() -> None:
    async def main() -> None:
        fake = AsyncFakeClientset()

        def fail(action: Action) -> tuple[bool, object]:
            raise StatusError.internal("list fails")

        fake.prepend_reactor("list", "configmaps", fail)
        factory = AsyncSharedInformerFactory(fake.transport)
        factory.informer_for(CONFIG_MAP_RESOURCE)
        log: list[str] = []
        manager = AsyncManager(cache_sync_timeout=0.2)
        manager.add_informer_factory(factory)
        manager.add(recorder(log, "leader"))
        with pytest.raises(TimeoutError, match="informers did not sync"):
            await manager.start()
        assert log == []

    run(main)


def test_sigterm_stops_the_manager_cleanly() -> None:
    async def main() -> None:
        log: list[str] = []
        manager = AsyncManager()
        manager.add(recorder(log, "leader"))
        task = asyncio.create_task(manager.start(signals=(signal.SIGTERM,)))
        async with asyncio.timeout(BOUND):
            await manager.elected.wait()
        os.kill(os.getpid(), signal.SIGTERM)
        async with asyncio.timeout(BOUND):
            await task  # returns normally: a signal is a clean stop
        assert log == ["leader started", "leader stopped"]

    def before(signum: int, frame: object) -> None:
        raise AssertionError("not called: the manager handles SIGTERM while it runs")

    previous = signal.signal(signal.SIGTERM, before)
    try:
        run(main)
        assert signal.getsignal(signal.SIGTERM) is before  # restored when start returned
    finally:
        signal.signal(signal.SIGTERM, previous)


def test_cancelling_start_shuts_down_and_cancels_a_stuck_reconcile_cleanly() -> None:
    async def main() -> None:
        log: list[str] = []
        began = asyncio.Event()

        async def reconcile(key: str) -> None:
            log.append(f"reconcile {key}")
            began.set()
            try:
                await asyncio.sleep(BOUND * 10)  # never finishes by itself
            except asyncio.CancelledError:
                log.append("reconcile cancelled")
                raise

        controller: AsyncController[str] = AsyncController(
            "stuck", AsyncReconcilerFunc(reconcile), shutdown_timeout=0.05)
        manager = AsyncManager()
        manager.add_controller(controller)
        manager.add(recorder(log, "other"), needs_leader_election=False)
        task = asyncio.create_task(manager.start())
        controller.enqueue("ns/a")
        async with asyncio.timeout(BOUND):
            await began.wait()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            async with asyncio.timeout(BOUND):
                await task
        assert log == ["other started", "reconcile ns/a", "reconcile cancelled", "other stopped"]
        with pytest.raises(ValueError, match="not being processed"):
            controller.queue.done("ns/a")  # the cancelled key was marked done already
        assert await controller.queue.shut_down_with_drain(timeout=0.01)

    run(main)


def test_a_blocking_lease_lock_is_refused() -> None:
    from kgen_runtime.api.fake import FakeClientset

    lock = LeaseLock(FakeClientset().coordination_v1.leases(NS), "mgr", "me")
    with pytest.raises(TypeError, match="AsyncLeaseLock, got LeaseLock"):
        AsyncManager(leader_election=LeaderElectionConfig(lock))  # type: ignore[arg-type]


STUCK_MANAGER = """
import asyncio, signal
from kgen_runtime.controller import AsyncManager

async def stuck() -> None:
    print("ready", flush=True)
    while True:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:  # refuses to stop: the shutdown waits for it
            print("stopping", flush=True)

manager = AsyncManager(graceful_shutdown_timeout=None)
manager.add(stuck)
asyncio.run(manager.start(signals=(signal.SIGTERM,)))
"""


def test_a_second_signal_exits_at_once_with_status_1() -> None:
    process = subprocess.Popen([sys.executable, "-c", STUCK_MANAGER], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        assert process.stdout.readline() == "ready\n"
        process.send_signal(signal.SIGTERM)
        assert process.stdout.readline() == "stopping\n"  # the shutdown began, and hangs
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=BOUND)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 1
    assert "second signal SIGTERM: exiting now" in stderr


def refuse_all(deployment: Deployment) -> Warnings:
    raise AdmissionDenied("not welcome")


def test_webhooks_are_served_beside_the_loop_and_closed_last(certs: Certs) -> None:
    review = {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "u-1",
            "kind": {"group": "apps", "version": "v1", "kind": "Deployment"},
            "resource": {"group": "apps", "version": "v1", "resource": "deployments"},
            "operation": "CREATE",
            "userInfo": {"username": "alice"},
            "object": {"apiVersion": "apps/v1", "kind": "Deployment",
                       "metadata": {"name": "web", "namespace": "ns"}},
        },
    }

    def post(address: tuple[str, int]) -> tuple[int, Any]:
        connection = http.client.HTTPSConnection(*address, context=certs.client_context(),
                                                 timeout=10)
        try:
            connection.request("POST", "/validate-apps-v1-deployment", orjson.dumps(review),
                               {"Content-Type": "application/json"})
            response = connection.getresponse()
            return response.status, orjson.loads(response.read())
        finally:
            connection.close()

    async def main() -> None:
        registry = CollectorRegistry()
        webhooks = WebhookServer("127.0.0.1", 0, cert_dir=certs.directory, registry=registry)
        manager = AsyncManager(health_address=("127.0.0.1", 0), metrics_registry=registry,
                               health_metrics=True,
                               webhook_server=webhooks)
        manager.webhooks.validator(Deployment, on_create=refuse_all)
        task = asyncio.create_task(manager.start())
        async with asyncio.timeout(BOUND):
            await manager.elected.wait()
        assert webhooks.address is not None
        status, body = await get(manager, "/healthz?verbose")
        assert (status, "[+]webhook ok" in body) == (200, True)
        status, answer = await asyncio.to_thread(post, webhooks.address)
        assert (status, answer["response"]["uid"], answer["response"]["allowed"]) == (
            200, "u-1", False)
        assert await stopped(manager, task) is None
        assert webhooks.address is None and manager.health_address is None

    run(main)
