"""Property tests: the fast wire build (``model_from_wire``) builds exactly what pydantic's
validation builds — same dumps, same equality, same errors — for documents generated from
the models' own schemas, with unknown fields, explicit nulls and values of the wrong type;
and models built either way behave the same when Python code changes them afterwards."""

from __future__ import annotations

import copy
import pickle
import types
import typing
from typing import Any, ClassVar, Literal, get_args, get_origin

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ValidationError

from kgen_runtime.api.apps.v1.models import Deployment
from kgen_runtime.api.batch.v1.models import CronJob
from kgen_runtime.api.core.v1.models import ConfigMap, Service
from kgen_runtime.meta import (
    FieldRules,
    KubeList,
    KubeModel,
    KubeObject,
    Unstructured,
    UnstructuredList,
)


class FooSpec(KubeModel):
    """As generated for the sample controller's Foo (with its replicas bounds)."""

    __kgen_rules__: ClassVar[dict[str, FieldRules]] = {
        "replicas": FieldRules(minimum=1, maximum=10),
    }

    deployment_name: str | None = None
    replicas: int | None = None
    weight: float | None = None
    mode: Literal["A", "B"] | str | None = None


class FooStatus(KubeModel):
    available_replicas: int | None = None


class Foo(KubeObject):
    api_version: str = "samplecontroller.k8s.io/v1alpha1"
    kind: str = "Foo"
    spec: FooSpec | None = None
    status: FooStatus | None = None


class FooList(KubeList[Foo]):
    api_version: str = "samplecontroller.k8s.io/v1alpha1"
    kind: str = "FooList"


TEXT = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=8)
JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**40), 2**40) | TEXT,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3),
    max_leaves=8,
)
#: Values of the wrong JSON type for a field, mixed in by the "sloppy" documents.
WRONG = st.sampled_from(["3", "x", "true", 2.5, 2.0, 7, True, [], {}, [1], {"a": 1}])
MAX_DEPTH = 3
FAST = settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))


def _resolved(cls: type[BaseModel], annotation: Any) -> Any:
    if isinstance(annotation, typing.ForwardRef):
        namespace = vars(__import__(cls.__module__, fromlist=["_"]))
        return eval(annotation.__forward_arg__, dict(namespace))
    return annotation


def values(annotation: Any, depth: int, sloppy: bool) -> st.SearchStrategy[Any]:
    """JSON values of ``annotation``'s wire type (and, if sloppy, sometimes of another)."""
    right = _right_values(annotation, depth, sloppy)
    return st.one_of(right, WRONG) if sloppy else right


def _right_values(annotation: Any, depth: int, sloppy: bool) -> st.SearchStrategy[Any]:
    origin = get_origin(annotation)
    if annotation is Any:
        return JSON
    if origin is types.UnionType or origin is typing.Union:
        return st.one_of([values(arg, depth, sloppy) for arg in get_args(annotation)])
    if origin is Literal:
        return st.sampled_from(get_args(annotation))
    if annotation is type(None):
        return st.none()
    if origin is list:
        return st.lists(values(get_args(annotation)[0], depth + 1, sloppy), max_size=2)
    if origin is dict:
        return st.dictionaries(TEXT, values(get_args(annotation)[1], depth + 1, sloppy), max_size=2)
    if annotation is str:
        return TEXT
    if annotation is bool:
        return st.booleans()
    if annotation is int:
        return st.integers(-(2**40), 2**40)
    if annotation is float:
        return st.floats(allow_nan=False, allow_infinity=False) | st.integers(-100, 100)
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return documents(annotation, depth + 1, sloppy)
    raise AssertionError(f"no strategy for {annotation!r}")


def documents(cls: type[BaseModel], depth: int = 0, sloppy: bool = False) -> Any:
    """Wire documents of ``cls``: any subset of its fields, explicit nulls, unknown keys."""
    if depth > MAX_DEPTH:
        return st.just({})
    optional = {
        (info.validation_alias or info.alias): _field_values(
            _resolved(cls, info.annotation), depth, sloppy
        )
        for info in cls.model_fields.values()
    }
    optional["futureField"] = JSON  # unknown to every model here: kept as an extra
    return st.fixed_dictionaries({}, optional=optional)  # type: ignore[arg-type]


def _field_values(annotation: Any, depth: int, sloppy: bool) -> st.SearchStrategy[Any]:
    return st.deferred(lambda: values(annotation, depth, sloppy))


CLASSES: list[type[KubeModel]] = [Foo, FooList, Deployment, Service, ConfigMap, CronJob]


def outcome(decode: Any, document: Any) -> tuple[str, Any]:
    """("ok", the model) or ("error", pydantic's errors, located from the document's root)."""
    try:
        return "ok", decode(copy.deepcopy(document))
    except ValidationError as error:
        return "error", error.errors(include_url=False)


def assert_same(cls: type[KubeModel], document: Any) -> None:
    """The wire decode equals validation; where validation fails, the decode raises the same
    errors."""
    fast = outcome(cls.model_from_wire, document)
    validated = outcome(cls.model_validate, document)
    assert fast[0] == validated[0]
    if fast[0] == "error":
        assert fast[1] == validated[1]
        return
    wire, model = fast[1], validated[1]
    assert type(wire) is type(model)
    assert wire == model and model == wire
    assert wire.model_dump() == model.model_dump()
    assert wire.model_dump_json() == model.model_dump_json()
    assert wire.model_dump(mode="python", by_alias=False) == model.model_dump(
        mode="python", by_alias=False
    )
    assert cls.model_from_wire(copy.deepcopy(document)) == model
    assert cls.model_from_wire(copy.deepcopy(document)).deepcopy() == model


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
@FAST
@given(data=st.data())
def test_the_wire_build_equals_validation(cls: type[KubeModel], data: st.DataObject) -> None:
    assert_same(cls, data.draw(documents(cls)))


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
@FAST
@given(data=st.data())
def test_values_of_the_wrong_type_are_coerced_or_rejected_as_by_validation(
    cls: type[KubeModel], data: st.DataObject
) -> None:
    assert_same(cls, data.draw(documents(cls, sloppy=True)))


@FAST
@given(st.lists(documents(Foo), max_size=3), st.sampled_from([None, "x"]))
def test_json_decode_equals_validation_of_the_same_bytes(
    items: list[dict[str, Any]], odd: str | None
) -> None:
    body = orjson.dumps({"kind": "FooList", "items": items or None, "odd": odd})
    assert FooList.model_from_wire_json(body) == FooList.model_validate_json(body)
    assert FooList.model_from_wire_json(body).model_dump_json() == (
        FooList.model_validate_json(body).model_dump_json()
    )


@FAST
@given(documents(Foo), st.sampled_from([0, 11, 5, "many", None]))
def test_python_side_changes_behave_the_same_on_both(
    document: dict[str, Any], replicas: Any
) -> None:
    """Assignment validates (and checks nothing else) the same way on either model, and the
    shared fields set of a wire-built model is copied, never changed in place."""
    wire, model = Foo.model_from_wire(copy.deepcopy(document)), Foo.model_validate(document)
    sibling = Foo.model_from_wire(copy.deepcopy(document))
    for target in (wire, model):
        if target.spec is None:
            target.spec = FooSpec()
    results = []
    for target in (wire, model):
        try:
            target.spec.replicas = replicas  # type: ignore[union-attr]
            results.append(("ok", target.model_dump()))
        except ValidationError as error:
            results.append(("error", error.errors(include_url=False)))
    assert results[0] == results[1]
    assert sibling.model_dump() == Foo.model_validate(document).model_dump()
    assert wire == model
    assert pickle.loads(pickle.dumps(wire)) == model
    assert wire.deepcopy() == model.deepcopy() == copy.deepcopy(wire)


def test_construction_in_python_checks_the_schema_rules_as_before() -> None:
    with pytest.raises(ValidationError) as raised:
        FooSpec(replicas=11)
    assert [e["type"] for e in raised.value.errors()] == ["less_than_equal"]
    decoded = Foo.model_from_wire({"spec": {"replicas": 11}})  # lenient: the server decides
    assert decoded.spec is not None and decoded.spec.replicas == 11


def test_unknown_kinds_keep_everything_in_order_with_explicit_nulls() -> None:
    document = {"apiVersion": "x/v1", "kind": "T", "spec": None, "metadata": {"labels": None}}
    wire = Unstructured.model_from_wire(copy.deepcopy(document))
    assert wire == Unstructured.model_validate(document)
    assert wire.model_dump() == document
    things = UnstructuredList.model_from_wire({"items": None, "metadata": {}})
    assert things.items == [] and things == UnstructuredList.model_validate({"items": None})


def test_documents_past_the_shape_limits_are_validated_by_pydantic(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from kgen_runtime.meta import _wire

    wide = {"apiVersion": "x/v1", "kind": "T", **{f"k{i}": i for i in range(200)}}
    assert Unstructured.model_from_wire(dict(wide)) == Unstructured.model_validate(wide)
    assert Unstructured.model_from_wire(dict(wide)).model_dump() == {"metadata": {}, **wide}
    monkeypatch.setattr(_wire, "_SHAPES_LIMIT", 0)  # every new shape now goes to pydantic
    document = {"spec": {"replicas": 2, "mode": "new-shape"}}
    assert Foo.model_from_wire(copy.deepcopy(document)) == Foo.model_validate(document)


@FAST
@given(documents(Foo), st.sampled_from([1, 5, None]), st.booleans())
def test_deep_copies_of_lazily_decoded_objects_are_independent(
    document: dict[str, Any], replicas: Any, read_source_first: bool
) -> None:
    """A deep copy shares its nested models' documents until one side builds them (copy on
    write); whatever is read or changed first, neither side ever sees the other's change."""
    source = Foo.model_from_wire(copy.deepcopy(document))
    expected = Foo.model_validate(document)
    if read_source_first:
        assert source.spec == expected.spec
    copied = source.deepcopy()
    if copied.spec is None:
        copied.spec = FooSpec()
    copied.spec.replicas = replicas
    copied.metadata.labels = {"changed": "yes"}
    assert source == expected
    assert source.model_dump() == expected.model_dump()
    again = source.deepcopy()
    assert again == expected and copied.deepcopy() == copied
