"""errors: Aggregate flattening, messages, membership, except*."""

from __future__ import annotations

import pickle

import pytest

from kgen_runtime.util import Aggregate, new_aggregate


class ConflictError(Exception):
    pass


def test_empty_or_all_none_is_none() -> None:
    assert new_aggregate([]) is None
    assert new_aggregate([None, None]) is None


def test_nones_removed_and_nested_aggregates_flattened() -> None:
    a, b, c = ValueError("a"), KeyError("b"), TypeError("c")
    agg = new_aggregate([a, None, new_aggregate([b, new_aggregate([c])])])
    assert agg is not None
    assert agg.exceptions == (a, b, c)


def test_message_single_and_deduplicated() -> None:
    assert str(Aggregate([ValueError("only")])) == "only"
    agg = Aggregate([ValueError("x"), TypeError("y"), ValueError("x")])
    assert str(agg) == "[x, y]"
    assert len(agg.exceptions) == 3  # the errors themselves are all kept
    assert str(Aggregate([ValueError("same"), TypeError("same")])) == "same"


def test_membership_by_type_and_by_instance() -> None:
    conflict = ConflictError("c")
    nested = ExceptionGroup("inner", [conflict])
    agg = Aggregate([ValueError("v"), nested])
    assert ConflictError in agg
    assert ValueError in agg
    assert KeyError not in agg
    assert conflict in agg
    assert ConflictError("c") not in agg  # another instance


def test_except_star_and_split_keep_the_aggregate_type() -> None:
    agg = Aggregate([ConflictError("c"), ValueError("v")])
    caught: list[BaseException] = []
    with pytest.raises(Aggregate) as rest:
        try:
            raise agg
        except* ConflictError as group:
            caught.append(group)
    assert isinstance(caught[0], Aggregate)
    assert str(caught[0]) == "c"
    assert str(rest.value) == "v"
    match, others = agg.split(ValueError)
    assert isinstance(match, Aggregate) and isinstance(others, Aggregate)


def test_pickles() -> None:
    agg = Aggregate([ValueError("x"), KeyError("k")])
    copy = pickle.loads(pickle.dumps(agg))
    assert type(copy) is Aggregate
    assert str(copy) == str(agg)
    assert [type(e) for e in copy.exceptions] == [ValueError, KeyError]


def test_direct_construction_needs_errors() -> None:
    with pytest.raises(ValueError):
        Aggregate([])
