"""KubeObject / KubeList behaviour with models shaped exactly like the generator's output."""

from __future__ import annotations

from typing import Any, ClassVar, assert_type

import orjson
import pytest
from pydantic import Field, ValidationError

from kgen_runtime.meta import (
    APIObject,
    FieldRules,
    KubeList,
    KubeModel,
    KubeObject,
    ListMeta,
    ObjectMeta,
    TypeMeta,
)

API_VERSION = "samplecontroller.k8s.io/v1alpha1"


class FooSpec(KubeModel):
    __kgen_rules__: ClassVar = {"replicas": FieldRules(minimum=1, maximum=10)}
    deployment_name: str | None = Field(
        default=None, validation_alias="deploymentName", serialization_alias="deploymentName"
    )
    replicas: int | None = None


class Foo(KubeObject):
    api_version: str = Field(
        default=API_VERSION, validation_alias="apiVersion", serialization_alias="apiVersion"
    )
    kind: str = "Foo"
    spec: FooSpec | None = None


class FooList(KubeList[Foo]):
    api_version: str = Field(
        default=API_VERSION, validation_alias="apiVersion", serialization_alias="apiVersion"
    )
    kind: str = "FooList"


def test_new_object_always_dumps_type_and_metadata() -> None:
    foo = Foo()
    foo.metadata.name = "x"
    expected = {"apiVersion": API_VERSION, "kind": "Foo", "metadata": {"name": "x"}}
    assert foo.model_dump() == expected
    assert orjson.loads(foo.model_dump_json()) == expected


def test_wire_bytes_are_the_json_dump_encoded_type_fields_included() -> None:
    """``model_dump_wire_json`` (the REST client's request body) marks the type fields as
    ``model_dump_json`` does, on a new object and on a nested model alike."""
    foo = Foo()
    foo.metadata.name = "x"
    assert orjson.loads(foo.model_dump_wire_json()) == {
        "apiVersion": API_VERSION,
        "kind": "Foo",
        "metadata": {"name": "x"},
    }
    assert foo.model_dump_wire_json() == foo.model_dump_json().encode()
    assert foo.metadata.model_dump_wire_json() == b'{"name":"x"}'
    snowman = Foo.model_validate({"metadata": {"name": "\u2603"}})
    assert snowman.model_dump_wire_json() == snowman.model_dump_json().encode()


def test_fields_dump_in_declaration_order_then_extras() -> None:
    foo = Foo.model_validate({"zzz": 1, "spec": {"replicas": 2}, "kind": "Foo"})
    assert list(foo.model_dump()) == ["apiVersion", "kind", "metadata", "spec", "zzz"]


def test_empty_list_dumps_metadata_and_items() -> None:
    assert FooList().model_dump() == {
        "apiVersion": API_VERSION,
        "kind": "FooList",
        "metadata": {},
        "items": [],
    }


def test_list_items_decode_to_the_item_class() -> None:
    data = {
        "apiVersion": API_VERSION,
        "kind": "FooList",
        "metadata": {"resourceVersion": "17", "continue": "tok", "remainingItemCount": 3},
        "items": [
            {"apiVersion": API_VERSION, "kind": "Foo", "metadata": {"name": "a"}},
            {
                "apiVersion": API_VERSION,
                "kind": "Foo",
                "metadata": {"name": "b"},
                "spec": {"replicas": 2, "future": {"x": None}},
            },
        ],
    }
    foos = FooList.model_validate_json(orjson.dumps(data))
    assert [type(item) for item in foos.items] == [Foo, Foo]
    assert foos.items[1].spec == FooSpec.model_validate({"replicas": 2, "future": {"x": None}})
    assert foos.metadata.continue_ == "tok"
    assert foos.model_dump() == data


def test_round_trip_keeps_unknown_fields_and_explicit_nulls() -> None:
    data = {
        "apiVersion": API_VERSION,
        "kind": "Foo",
        "metadata": {"name": "a", "labels": None, "newMetaField": {"deep": [1, None]}},
        "spec": {"deploymentName": None, "replicas": 3, "unknown": [{"a": None}]},
        "status": None,
        "extra": {"nested": True},
    }
    raw = orjson.dumps(data)
    foo = Foo.model_validate_json(raw)
    assert orjson.loads(foo.model_dump_json()) == data
    assert foo.model_dump() == data


def test_construction_by_python_or_wire_names() -> None:
    by_python = FooSpec(deployment_name="d", replicas=2)
    by_wire = FooSpec.model_validate({"deploymentName": "d", "replicas": 2})
    assert by_python == by_wire
    assert by_python.model_dump() == {"deploymentName": "d", "replicas": 2}


def test_construction_checks_rules_but_decoding_does_not() -> None:
    with pytest.raises(ValidationError) as info:
        Foo(spec=FooSpec.model_validate({"replicas": 11}))
    assert [(e["type"], e["loc"]) for e in info.value.errors()] == [
        ("less_than_equal", ("spec", "replicas"))
    ]
    assert Foo.model_validate({"spec": {"replicas": 11}}).spec == FooSpec.model_validate(
        {"replicas": 11}
    )


def test_kube_object_deepcopy_is_independent() -> None:
    foo = Foo.model_validate(
        {"metadata": {"name": "a", "labels": {"k": "v"}}, "spec": {"replicas": 1}, "x": {"y": 1}}
    )
    before = foo.model_dump()
    copy = foo.deepcopy()
    assert copy == foo and copy is not foo
    copy.metadata.labels = None
    copy.metadata.name = "b"
    assert copy.spec is not None
    copy.spec.replicas = 5
    copy.__pydantic_extra__["x"]["y"] = 2  # type: ignore[index]
    assert foo.model_dump() == before


def test_list_deepcopy_copies_items() -> None:
    foos = FooList(items=[Foo(metadata=ObjectMeta(name="a"))], metadata=ListMeta(continue_="t"))
    copy = foos.deepcopy()
    assert type(copy) is FooList and copy == foos
    copy.items[0].metadata.name = "changed"
    copy.items.append(Foo())
    copy.metadata.continue_ = None
    assert (
        foos.model_dump()
        == FooList(
            items=[Foo(metadata=ObjectMeta(name="a"))], metadata=ListMeta(continue_="t")
        ).model_dump()
    )


def test_bases_share_api_object() -> None:
    assert issubclass(KubeObject, APIObject)
    assert issubclass(FooList, APIObject)
    assert isinstance(FooList.model_validate({}).items, list)


def test_type_meta_peeks_at_a_document() -> None:
    meta = TypeMeta.model_validate_json(b'{"apiVersion": "v1", "kind": "Pod", "spec": {}}')
    assert (meta.api_version, meta.kind) == ("v1", "Pod")
    assert meta.deepcopy() == meta


def test_items_are_typed_for_callers() -> None:
    # mypy --strict checks this: a generated list's items are the item class, not Any.
    foos = FooList.model_validate_json(b'{"items": [{"metadata": {"name": "n"}}]}')
    assert_type(foos, FooList)
    assert_type(foos.items[0], Foo)
    assert foos.items[0].metadata.name == "n"


def test_null_items_decode_as_an_empty_list() -> None:
    foos = FooList.model_validate_json(b'{"kind": "FooList", "items": null}')
    assert foos.items == []
    assert foos.model_dump()["items"] == []


def test_decoded_objects_and_list_items_dump_their_type_too() -> None:
    foo = Foo.model_validate({"spec": {"replicas": 1}})
    assert foo.model_dump() == {
        "apiVersion": API_VERSION,
        "kind": "Foo",
        "metadata": {},
        "spec": {"replicas": 1},
    }
    foos = FooList.model_validate_json(b'{"items": [{"metadata": {"name": "a"}}]}')
    expected_item = {"apiVersion": API_VERSION, "kind": "Foo", "metadata": {"name": "a"}}
    assert orjson.loads(foos.model_dump_json())["items"] == [expected_item]
    assert foos.model_dump()["items"] == [expected_item]


def test_schemas_are_built_on_first_use_not_at_class_definition() -> None:
    class Bar(KubeObject):
        kind: str = "Bar"

    class BarList(KubeList[Bar]):
        kind: str = "BarList"

    assert not Bar.__pydantic_complete__ and not BarList.__pydantic_complete__
    bars = BarList.model_validate_json(b'{"items": [{"metadata": {"name": "b"}}]}')
    assert BarList.__pydantic_complete__
    assert type(bars.items[0]) is Bar and bars.items[0].metadata.name == "b"


def test_deepcopy_never_shares_the_extras_dict() -> None:
    from kgen_runtime.meta import ObjectMeta

    original = ObjectMeta.model_validate({"name": "a"})
    assert original.model_extra == {}
    copy = original.deepcopy()
    copy.model_extra["added"] = 1
    assert original.model_extra == {}


def test_copy_json_is_deep_and_exact_for_json_values() -> None:
    from kgen_runtime.meta import copy_json

    value: dict[str, Any] = {"a": [1, 2.5, {"b": None}], "big": 2**70, "f": 1.0, "s": "\u2028"}
    copied: dict[str, Any] = copy_json(value)
    assert copied == value and type(copied["f"]) is float and copied["big"] == 2**70
    copied["a"][2]["b"] = "changed"
    assert value["a"][2]["b"] is None
    assert copy_json([]) == [] and copy_json({}) == {}
