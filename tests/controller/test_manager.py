"""The Manager: start-up order, phased shutdown, health endpoints, failures, lost leadership
and signals."""

from __future__ import annotations

import os
import signal
import threading
import urllib.error
import urllib.request
from typing import Any

import pytest
from prometheus_client import CollectorRegistry, Counter

from kgen_runtime.api.core.v1 import CONFIG_MAP_RESOURCE, ConfigMap
from kgen_runtime.api.core.v1.models import EventSource
from kgen_runtime.api.fake import FakeClientset
from kgen_runtime.cache import SharedInformerFactory
from kgen_runtime.controller import (
    ClientEventSink,
    Controller,
    LeaderElectionConfig,
    LeaseLock,
    Manager,
    ReconcilerFunc,
    RunnableFunc,
    setup_signal_handler,
)
from kgen_runtime.meta import ObjectMeta
from kgen_runtime.testing import Action, StatusError
from kgen_runtime.util import FakeClock
from tests.controller._support import eventually

NS = "kube-system"


def get(manager: Manager, path: str) -> tuple[int, str]:
    address = manager.health_address
    assert address is not None
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{address[1]}{path}", timeout=5) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as err:
        with err:
            return err.code, err.read().decode()


class Started:
    """``manager.start`` in a thread; ``stop()`` sets the event and joins (bounded)."""

    def __init__(self, manager: Manager) -> None:
        self.manager = manager
        self.stop_event = threading.Event()
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.manager.start(self.stop_event)
        except BaseException as err:  # handed to the test
            self.error = err

    def join(self) -> None:
        self.thread.join(10)
        assert not self.thread.is_alive(), "manager.start did not return"

    def stop(self) -> None:
        self.stop_event.set()
        self.join()


def recorder(log: list[str], name: str, check: Any = None) -> RunnableFunc:
    def run(stop: threading.Event) -> None:
        log.append(f"{name} started")
        stop.wait()
        if check is not None:
            check()
        log.append(f"{name} stopped")

    return RunnableFunc(run)


def lease_gets(fake: FakeClientset) -> int:
    return sum(1 for a in fake.actions() if a.verb == "get" and a.resource.resource == "leases")


def election(fake: FakeClientset, identity: str) -> LeaderElectionConfig:
    return LeaderElectionConfig(LeaseLock(fake.coordination_v1.leases(NS), "mgr", identity))


def test_startup_and_phased_shutdown_order() -> None:
    fake = FakeClientset()
    factory = SharedInformerFactory(fake.transport)
    informer = factory.informer_for(CONFIG_MAP_RESOURCE)
    log: list[str] = []
    clock = FakeClock()
    manager = Manager(leader_election=election(fake, "me"), clock=clock)
    manager.add_informer_factory(factory)

    def while_other_stops() -> None:
        holder = fake.coordination_v1.leases(NS).get("mgr").spec
        assert holder is not None
        log.append(f"lease holder {holder.holder_identity!r}")
        log.append(f"informer running: {not informer.is_stopped}")

    manager.add(recorder(log, "other", while_other_stops), needs_leader_election=False)
    manager.add(recorder(log, "leader"))
    started = Started(manager)
    assert manager.elected.wait(5)
    eventually(lambda: len(log) == 2)
    assert informer.has_synced()
    assert sorted(log) == ["leader started", "other started"]
    started.stop()
    assert started.error is None
    assert log[2:] == ["leader stopped", "lease holder None", "informer running: True",
                       "other stopped"]
    assert informer.is_stopped


def test_controllers_drain_before_the_lease_is_released() -> None:
    fake = FakeClientset()
    synced: list[str] = []
    holder_during_sync: list[str | None] = []
    release = threading.Event()

    def sync(key: str) -> None:
        release.wait(5)
        spec = fake.coordination_v1.leases(NS).get("mgr").spec
        holder_during_sync.append(spec.holder_identity if spec else None)
        synced.append(key)

    controller: Controller[str] = Controller("ctl", ReconcilerFunc(sync))
    manager = Manager(leader_election=election(fake, "me"), clock=FakeClock())
    manager.add_controller(controller, workers=2)
    for i in range(5):
        controller.enqueue(f"ns/{i}")
    started = Started(manager)
    assert manager.elected.wait(5)
    started.stop_event.set()
    release.set()
    started.join()
    assert sorted(synced) == [f"ns/{i}" for i in range(5)]
    assert holder_during_sync == ["me"] * 5
    spec = fake.coordination_v1.leases(NS).get("mgr").spec
    assert spec is not None and spec.holder_identity is None


def test_health_ready_and_metrics_endpoints() -> None:
    registry = CollectorRegistry()
    Counter("kgen_test_total", "a test counter", registry=registry).inc(3)
    fake = FakeClientset()
    manager = Manager(health_address=("127.0.0.1", 0), metrics_registry=registry,
                      health_metrics=True,
                      leader_election=election(fake, "me"), clock=FakeClock())
    broken = {"on": False}

    def db() -> None:
        if broken["on"]:
            raise ConnectionError("db unreachable")

    manager.add_ready_check("db", db)
    manager.add_health_check("ping", lambda: True)
    started = Started(manager)
    assert manager.elected.wait(5)
    assert get(manager, "/healthz") == (200, "ok")
    assert get(manager, "/readyz") == (200, "ok")
    assert get(manager, "/readyz?verbose") == (
        200, "[+]db ok\n[+]informers ok\nreadyz check passed\n")
    assert get(manager, "/healthz/leader-election") == (200, "ok")
    broken["on"] = True
    assert get(manager, "/readyz") == (
        500, "[-]db failed: db unreachable\n[+]informers ok\nreadyz check failed\n")
    assert get(manager, "/healthz") == (200, "ok")
    status, body = get(manager, "/metrics")
    assert status == 200 and "kgen_test_total 3.0" in body
    assert get(manager, "/nothing")[0] == 404
    assert get(manager, "/healthz/nothing")[0] == 404
    address = manager.health_address
    assert address is not None
    started.stop()
    assert manager.health_address is None
    with pytest.raises(OSError):  # the port is closed
        urllib.request.urlopen(f"http://127.0.0.1:{address[1]}/healthz", timeout=5)


def test_events_recorded_by_runnables_are_written_before_shutdown_ends() -> None:
    fake = FakeClientset()
    manager = Manager(event_sink=ClientEventSink(fake.core_v1.events))
    recorder = manager.event_recorder("mgr-test")
    subject = ConfigMap(metadata=ObjectMeta(name="cm", namespace="ns"))

    def run(stop: threading.Event) -> None:
        stop.wait()
        recorder.event(subject, "Normal", "Stopping", "runnable stopping")  # during shutdown

    manager.add(RunnableFunc(run))
    started = Started(manager)
    eventually(lambda: manager.elected.is_set())
    started.stop()
    [event] = fake.core_v1.events("ns").list().items
    assert (event.reason, event.source) == ("Stopping", EventSource(component="mgr-test"))


def test_a_failing_runnable_stops_the_manager_with_its_error() -> None:
    log: list[str] = []

    def explode(stop: threading.Event) -> None:
        raise ValueError("boom")

    manager = Manager()
    manager.add(recorder(log, "leader"))
    manager.add(RunnableFunc(explode), needs_leader_election=False)
    started = Started(manager)
    started.join()  # no stop needed: the failure stops it
    assert isinstance(started.error, ValueError) and str(started.error) == "boom"
    assert started.stop_event.is_set()
    assert log[-1] == "leader stopped"


def test_losing_leadership_stops_the_manager_with_an_error() -> None:
    fake = FakeClientset()
    clock = FakeClock()
    log: list[str] = []
    manager = Manager(leader_election=election(fake, "me"), clock=clock)
    manager.add(recorder(log, "leader"))
    started = Started(manager)
    assert manager.elected.wait(5)
    assert clock.wait_for_sleepers(1)

    def fail(action: Action) -> tuple[bool, object]:
        raise StatusError.internal("etcd is down")

    fake.prepend_reactor("update", "leases", fail)
    for _ in range(6):  # renewals fail for the whole renew deadline
        gets = lease_gets(fake)
        assert clock.wait_for_sleepers(1)
        clock.step(2)
        eventually(lambda: lease_gets(fake) > gets)  # noqa: B023 - used within the iteration
    started.join()
    assert isinstance(started.error, RuntimeError)
    assert str(started.error) == "leader election lost"
    assert log == ["leader started", "leader stopped"]


def test_a_second_replica_waits_then_takes_over() -> None:
    fake = FakeClientset()
    clock = FakeClock()
    log: list[str] = []
    first, second = (Manager(leader_election=election(fake, name), clock=clock)
                     for name in ("first", "second"))
    first.add(recorder(log, "first"))
    second.add(recorder(log, "second"))
    a = Started(first)
    assert first.elected.wait(5)
    b = Started(second)
    assert clock.wait_for_sleepers(2)
    assert not second.elected.is_set()
    a.stop()
    assert clock.wait_for_sleepers(1)
    clock.step(5)  # the candidate's jittered retry period is under 2 * 2.2 s
    assert second.elected.wait(5)
    b.stop()
    assert log == ["first started", "first stopped", "second started", "second stopped"]
    assert a.error is None and b.error is None


def test_cache_sync_timeout_fails_start() -> None:
    fake = FakeClientset()

    def hang(action: Action) -> tuple[bool, object]:
        raise StatusError.internal("list fails")

    fake.prepend_reactor("list", "configmaps", hang)
    factory = SharedInformerFactory(fake.transport)
    factory.informer_for(CONFIG_MAP_RESOURCE)
    log: list[str] = []
    manager = Manager(cache_sync_timeout=0.2)
    manager.add_informer_factory(factory)
    manager.add(recorder(log, "leader"))
    with pytest.raises(TimeoutError, match="informers did not sync"):
        manager.start(threading.Event())
    assert log == []
    with pytest.raises(RuntimeError, match="already started"):
        manager.start(threading.Event())


def test_sigterm_sets_the_stop_event() -> None:
    previous = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        stop = setup_signal_handler()
        assert not stop.is_set()
        os.kill(os.getpid(), signal.SIGTERM)
        assert stop.wait(5)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
