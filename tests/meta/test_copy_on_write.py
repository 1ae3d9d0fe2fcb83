"""deepcopy() shares nested values until first read (meta/_cow.py): copies and sources stay
independent through every way of changing them, and read-only uses see equal values."""

from __future__ import annotations

import copy
import pickle
from collections.abc import Callable
from typing import Any

import orjson
import pytest

from kgen_runtime.api.apps.v1.models import Deployment, DeploymentList
from kgen_runtime.api.core.v1.models import Container
from kgen_runtime.meta import ObjectMeta
from kgen_runtime.meta._cow import CowDict


def document(name: str = "web") -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": name,
            "labels": {"app": name},
            "finalizers": ["a"],
            "managedFields": [{"manager": "m", "fieldsV1": {"f:spec": {"f:x": {}}}}],
            "futureMeta": {"nested": [1, 2]},
        },
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "containers": [
                        {"name": "app", "image": "app:1", "args": ["-v"], "env": [{"name": "A"}]},
                    ],
                },
            },
        },
        "status": {"readyReplicas": 2, "conditions": [{"type": "Available"}]},
        "futureTop": {"k": [1]},
    }


def decoded(name: str = "web") -> Any:
    """A decoded Deployment, typed ``Any``: the tests walk its optional fields freely."""
    return Deployment.model_from_wire(document(name))


def wire(obj: Any) -> Any:
    return orjson.loads(obj.model_dump_json())


# Each edit changes the object through a different path: attributes, nested lists and dicts
# in place, extras, fields sets.
EDITS: dict[str, Callable[[Any], None]] = {
    "replicas": lambda d: setattr(d.spec, "replicas", 9),
    "image": lambda d: setattr(d.spec.template.spec.containers[0], "image", "x:2"),
    "args in place": lambda d: d.spec.template.spec.containers[0].args.append("-q"),
    "env item": lambda d: setattr(d.spec.template.spec.containers[0].env[0], "value", "v"),
    "containers in place": lambda d: d.spec.template.spec.containers.append(Container(name="s")),
    "labels in place": lambda d: d.metadata.labels.update(app="other"),
    "selector labels": lambda d: d.spec.selector.match_labels.clear(),
    "finalizers": lambda d: d.metadata.finalizers.remove("a"),
    "managed fields json": lambda d: d.metadata.managed_fields[0].fields_v1.clear(),
    "extra nested": lambda d: d.metadata.model_extra["futureMeta"]["nested"].append(3),
    "extra top": lambda d: d.model_extra["futureTop"]["k"].append(2),
    "new extra": lambda d: setattr(d.spec, "futureSpec", 1),
    "fields set": lambda d: d.spec.model_fields_set.discard("replicas"),
    "status replaced": lambda d: setattr(d, "status", None),
    "delete": lambda d: delattr(d.spec.template, "metadata"),
    "conditions": lambda d: d.status.conditions.pop(),
}


@pytest.mark.parametrize("edit", EDITS.values(), ids=EDITS.keys())
def test_an_edit_to_a_copy_never_shows_in_the_source_or_another_copy(
    edit: Callable[[Any], None],
) -> None:
    source = decoded()
    _ = (source.metadata.name, source.spec.replicas, source.status.ready_replicas)
    first, second = source.deepcopy(), source.deepcopy()
    before = wire(source)
    edit(first)
    assert wire(source) == before
    assert wire(second) == before
    assert wire(first) != before


@pytest.mark.parametrize("edit", EDITS.values(), ids=EDITS.keys())
def test_an_edit_to_the_source_never_shows_in_its_copies(
    edit: Callable[[Any], None],
) -> None:
    source = decoded()
    first = source.deepcopy()
    second = first.deepcopy()  # a copy of a copy
    before = wire(first)
    edit(source)
    assert wire(first) == before
    assert wire(second) == before


@pytest.mark.parametrize("edit", EDITS.values(), ids=EDITS.keys())
def test_a_copy_of_a_copy_is_independent_of_both(edit: Callable[[Any], None]) -> None:
    source = decoded()
    first = source.deepcopy()
    _ = first.spec.template.spec.containers[0].image  # part read, part still shared
    second = first.deepcopy()
    before = wire(source)
    edit(second)
    assert wire(source) == before
    assert wire(first) == before


def test_a_copy_equals_its_source_and_dumps_the_same_bytes() -> None:
    source = decoded()
    dumped = source.model_dump_json()
    clone = source.deepcopy()
    assert clone == source
    assert clone.model_dump_json() == dumped
    assert clone.model_dump() == source.model_dump()
    assert repr(clone) == repr(source)
    assert type(clone) is Deployment
    assert clone.model_fields_set == source.model_fields_set
    assert clone.model_extra == {"futureTop": {"k": [1]}}


def test_reading_a_copy_gives_equal_but_distinct_containers() -> None:
    source = decoded()
    clone = source.deepcopy()
    assert clone.spec == source.spec
    assert clone.spec is not source.spec
    assert clone.spec.template.spec.containers is not source.spec.template.spec.containers
    assert clone.spec.template.spec.containers[0] is not source.spec.template.spec.containers[0]
    assert clone.metadata.labels == {"app": "web"}
    assert clone.metadata.labels is not source.metadata.labels
    assert clone.model_extra["futureTop"] is not source.model_extra["futureTop"]


def test_an_assigned_value_is_kept_as_it_is() -> None:
    clone = decoded().deepcopy()
    meta = ObjectMeta(name="new", labels={"a": "b"})
    clone.metadata = meta
    assert clone.metadata is meta
    meta.labels["c"] = "d"  # the caller's object is the model's value, as in pydantic
    assert clone.metadata.labels == {"a": "b", "c": "d"}


def test_every_way_out_of_pydantic_is_independent() -> None:
    source = decoded()
    clone = source.deepcopy()
    shallow = copy.copy(clone)
    shallow.spec.replicas = 7
    dict(clone.model_copy())["spec"].replicas = 8
    dict(clone)["metadata"].labels["x"] = "y"
    pickle.loads(pickle.dumps(clone)).spec.replicas = 6
    copy.deepcopy(clone).spec.replicas = 5
    clone.model_copy(deep=True).spec.replicas = 4
    assert source.spec.replicas == 3
    assert source.metadata.labels == {"app": "web"}
    assert type(pickle.loads(pickle.dumps(clone)).__dict__) is dict


def test_a_list_copies_its_items_lazily_and_independently() -> None:
    listed: Any = DeploymentList.model_from_wire(
        {"apiVersion": "apps/v1", "kind": "DeploymentList", "items": [document("a"), document("b")]}
    )
    clone = listed.deepcopy()
    clone.items[1].spec.replicas = 0
    clone.items.append(decoded("c"))
    assert [d.spec.replicas for d in listed.items] == [3, 3]
    assert [d.metadata.name for d in clone.items] == ["a", "b", "c"]


def test_a_model_never_copied_keeps_a_plain_dict() -> None:
    source = decoded()
    assert type(source.__dict__) is dict
    assert type(source.spec.__dict__) is dict
    source.deepcopy()
    assert type(source.__dict__) is CowDict
    source.spec.replicas = 4  # an edit after the copy unshares only what it passed through
    assert source.__dict__.shared == frozenset({"metadata", "status"})


def test_constructed_models_copy_like_decoded_ones() -> None:
    source: Any = Deployment(metadata=ObjectMeta(name="x", labels={"a": "b"}))
    clone = source.deepcopy()
    clone.metadata.labels["a"] = "c"
    assert source.metadata.labels == {"a": "b"}
    assert source.model_fields_set == clone.model_fields_set


@pytest.mark.parametrize("reads", [0, 1, 2], ids=["unread", "read", "read and copied"])
def test_a_copy_dumps_the_bytes_of_the_same_edit_made_on_dicts(reads: int) -> None:
    """The write path: a copy, partly read or not, edited and dumped, gives exactly the bytes
    of the source's dump edited as dicts; the source keeps its bytes."""
    source = decoded()
    dumped = source.model_dump_json()
    if reads:
        _ = (source.spec.template.spec.containers[0].image, source.status.ready_replicas)
    clone = source.deepcopy() if reads < 2 else source.deepcopy().deepcopy()
    clone.spec.replicas += 1
    clone.spec.template.spec.containers[0].args.append("-q")
    expected = orjson.loads(dumped)
    expected["spec"]["replicas"] += 1
    expected["spec"]["template"]["spec"]["containers"][0]["args"].append("-q")
    assert clone.model_dump_json() == orjson.dumps(expected).decode()
    assert clone.model_dump_wire_json() == orjson.dumps(expected)  # the request body
    assert source.model_dump_json() == dumped
    assert source.model_dump_wire_json() == dumped.encode()
