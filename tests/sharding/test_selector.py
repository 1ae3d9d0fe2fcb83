"""parse_selector: the wire form back to ranges, and kube-apiserver v1.36's error texts
(the two ../shared/REAL-CLUSTER.md recorded on a real server, the others its parser's)."""

from __future__ import annotations

import pytest

from kgen_runtime.sharding import (
    HASH_SPACE,
    HashRange,
    ShardField,
    ShardSelectorError,
    format_selector,
    parse_selector,
)

HALF = 1 << 63
QUARTER = 1 << 62


@pytest.mark.parametrize("field", list(ShardField))
@pytest.mark.parametrize(
    "ranges",
    [
        [HashRange(0, HASH_SPACE)],
        [HashRange(0, HALF)],
        [HashRange(HALF, HASH_SPACE)],
        [HashRange(0, QUARTER), HashRange(HALF, HALF + QUARTER)],
        [HashRange(1, 2), HashRange(5, 9), HashRange(HASH_SPACE - 1, HASH_SPACE)],
    ],
)
def test_format_then_parse_round_trips(field: ShardField, ranges: list[HashRange]) -> None:
    text = format_selector(ranges, field)
    assert parse_selector(text) == (field, ranges)
    assert format_selector(parse_selector(text)[1], field) == text


def test_parses_the_openapi_examples_with_any_spacing_and_parentheses() -> None:
    text = (
        "  ( shardRange(object.metadata.uid,'0x0000000000000000',\"0x8000000000000000\") )||"
        "shardRange( object.metadata.uid , '0x8000000000000000', '0x10000000000000000' )  "
    )
    assert parse_selector(text) == (
        ShardField.UID, [HashRange(0, HALF), HashRange(HALF, HASH_SPACE)])


def test_ranges_keep_their_written_order() -> None:
    text = ("shardRange(object.metadata.namespace, '0x8000000000000000', '0xc000000000000000') "
            "|| shardRange(object.metadata.namespace, '0x0000000000000000', '0x4000000000000000')")
    assert parse_selector(text) == (
        ShardField.NAMESPACE, [HashRange(HALF, HALF + QUARTER), HashRange(0, QUARTER)])


UID = "object.metadata.uid"
END = "'0x8000000000000000'"


@pytest.mark.parametrize(
    ("text", "detail"),
    [
        # ../shared/REAL-CLUSTER.md: both answered by a v1.36.2 server with these texts
        (f"shardRange({UID}, '0x0', {END})",
         'hexStart must be a 0x-prefixed 16-digit hex value, got "0x0" (did you mean '
         '"0x0000000000000000"?)'),
        ("shardRange(object.metadata.name, '0x0000000000000000', '0x8000000000000000')",
         'unsupported field path "object.metadata.name"; supported: object.metadata.uid, '
         "object.metadata.namespace"),
        # the parser's other checks
        ("   ", "empty shard selector is not allowed; omit the parameter for unfiltered lists"),
        (f"shardRange({UID}, '0x0000000000000000', '0x8')",
         'hexEnd must be a 0x-prefixed 16-digit hex value, got "0x8" (did you mean '
         '"0x0000000000000008"?)'),
        (f"shardRange({UID}, '0x0000000000000000', '0x20000000000000000')",
         "hexEnd: 17-digit hex value must be '0x10000000000000000' (2^64), got "
         '"0x20000000000000000"'),
        (f"shardRange({UID}, '0x000000000000000000', {END})",
         'hexStart: hex value too long (18 chars, max 17): "000000000000000000"'),
        (f"shardRange({UID}, '0x00000000000000AB', {END})",
         'hexStart: invalid hex character "A" in "0x00000000000000AB"'),
        (f"shardRange({UID}, '0000000000000000', {END})",
         "hexStart must have '0x' prefix, got \"0000000000000000\""),
        (f"shardRange({UID}, '0x', {END})", "hexStart: hex value is required after '0x'"),
        (f"shardRange({UID}, 0, {END})", "hexStart must be a string literal, got int64"),
        (f"shardRange({UID}, {END}, '0x0000000000000000')",
         "shard range start 0x8000000000000000 must be less than end 0x0000000000000000"),
        (f"shardRange({UID}, {END}, {END})",
         "shard range start 0x8000000000000000 must be less than end 0x8000000000000000"),
        (f"shardRange({UID}, {END})", "shardRange() requires exactly 3 arguments, got 2"),
        (f"shardRange({UID}, '0x0000000000000000', {END}) && shardRange({UID}, "
         f"'0x0000000000000000', {END})",
         'unsupported function "_&&_"; only shardRange() and || are allowed'),
        (f"hashRange({UID}, '0x0000000000000000', {END})",
         'unsupported function "hashRange"; only shardRange() and || are allowed'),
        (UID, "unexpected expression kind 7; expected shardRange() call or || operator"),
        ("shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000') || "
         "shardRange(object.metadata.namespace, '0x8000000000000000', '0x10000000000000000')",
         'all shard ranges must use the same field, got "object.metadata.uid" and '
         '"object.metadata.namespace"'),
    ],
)
def test_errors_carry_the_servers_texts(text: str, detail: str) -> None:
    with pytest.raises(ShardSelectorError) as caught:
        parse_selector(text)
    assert str(caught.value) == f"invalid shard selector: {detail}"
    assert caught.value.detail == detail
    assert caught.value.selector == text


@pytest.mark.parametrize("text", ["shardRange(", "shardRange(object.metadata.uid,, '0x')", "#"])
def test_text_that_is_not_cel_is_a_parse_error(text: str) -> None:
    with pytest.raises(ShardSelectorError, match=r"^invalid shard selector: CEL parse error: "):
        parse_selector(text)
