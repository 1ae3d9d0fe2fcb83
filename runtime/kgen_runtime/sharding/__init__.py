"""Sharded controllers: hash ranges, server-side sharded list/watch, and shard membership.

The hash ranges and the selector syntax live in :mod:`kgen_runtime.shardranges` (shared with
the test server) and are re-exported here."""

from kgen_runtime.sharding._coordinator import (
    HELD_ANNOTATION,
    LEAVING_ANNOTATION,
    RING_LABEL,
    DeleteLease,
    ShardAction,
    ShardCoordinator,
    WriteLease,
)
from kgen_runtime.sharding._listwatch import (
    AsyncShardedListWatch,
    ShardedListWatch,
    ShardRangesChangedError,
)
from kgen_runtime.sharding._member import ShardMember
from kgen_runtime.sharding._member_aio import AsyncShardMember
from kgen_runtime.sharding._member_core import RangesCallback
from kgen_runtime.sharding._ownerwatch import (
    AsyncOwnerShardedListWatch,
    OwnerShardedListWatch,
    controller_uid,
)
from kgen_runtime.sharding._ring import VIRTUAL_NODES, HashRing
from kgen_runtime.sharding._ring import token as ring_token
from kgen_runtime.sharding._rounds import ShardLeaseClient
from kgen_runtime.sharding._rounds_aio import AsyncShardLeaseClient
from kgen_runtime.shardranges import (
    HASH_SPACE,
    HashRange,
    ShardField,
    ShardSelectorError,
    fnv1a64,
    format_selector,
    merge,
    parse_selector,
)

__all__ = [
    "HASH_SPACE",
    "HELD_ANNOTATION",
    "LEAVING_ANNOTATION",
    "RING_LABEL",
    "VIRTUAL_NODES",
    "AsyncOwnerShardedListWatch",
    "AsyncShardLeaseClient",
    "AsyncShardMember",
    "AsyncShardedListWatch",
    "DeleteLease",
    "HashRange",
    "HashRing",
    "OwnerShardedListWatch",
    "RangesCallback",
    "ShardAction",
    "ShardCoordinator",
    "ShardField",
    "ShardLeaseClient",
    "ShardMember",
    "ShardRangesChangedError",
    "ShardSelectorError",
    "ShardedListWatch",
    "WriteLease",
    "controller_uid",
    "fnv1a64",
    "format_selector",
    "merge",
    "parse_selector",
    "ring_token",
]
