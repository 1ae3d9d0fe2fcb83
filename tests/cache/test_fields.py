"""Field selector parsing and matching (apimachinery's pkg/fields)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from kgen_runtime import fields
from kgen_runtime.fields import FieldSelectorError, Term


def test_parse_sorts_terms_and_prints() -> None:
    sel = fields.parse("metadata.namespace!=kube-system,metadata.name==foo")
    assert sel.terms == (
        Term("metadata.name", "==", "foo"),
        Term("metadata.namespace", "!=", "kube-system"),
    )
    assert str(sel) == "metadata.name==foo,metadata.namespace!=kube-system"


def test_escaped_values_round_trip() -> None:
    value = "a,b=c\\d"
    sel = fields.one_term_equal_selector("spec.x", value)
    assert str(sel) == "spec.x=a\\,b\\=c\\\\d"
    assert fields.parse(str(sel)) == sel


def test_matching_uses_empty_string_for_missing_fields() -> None:
    obj = SimpleNamespace(metadata=SimpleNamespace(name="foo", namespace=None))
    have = fields.object_fields(obj)
    assert have == {"metadata.name": "foo", "metadata.namespace": ""}
    assert fields.parse("metadata.name=foo").matches(have)
    assert fields.parse("metadata.namespace=").matches(have)
    assert not fields.parse("metadata.name!=foo").matches(have)
    assert fields.parse("spec.other!=x").matches(have)
    assert fields.everything().matches(have)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("metadata.name", "can't understand 'metadata.name'"),
        ("=foo", "has no field name"),
        ("a=b=c", "unescaped '=' in value"),
        ("a=b\\x", "invalid escape sequence"),
    ],
)
def test_errors(text: str, message: str) -> None:
    with pytest.raises(FieldSelectorError, match=message):
        fields.parse(text)


def test_first_operator_wins_left_to_right() -> None:
    assert fields.parse("a!=b").terms == (Term("a", "!=", "b"),)
    assert fields.parse("a=!b").terms == (Term("a", "=", "!b"),)


def test_requires_exact_match_and_empty() -> None:
    sel = fields.selector_from_set({"metadata.name": "x"})
    assert sel.requires_exact_match("metadata.name") == "x"
    assert fields.parse("metadata.name!=x").requires_exact_match("metadata.name") is None
    assert fields.parse("").empty()
    assert fields.parse(",a=b,").terms == (Term("a", "=", "b"),)
