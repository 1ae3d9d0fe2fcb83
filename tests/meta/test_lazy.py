"""Nested models of a wire decode are shells, built on first touch (kgen_runtime.meta._lazy):
whatever reads them — attributes, pydantic's serialiser from any parent, ==, repr, copy,
pickle, assignment, threads — sees exactly the model validation builds."""

from __future__ import annotations

import copy
import pickle
import threading
from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel, PrivateAttr, ValidationError

from kgen_runtime.api.apps.v1.models import Deployment, DeploymentList, DeploymentSpec
from kgen_runtime.api.core.v1.models import Container, PodSpec
from kgen_runtime.meta import KubeModel, ObjectMeta
from kgen_runtime.meta._lazy import document_of


def deployment(name: str = "web", replicas: Any = 3) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "labels": {"app": name}, "futureMeta": [1, {"a": None}]},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "paused": None,  # explicitly null: set, and dumped as null
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "containers": [
                        {"name": "app", "image": "app:1", "env": [{"name": "A", "value": "1"}]},
                        {"name": "sidecar", "image": "side:2", "futureField": {"x": 1}},
                    ],
                    "terminationGracePeriodSeconds": 30,
                },
            },
        },
        "status": {"replicas": 3, "conditions": [{"type": "Available", "status": "True"}]},
    }


def decoded(document: dict[str, Any] | None = None) -> Deployment:
    return Deployment.model_from_wire(copy.deepcopy(document or deployment()))


def test_nested_models_are_shells_until_touched() -> None:
    obj = decoded()
    assert type(obj) is Deployment  # the document's own model is built
    shell = obj.__dict__["spec"]
    assert type(shell) is not DeploymentSpec and type(shell).__name__ == "DeploymentSpec"
    assert document_of(shell) == deployment()["spec"]
    assert obj.spec is shell  # reading the field hands out the shell, untouched
    assert shell.replicas == 3  # the first touch builds it, in place
    assert type(shell) is DeploymentSpec and document_of(shell) is None
    assert type(shell.__dict__["template"]).__name__ == "PodTemplateSpec"
    assert document_of(shell.__dict__["template"]) is not None  # one level at a time


def test_isinstance_holds_without_touching_a_shell() -> None:
    shell = decoded().spec
    assert isinstance(shell, DeploymentSpec) and isinstance(shell, KubeModel)
    assert document_of(shell) is not None
    assert not isinstance(shell, dict)
    assert document_of(shell) is not None  # none of that touched it


def test_top_level_kinds_inside_a_decoded_object_are_built() -> None:
    items = DeploymentList.model_from_wire({"items": [deployment("a"), deployment("b")]}).items
    assert [type(item) for item in items] == [Deployment, Deployment]
    assert all(document_of(item.__dict__["metadata"]) is not None for item in items)


def test_every_view_of_a_lazily_decoded_object_equals_validation() -> None:
    document = deployment()
    validated = Deployment.model_validate(document)
    assert (
        decoded().model_dump()
        == validated.model_dump()
        == document | {"metadata": document["metadata"]}
    )
    assert decoded().model_dump_json() == validated.model_dump_json()
    assert decoded().model_dump(mode="python", by_alias=False, exclude_unset=False) == (
        validated.model_dump(mode="python", by_alias=False, exclude_unset=False)
    )
    assert decoded() == validated and validated == decoded()
    assert repr(decoded()) == repr(validated)
    assert decoded().spec.template.spec.containers[1].model_extra == {"futureField": {"x": 1}}
    assert decoded().spec.model_fields_set == validated.spec.model_fields_set  # type: ignore[union-attr]


class Holder(BaseModel):
    """A plain pydantic model (not kgen's) holding a kgen model."""

    spec: DeploymentSpec | None = None
    specs: list[DeploymentSpec] = []


def test_pydantic_serialises_a_shell_held_by_a_plain_pydantic_model() -> None:
    """pydantic-core's serialiser reads a nested model's ``__dict__`` and fields set directly;
    they are attribute reads, so the shell builds itself first."""
    shells = [decoded().spec, decoded().spec]
    holder = Holder.model_construct(spec=shells[0], specs=[shells[1]])
    assert all(document_of(s) is not None for s in shells)
    expected = Holder(spec=Deployment.model_validate(deployment()).spec)
    dumped = holder.model_dump(by_alias=True, exclude_unset=True, warnings="error")
    assert dumped["spec"] == expected.model_dump(by_alias=True, exclude_unset=True)["spec"]
    assert dumped["specs"] == [dumped["spec"]]
    assert Holder(spec=decoded().spec).model_dump_json(by_alias=True) == (
        expected.model_dump_json(by_alias=True)
    )


def test_a_shell_validates_as_a_field_of_a_plain_pydantic_model() -> None:
    shell = decoded().spec
    holder = Holder(spec=shell)  # an instance of the class: pydantic keeps it as it is
    assert holder.spec is shell and document_of(shell) is not None
    assert holder.model_dump(by_alias=True, exclude_unset=True)["spec"] == deployment()["spec"]


ERRORS_IN_SPEC = {"spec": {"replicas": "many", "template": {"spec": {"containers": 3}}}}


def test_a_wrong_value_inside_a_nested_model_raises_pydantics_error_on_access() -> None:
    obj = Deployment.model_from_wire(copy.deepcopy(ERRORS_IN_SPEC))
    with pytest.raises(ValidationError) as raised:
        DeploymentSpec.model_validate(ERRORS_IN_SPEC["spec"])
    for touch in (lambda s: s.replicas, repr, lambda s: s.model_dump(), lambda s: s == 1):
        with pytest.raises(ValidationError) as again:
            touch(obj.spec)
        assert again.value.title == "DeploymentSpec"
        assert again.value.errors() == raised.value.errors()
        assert document_of(obj.spec) is not None  # still a shell: it raises on every touch
    with pytest.raises(ValidationError):
        obj.model_dump()


def test_eager_decode_raises_validations_errors_at_decode() -> None:
    with pytest.raises(ValidationError) as validated:
        Deployment.model_validate(ERRORS_IN_SPEC)
    with pytest.raises(ValidationError) as eager:
        Deployment.model_from_wire(copy.deepcopy(ERRORS_IN_SPEC), lazy=False)
    assert eager.value.errors() == validated.value.errors()
    obj = Deployment.model_from_wire(copy.deepcopy(deployment()), lazy=False)
    assert type(obj.__dict__["spec"]) is DeploymentSpec


def test_a_coercible_value_inside_a_nested_model_is_coerced_on_access() -> None:
    obj = decoded(deployment(replicas="3"))
    assert obj.spec is not None and obj.spec.replicas == 3
    assert obj == Deployment.model_validate(deployment(replicas="3"))


def test_deep_copies_of_shells_copy_the_document_and_build_nothing() -> None:
    obj = decoded()
    for copied in (obj.deepcopy(), copy.deepcopy(obj)):
        for name in ("metadata", "spec", "status"):
            original, twin = obj.__dict__[name], copied.__dict__[name]
            assert document_of(original) is not None and document_of(twin) is not None
            assert document_of(twin) == document_of(original)
            assert document_of(twin) is not document_of(original)
        assert copied == obj
    copied = obj.deepcopy()
    copied.spec.template.spec.containers[0].env[0].value = "changed"  # type: ignore[union-attr,index]
    assert document_of(obj.spec) is not None
    assert obj.spec.template.spec.containers[0].env[0].value == "1"  # type: ignore[union-attr,index]


def test_deep_copy_of_a_materialised_shell_is_the_models() -> None:
    spec = decoded().spec
    assert spec is not None and spec.replicas == 3
    assert spec.deepcopy() == spec and type(spec.deepcopy()) is DeploymentSpec


def test_pickle_and_shallow_copy_give_equal_models() -> None:
    validated = Deployment.model_validate(deployment())
    assert pickle.loads(pickle.dumps(decoded())) == validated
    restored = pickle.loads(pickle.dumps(decoded().spec))
    assert type(restored) is DeploymentSpec and restored == validated.spec
    shallow = copy.copy(decoded().spec)
    assert type(shallow) is DeploymentSpec and shallow == validated.spec


def test_equal_documents_compare_equal_without_building() -> None:
    a, b = decoded().spec, decoded().spec
    assert a == b and document_of(a) is not None and document_of(b) is not None
    c, d = decoded(deployment(replicas=4)).spec, decoded().spec
    assert c != d and type(c) is DeploymentSpec  # different documents: built and compared
    explicit_null = Deployment.model_from_wire({"spec": {"replicas": None}}).spec
    absent = Deployment.model_from_wire({"spec": {}}).spec
    assert explicit_null == absent  # as pydantic compares: the fields set is not compared


OPERATIONS: dict[str, Callable[[Any], Any]] = {
    "attribute": lambda m: m.replicas,
    "str": str,
    "format": lambda m: f"{m}",
    "iter": lambda m: dict(m),
    "dir": lambda m: "replicas" in dir(m),
    "vars": lambda m: dict(vars(m)),
    "fields_set": lambda m: m.model_fields_set,
    "class name": lambda m: m.__class__.__name__,
    "private": lambda m: m.__pydantic_private__,
    "unknown attribute": lambda m: getattr(m, "nothing", "default"),
    "json": lambda m: m.model_dump_json(),
    "set": lambda m: setattr(m, "replicas", 7) or m.model_dump(),
    "set invalid": lambda m: setattr(m, "replicas", "x"),
    "delete": lambda m: delattr(m, "paused") or m.model_dump(),
    "extra": lambda m: m.model_extra,
    "model_copy": lambda m: m.model_copy(update={"replicas": 1}).model_dump(),
}


@pytest.mark.parametrize("operation", OPERATIONS.values(), ids=OPERATIONS.keys())
def test_any_operation_on_a_shell_behaves_as_on_the_validated_model(
    operation: Callable[[Any], Any],
) -> None:
    def result(model: Any) -> tuple[str, Any]:
        try:
            return "ok", operation(model)
        except ValidationError as error:
            return "error", error.errors(include_url=False)

    shell, model = decoded().spec, Deployment.model_validate(deployment()).spec
    assert result(shell) == result(model)
    assert shell == model and type(shell) is DeploymentSpec


class Secretive(KubeModel):
    """A hand-written model whose private attribute needs the slot shells use."""

    _note: str = PrivateAttr(default="n")
    size: int | None = None


class Outer(KubeModel):
    inner: Secretive | None = None
    meta: ObjectMeta | None = None


def test_models_with_private_attributes_are_built_at_once() -> None:
    outer = Outer.model_from_wire({"inner": {"size": 1}, "meta": {"name": "x"}})
    assert type(outer.__dict__["inner"]) is Secretive and outer.inner._note == "n"  # type: ignore[union-attr]
    assert document_of(outer.__dict__["meta"]) == {"name": "x"}


def test_threads_materialising_the_same_shells_see_the_same_objects() -> None:
    """Many threads touch the same fresh shells at once; each shell is built once into one
    set of nested objects that every thread sees, and nothing is corrupted."""
    threads_count, rounds = 12, 40
    objects = [decoded(deployment(f"d{i}")) for i in range(rounds)]
    barrier = threading.Barrier(threads_count, timeout=30)
    seen: list[list[tuple[int, ...]]] = [[] for _ in range(threads_count)]
    errors: list[BaseException] = []

    def touch(slot: int) -> None:
        try:
            for obj in objects:
                barrier.wait()  # all threads on the same object at once
                spec = obj.spec
                assert spec is not None
                template = spec.template
                containers = template.spec.containers  # type: ignore[union-attr]
                seen[slot].append(
                    (id(spec), id(template), id(template.spec), *map(id, containers))  # type: ignore[union-attr,arg-type]
                )
                assert obj.model_dump() == Deployment.model_validate(obj.model_dump()).model_dump()
        except BaseException as error:  # reported below, from the main thread
            errors.append(error)
            barrier.abort()

    workers = [threading.Thread(target=touch, args=(i,)) for i in range(threads_count)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)
    assert not any(worker.is_alive() for worker in workers)
    assert errors == []
    assert all(ids == seen[0] for ids in seen) and len(seen[0]) == rounds
    for i, obj in enumerate(objects):
        assert obj == Deployment.model_validate(deployment(f"d{i}"))
        assert type(obj.spec.template.spec) is PodSpec  # type: ignore[union-attr]
        assert all(type(c) is Container for c in obj.spec.template.spec.containers)  # type: ignore[union-attr]


def containers_of(value: Any) -> list[Any]:
    """Every mutable value reachable from a built model (lists, dicts, nested models)."""
    found = []
    if isinstance(value, BaseModel):
        found.append(value)
        value = value.__dict__
    if type(value) is dict or type(value) is list:
        found.append(value)
        for item in value.values() if type(value) is dict else value:
            found.extend(containers_of(item))
    return found


def test_deep_copies_share_a_document_until_one_builds_from_it_copy_on_write() -> None:
    source = decoded()
    first = source.deepcopy()
    second = first.deepcopy()  # a copy of a copy shares it too
    assert first.spec.template.spec.containers[0].env[0].value == "1"  # type: ignore[union-attr,index]
    first.spec.template.spec.containers[0].env[0].value = "first"  # type: ignore[union-attr,index]
    first.spec.selector.match_labels["app"] = "first"  # type: ignore[union-attr,index]
    assert source == Deployment.model_validate(deployment())
    assert second == Deployment.model_validate(deployment())
    mine = {id(v) for v in containers_of(source)}
    for other in (first, second):
        other.model_dump()
        assert mine.isdisjoint(id(v) for v in containers_of(other))


def test_threads_copying_and_building_the_same_shells_never_share_containers() -> None:
    """Half the threads deep-copy fresh shells while the other half build them: every
    model built in the end owns its containers, and all are equal to validation's."""
    threads_count, rounds = 8, 30
    sources = [decoded(deployment(f"d{i}")) for i in range(rounds)]
    barrier = threading.Barrier(threads_count, timeout=30)
    copies: list[list[Deployment]] = [[] for _ in range(threads_count)]
    errors: list[BaseException] = []

    def work(slot: int) -> None:
        try:
            for source in sources:
                barrier.wait()
                if slot % 2:
                    copies[slot].append(source.deepcopy())
                else:
                    assert source.spec.template.spec.containers[0].image == "app:1"  # type: ignore[union-attr,index]
        except BaseException as error:  # reported below, from the main thread
            errors.append(error)
            barrier.abort()

    workers = [threading.Thread(target=work, args=(i,)) for i in range(threads_count)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=60)
    assert not any(worker.is_alive() for worker in workers) and errors == []
    for i, source in enumerate(sources):
        expected = Deployment.model_validate(deployment(f"d{i}"))
        twins = [c[i] for c in copies if c]
        assert len(twins) == threads_count // 2
        models = [source, *twins]
        seen: set[int] = set()
        for model in models:
            assert model == expected
            ids = {id(v) for v in containers_of(model)}
            assert seen.isdisjoint(ids)
            seen |= ids
