"""Schema-rule checks on construction: a nested model checked when it was built is not
checked again by the models built around it, and every way it can change since makes the
enclosing model check it again, reporting the same errors at the same paths."""

from __future__ import annotations

from typing import Any, ClassVar

import pytest
from pydantic import ValidationError

from kgen_runtime.meta import FieldRules, KubeModel, _model


class Port(KubeModel):
    __kgen_rules__: ClassVar[dict[str, FieldRules]] = {
        "number": FieldRules(required=True, minimum=1)
    }
    number: int | None = None


class Box(KubeModel):
    __kgen_rules__: ClassVar[dict[str, FieldRules]] = {"ports": FieldRules(max_items=2)}
    ports: list[Port] | None = None
    port: Port | None = None
    free: dict[str, Any] | None = None


class Crate(KubeModel):
    box: Box | None = None
    boxes: dict[str, Box] | None = None


def errors_of(build: Any) -> list[tuple[str, tuple[str | int, ...]]]:
    """The (type, path) of each error ``build()`` raises, sorted by path (the order of a
    model's fields in the walk is its fields set's)."""
    with pytest.raises(ValidationError) as caught:
        build()
    return sorted(((e["type"], e["loc"]) for e in caught.value.errors()), key=repr)


def test_nested_values_from_dicts_are_checked_at_their_paths() -> None:
    assert errors_of(
        lambda: Crate(box={"ports": [{"number": 0}, {}], "port": {}}, boxes={"a": {"port": {}}})
    ) == [
        ("greater_than_equal", ("box", "ports", 0, "number")),
        ("missing", ("box", "port", "number")),
        ("missing", ("box", "ports", 1, "number")),
        ("missing", ("boxes", "a", "port", "number")),
    ]


def test_a_bottom_up_build_checks_each_model_once(monkeypatch: pytest.MonkeyPatch) -> None:
    checked: list[Any] = []
    rule_errors = _model._rule_errors

    def counting(rules: FieldRules, value: Any, loc: tuple[str | int, ...]) -> Any:
        checked.append(loc)
        return rule_errors(rules, value, loc)

    monkeypatch.setattr(_model, "_rule_errors", counting)
    Crate(box=Box(ports=[Port(number=1), Port(number=2)], port=Port(number=3)))
    assert checked == [("number",), ("number",), ("number",), ("ports",)]


def test_a_nested_model_changed_after_it_was_built_is_checked_again() -> None:
    port = Port(number=1)
    box = Box(port=port)
    Crate(box=box)
    port.number = 0
    assert errors_of(lambda: Crate(box=box)) == [("greater_than_equal", ("box", "port", "number"))]
    port.number = 2
    Crate(box=box)
    port.number = -2
    assert errors_of(lambda: Crate(box=box)) == [("greater_than_equal", ("box", "port", "number"))]


def test_a_list_handed_out_and_changed_in_place_is_checked_again() -> None:
    box = Box(ports=[Port(number=1)])
    Crate(box=box)
    ports = box.ports
    assert ports is not None
    Crate(box=box)
    ports.append(Port.model_construct(number=-1))
    ports.append(Port(number=2))
    assert errors_of(lambda: Crate(box=box)) == [
        ("greater_than_equal", ("box", "ports", 1, "number")),
        ("too_long", ("box", "ports")),
    ]


def test_models_not_built_by_init_are_always_checked() -> None:
    ports = [Port.model_construct(number=1)]
    box = Box.model_construct(ports=ports)
    Crate(box=box)
    ports[0] = Port.model_construct(number=0)
    assert errors_of(lambda: Crate(box=box)) == [
        ("greater_than_equal", ("box", "ports", 0, "number"))
    ]


def test_containers_kept_as_passed_are_checked_again() -> None:
    free: dict[str, Any] = {"inner": []}
    box = Box(free=free)
    Crate(box=box)
    free["inner"].append(Port.model_construct())
    assert errors_of(lambda: Crate(box=box)) == [("missing", ("box", "free", "inner", 0, "number"))]


def test_copies_sharing_a_handed_out_container_are_checked_again() -> None:
    box = Box(ports=[Port(number=1)])
    ports = box.ports
    assert ports is not None
    shallow = box.model_copy()
    deep = box.deepcopy()
    Crate(box=deep), Crate(box=shallow)
    ports.append(Port.model_construct(number=0))
    for copied in (deep, shallow):
        assert errors_of(lambda: Crate(box=copied)) == [  # noqa: B023
            ("greater_than_equal", ("box", "ports", 1, "number"))
        ]


def test_a_changed_fields_set_is_checked_again() -> None:
    port = Port(number=None)
    box = Box(port=port)
    Crate(box=box)
    port.model_fields_set.discard("number")
    assert errors_of(lambda: Crate(box=box)) == [("missing", ("box", "port", "number"))]
