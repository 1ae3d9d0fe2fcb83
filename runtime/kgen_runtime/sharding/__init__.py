"""Sharded controllers: hash ranges, server-side sharded list/watch, and shard membership."""

from kgen_runtime.sharding._ranges import (
    HASH_SPACE,
    HashRange,
    ShardField,
    fnv1a64,
    format_selector,
    merge,
)

# isort: split
# Membership and assignment: the ring, the sans-I/O coordinator and its drivers.
from kgen_runtime.sharding._coordinator import (
    HELD_ANNOTATION,
    LEAVING_ANNOTATION,
    RING_LABEL,
    DeleteLease,
    ShardAction,
    ShardCoordinator,
    WriteLease,
)
from kgen_runtime.sharding._member import RangesCallback, ShardLeaseClient, ShardMember
from kgen_runtime.sharding._member_aio import AsyncShardLeaseClient, AsyncShardMember
from kgen_runtime.sharding._ring import VIRTUAL_NODES, HashRing
from kgen_runtime.sharding._ring import token as ring_token

__all__ = ["HASH_SPACE", "HashRange", "ShardField", "fnv1a64", "format_selector", "merge"]
__all__ += [
    "HELD_ANNOTATION",
    "LEAVING_ANNOTATION",
    "RING_LABEL",
    "VIRTUAL_NODES",
    "AsyncShardLeaseClient",
    "AsyncShardMember",
    "DeleteLease",
    "HashRing",
    "RangesCallback",
    "ShardAction",
    "ShardCoordinator",
    "ShardLeaseClient",
    "ShardMember",
    "WriteLease",
    "ring_token",
]
