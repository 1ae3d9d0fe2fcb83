"""CacheShards: which list-watch serves each marked kind (its own hash for a primary kind,
its controller owner's for an owned kind, its own namespace for both under a namespace ring),
and that set_ranges moves all of them."""

from __future__ import annotations

from typing import Any

import pytest

from kgen_runtime.api.apps.v1 import Deployment
from kgen_runtime.api.core.v1 import ConfigMap
from kgen_runtime.controller._cluster.shards import NO_RANGES, CacheShards
from kgen_runtime.sharding import (
    HASH_SPACE,
    AsyncOwnerShardedListWatch,
    AsyncShardedListWatch,
    HashRange,
    OwnerShardedListWatch,
    ShardedListWatch,
    ShardField,
)

LOWER = HashRange(0, HASH_SPACE // 2)


class Never:
    """A lister-watcher these tests never call."""

    def list(self, options: Any) -> Any:
        raise AssertionError("not called")

    def watch(self, options: Any) -> Any:
        raise AssertionError("not called")


def shards(field: ShardField) -> CacheShards:
    made = CacheShards()
    made.enable(field)
    made.mark(ConfigMap)
    made.mark_owned(Deployment)
    return made


def test_under_a_uid_ring_an_owned_kind_is_filtered_by_its_owner() -> None:
    cache = shards(ShardField.UID)
    primary = cache.wrap(ConfigMap, Never())
    owned = cache.wrap(Deployment, Never())
    async_owned = cache.wrap_async(Deployment, Never())  # type: ignore[arg-type]
    assert type(primary) is ShardedListWatch
    assert type(owned) is OwnerShardedListWatch
    assert type(async_owned) is AsyncOwnerShardedListWatch
    assert cache.sharded(ConfigMap) and cache.sharded(Deployment)
    cache.set_ranges([LOWER])
    assert [lw.ranges for lw in (primary, owned, async_owned)] == [(LOWER,)] * 3
    cache.set_ranges([])
    assert owned.ranges == NO_RANGES


def test_under_a_namespace_ring_an_owned_kind_is_sharded_by_its_namespace() -> None:
    cache = shards(ShardField.NAMESPACE)
    owned = cache.wrap_async(Deployment, Never())  # type: ignore[arg-type]
    assert type(owned) is AsyncShardedListWatch
    assert owned.selector.startswith("shardRange(object.metadata.namespace, ")


def test_a_kind_is_sharded_one_way_only() -> None:
    cache = shards(ShardField.UID)
    with pytest.raises(ValueError, match="Deployment is already owned by a sharded controller"):
        cache.mark(Deployment)
    with pytest.raises(ValueError, match="ConfigMap is already the primary kind"):
        cache.mark_owned(ConfigMap)
    with pytest.raises(ValueError, match="needs a manager with sharding"):
        CacheShards().mark_owned(Deployment)
