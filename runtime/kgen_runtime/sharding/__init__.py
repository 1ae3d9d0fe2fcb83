"""Sharded controllers: hash ranges, server-side sharded list/watch, and shard membership."""

from kgen_runtime.sharding._ranges import (
    HASH_SPACE,
    HashRange,
    ShardField,
    fnv1a64,
    format_selector,
    merge,
)

__all__ = ["HASH_SPACE", "HashRange", "ShardField", "fnv1a64", "format_selector", "merge"]
