"""AsyncBuilder and AsyncClient on an AsyncManager over the async fake: what ``for_``/``owns``/
``watches``/filters enqueue (exactly; the blocking builder's cases in test_builder.py), the
async reconcile contract, reads from the async cache without I/O, writes, RBAC rules, and
no step of the manager holding the loop over 50 ms under load."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import pytest

from kgen_runtime.api.core.v1 import CONFIG_MAP_RESOURCE, ConfigMap, Pod, Secret
from kgen_runtime.api.core.v1.models import Container, PodSpec
from kgen_runtime.api.fake import AsyncFakeClientset
from kgen_runtime.cache import ReflectorOptions
from kgen_runtime.controller import (
    AsyncBuilder,
    AsyncCluster,
    AsyncLeaseLock,
    AsyncManager,
    CacheNotStartedError,
    CacheOptions,
    Funcs,
    LabelSelectorPredicate,
    LeaderElectionConfig,
    NamespaceNotCachedError,
    Request,
    Result,
    TerminalError,
)
from kgen_runtime.meta import ObjectMeta, OwnerReference
from kgen_runtime.rest.errors import NotFoundError
from kgen_runtime.workqueue import ItemExponentialFailureRateLimiter

NS = "ns"
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


class Recorder:
    """An async reconciler remembering every request, in order."""

    def __init__(self) -> None:
        self.requests: list[str] = []

    async def reconcile(self, request: Request) -> Result | None:
        self.requests.append(str(request))
        return None

    async def expect(self, expected: list[str]) -> None:
        await until(lambda: len(self.requests) >= len(expected))
        assert self.requests == expected


def meta(name: str, *, labels: dict[str, str] | None = None,
         owners: list[OwnerReference] | None = None) -> ObjectMeta:
    return ObjectMeta(name=name, namespace=NS, labels=labels, owner_references=owners)


def ref(kind: str, name: str, *, controller: bool = True,
        api_version: str = "v1") -> OwnerReference:
    return OwnerReference(api_version=api_version, kind=kind, name=name, uid=f"uid-{name}",
                          controller=controller)


def manager_over(fake: AsyncFakeClientset, **options: Any) -> AsyncManager:
    return AsyncManager(cluster=AsyncCluster(fake.transport, field_manager="tests"), **options)


@asynccontextmanager
async def started(manager: AsyncManager) -> AsyncIterator[AsyncManager]:
    """``manager.start()`` as a task while inside; stopped on leaving, re-raising its error."""
    task = asyncio.create_task(manager.start())
    try:
        async with asyncio.timeout(BOUND):
            await manager.elected.wait()
        yield manager
    finally:
        manager.stop()
        async with asyncio.timeout(BOUND):
            await task


def test_for_owns_and_watches_enqueue_exactly_their_requests() -> None:
    async def main() -> None:
        fake = AsyncFakeClientset()
        manager = manager_over(fake)
        recorder = Recorder()

        def pod_to_config_map(pod: Pod) -> list[Request]:
            target = (pod.metadata.labels or {}).get("for")
            return [Request(pod.metadata.namespace or "", target)] if target else []

        (manager.controller_for(ConfigMap)
            .owns(Secret)
            .watches(Pod, pod_to_config_map)
            .complete(recorder))
        secrets, pods = fake.core_v1.secrets(NS), fake.core_v1.pods(NS)
        async with started(manager):
            await fake.core_v1.configmaps(NS).create(ConfigMap(metadata=meta("a")))
            await recorder.expect(["ns/a"])
            await secrets.create(Secret(metadata=meta("s1", owners=[ref("ConfigMap", "a")])))
            await recorder.expect(["ns/a", "ns/a"])
            for secret in (
                Secret(metadata=meta("s2", owners=[ref("ConfigMap", "b", controller=False)])),
                Secret(metadata=meta("s3", owners=[ref("Deployment", "c",
                                                       api_version="apps/v1")])),
                Secret(metadata=meta("s4", owners=[ref("ConfigMap", "d",
                                                       api_version="x.io/v1")])),
                Secret(metadata=meta("s5")),
                Secret(metadata=meta("barrier", owners=[ref("ConfigMap", "z")])),
            ):
                await secrets.create(secret)
            await recorder.expect(["ns/a", "ns/a", "ns/z"])
            await secrets.delete("s1")
            await recorder.expect(["ns/a", "ns/a", "ns/z", "ns/a"])
            spec = PodSpec(containers=[Container(name="c", image="i")])
            await pods.create(Pod(metadata=meta("p1", labels={"other": "x"}), spec=spec))
            await pods.create(Pod(metadata=meta("p2", labels={"for": "m"}), spec=spec))
            await recorder.expect(["ns/a", "ns/a", "ns/z", "ns/a", "ns/m"])

    run(main)


def test_event_filters_apply_to_every_watch_and_predicates_to_one() -> None:
    async def main() -> None:
        fake = AsyncFakeClientset()
        manager = manager_over(fake)
        recorder = Recorder()
        selected = LabelSelectorPredicate({"watch": "yes"})
        no_deletes = Funcs(delete=lambda event: False)
        (AsyncBuilder[ConfigMap](manager).for_(ConfigMap, predicates=[no_deletes])
            .owns(Secret)
            .with_event_filter(selected)
            .complete(recorder))
        configmaps, secrets = fake.core_v1.configmaps(NS), fake.core_v1.secrets(NS)
        async with started(manager):
            await configmaps.create(ConfigMap(metadata=meta("ignored")))
            await configmaps.create(ConfigMap(metadata=meta("a", labels={"watch": "yes"})))
            await recorder.expect(["ns/a"])
            await configmaps.delete("a")  # filtered by the for_ watch's own predicate
            await secrets.create(Secret(metadata=meta("s", labels={"watch": "yes"},
                                                      owners=[ref("ConfigMap", "b")])))
            await recorder.expect(["ns/a", "ns/b"])
            await secrets.delete("s")  # the owns watch has no delete filter
            await recorder.expect(["ns/a", "ns/b", "ns/b"])

    run(main)


def test_the_async_reconcile_contract_and_the_client() -> None:
    async def main() -> None:
        fake = AsyncFakeClientset()
        manager = manager_over(fake)
        client = manager.cluster.client
        calls: dict[str, int] = {}

        async def reconcile(request: Request) -> Result | None:
            calls[request.name] = calls.get(request.name, 0) + 1
            if request.name == "terminal":
                raise TerminalError("bad spec")
            if request.name == "flaky" and calls["flaky"] < 3:
                raise RuntimeError("transient")
            try:
                cm = await client.get(ConfigMap, request.namespace, request.name)
            except NotFoundError:
                return None
            cm.data = {"seen": str(calls[request.name])}
            await client.update(cm)  # writes go to the server; the cache follows the watch
            return None

        (manager.controller_for(ConfigMap)
            .with_event_filter(Funcs(update=lambda event: False))
            .with_options(max_concurrent_reconciles=2,
                          rate_limiter=ItemExponentialFailureRateLimiter(0.001, 0.01))
            .complete(reconcile))
        configmaps = fake.core_v1.configmaps(NS)
        async with started(manager):
            for name in ("ok", "terminal", "flaky"):
                await configmaps.create(ConfigMap(metadata=meta(name)))
            await until(lambda: calls.get("flaky") == 3 and "ok" in calls)
            await until(lambda: (configmaps_data(fake, "flaky") or {}).get("seen") == "3")
            assert calls["terminal"] == 1  # a terminal error is not retried
            assert configmaps_data(fake, "ok") == {"seen": "1"}
            indexer = manager.cluster.cache.informers_for(ConfigMap)[0].indexer
            await until(lambda: getattr(indexer.get_by_key("ns/ok"), "data", None)
                        == {"seen": "1"})
            listed = await client.list(ConfigMap, namespace=NS)
            assert [c.metadata.name for c in listed] == ["flaky", "ok", "terminal"]
            copy = await client.get(ConfigMap, NS, "ok")
            copy.data = {"changed": "locally"}  # a copy: the cache is untouched
            assert (await client.get(ConfigMap, NS, "ok")).data == {"seen": "1"}
            await client.delete(copy)
            with pytest.raises(NotFoundError):
                await manager.cluster.api_reader.get(ConfigMap, NS, "ok")

    run(main)


def configmaps_data(fake: AsyncFakeClientset, name: str) -> dict[str, str] | None:
    data = fake.tracker.get(CONFIG_MAP_RESOURCE.gvr, NS, name).get("data")
    return None if data is None else dict(data)


def test_cache_reads_follow_the_informer_cache_contract() -> None:
    async def main() -> None:
        fake = AsyncFakeClientset()
        await fake.core_v1.configmaps("a").create(ConfigMap(metadata=ObjectMeta(name="x")))
        await fake.core_v1.configmaps("b").create(ConfigMap(metadata=ObjectMeta(name="y")))
        cluster = AsyncCluster(fake.transport, cache=CacheOptions(namespaces=["a", "b"]))
        with pytest.raises(CacheNotStartedError, match="before the cache was started"):
            await cluster.client.get(ConfigMap, "a", "x")
        manager = AsyncManager(cluster=cluster)
        async with started(manager):
            # First read of the kind: its informers start now and the read waits for them.
            assert (await cluster.client.get(ConfigMap, "a", "x")).metadata.name == "x"
            assert [c.metadata.name for c in await cluster.client.list(ConfigMap)] == ["x", "y"]
            gets = len(fake.actions())
            for _ in range(100):  # synced: reads do no I/O
                await cluster.client.get(ConfigMap, "b", "y")
            assert len(fake.actions()) == gets
            with pytest.raises(NamespaceNotCachedError, match="namespace 'c' are not cached"):
                await cluster.client.get(ConfigMap, "c", "z")
            with pytest.raises(ValueError, match="a namespace is needed"):
                await cluster.client.get(ConfigMap, "", "z")
        with pytest.raises(CacheNotStartedError, match="after the cache was shut down"):
            await cluster.client.get(ConfigMap, "a", "x")

    run(main)


def test_rbac_rules_match_the_blocking_builder() -> None:
    from kgen_runtime.api.apps.v1 import Deployment
    from kgen_runtime.api.fake import FakeClientset
    from kgen_runtime.controller import Cluster, LeaseLock, Manager

    async def main() -> None:
        fake = AsyncFakeClientset()
        lock = AsyncLeaseLock(fake.coordination_v1.leases(NS), "ctrl", "me")
        manager = manager_over(fake, leader_election=LeaderElectionConfig(lock))
        blocking_fake = FakeClientset()
        blocking = Manager(cluster=Cluster(blocking_fake.transport), leader_election=(
            LeaderElectionConfig(LeaseLock(blocking_fake.coordination_v1.leases(NS), "c", "m"))))
        for each in (manager, blocking):
            builder: Any = (each.controller_for(Deployment).owns(Secret)
                            .watches(Pod, lambda pod: []).with_permissions(ConfigMap, "get"))
            controller = builder.complete(Recorder() if each is manager else lambda r: None)
            if each is blocking:
                controller.queue.shut_down()  # never run
        assert manager.rbac_rules() == blocking.rbac_rules()
        assert any(r.resources == ["leases"] for r in manager.rbac_rules())
        with pytest.raises(ValueError, match="a controller named 'deployment' was already"):
            manager.controller_for(Deployment).complete(Recorder())
        assert fake.actions() == []  # building asks nothing of the server

    run(main)


def test_the_managers_cache_takes_the_reflector_options_of_an_informer_factory() -> None:
    """Issue 20 item 4, the async twin: the async builder's informers list, watch and judge a
    silent watch as the cache's reflector options say (they always ran with client-go's
    defaults: pages of 500, a watch taken as stalled after 120 s of silence)."""

    async def main() -> None:
        fake = AsyncFakeClientset()
        options = ReflectorOptions(page_size=7, min_watch_timeout=11.0, watch_read_timeout=0.2)
        cluster = AsyncCluster(fake.transport, cache=CacheOptions(reflector_options=options))
        manager = AsyncManager(cluster=cluster)
        recorder = Recorder()
        manager.controller_for(ConfigMap).complete(recorder)

        def requests() -> list[tuple[str, dict[str, str]]]:
            return [(a.verb, dict(a.query)) for a in fake.actions()
                    if a.resource.resource == "configmaps" and a.verb in ("list", "watch")]

        async with started(manager):
            await fake.core_v1.configmaps(NS).create(ConfigMap(metadata=meta("a")))
            await recorder.expect(["ns/a"])
            # Nothing happens next: the silent watch is taken as stalled and opened again
            # (re-listing first when it ended within a second: a very short watch).
            await until(lambda: [verb for verb, _ in requests()].count("watch") >= 2)
        lists = [query for verb, query in requests() if verb == "list"]
        watches = [query for verb, query in requests() if verb == "watch"]
        assert requests()[0][0] == "list" and len(watches) >= 2
        assert lists[0].get("limit") == "7"  # the first list pages
        assert all(11 <= int(query["timeoutSeconds"]) < 22 for query in watches)

    run(main)
