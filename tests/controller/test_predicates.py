"""Predicates, table-driven: what each lets through, per event type (controller-runtime's
``predicate`` tests)."""

from __future__ import annotations

from typing import Any

import pytest

from kgen_runtime.controller import (
    AnnotationChangedPredicate,
    CreateEvent,
    DeleteEvent,
    Funcs,
    GenerationChangedPredicate,
    GenericEvent,
    LabelChangedPredicate,
    LabelSelectorPredicate,
    Predicate,
    ResourceVersionChangedPredicate,
    UpdateEvent,
    and_,
    new_predicate_funcs,
    not_,
    or_,
)
from kgen_runtime.labels import SelectorError
from kgen_runtime.meta import ObjectMeta, Unstructured


def pod(
    rv: str = "1",
    generation: int | None = 1,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    name: str = "p",
) -> Unstructured:
    return Unstructured(api_version="v1", kind="Pod", metadata=ObjectMeta(
        name=name, namespace="ns", resource_version=rv, generation=generation, labels=labels,
        annotations=annotations))


def verdicts(predicate: Predicate, old: Any, new: Any) -> tuple[bool, bool, bool, bool]:
    """(create(new), update(old, new), delete(new), generic(new))."""
    return (predicate.create(CreateEvent(new)), predicate.update(UpdateEvent(old, new)),
            predicate.delete(DeleteEvent(new)), predicate.generic(GenericEvent(new)))


ALL = (True, True, True, True)
UPDATE_DROPPED = (True, False, True, True)

CASES = [
    # (predicate, old, new, expected verdicts)
    ("resourceVersion changed", ResourceVersionChangedPredicate(), pod("1"), pod("2"), ALL),
    ("resourceVersion same (resync)", ResourceVersionChangedPredicate(), pod("1"), pod("1"),
     UPDATE_DROPPED),
    ("generation changed", GenerationChangedPredicate(), pod("1", 1), pod("2", 2), ALL),
    ("generation same, status write", GenerationChangedPredicate(), pod("1", 1), pod("2", 1),
     UPDATE_DROPPED),
    ("generation unset on both", GenerationChangedPredicate(), pod("1", None),
     pod("2", None), UPDATE_DROPPED),
    ("labels changed", LabelChangedPredicate(), pod(labels={"a": "1"}),
     pod("2", labels={"a": "2"}), ALL),
    ("labels added", LabelChangedPredicate(), pod(), pod("2", labels={"a": "1"}), ALL),
    ("labels same", LabelChangedPredicate(), pod(labels={"a": "1"}),
     pod("2", labels={"a": "1"}), UPDATE_DROPPED),
    ("labels missing vs empty", LabelChangedPredicate(), pod(labels=None),
     pod("2", labels={}), UPDATE_DROPPED),
    ("annotations changed", AnnotationChangedPredicate(), pod(annotations={"a": "1"}),
     pod("2", annotations={"a": "1", "b": "2"}), ALL),
    ("annotations same", AnnotationChangedPredicate(), pod(annotations={"a": "1"}),
     pod("2", annotations={"a": "1"}), UPDATE_DROPPED),
    ("selector matches new", LabelSelectorPredicate("app=web"), pod(labels={"app": "db"}),
     pod("2", labels={"app": "web"}), ALL),
    ("selector misses new", LabelSelectorPredicate({"app": "web"}),
     pod(labels={"app": "web"}), pod("2", labels={"app": "db"}), (False,) * 4),
    ("empty selector", LabelSelectorPredicate(None), pod(), pod("2"), ALL),
    ("funcs: none set", Funcs(), pod(), pod("2"), ALL),
    ("funcs: update only", Funcs(update=lambda e: e.object_new.metadata.name == "x"),
     pod(), pod("2"), UPDATE_DROPPED),
    ("funcs: each", Funcs(create=lambda e: False, delete=lambda e: False,
                          generic=lambda e: False), pod(), pod("2"), (False, True, False, False)),
    ("new_predicate_funcs on new", new_predicate_funcs(lambda o: o.metadata.name == "keep"),
     pod(name="drop"), pod("2", name="keep"), ALL),
    ("new_predicate_funcs drops", new_predicate_funcs(lambda o: o.metadata.name == "keep"),
     pod(name="keep"), pod("2", name="drop"), (False,) * 4),
    ("and: both", and_(GenerationChangedPredicate(), LabelChangedPredicate()),
     pod(labels={"a": "1"}), pod("2", 2, labels={"a": "2"}), ALL),
    ("and: one fails", and_(GenerationChangedPredicate(), LabelChangedPredicate()),
     pod(labels={"a": "1"}), pod("2", 1, labels={"a": "2"}), UPDATE_DROPPED),
    ("and: none", and_(), pod(), pod("1"), ALL),
    ("or: one passes", or_(GenerationChangedPredicate(), LabelChangedPredicate()),
     pod(labels={"a": "1"}), pod("2", 1, labels={"a": "2"}), ALL),
    ("or: none passes", or_(GenerationChangedPredicate(), LabelChangedPredicate()),
     pod(), pod("2"), UPDATE_DROPPED),
    ("or: none", or_(), pod(), pod("2"), (False,) * 4),
    ("not", not_(GenerationChangedPredicate()), pod("1", 1), pod("2", 1),
     (False, True, False, False)),
    ("& operator", GenerationChangedPredicate() & ResourceVersionChangedPredicate(),
     pod("1", 1), pod("2", 1), UPDATE_DROPPED),
    ("| operator", GenerationChangedPredicate() | AnnotationChangedPredicate(),
     pod("1", 1), pod("2", 1, annotations={"x": "y"}), ALL),
    ("~ operator", ~LabelChangedPredicate(), pod(), pod("2", labels={"a": "1"}),
     (False, False, False, False)),
]


@pytest.mark.parametrize(("predicate", "old", "new", "expected"),
                         [case[1:] for case in CASES], ids=[case[0] for case in CASES])
def test_predicate_table(predicate: Predicate, old: Any, new: Any,
                         expected: tuple[bool, bool, bool, bool]) -> None:
    assert verdicts(predicate, old, new) == expected


@pytest.mark.parametrize("predicate", [
    GenerationChangedPredicate(), ResourceVersionChangedPredicate(), LabelChangedPredicate(),
    AnnotationChangedPredicate()])
def test_an_update_missing_an_object_is_dropped(predicate: Predicate) -> None:
    assert predicate.update(UpdateEvent(None, pod())) is False
    assert predicate.update(UpdateEvent(pod(), None)) is False


def test_a_bad_selector_is_refused_at_construction() -> None:
    with pytest.raises(SelectorError):
        LabelSelectorPredicate("app in (")


def test_the_base_predicate_lets_everything_through() -> None:
    assert verdicts(Predicate(), pod(), pod("2")) == ALL
