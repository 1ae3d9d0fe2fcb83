"""The reconcile gate of ``sharded()`` controllers: begin/end around each reconcile on the
object's hash; a request the member refuses is retried while its object is cached, dropped
otherwise, and one whose object is not cached is dropped under ``ShardField.UID``."""

from __future__ import annotations

import asyncio

from kgen_runtime.api.core.v1 import ConfigMap
from kgen_runtime.controller import AsyncReconcilerFunc, ReconcilerFunc, Request, Result
from kgen_runtime.controller._builder.shard_gate import ShardGate
from kgen_runtime.controller._builder.shard_gate_aio import AsyncShardGate
from kgen_runtime.meta import ObjectMeta
from kgen_runtime.rest.errors import NotFoundError
from kgen_runtime.sharding import ShardField, fnv1a64


class Member:
    """Accepts the digests in ``accepted``; records every begin and end."""

    def __init__(self, *accepted: int) -> None:
        self.accepted = set(accepted)
        self.calls: list[tuple[str, int]] = []

    def begin(self, digest: int) -> bool:
        self.calls.append(("begin", digest))
        return digest in self.accepted

    def end(self, digest: int) -> None:
        self.calls.append(("end", digest))


class Cache:
    """One cached ConfigMap, ``ns/cm`` with uid ``u-1``."""

    def get(self, kind: type[ConfigMap], namespace: str, name: str) -> ConfigMap:
        if (namespace, name) != ("ns", "cm"):
            raise NotFoundError({"reason": "NotFound", "code": 404, "message": name})
        return ConfigMap(metadata=ObjectMeta(name=name, namespace=namespace, uid="u-1"))


class AsyncCache:
    async def get(self, kind: type[ConfigMap], namespace: str, name: str) -> ConfigMap:
        return Cache().get(kind, namespace, name)


def test_the_gate_fences_accepted_reconciles_and_drops_the_rest() -> None:
    member = Member(fnv1a64("u-1"))
    seen: list[Request] = []
    gate = ShardGate(ReconcilerFunc(seen.append), member, ConfigMap, ShardField.UID, Cache())
    assert gate.reconcile(Request("ns", "cm")) is None
    assert seen == [Request("ns", "cm")]
    assert member.calls == [("begin", fnv1a64("u-1")), ("end", fnv1a64("u-1"))]
    assert gate.reconcile(Request("ns", "gone")) is None  # not cached: owner unknown
    assert member.calls == [("begin", fnv1a64("u-1")), ("end", fnv1a64("u-1"))]
    refused = ShardGate(ReconcilerFunc(seen.append), Member(), ConfigMap, ShardField.NAMESPACE,
                        Cache())
    assert refused.reconcile(Request("ns", "other-shards")) is None  # not cached: not ours
    assert seen == [Request("ns", "cm")]


def test_a_request_refused_while_its_object_is_cached_is_retried_until_the_member_holds_it(
) -> None:
    """Found by the fenced-counter test: a replica paused past its hold refuses, on resuming,
    the events its watch delivers meanwhile; it then re-acquires ranges its cache kept, whose
    relist notifies nothing (same resourceVersions), so a dropped request was lost for good
    (the object never converged). Refused while its object is cached, a request is retried."""
    member = Member()  # its hold lapsed: it refuses everything
    seen: list[Request] = []
    gate = ShardGate(ReconcilerFunc(seen.append), member, ConfigMap, ShardField.UID, Cache())
    assert gate.reconcile(Request("ns", "cm")) == Result(requeue=True)
    assert seen == []
    member.accepted.add(fnv1a64("u-1"))  # renewed: it holds the range again
    assert gate.reconcile(Request("ns", "cm")) is None
    assert seen == [Request("ns", "cm")]
    assert member.calls == [("begin", fnv1a64("u-1"))] * 2 + [("end", fnv1a64("u-1"))]
    by_namespace = ShardGate(ReconcilerFunc(seen.append), Member(), ConfigMap,
                             ShardField.NAMESPACE, Cache())
    assert by_namespace.reconcile(Request("ns", "cm")) == Result(requeue=True)


def test_the_namespace_field_hashes_the_request_and_ends_after_a_failure() -> None:
    member = Member(fnv1a64("ns"))

    def fail(request: Request) -> None:
        raise RuntimeError(f"failed {request}")

    gate = ShardGate(ReconcilerFunc(fail), member, ConfigMap, ShardField.NAMESPACE, Cache())
    try:
        gate.reconcile(Request("ns", "not-cached-is-fine"))
    except RuntimeError as err:
        assert str(err) == "failed ns/not-cached-is-fine"
    else:
        raise AssertionError("the reconciler's error was swallowed")
    assert member.calls == [("begin", fnv1a64("ns")), ("end", fnv1a64("ns"))]


def test_the_async_gate_fences_retries_and_drops_alike() -> None:
    member = Member(fnv1a64("u-1"))
    seen: list[Request] = []

    async def reconcile(request: Request) -> None:
        seen.append(request)

    gate = AsyncShardGate(AsyncReconcilerFunc(reconcile), member, ConfigMap, ShardField.UID,
                          AsyncCache())

    refused = AsyncShardGate(AsyncReconcilerFunc(reconcile), Member(), ConfigMap,
                             ShardField.NAMESPACE, AsyncCache())

    async def main() -> None:
        assert await gate.reconcile(Request("ns", "cm")) is None
        assert await gate.reconcile(Request("ns", "gone")) is None
        assert await refused.reconcile(Request("ns", "cm")) == Result(requeue=True)
        assert await refused.reconcile(Request("ns", "other-shards")) is None

    asyncio.run(main())
    assert seen == [Request("ns", "cm")]
    assert member.calls == [("begin", fnv1a64("u-1")), ("end", fnv1a64("u-1"))]
