"""Sharded controllers: hash ranges, server-side sharded list/watch, and shard membership."""

from kgen_runtime.sharding._ranges import (
    HASH_SPACE,
    HashRange,
    ShardField,
    fnv1a64,
    format_selector,
    merge,
)

# Membership and assignment: the ring, the sans-I/O coordinator and its drivers.
from kgen_runtime.sharding._ring import VIRTUAL_NODES, HashRing
from kgen_runtime.sharding._ring import token as ring_token

__all__ = ["HASH_SPACE", "HashRange", "ShardField", "fnv1a64", "format_selector", "merge"]
__all__ += ["VIRTUAL_NODES", "HashRing", "ring_token"]
