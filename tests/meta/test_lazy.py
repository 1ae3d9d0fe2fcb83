"""Cached objects kept as their wire document until first touched (``kgen_runtime.meta._lazy``).

A touched lazy object must be indistinguishable from the eagerly decoded one: every
operation below is run on a fresh lazy object and on an eager one and the results compared,
across the Foo example, a Deployment as a cluster returns it (bench/documents.py) and an
object with unknown fields at several levels.
"""

from __future__ import annotations

import copy
import pickle
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from pydantic import BaseModel, ValidationError

from kgen_runtime.api.apps.v1.models import Deployment, DeploymentList
from kgen_runtime.meta import KubeModel, Unstructured, UnstructuredList
from kgen_runtime.meta._lazy import (
    lazy_list_from_wire_json,
    lazy_model,
    namespace_and_name,
    resource_version,
    touch,
    untouched_document,
)
from kgen_runtime.rest._watch import EventDecoder

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "examples" / "foo-crd"))
sys.path.insert(0, str(REPO / "bench"))
from documents import deployment  # noqa: E402
from foo_api.samplecontroller.v1alpha1.models import Foo, FooList  # noqa: E402

FIELDS_V1 = {"f:metadata": {"f:labels": {"f:app": {}}}, "f:spec": {"f:replicas": {}}}


def foo_document(name: str = "example", replicas: Any = 2) -> dict[str, Any]:
    return {
        "apiVersion": "samplecontroller.k8s.io/v1alpha1",
        "kind": "Foo",
        "metadata": {
            "name": name,
            "namespace": "default",
            "uid": "5f0c-0001",
            "resourceVersion": "41",
            "generation": 3,
            "creationTimestamp": "2026-11-29T12:00:00Z",
            "labels": {"app": "web"},
            "annotations": {"note": "x"},
            "managedFields": [{
                "manager": "kubectl", "operation": "Update",
                "apiVersion": "samplecontroller.k8s.io/v1alpha1",
                "time": "2026-11-29T12:00:00Z", "fieldsType": "FieldsV1",
                "fieldsV1": FIELDS_V1,
            }],
        },
        "spec": {"deploymentName": f"{name}-deployment", "replicas": replicas},
        "status": {"availableReplicas": 1},
    }


def with_extras() -> dict[str, Any]:
    document = foo_document("extras")
    document["topLevelExtra"] = {"a": [1, 2]}
    document["spec"]["futureField"] = "v2"
    document["metadata"]["managedFields"][0]["futureEntryField"] = True
    return document


DOCUMENTS: list[tuple[type[KubeModel], Callable[[], dict[str, Any]]]] = [
    (Foo, foo_document),
    (Deployment, lambda: deployment(3)),
    (Foo, with_extras),
]


def fresh(cls: type[KubeModel], make: Callable[[], dict[str, Any]]) -> Any:
    """A new lazy object of a new copy of the document."""
    return lazy_model(cls, orjson.loads(orjson.dumps(make())))


def eager(cls: type[KubeModel], make: Callable[[], dict[str, Any]]) -> Any:
    return cls.model_from_wire(orjson.loads(orjson.dumps(make())))


def edited_copy(obj: Any) -> bytes:
    copied = obj.deepcopy()
    copied.metadata.labels = {"edited": "yes"}
    return bytes(copied.model_dump_wire_json())


OPERATIONS: dict[str, Callable[[Any], Any]] = {
    "model_dump": lambda o: o.model_dump(),
    "model_dump_wire_json": lambda o: o.model_dump_wire_json(),
    "model_dump_json": lambda o: o.model_dump_json(),
    "python dump": lambda o: o.model_dump(mode="python", exclude_unset=False),
    "repr": repr,
    "str": str,
    "format": lambda o: f"{o}",
    "equality": lambda o: (o == eager(o.__class__, lambda: o.model_dump()), o != 1),
    "class methods": lambda o: type(o).model_from_wire(o.model_dump()).model_dump(),
    "constructor": lambda o: (type(o)(metadata={"name": "new"}).model_dump(), o.kind),
    "pickle": lambda o: pickle.loads(pickle.dumps(o)).model_dump(),
    "pickle protocol 0": lambda o: pickle.loads(pickle.dumps(o, protocol=0)).model_dump(),
    "deepcopy()": edited_copy,
    "copy.deepcopy": lambda o: copy.deepcopy(o).model_dump(),
    "copy.copy": lambda o: copy.copy(o).model_dump(),
    "model_copy": lambda o: o.model_copy(deep=True).model_dump(),
    "iteration": lambda o: [name for name, _ in o],
    "dir": dir,
    "vars": lambda o: sorted(vars(o)),
    "fields set": lambda o: sorted(o.model_fields_set),
    "extras": lambda o: o.model_extra,
    "hash": lambda o: _raised(lambda: hash(o)),
    "attribute": lambda o: o.metadata.name,
    "missing attribute": lambda o: _raised(lambda: o.no_such_field),
    "assignment": lambda o: (setattr(o.metadata, "name", "renamed"), o.model_dump())[1],
    "setattr": lambda o: (setattr(o, "kind", "Other"), o.model_dump())[1],
    "delattr": lambda o: _raised(lambda: delattr(o, "no_such_field")),
    "rich repr": lambda o: list(o.__rich_repr__()),
    "pretty": lambda o: list(o.__repr_args__()),
    "sizeof": lambda o: sys.getsizeof(o) > 0,
    "nested in a list model": lambda o: _list_of(o).model_dump(),
}


def _raised(call: Callable[[], Any]) -> str:
    try:
        call()
    except Exception as error:  # the type and message are what is compared
        return f"{type(error).__name__}: {error}"
    return "no error"


def _list_of(obj: Any) -> Any:
    list_cls = FooList if isinstance(obj, Foo) else DeploymentList
    return list_cls(items=[obj])


@pytest.mark.parametrize(("cls", "make"), DOCUMENTS, ids=["foo", "deployment", "extras"])
@pytest.mark.parametrize("operation", OPERATIONS.values(), ids=OPERATIONS.keys())
def test_a_touched_object_behaves_as_the_eager_one(
    cls: type[KubeModel], make: Callable[[], dict[str, Any]], operation: Callable[[Any], Any]
) -> None:
    lazy = fresh(cls, make)
    assert type(lazy) is not cls and untouched_document(lazy) is not None
    assert operation(lazy) == operation(eager(cls, make))
    assert type(lazy) is cls
    assert untouched_document(lazy) is None
    assert lazy.__dict__ == eager(cls, make).__dict__ or operation in _CHANGING


_CHANGING = {OPERATIONS["assignment"], OPERATIONS["setattr"]}


@pytest.mark.parametrize(("cls", "make"), DOCUMENTS, ids=["foo", "deployment", "extras"])
def test_equality_either_way_round(cls: type[KubeModel], make: Callable[[], dict[str, Any]]
                                   ) -> None:
    assert eager(cls, make) == fresh(cls, make)
    assert fresh(cls, make) == eager(cls, make)
    assert fresh(cls, make) == fresh(cls, make)
    other = fresh(cls, make)
    other.metadata.name = "changed"
    assert fresh(cls, make) != other


def test_before_the_first_touch_only_the_document_is_held() -> None:
    document = foo_document()
    lazy = lazy_model(Foo, document)
    assert isinstance(lazy, Foo) and isinstance(lazy, KubeModel) and isinstance(lazy, BaseModel)
    assert not isinstance(lazy, dict)
    assert lazy.__class__ is Foo
    assert namespace_and_name(lazy) == ("default", "example")
    assert resource_version(lazy) == "41"
    assert untouched_document(lazy) is document
    assert type(lazy) is not Foo  # none of the above touched it
    assert touch(lazy) is lazy
    assert type(lazy) is Foo
    assert touch(lazy) is lazy  # idempotent
    assert namespace_and_name(lazy) == ("default", "example")
    assert resource_version(lazy) == "41"


def test_every_special_method_of_the_model_is_wrapped() -> None:
    """The lazy subclass overrides each special instance method of the model's MRO, so no
    operation of the model class reaches the held document."""
    lazy_cls = type(lazy_model(Foo, foo_document()))
    skipped = {"__new__", "__init__", "__init_subclass__", "__subclasshook__",
               "__class_getitem__", "__getattr__"}
    special = {
        name for klass in Foo.__mro__ for name, value in vars(klass).items()
        if name.startswith("__") and name.endswith("__") and callable(value)
        and not isinstance(value, classmethod | staticmethod | type) and name not in skipped
    }
    assert {"__eq__", "__repr__", "__str__", "__iter__", "__copy__", "__deepcopy__",
            "__getstate__", "__setstate__", "__setattr__", "__delattr__", "__rich_repr__",
            "__repr_args__", "__pretty__", "__reduce_ex__", "__dir__"} <= special
    assert not [name for name in special if name not in vars(lazy_cls)]


def test_a_document_that_does_not_build_raises_the_eager_error_on_every_touch() -> None:
    bad = foo_document(replicas="three")
    with pytest.raises(ValidationError) as eager_error:
        Foo.model_from_wire(orjson.loads(orjson.dumps(bad)))
    lazy = lazy_model(Foo, orjson.loads(orjson.dumps(bad)))
    assert namespace_and_name(lazy) == ("default", "example")  # keying does not build
    for touching in (lambda: lazy.spec, lambda: repr(lazy), lambda: lazy == lazy):
        with pytest.raises(ValidationError) as lazy_error:
            touching()
        assert str(lazy_error.value) == str(eager_error.value)
        assert lazy_error.value.title == "Foo default/example"
        assert lazy_error.value.errors()[0]["loc"] == ("spec", "replicas")
        assert type(lazy) is not Foo  # still the document: nothing half-built


def test_metadata_of_the_wrong_type_is_read_by_building() -> None:
    """Keys come from the document only where its values are the fields' types; otherwise
    the object is built, so that it raises (or coerces) exactly as the eager decode."""
    document = foo_document()
    document["metadata"]["name"] = 7
    lazy = lazy_model(Foo, document)
    with pytest.raises(ValidationError, match=r"metadata\.name"):
        namespace_and_name(lazy)
    document = foo_document()
    document["metadata"]["resourceVersion"] = 12
    with pytest.raises(ValidationError, match=r"metadata\.resourceVersion"):
        resource_version(lazy_model(Foo, document))


def read_from_threads(objects: list[Any], threads_count: int) -> list[list[tuple[Any, ...]]]:
    """What each of ``threads_count`` threads, started at once, reads of every object (half
    of them in reverse order)."""
    start = threading.Barrier(threads_count)
    seen: list[list[tuple[Any, ...]]] = [[] for _ in range(threads_count)]

    def read(index: int) -> None:
        start.wait(timeout=30)
        for obj in objects if index % 2 else reversed(objects):
            seen[index].append(
                (obj.metadata.name, obj.spec.replicas, obj.status.available_replicas,
                 type(obj), obj.model_dump_wire_json()))

    threads = [threading.Thread(target=read, args=(i,)) for i in range(threads_count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not any(thread.is_alive() for thread in threads)
    return seen


def test_many_threads_touching_the_same_fresh_objects_see_the_same_built_values() -> None:
    count = 200
    expected = sorted(
        (f"foo-{i}", i, 1, Foo,
         Foo.model_from_wire(foo_document(f"foo-{i}", i)).model_dump_wire_json())
        for i in range(count))
    for _ in range(3):
        objects = [lazy_model(Foo, foo_document(f"foo-{i}", replicas=i)) for i in range(count)]
        for values in read_from_threads(objects, 8):
            assert sorted(values) == expected


def test_a_list_page_holds_lazy_items() -> None:
    documents = [foo_document(f"foo-{i}", i) for i in range(3)]
    body = orjson.dumps({"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "FooList",
                         "metadata": {"resourceVersion": "50", "continue": "next"},
                         "items": documents})
    page = lazy_list_from_wire_json(FooList, Foo, body)
    assert type(page) is FooList
    assert page.metadata.resource_version == "50" and page.metadata.continue_ == "next"
    assert [untouched_document(item) is not None for item in page.items] == [True] * 3
    assert page == FooList.model_from_wire_json(body)
    assert [type(item) for item in page.items] == [Foo] * 3

    kept = lazy_list_from_wire_json(FooList, Foo, body,
                                    keep=lambda d: d["metadata"]["name"] != "foo-1")
    assert [namespace_and_name(item)[1] for item in kept.items] == ["foo-0", "foo-2"]
    assert kept == FooList.model_from_wire_json(body, keep=lambda d: d["metadata"]["name"]
                                                != "foo-1")


def test_a_list_page_with_an_item_that_is_no_object_fails_as_eagerly() -> None:
    body = orjson.dumps({"kind": "FooList", "items": [foo_document(), 5]})
    with pytest.raises(ValidationError) as eager_error:
        FooList.model_from_wire_json(body)
    with pytest.raises(ValidationError) as lazy_error:
        lazy_list_from_wire_json(FooList, Foo, body)
    assert str(lazy_error.value) == str(eager_error.value)


def test_an_unstructured_list_is_built_eagerly() -> None:
    """UnstructuredList's own validator gives its items the list's kind: no lazy items."""
    body = orjson.dumps({"apiVersion": "v1", "kind": "ConfigMapList",
                         "items": [{"metadata": {"name": "a"}}]})
    page = lazy_list_from_wire_json(UnstructuredList, Unstructured, body)
    assert page == UnstructuredList.model_from_wire_json(body)
    assert type(page.items[0]) is Unstructured and page.items[0]["kind"] == "ConfigMap"


def test_a_lazy_watch_decoder_leaves_object_events_lazy() -> None:
    decoder = EventDecoder(Foo, lazy=True)
    line = orjson.dumps({"type": "MODIFIED", "object": foo_document()})
    event = decoder.decode(line)
    assert event is not None and event.type == "MODIFIED"
    assert untouched_document(event.object) is not None
    assert event.object == EventDecoder(Foo).decode(line).object  # type: ignore[union-attr]
    bookmark = decoder.decode(orjson.dumps(
        {"type": "BOOKMARK", "object": {"kind": "Foo", "metadata": {"resourceVersion": "9"}}}))
    assert bookmark is not None and type(bookmark.object) is Foo
    bad = decoder.decode(orjson.dumps({"type": "ADDED", "object": foo_document(replicas="x")}))
    assert bad is not None and not decoder.failed  # the watch goes on; the object fails later
    with pytest.raises(ValidationError, match="Foo default/example"):
        _ = bad.object.spec
