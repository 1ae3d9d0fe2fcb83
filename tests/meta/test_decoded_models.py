"""A wire decode (``model_from_wire``) builds ordinary pydantic models all the way down:
every view of them, every way of constructing from their types and every error behaves as on
a model pydantic validated (issue 20 item 3: the lazy shells this replaced did not)."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable
from typing import Any

import orjson
import pytest
from pydantic import BaseModel, PrivateAttr, TypeAdapter, ValidationError, field_validator
from pydantic_core import PydanticCustomError

from kgen_runtime.api.apps.v1.models import Deployment, DeploymentList, DeploymentSpec
from kgen_runtime.api.core.v1.models import ContainerPort, Namespace
from kgen_runtime.meta import KubeModel, ObjectMeta


def deployment(name: str = "web", replicas: Any = 3, port: Any = 8080) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": "default", "futureMeta": [1, {"a": None}]},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "paused": None,  # explicitly null: set, and dumped as null
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "containers": [
                        {"name": "app", "image": "app:1", "ports": [{"containerPort": port}]},
                        {"name": "sidecar", "image": "side:2", "futureField": {"x": 1}},
                    ],
                },
            },
        },
        "status": {"replicas": 3, "conditions": [{"type": "Available", "status": "True"}]},
    }


def decoded(document: dict[str, Any] | None = None) -> Deployment:
    return Deployment.model_from_wire(copy.deepcopy(document or deployment()))


def read(obj: Deployment) -> Deployment:
    """``obj`` after a reconcile's reads (the state the lazy decode used to tell apart)."""
    assert obj.spec is not None and obj.spec.template.spec is not None
    _ = obj.metadata.name, obj.spec.replicas, obj.spec.template.spec.containers[0].image
    return obj


#: A freshly decoded object and one whose fields were read: both must behave alike.
STATES: dict[str, Callable[[], Deployment]] = {
    "unread": decoded,
    "read": lambda: read(decoded()),
}


def test_every_view_of_a_decoded_object_equals_validation() -> None:
    document = deployment()
    validated = Deployment.model_validate(document)
    assert decoded().model_dump() == validated.model_dump() == document
    assert decoded().model_dump_json() == validated.model_dump_json()
    assert decoded().model_dump(mode="python", by_alias=False, exclude_unset=False) == (
        validated.model_dump(mode="python", by_alias=False, exclude_unset=False)
    )
    assert decoded() == validated and validated == decoded()
    assert repr(decoded()) == repr(validated)
    assert pickle.loads(pickle.dumps(decoded())) == validated
    assert copy.copy(decoded().spec) == validated.spec
    assert decoded().spec.template.spec.containers[1].model_extra == {"futureField": {"x": 1}}  # type: ignore[union-attr,index]


# -- errors name the object and the full path from it ---------------------------------------


def test_a_wrong_value_deep_in_an_object_names_the_object_and_the_path() -> None:
    with pytest.raises(ValidationError) as raised:
        decoded(deployment(port="http"))
    error = raised.value
    assert error.title == "Deployment default/web"
    assert [e["loc"] for e in error.errors()] == [
        ("spec", "template", "spec", "containers", 0, "ports", 0, "containerPort")
    ]
    assert str(error).startswith(
        "1 validation error for Deployment default/web\n"
        "spec.template.spec.containers.0.ports.0.containerPort\n"
        "  Input should be a valid integer"
    )


def test_the_same_error_from_json_bytes() -> None:
    body = orjson.dumps(deployment(port="http"))
    with pytest.raises(ValidationError) as raised:
        Deployment.model_from_wire_json(body)
    assert raised.value.title == "Deployment default/web"
    assert raised.value.errors()[0]["loc"][-1] == "containerPort"


def test_an_object_without_a_namespace_is_named_by_kind_and_name() -> None:
    with pytest.raises(ValidationError) as raised:
        Namespace.model_from_wire(
            {"kind": "Namespace", "metadata": {"name": "prod", "labels": {"a": 1}}}
        )
    assert raised.value.title == "Namespace prod"
    assert [e["loc"] for e in raised.value.errors()] == [("metadata", "labels", "a")]


def test_an_error_in_a_list_item_names_the_list_the_item_and_the_path() -> None:
    document = {"kind": "DeploymentList", "items": [deployment("a"), deployment("b", port=[])]}
    with pytest.raises(ValidationError) as raised:
        DeploymentList.model_from_wire(document)
    assert raised.value.title == "DeploymentList: items[1] Deployment default/b"
    assert raised.value.errors()[0]["loc"][:3] == ("items", 1, "spec")


def test_errors_in_several_items_name_the_list_only() -> None:
    items = [deployment("a", replicas="x"), deployment("b", port=[])]
    with pytest.raises(ValidationError) as raised:
        DeploymentList.model_from_wire({"kind": "DeploymentList", "items": items})
    assert raised.value.title == "DeploymentList"
    assert raised.value.error_count() == 2


def test_a_nested_model_decoded_alone_is_named_by_its_class() -> None:
    with pytest.raises(ValidationError) as raised:
        ContainerPort.model_from_wire({"containerPort": "x"})
    assert raised.value.title == "ContainerPort"


class Checked(KubeModel):
    """A hand-written model with its own validator (and error type): pydantic builds it."""

    size: int | None = None

    @field_validator("size")
    @classmethod
    def small(cls, size: int | None) -> int | None:
        if size is not None and size > 9:
            raise PydanticCustomError("too_big", "size {size} is over 9", {"size": size})
        return size


class Holding(KubeModel):
    kind: str | None = None
    metadata: ObjectMeta | None = None
    items: list[Checked] | None = None


def test_an_error_of_a_nested_hand_written_validator_is_located_from_the_root() -> None:
    document = {"kind": "Holding", "metadata": {"name": "h"}, "items": [{"size": 1}, {"size": 10}]}
    with pytest.raises(ValidationError) as raised:
        Holding.model_from_wire(document)
    assert raised.value.title == "Holding h"
    assert raised.value.errors(include_url=False) == [
        {"type": "too_big", "loc": ("items", 1, "size"), "msg": "size 10 is over 9", "input": 10}
    ]


def test_a_coercible_value_is_coerced_as_validation_does() -> None:
    obj = decoded(deployment(replicas="3"))
    assert obj.spec is not None and obj.spec.replicas == 3
    assert obj == Deployment.model_validate(deployment(replicas="3"))


# -- hasattr / getattr with a default --------------------------------------------------------


@pytest.mark.parametrize("state", STATES.values(), ids=STATES.keys())
def test_hasattr_and_getattr_default_behave_as_on_any_object(
    state: Callable[[], Deployment],
) -> None:
    obj = state()
    for model in (obj, obj.spec, obj.metadata, obj.spec.template.spec.containers[0]):  # type: ignore[union-attr,index]
        assert hasattr(model, "no_such_attribute") is False
        assert getattr(model, "no_such_attribute", "default") == "default"
        with pytest.raises(AttributeError):
            model.no_such_attribute  # type: ignore[union-attr]  # noqa: B018
    assert hasattr(obj.spec, "replicas") and obj.metadata.futureMeta == [1, {"a": None}]


# -- the types of decoded values are the model classes ---------------------------------------


@pytest.mark.parametrize("state", STATES.values(), ids=STATES.keys())
def test_types_are_the_model_classes(state: Callable[[], Deployment]) -> None:
    obj = state()
    assert type(obj.spec) is DeploymentSpec and type(obj.metadata) is ObjectMeta
    assert type(obj.spec.template.spec.containers[0].ports[0]) is ContainerPort  # type: ignore[union-attr,index]
    assert obj.spec.__class__ is DeploymentSpec


@pytest.mark.parametrize("state", STATES.values(), ids=STATES.keys())
def test_constructing_through_type_of_a_decoded_value(state: Callable[[], Deployment]) -> None:
    spec = state().spec
    assert spec is not None
    made = type(spec)(replicas=5, selector=spec.selector, template=spec.template)
    assert made == DeploymentSpec(replicas=5, selector=spec.selector, template=spec.template)
    assert type(made) is DeploymentSpec


@pytest.mark.parametrize("state", STATES.values(), ids=STATES.keys())
def test_model_construct_through_type_of_a_decoded_value(state: Callable[[], Deployment]) -> None:
    metadata = state().metadata
    made = type(metadata).model_construct(name="x")
    assert made == ObjectMeta.model_construct(name="x") and made.name == "x"


@pytest.mark.parametrize("state", STATES.values(), ids=STATES.keys())
def test_type_adapter_of_the_type_of_a_decoded_value(state: Callable[[], Deployment]) -> None:
    spec = state().spec
    adapter = TypeAdapter(type(spec))
    assert adapter.validate_python({"replicas": 2}) == DeploymentSpec.model_validate(
        {"replicas": 2}
    )
    assert adapter.dump_python(spec, by_alias=True, exclude_unset=True) == deployment()["spec"]


@pytest.mark.parametrize("state", STATES.values(), ids=STATES.keys())
def test_a_copys_fields_set_is_its_own(state: Callable[[], Deployment]) -> None:
    obj = state()
    for copied in (obj.deepcopy(), copy.deepcopy(obj)):
        copied.model_fields_set.add("status")
        copied.spec.model_fields_set.add("min_ready_seconds")  # type: ignore[union-attr]
        assert "min_ready_seconds" in copied.spec.model_fields_set  # type: ignore[union-attr]
        assert "min_ready_seconds" not in obj.spec.model_fields_set  # type: ignore[union-attr]
        assert copied.spec.model_dump()["minReadySeconds"] is None  # type: ignore[union-attr]
    validated = Deployment.model_validate(deployment())
    assert obj.spec.model_fields_set == validated.spec.model_fields_set  # type: ignore[union-attr]


# -- models beside plain pydantic models -----------------------------------------------------


class Holder(BaseModel):
    """A plain pydantic model (not kgen's) holding a kgen model."""

    spec: DeploymentSpec | None = None


def test_a_plain_pydantic_model_holds_and_serialises_a_decoded_model() -> None:
    spec = decoded().spec
    holder = Holder(spec=spec)  # an instance of the class: pydantic keeps it as it is
    assert holder.spec is spec
    assert holder.model_dump(by_alias=True, exclude_unset=True)["spec"] == deployment()["spec"]


class Secretive(KubeModel):
    """A hand-written model with a private attribute: pydantic validates it, and the wire
    decode keeps that."""

    _note: str = PrivateAttr(default="n")
    size: int | None = None


class Outer(KubeModel):
    inner: Secretive | None = None


def test_models_with_private_attributes_get_them() -> None:
    outer = Outer.model_from_wire({"inner": {"size": 1}})
    assert type(outer.inner) is Secretive and outer.inner._note == "n"


class _Pair(KubeModel):
    a: str | None = None
    b: str | None = None


class _ModelOrString(KubeModel):
    value: _Pair | str | None = None


def test_a_union_of_a_model_and_a_string_decodes_either_member() -> None:
    # The first decode of a dict records the shape ("a", "b"); a two-letter string iterates
    # to the same tuple, so the string must not be handed to that shape's builder.
    assert _ModelOrString.model_from_wire({"value": {"a": "1", "b": "2"}}).value == _Pair(
        a="1", b="2"
    )
    decoded = _ModelOrString.model_from_wire({"value": "ab"})
    assert decoded.value == "ab"
    assert decoded == _ModelOrString.model_validate({"value": "ab"})
