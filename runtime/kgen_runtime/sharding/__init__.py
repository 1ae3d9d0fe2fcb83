"""Sharded controllers: hash ranges, server-side sharded list/watch, and shard membership."""

from kgen_runtime.sharding._listwatch import (
    AsyncShardedListWatch,
    ShardedListWatch,
    ShardRangesChangedError,
)
from kgen_runtime.sharding._ranges import (
    HASH_SPACE,
    HashRange,
    ShardField,
    fnv1a64,
    format_selector,
    merge,
)
from kgen_runtime.sharding._selector import ShardSelectorError, parse_selector

__all__ = [
    "HASH_SPACE",
    "AsyncShardedListWatch",
    "HashRange",
    "ShardField",
    "ShardRangesChangedError",
    "ShardSelectorError",
    "ShardedListWatch",
    "fnv1a64",
    "format_selector",
    "merge",
    "parse_selector",
]
