"""Hash ranges and the shardSelector wire form, checked against FNV-1a's published vectors
and the examples in the ``shardSelector`` parameter's OpenAPI description."""

from __future__ import annotations

import pytest

from kgen_runtime.sharding import HASH_SPACE, HashRange, ShardField, fnv1a64, format_selector, merge


@pytest.mark.parametrize(
    ("text", "digest"),
    [
        # The FNV reference test vectors (www.isthe.com/chongo/tech/comp/fnv, FNV-1a 64).
        ("", 0xCBF29CE484222325),
        ("a", 0xAF63DC4C8601EC8C),
        ("foobar", 0x85944171F73967E8),
    ],
)
def test_fnv1a64_matches_the_reference_vectors(text: str, digest: int) -> None:
    assert fnv1a64(text) == digest


def test_fnv1a64_hashes_utf8_bytes() -> None:
    assert fnv1a64("é") == fnv1a64("\u00e9") != fnv1a64("e")
    assert 0 <= fnv1a64("ns-ü") < HASH_SPACE


def test_selector_of_the_openapi_two_shard_example() -> None:
    half = 1 << 63
    assert HashRange(0, half).selector() == (
        "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')"
    )
    assert HashRange(half, HASH_SPACE).selector(ShardField.NAMESPACE) == (
        "shardRange(object.metadata.namespace, '0x8000000000000000', '0x10000000000000000')"
    )


def test_format_selector_merges_and_joins_with_or() -> None:
    quarter = 1 << 62
    ranges = [
        HashRange(3 * quarter, HASH_SPACE),
        HashRange(0, quarter),
        HashRange(quarter, 2 * quarter),
    ]
    assert format_selector(ranges) == (
        "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')"
        " || shardRange(object.metadata.uid, '0xc000000000000000', '0x10000000000000000')"
    )


def test_merge_joins_overlaps_and_keeps_gaps() -> None:
    assert merge([HashRange(5, 9), HashRange(0, 6), HashRange(10, 12)]) == (
        HashRange(0, 9),
        HashRange(10, 12),
    )


def test_membership_is_half_open() -> None:
    hash_range = HashRange(10, 20)
    assert 10 in hash_range and 19 in hash_range
    assert 20 not in hash_range and 9 not in hash_range and "10" not in hash_range


@pytest.mark.parametrize(("start", "end"), [(5, 5), (6, 5), (-1, 3), (0, HASH_SPACE + 1)])
def test_invalid_ranges_are_refused(start: int, end: int) -> None:
    with pytest.raises(ValueError, match="hash range"):
        HashRange(start, end)


def test_a_selector_needs_a_range() -> None:
    with pytest.raises(ValueError, match="at least one hash range"):
        format_selector([])
