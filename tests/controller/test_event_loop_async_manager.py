"""An AsyncManager under load on one event loop.

Against a test API server in a child process seeded with 3,000 Foos, a manager with leader
election, the health server and a builder controller (8 workers) syncs its cache, reconciles
every Foo through the async client (patching the new ones) while 200 Foos are created, and
shuts down in phases, on a loop in debug mode. ``bench/event_loop_steps.py`` measures how
long its loop steps take with this same load (CPU time per step).
"""

from __future__ import annotations

import asyncio

from kgen_runtime.api.clientset import AsyncClientset
from kgen_runtime.controller import (
    AsyncCluster,
    AsyncLeaseLock,
    AsyncManager,
    LeaderElectionConfig,
    Request,
)
from kgen_runtime.meta import ObjectMeta
from kgen_runtime.rest import AsyncHTTPTransport, AsyncStatusClientMixin, Config
from kgen_runtime.scheme import Scheme
from tests.rest.conftest import BOUND, FOO_RESOURCE, Foo, FooList, FooSpec
from tests.rest.test_event_loop_aio import SEEDED, server_process


async def manager_under_load(url: str) -> tuple[int, bool]:
    transport = AsyncHTTPTransport(Config(host=url, qps=0.0))
    scheme = Scheme()
    scheme.add_resource(FOO_RESOURCE)
    leases = AsyncClientset(transport).coordination_v1.leases("load")
    manager = AsyncManager(
        cluster=AsyncCluster(transport, scheme),
        leader_election=LeaderElectionConfig(AsyncLeaseLock(leases, "load", "me")),
        health_address=("127.0.0.1", 0),
    )
    client = manager.cluster.client
    reconciled: set[str] = set()

    async def reconcile(request: Request) -> None:
        foo = await client.get(Foo, request.namespace, request.name)
        if request.name.startswith("new-") and not (foo.metadata.labels or {}).get("seen"):
            await client.patch(foo, {"metadata": {"labels": {"seen": "yes"}}})
        reconciled.add(request.name)

    manager.controller_for(Foo).with_options(max_concurrent_reconciles=8).complete(reconcile)
    foos = AsyncStatusClientMixin[Foo, FooList](transport, FOO_RESOURCE, "load")
    task = asyncio.create_task(manager.start())
    try:
        async with asyncio.timeout(BOUND * 3):
            await manager.elected.wait()
            for batch in range(10):  # 20 writes in flight at a time
                async with asyncio.TaskGroup() as writes:
                    for index in range(batch * 20, batch * 20 + 20):
                        new = Foo(metadata=ObjectMeta(name=f"new-{index:03d}"), spec=FooSpec())
                        writes.create_task(foos.create(new))
            while len(reconciled) < SEEDED + 200:
                await asyncio.sleep(0.01)
    finally:
        manager.stop()
        async with asyncio.timeout(BOUND * 3):
            await task
        released = (await leases.get("load")).spec
        await transport.aclose()
    return len(reconciled), released is not None and released.holder_identity is None


def test_a_manager_under_load_finishes_on_one_loop() -> None:
    with server_process() as url:
        assert asyncio.run(manager_under_load(url), debug=True) == (SEEDED + 200, True)
