"""The Manager running asyncio code: AsyncController with its async informers on a loop of its
own (Manager.add_async_controller), and plain coroutines (AsyncRunnableFunc)."""

from __future__ import annotations

import asyncio
import threading

import pytest

from kgen_runtime.api.core.v1 import CONFIG_MAP_RESOURCE, ConfigMap
from kgen_runtime.api.core.v1.client import CoreV1Client
from kgen_runtime.cache import AsyncSharedInformerFactory, meta_namespace_key_func
from kgen_runtime.controller import (
    AsyncController,
    AsyncReconcilerFunc,
    AsyncRunnableFunc,
    Manager,
    Result,
)
from kgen_runtime.meta import ObjectMeta
from kgen_runtime.rest import AsyncHTTPTransport, HTTPTransport
from kgen_runtime.testing import TestAPIServer
from tests.controller._support import eventually
from tests.controller.test_manager import Started


def test_an_async_controller_reconciles_from_its_informers_and_drains_at_stop() -> None:
    reconciled: list[str] = []
    in_flight = threading.Event()
    release = threading.Event()
    with TestAPIServer() as server:
        configmaps = CoreV1Client(HTTPTransport(server.config())).configmaps("ns")
        configmaps.create(ConfigMap(metadata=ObjectMeta(name="before")))
        transport = AsyncHTTPTransport(server.config())
        factory = AsyncSharedInformerFactory(transport)
        informer = factory.informer_for(CONFIG_MAP_RESOURCE)

        async def reconcile(key: str) -> Result | None:
            if key == "ns/slow":
                in_flight.set()
                await asyncio.to_thread(release.wait, 10)
            reconciled.append(key)
            return None

        controller: AsyncController[str] = AsyncController("cms", AsyncReconcilerFunc(reconcile))
        informer.add_event_handler(
            on_add=lambda obj: controller.enqueue(meta_namespace_key_func(obj)))
        manager = Manager()
        manager.add_async_controller(controller, workers=2, informer_factories=[factory],
                                     closing=[transport])
        started = Started(manager)
        eventually(lambda: reconciled == ["ns/before"])
        assert informer.has_synced()
        configmaps.create(ConfigMap(metadata=ObjectMeta(name="slow")))
        assert in_flight.wait(10)
        # Stopping lets the reconcile in flight finish (the controller drains) before the
        # informers are shut down and the transport closed.
        started.stop_event.set()
        eventually(lambda: controller.queue.shutting_down)
        assert reconciled == ["ns/before"]
        release.set()
        started.join()
    assert started.error is None
    assert reconciled == ["ns/before", "ns/slow"]


def test_a_coroutine_runs_until_stop_cancels_it_and_its_cleanup_finishes() -> None:
    log: list[str] = []

    async def serve() -> None:
        log.append("started")
        try:
            await asyncio.Event().wait()  # forever, until cancelled
        finally:
            await asyncio.sleep(0)  # cleanup may still await
            log.append("cleaned up")

    manager = Manager()
    manager.add(AsyncRunnableFunc(serve), needs_leader_election=False)
    started = Started(manager)
    eventually(lambda: log == ["started"])
    started.stop()
    assert started.error is None
    assert log == ["started", "cleaned up"]


def test_a_failing_coroutine_stops_the_manager_with_its_error() -> None:
    async def explode() -> None:
        await asyncio.sleep(0)
        raise ValueError("boom")

    manager = Manager()
    manager.add(AsyncRunnableFunc(explode))
    started = Started(manager)
    started.join()  # no stop needed: the failure stops it
    assert isinstance(started.error, ValueError) and str(started.error) == "boom"
    assert started.stop_event.is_set()


def test_an_async_controller_name_is_unique_among_all_controllers() -> None:
    manager = Manager()

    async def reconcile(key: str) -> None:
        return None

    manager.add_async_controller(AsyncController("same", AsyncReconcilerFunc(reconcile)))
    with pytest.raises(ValueError, match="'same' was already added"):
        manager.add_async_controller(AsyncController("same", AsyncReconcilerFunc(reconcile)))
