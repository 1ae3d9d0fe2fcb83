"""Two managers of one shard ring in one process (``Manager(sharding=...)`` and the builder's
``sharded()``), against the test server with its ``ShardedListAndWatch`` gate on (the server
filters) and off (the client filters): each caches and reconciles only its member's objects
(and caches only the Secrets they control: ``owns()`` of a sharded controller), never one
object at the same time as the other, together all of them, and the survivor takes over the
objects of a manager that stops."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import ExitStack

import pytest

from kgen_runtime.api.clientset import Clientset
from kgen_runtime.api.core.v1 import ConfigMap, Secret
from kgen_runtime.controller import Cluster, Manager, Request, ShardingConfig
from kgen_runtime.rest import HTTPTransport
from kgen_runtime.testing import TestAPIServer
from tests.controller._sharding import NS, WAIT, Ledger, create_objects, in_ranges
from tests.controller._support import eventually, started


@pytest.fixture(params=[True, False], ids=["server-filters", "client-filters"])
def gate(request: pytest.FixtureRequest) -> bool:
    """The test server's ShardedListAndWatch feature gate."""
    return bool(request.param)


@pytest.fixture
def server(gate: bool) -> Iterator[TestAPIServer]:
    with TestAPIServer(sharded_list_and_watch=gate) as test_server:
        yield test_server


def make_manager(server: TestAPIServer, stack: ExitStack, name: str, ledger: Ledger) -> Manager:
    transport = HTTPTransport(server.config())
    stack.callback(transport.close)
    cluster = Cluster(transport)
    manager = Manager(
        cluster=cluster,
        sharding=ShardingConfig(ring="configmaps", member=name, lease_namespace="kube-system",
                                lease_duration=2.0, renew_period=0.1),
        graceful_shutdown_timeout=10.0,
    )

    def reconcile(request: Request) -> None:
        ledger.enter(name, request.name)
        try:  # a GET from the server inside: a window two members' reconciles could share
            cluster.api_reader.get(ConfigMap, request.namespace, request.name)
        finally:
            ledger.leave(request.name)

    manager.controller_for(ConfigMap).sharded().owns(Secret).complete(reconcile)
    return manager


def cached(manager: Manager, kind: type[ConfigMap | Secret] = ConfigMap) -> set[str]:
    return {obj.metadata.name or "" for obj in manager.cluster.cache.list(kind, namespace=NS)}


def held(manager: Manager, uids: dict[str, str]) -> set[str]:
    """The objects whose uid hashes into the ranges the manager's member holds."""
    member = manager.shard_member
    assert member is not None
    return in_ranges(uids, member.ranges())


def test_two_managers_split_the_objects_and_one_takes_over_when_the_other_stops(
    server: TestAPIServer, gate: bool,
) -> None:
    with Clientset.for_config(server.config()) as clients:
        uids = create_objects(clients)
        everything = set(uids)
        ledger = Ledger()
        with ExitStack() as stack:
            a = make_manager(server, stack, "a", ledger)
            b = make_manager(server, stack, "b", ledger)
            with started(b, timeout=WAIT):
                with started(a, timeout=WAIT):
                    # Settled: each member holds some ranges, its cache holds exactly the
                    # objects of its ranges, and together they reconciled every object.
                    def split() -> bool:
                        mine_a, mine_b = held(a, uids), held(b, uids)
                        return (bool(mine_a) and bool(mine_b) and not mine_a & mine_b
                                and mine_a | mine_b == everything
                                and cached(a) == mine_a and cached(b) == mine_b
                                # the Secrets follow their controlling ConfigMaps
                                and cached(a, Secret) == mine_a
                                and cached(b, Secret) == mine_b
                                and ledger.reconciled_by("a") >= mine_a
                                and ledger.reconciled_by("b") >= mine_b)

                    eventually(split, timeout=WAIT)
                    a_held = held(a, uids)
                    # Who filtered: the server with its gate on, else the client.
                    assert a.cluster.cache.shards.server_sharded() is gate
                    assert b.cluster.cache.shards.server_sharded() is gate
                    since = len(ledger.log)
                # a left the ring (its manager stopped): b takes over a's objects.
                eventually(lambda: held(b, uids) == everything and cached(b) == everything
                           and cached(b, Secret) == everything
                           and ledger.reconciled_by("b", since) >= a_held, timeout=WAIT)
        assert ledger.overlaps == []
        assert {name for _, name in ledger.log} == everything
        leases = clients.coordination_v1.leases("kube-system").list().items
        assert [lease.metadata.name for lease in leases if lease.metadata] == []


def test_sharded_needs_a_manager_with_sharding() -> None:
    with TestAPIServer() as server:
        transport = HTTPTransport(server.config())
        try:
            manager = Manager(cluster=Cluster(transport))
            builder = manager.controller_for(ConfigMap).sharded()
            with pytest.raises(ValueError, match=r"sharded\(\) controller of ConfigMap needs "
                                                 r"a manager with sharding"):
                builder.complete(lambda request: None)
        finally:
            transport.close()


def test_sharding_excludes_leader_election_and_needs_a_cluster() -> None:
    config = ShardingConfig(ring="r", member="m", lease_namespace="ns")
    with pytest.raises(ValueError, match="a manager with sharding needs a cluster"):
        Manager(sharding=config)


def sharding_manager(transport: HTTPTransport) -> Manager:
    return Manager(cluster=Cluster(transport), sharding=ShardingConfig(
        ring="r", member="m", lease_namespace="kube-system"))


def test_an_owned_kind_cannot_be_the_sharded_primary_kind_too() -> None:
    with TestAPIServer() as server:
        transport = HTTPTransport(server.config())
        try:
            builder = sharding_manager(transport).controller_for(ConfigMap).sharded()
            with pytest.raises(ValueError, match="ConfigMap is already the primary kind of a "
                                                 "sharded controller"):
                builder.owns(ConfigMap).complete(lambda request: None)
        finally:
            transport.close()


def test_an_owned_kind_cached_whole_by_an_earlier_controller_cannot_be_sharded() -> None:
    with TestAPIServer() as server:
        transport = HTTPTransport(server.config())
        try:
            manager = sharding_manager(transport)
            manager.controller_for(Secret).complete(lambda request: None)
            builder = manager.controller_for(ConfigMap).sharded().owns(Secret)
            with pytest.raises(ValueError, match="Secret's informers were made unsharded"):
                builder.complete(lambda request: None)
        finally:
            transport.close()
