"""Label selector parsing, printing and matching against apimachinery's behaviour."""

from __future__ import annotations

import re

import pytest

from kgen_runtime import labels
from kgen_runtime.labels import Operator, Requirement, SelectorError


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("", ""),
        ("x=a", "x=a"),
        ("x==a", "x==a"),
        ("x!=a", "x!=a"),
        ("x", "x"),
        ("!x", "!x"),
        (" x in (b, a) ", "x in (a,b)"),
        ("x notin (a)", "x notin (a)"),
        ("z=1,a=2", "a=2,z=1"),
        ("x>1", "x>1"),
        ("x<-3", "x<-3"),
        ("x=", "x="),
        ("x in (a,)", "x in (,a)"),
        ("example.com/app=web,!tier", "example.com/app=web,!tier"),
    ],
)
def test_parse_prints_canonical_form(text: str, canonical: str) -> None:
    assert str(labels.parse(text)) == canonical


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("x=a,", "expected a requirement after ','"),
        ("x in a", "expected '(' after 'in' or 'notin'"),
        ("x in ()", "values set can't be empty"),
        ("x in (a b)", "expected ',' or ')'"),
        ("x y", "found 'y' at position 2, expected an operator"),
        ("!x=a", "expected ',' or end of string after '!key'"),
        ("=a", "expected a key"),
        ("x>a", "must be an integer"),
        ("x=a b", "expected ',' or end of string"),
        ("-x=a", "invalid label key '-x'"),
        ("x=" + "a" * 64, "invalid label value"),
        ("UPPER.com/x=a", "prefix must be a DNS subdomain"),
        ("x in (a", "found end of string, expected ',' or ')' in a value list"),
    ],
)
def test_parse_errors_name_the_problem(text: str, message: str) -> None:
    with pytest.raises(SelectorError, match=re.escape(message)):
        labels.parse(text)


def test_error_names_the_position() -> None:
    with pytest.raises(SelectorError) as info:
        labels.parse("a=b,c d")
    assert "found 'd' at position 6" in str(info.value)


@pytest.mark.parametrize(
    ("selector", "matching", "not_matching"),
    [
        ("x=a", [{"x": "a"}], [{}, {"x": "b"}]),
        ("x!=a", [{}, {"x": "b"}], [{"x": "a"}]),
        ("x in (a,b)", [{"x": "a"}, {"x": "b"}], [{}, {"x": "c"}]),
        ("x notin (a,b)", [{}, {"x": "c"}], [{"x": "a"}]),
        ("x", [{"x": ""}], [{}]),
        ("!x", [{}, {"y": "a"}], [{"x": "a"}]),
        ("x>5", [{"x": "6"}], [{"x": "5"}, {"x": "abc"}, {}]),
        ("x<5", [{"x": "-1"}], [{"x": "5"}, {}]),
        ("x=a,y", [{"x": "a", "y": "b"}], [{"x": "a"}]),
        ("", [{}, {"x": "a"}], []),
        ("x=", [{"x": ""}], [{}, {"x": "a"}]),
    ],
)
def test_matches(
    selector: str, matching: list[dict[str, str]], not_matching: list[dict[str, str]]
) -> None:
    parsed = labels.parse(selector)
    assert [parsed.matches(m) for m in matching] == [True] * len(matching)
    assert [parsed.matches(m) for m in not_matching] == [False] * len(not_matching)


def test_everything_and_nothing() -> None:
    assert labels.everything().empty()
    assert labels.everything().matches(None)
    assert not labels.nothing().matches({"a": "b"})
    assert not labels.nothing().empty()
    assert labels.nothing().add(Requirement.new("a", Operator.EXISTS)) == labels.nothing()


def test_selector_from_set_and_equality() -> None:
    sel = labels.selector_from_set({"b": "2", "a": "1"})
    assert str(sel) == "a=1,b=2"
    assert sel == labels.parse("b=2,a=1")
    assert labels.selector_from_set(None).empty()
    with pytest.raises(SelectorError, match="invalid label value"):
        labels.selector_from_set({"a": "no spaces"})


def test_selector_from_label_selector() -> None:
    sel = labels.selector_from_label_selector(
        {"app": "web"}, [("tier", "In", ["b", "a"]), ("gone", "DoesNotExist", [])]
    )
    assert str(sel) == "app=web,!gone,tier in (a,b)"
    assert sel.matches({"app": "web", "tier": "a"})
    assert not sel.matches({"app": "web", "tier": "a", "gone": "x"})
    with pytest.raises(SelectorError, match="'Gt' is not a valid label selector operator"):
        labels.selector_from_label_selector(None, [("x", "Gt", ["1"])])


def test_requirement_validation() -> None:
    with pytest.raises(SelectorError, match="exactly one value"):
        Requirement.new("a", Operator.EQUALS, ["x", "y"])
    with pytest.raises(SelectorError, match="values set must be empty"):
        Requirement.new("a", Operator.EXISTS, ["x"])
    assert Requirement.new("a", Operator.IN, ["y", "x", "y"]).values == ("x", "y")


def test_requires_exact_match() -> None:
    assert labels.parse("a=1,b in (2)").requires_exact_match("b") == "2"
    assert labels.parse("a=1").requires_exact_match("a") == "1"
    assert labels.parse("a!=1,b in (1,2)").requires_exact_match("a") is None
    assert labels.parse("b in (1,2)").requires_exact_match("b") is None


def test_round_trip_is_stable() -> None:
    for text in ["a in (x,y),!b,c!=d,e", "k.io/x>3,z notin (q)"]:
        once = str(labels.parse(text))
        assert str(labels.parse(once)) == once


def test_label_selector_model_conversion() -> None:
    from kgen_runtime.meta import LabelSelector

    model = LabelSelector.model_validate(
        {
            "matchLabels": {"app": "web"},
            "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["db"]}],
        }
    )
    sel = labels.label_selector_as_selector(model)
    assert str(sel) == "app=web,tier notin (db)"
    assert labels.label_selector_as_selector(LabelSelector()).empty()
    assert not labels.label_selector_as_selector(None).matches({})


def test_as_selector_accepts_every_form_the_runtime_takes() -> None:
    parsed = labels.parse("app=web")
    assert labels.as_selector(parsed) is parsed
    assert str(labels.as_selector("tier in (db,web),app")) == "app,tier in (db,web)"
    assert str(labels.as_selector({"app": "web", "tier": "db"})) == "app=web,tier=db"
    assert labels.as_selector(None).empty()
    assert labels.as_selector(None).matches({"any": "thing"})
