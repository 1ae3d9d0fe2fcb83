"""Shard selectors: the hash ranges over the 64-bit FNV-1a space kube-apiserver v1.36 shards
lists and watches by (KEP-5866), a shard field's hash, and a ``shardSelector``'s wire form,
written and parsed.

The vocabulary shared by the client (:mod:`kgen_runtime.sharding`, which re-exports every
name here) and the test server (:mod:`kgen_runtime.testing`), as :mod:`kgen_runtime.labels`
is for label selectors; it imports nothing else of the runtime.
"""

from kgen_runtime.shardranges._ranges import (
    HASH_SPACE,
    HashRange,
    ShardField,
    fnv1a64,
    format_selector,
    merge,
)
from kgen_runtime.shardranges._selector import ShardSelectorError, parse_selector

__all__ = [
    "HASH_SPACE",
    "HashRange",
    "ShardField",
    "ShardSelectorError",
    "fnv1a64",
    "format_selector",
    "merge",
    "parse_selector",
]
