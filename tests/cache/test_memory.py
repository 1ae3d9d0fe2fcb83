"""The compacting transform (interned strings, shared fields sets) keeps every value and
behaviour of cached objects while shrinking them; shared fields sets copy on write."""

from __future__ import annotations

import gc
import pickle
import sys
import threading
import tracemalloc
import weakref
from collections.abc import Callable
from typing import Any

import orjson
import pytest

from kgen_runtime.cache import (
    Compactor,
    ListWatch,
    SharedIndexInformer,
    compact,
    drop_managed_fields,
    wait_for_cache_sync,
)
from kgen_runtime.cache import _compact as compact_module
from kgen_runtime.cache._compact import share_fields_v1
from kgen_runtime.meta import KubeList, KubeModel, KubeObject, ManagedFieldsEntry, Unstructured
from kgen_runtime.meta import _memory as memory_module
from kgen_runtime.util.wait import poll_until
from tests.cache._foo import Foo, foo, foos, served


class BarSpec(KubeModel):
    deployment_name: str | None = None
    replicas: int | None = None


class BarStatus(KubeModel):
    available_replicas: int | None = None


class Bar(KubeObject):
    api_version: str = "example.com/v1"
    kind: str = "Bar"
    spec: BarSpec | None = None
    status: BarStatus | None = None


class BarList(KubeList[Bar]):
    api_version: str = "example.com/v1"
    kind: str = "BarList"


def wire(index: int) -> dict[str, Any]:
    """A served Bar as bench/informer.py's Foo: labels, annotations, managedFields, status."""
    return {
        "apiVersion": "example.com/v1",
        "kind": "Bar",
        "metadata": {
            "name": f"bar-{index}",
            "namespace": "team-a",
            "uid": f"uid-{index}",
            "resourceVersion": str(100 + index),
            "creationTimestamp": "2025-06-01T12:00:00Z",
            "labels": {"app": "sample", "tier": ("web", "db")[index % 2]},
            "annotations": {"example.com/owner": "team-a@example.com"},
            "managedFields": [
                {
                    "manager": "kubectl",
                    "operation": "Update",
                    "apiVersion": "example.com/v1",
                    "time": "2025-06-01T12:00:00Z",
                    "fieldsType": "FieldsV1",
                    "fieldsV1": {"f:spec": {".": {}, "f:replicas": {}}},
                }
            ],
        },
        "spec": {"deploymentName": f"deploy-{index}", "replicas": 1 + index % 3},
        "status": {"availableReplicas": index % 3},
        "unknownTopLevel": {"kept": ["as", "is"]},
    }


def decode(*indexes: int) -> list[Bar]:
    body = orjson.dumps({"items": [wire(i) for i in indexes]})
    return BarList.model_validate_json(body).items


def test_compact_keeps_the_value_and_every_serialisation() -> None:
    for bar, data in zip(decode(0, 1), (wire(0), wire(1)), strict=True):
        before = (bar.model_dump(), bar.model_dump_json(), bar.deepcopy())
        assert compact(bar) is bar
        assert bar.model_dump() == before[0] == data
        assert bar.model_dump_json() == before[1]
        assert bar == before[2]


def test_equal_strings_become_one_object_and_unique_ones_are_left_alone() -> None:
    first, second = decode(0, 2)
    for bar in (first, second):
        compact(bar)
    a, b = first.metadata, second.metadata
    assert a.namespace is b.namespace
    assert a.creation_timestamp is b.creation_timestamp
    assert a.labels is not None and b.labels is not None
    assert a.labels["tier"] is b.labels["tier"]
    assert next(iter(a.labels)) is next(iter(b.labels))
    assert a.managed_fields is not None and b.managed_fields is not None
    assert a.managed_fields[0].manager is b.managed_fields[0].manager
    assert first.model_extra == {"unknownTopLevel": {"kept": ["as", "is"]}}
    assert second.model_extra is not None
    assert (
        first.model_extra["unknownTopLevel"]["kept"][0]
        is (second.model_extra["unknownTopLevel"]["kept"][0])
    )
    # name/uid/resourceVersion are unique per object: never put in the interned table
    name = "".join(["bar-", "77"])
    (fresh,) = decode(77)
    compact(fresh)
    assert fresh.metadata.name == name


def test_equal_fields_v1_trees_become_one_and_deepcopy_still_copies_them() -> None:
    first, second = decode(0, 1)
    compact(first)
    compact(second)
    assert first.metadata.managed_fields is not None
    assert second.metadata.managed_fields is not None
    tree = first.metadata.managed_fields[0].fields_v1
    assert tree == {"f:spec": {".": {}, "f:replicas": {}}}
    assert tree is second.metadata.managed_fields[0].fields_v1
    copied = first.deepcopy()
    assert copied.metadata.managed_fields is not None
    copied_tree = copied.metadata.managed_fields[0].fields_v1
    assert copied_tree == tree and copied_tree is not tree


def test_the_pool_of_shared_fields_v1_trees_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(compact_module, "_trees", {})
    monkeypatch.setattr(compact_module, "_TREES_LIMIT", 0)
    first, second = decode(0, 1)
    compact(first)
    compact(second)
    assert first.metadata.managed_fields is not None
    assert second.metadata.managed_fields is not None
    tree = first.metadata.managed_fields[0].fields_v1
    assert tree == second.metadata.managed_fields[0].fields_v1
    assert tree is not second.metadata.managed_fields[0].fields_v1
    assert compact_module._trees == {}


def test_models_with_the_same_fields_share_one_fields_set() -> None:
    first, second = decode(0, 1)
    compact(first)
    compact(second)
    assert first.metadata.__pydantic_fields_set__ is second.metadata.__pydantic_fields_set__
    assert first.spec is not None and second.spec is not None
    assert first.spec.__pydantic_fields_set__ is second.spec.__pydantic_fields_set__
    assert first.__pydantic_fields_set__ is second.__pydantic_fields_set__
    assert first.metadata.model_fields_set == {
        "name", "namespace", "uid", "resource_version", "creation_timestamp",
        "labels", "annotations", "managed_fields",
    }  # fmt: skip


def test_a_top_level_object_without_type_fields_shares_a_set_its_dumps_can_mark() -> None:
    data = wire(0)
    del data["apiVersion"], data["kind"]  # as list items of built-in kinds arrive
    (bar,) = BarList.model_validate_json(orjson.dumps({"items": [data]})).items
    assert "kind" not in bar.model_fields_set
    compact(bar)
    assert {"api_version", "kind", "metadata"} <= bar.model_fields_set
    assert bar.model_dump() == wire(0)  # the dump marks the type fields again: a no-op
    assert bar.model_dump_json() == orjson.dumps(wire(0)).decode()
    bar.kind = "Other"
    assert bar.model_dump()["kind"] == "Other"


def test_assignment_and_deletion_copy_a_shared_fields_set_first() -> None:
    first, second = decode(0, 1)
    compact(first)
    compact(second)
    shared = second.metadata.__pydantic_fields_set__
    first.metadata.generation = 3
    assert first.metadata.__pydantic_fields_set__ is not shared
    assert "generation" in first.metadata.model_fields_set
    assert "generation" not in shared
    assert second.metadata.model_dump() == wire(1)["metadata"]
    assert first.metadata.model_dump()["generation"] == 3
    assert first.spec is not None
    del first.spec.replicas
    assert second.spec is not None and second.spec.replicas == 2


def test_a_shared_fields_set_refuses_in_place_changes_and_copies_are_plain_sets() -> None:
    (bar,) = decode(0)
    compact(bar)
    shared = bar.metadata.__pydantic_fields_set__
    changes: list[Callable[[], object]] = [
        lambda: shared.add("x"),
        lambda: shared.discard("name"),
        lambda: shared.update({"x"}),
        lambda: shared.update({"name"}, {"y"}),
        lambda: shared.clear(),
    ]
    for change in changes:
        with pytest.raises(TypeError, match="read-only"):
            change()
    shared.update({"name"}, ["uid"])  # adds nothing: accepted (dumps re-mark this way)
    assert type(shared.copy()) is set and shared.copy() == shared
    assert type(shared | {"x"}) is set


def test_deepcopy_model_copy_and_pickle_stay_independent_of_the_shared_set() -> None:
    first, second = decode(0, 1)
    compact(first)
    compact(second)
    copied = first.deepcopy()
    assert copied == first
    copied.metadata.labels = {"changed": "yes"}
    assert first.metadata.labels == {"app": "sample", "tier": "web"}
    assert "labels" in second.metadata.model_fields_set
    updated = first.metadata.model_copy(update={"generation": 5})
    assert updated.generation == 5 and "generation" in updated.model_fields_set
    assert "generation" not in first.metadata.model_fields_set
    restored = pickle.loads(pickle.dumps(first))
    assert restored == first and type(restored.metadata.model_fields_set) is set
    restored.metadata.generation = 1
    assert first.metadata.generation is None


def test_empty_extras_of_nested_models_become_none_and_still_take_unknown_fields() -> None:
    data = wire(0)
    data["spec"]["futureField"] = "kept"
    first, second = BarList.model_validate_json(orjson.dumps({"items": [data, wire(1)]})).items
    compact(first)
    compact(second)
    assert first.spec is not None and second.spec is not None
    assert first.spec.model_extra == {"futureField": "kept"}
    assert second.spec.__pydantic_extra__ is None
    assert second.model_extra == {"unknownTopLevel": {"kept": ["as", "is"]}}
    copied = second.deepcopy()
    assert copied.spec is not None
    copied.spec.newer = 1
    assert copied.spec.model_dump() == {"deploymentName": "deploy-1", "replicas": 2, "newer": 1}
    assert second.spec.__pydantic_extra__ is None
    assert second.model_dump() == wire(1)


def test_drop_managed_fields_composes_with_compact_in_either_order() -> None:
    first, second = decode(0, 1)
    compact(drop_managed_fields(first))
    drop_managed_fields(compact(second))
    for bar, index in ((first, 0), (second, 1)):
        expected = wire(index)
        del expected["metadata"]["managedFields"]
        assert bar.model_dump() == expected


def test_options_select_each_kind_of_sharing() -> None:
    first, second = decode(0, 2)
    Compactor(share_fields_sets=False)(first)
    Compactor(share_fields_sets=False)(second)
    assert first.metadata.namespace is second.metadata.namespace
    assert first.metadata.__pydantic_fields_set__ is not second.metadata.__pydantic_fields_set__
    third, fourth = decode(0, 2)
    Compactor(intern_strings=False)(third)
    Compactor(intern_strings=False)(fourth)
    assert third.metadata.__pydantic_fields_set__ is fourth.metadata.__pydantic_fields_set__
    assert third.metadata.creation_timestamp is not fourth.metadata.creation_timestamp
    assert first.metadata.__pydantic_extra__ is None
    (fifth,) = decode(0)
    Compactor(drop_empty_extras=False)(fifth)
    assert fifth.metadata.model_extra == {}
    assert compact("not a model") == "not a model"


def test_the_pool_of_shared_sets_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(memory_module, "_shared_sets", {})
    monkeypatch.setattr(memory_module, "_SHARED_SETS_LIMIT", 1)
    first = memory_module.shared_fields_set({"a"})
    assert memory_module.shared_fields_set({"a"}) is first
    other = {"b"}
    assert memory_module.shared_fields_set(other) is other


def held_per_object(transform: Any, count: int) -> float:
    body = orjson.dumps({"items": [wire(i) for i in range(count)]})
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        items = [transform(item) for item in BarList.model_validate_json(body).items]
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(items) == count
    return held / count


def test_compact_saves_at_least_a_third_of_a_cached_object() -> None:
    plain = held_per_object(lambda obj: obj, 2_000)
    compacted = held_per_object(compact, 2_000)
    assert compacted < plain * 2 / 3, (plain, compacted)


def test_stress_threads_compacting_and_assigning_never_leak_a_change() -> None:
    bars = decode(*range(400))
    errors: list[BaseException] = []
    start = threading.Barrier(8)

    def work(part: list[Bar]) -> None:
        try:
            start.wait(timeout=10)
            for bar in part:
                compact(bar)
                bar.metadata.generation = 1
                assert bar.spec is not None
                bar.spec.replicas = 7
        except BaseException as error:  # pragma: no cover - reported below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(bars[i::8],)) for i in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    assert not errors
    assert not any(thread.is_alive() for thread in threads)
    untouched = decode(0)[0]
    compact(untouched)
    assert "generation" not in untouched.metadata.model_fields_set
    assert untouched.spec is not None
    assert untouched.spec.model_fields_set == {"deployment_name", "replicas"}
    assert all(bar.metadata.generation == 1 and bar.spec.replicas == 7 for bar in bars if bar.spec)


def test_an_informer_over_http_caches_compacted_objects_equal_to_the_servers() -> None:
    with served() as (_, transport):
        client = foos(transport, "team-a")
        for index in range(20):
            created = foo(f"foo-{index}", "team-a", app="sample", tier=("web", "db")[index % 2])
            created.metadata.managed_fields = [
                ManagedFieldsEntry(manager="kubectl", operation="Update", fields_type="FieldsV1")
            ]
            client.create(created)
        informer: SharedIndexInformer[Foo] = SharedIndexInformer(
            ListWatch.from_client(client), name="compacted"
        )
        informer.set_transform(compact)
        updated = threading.Event()
        informer.add_event_handler(on_update=lambda old, new: updated.set())
        stop = threading.Event()
        thread = threading.Thread(target=informer.run, args=(stop,))
        thread.start()
        try:
            assert wait_for_cache_sync(stop, informer.has_synced, timeout=30)
            served_objects = {o.metadata.name: o.model_dump() for o in client.list().items}
            cached = {o.metadata.name: o for o in informer.indexer.list()}
            assert {name: o.model_dump() for name, o in cached.items()} == served_objects
            first, second = cached["foo-0"].metadata, cached["foo-2"].metadata
            assert first.namespace is second.namespace
            assert first.__pydantic_fields_set__ is second.__pydantic_fields_set__

            change = cached["foo-0"].deepcopy()
            change.metadata.labels = {"app": "changed"}
            client.update(change)
            assert updated.wait(30)
            changed = informer.indexer.get_by_key("team-a/foo-0")
            assert changed is not None and changed.metadata.labels == {"app": "changed"}
            untouched = informer.indexer.get_by_key("team-a/foo-2")
            assert untouched is not None and untouched.model_dump() == served_objects["foo-2"]
        finally:
            stop.set()
            thread.join(30)
        assert not thread.is_alive()


def test_unstructured_objects_of_the_dynamic_informer_compact_losslessly() -> None:
    data = wire(0)
    data["spec"]["nested"] = [{"deep": None}, 1.5, True]
    first = Unstructured.model_validate_json(orjson.dumps(data))
    second = Unstructured.model_validate_json(orjson.dumps(wire(2)))
    compact(first)
    compact(second)
    assert first.model_dump() == data
    assert first["spec"]["deploymentName"] == "deploy-0"
    assert first["unknownTopLevel"]["kept"][1] is second["unknownTopLevel"]["kept"][1]
    first["spec"] = {"replicas": 9}
    assert first.model_dump()["spec"] == {"replicas": 9}
    assert second.model_dump() == wire(2)


def test_compact_interns_the_nested_models_of_a_wire_decode() -> None:
    body = orjson.dumps({"items": [wire(0), wire(2)]})
    first, second = BarList.model_from_wire_json(body).items
    for bar in (first, second):
        assert compact(bar) is bar
    assert first.model_dump() == wire(0) and second.model_dump() == wire(2)
    a, b = first.metadata, second.metadata
    assert a.namespace is b.namespace and a.creation_timestamp is b.creation_timestamp
    assert a.labels is not None and b.labels is not None
    assert a.labels["tier"] is b.labels["tier"]
    assert a.managed_fields is not None and b.managed_fields is not None
    assert a.managed_fields[0].manager is b.managed_fields[0].manager
    assert a.managed_fields[0].fields_v1 is b.managed_fields[0].fields_v1
    probe = "".join(["bar-", "0"])  # the name is unique per object: never interned
    assert sys.intern(probe) is probe and a.name == probe
    copied = first.deepcopy()
    assert copied == first
    assert copied.metadata.managed_fields is not None
    assert copied.metadata.managed_fields[0].fields_v1 is not a.managed_fields[0].fields_v1


class _Cycle:
    def __init__(self) -> None:
        self.me = self


def test_promotion_moves_young_objects_to_the_oldest_generation_and_cycles_still_die() -> None:
    gc.collect()
    kept, garbage = _Cycle(), _Cycle()
    assert any(o is kept for o in gc.get_objects(generation=0))
    collected_cycles = weakref.ref(garbage)
    del garbage
    memory_module.promote_to_oldest_generation()
    assert gc.get_freeze_count() == 0
    assert not any(o is kept for o in gc.get_objects(generation=0))
    assert any(o is kept for o in gc.get_objects(generation=2))
    gc.collect(1)  # young collections no longer see the promoted cycle
    assert collected_cycles() is not None
    gc.collect()  # a full one does
    assert collected_cycles() is None


def test_promotion_leaves_objects_frozen_on_purpose_frozen() -> None:
    gc.collect()
    gc.freeze()
    try:
        young = _Cycle()
        memory_module.promote_to_oldest_generation()
        # not compared with the count before: a frozen object freed meanwhile (another test's
        # thread ending) lowers it by one; an unfreeze would have emptied it
        assert gc.get_freeze_count() > 0
        assert any(o is young for o in gc.get_objects(generation=0))
    finally:
        gc.unfreeze()


def test_decoded_top_level_objects_without_unknown_fields_hold_no_extras_dict() -> None:
    data = wire(0)
    del data["unknownTopLevel"]
    decoded = Bar.model_from_wire_json(orjson.dumps(data))
    assert type(decoded) is Bar and decoded.__pydantic_extra__ is None
    assert decoded == Bar.model_validate(data)  # pydantic reads None as {}
    assert pickle.loads(pickle.dumps(decoded)) == decoded
    decoded.model_extra["later"] = 1  # made on first use, and it is the model's own
    assert decoded.__pydantic_extra__ == {"later": 1}
    assert decoded.model_dump()["later"] == 1
    assert Bar.model_from_wire_json(orjson.dumps(data)).__pydantic_extra__ is None


def test_share_fields_v1_makes_equal_trees_one_and_changes_no_value() -> None:
    first, second, third = decode(0, 1, 2)
    second.metadata.managed_fields[0].fields_v1 = {"f:spec": {".": {}, "f:other": {}}}  # type: ignore[index]
    dumped = [o.model_dump(by_alias=True) for o in (first, second, third)]
    for obj in (first, second, third):
        assert share_fields_v1(obj) is obj
    assert [o.model_dump(by_alias=True) for o in (first, second, third)] == dumped
    trees = [o.metadata.managed_fields[0].fields_v1 for o in (first, second, third)]  # type: ignore[index]
    assert trees[0] is trees[2] and trees[1] is not trees[0]
    copied = first.deepcopy()
    copied_tree = copied.metadata.managed_fields[0].fields_v1  # type: ignore[index]
    assert copied_tree == trees[0] and copied_tree is not trees[0]
    assert share_fields_v1({"metadata": {}}) == {"metadata": {}}  # not a model: as it is


def test_share_fields_v1_keeps_trees_private_once_the_pool_is_full(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(compact_module, "_trees", {})
    monkeypatch.setattr(compact_module, "_TREES_LIMIT", 1)
    first, second = decode(0, 1)
    second.metadata.managed_fields[0].fields_v1 = {"f:other": {}}  # type: ignore[index]
    third, fourth = decode(2, 3)
    fourth.metadata.managed_fields[0].fields_v1 = {"f:other": {}}  # type: ignore[index]
    for obj in (first, second, third, fourth):
        share_fields_v1(obj)
    tree = [o.metadata.managed_fields[0].fields_v1 for o in (first, second, third, fourth)]  # type: ignore[index]
    assert tree[0] is tree[2]  # pooled
    assert tree[1] == tree[3] and tree[1] is not tree[3]  # past the bound: left private
    assert len(compact_module._trees) == 1


@pytest.mark.parametrize("transform", [None, "drop_labels"])
def test_an_informer_caches_watched_objects_with_equal_fields_v1_trees_once(
    transform: str | None,
) -> None:
    with served() as (_, transport):
        client = foos(transport, "team-a")
        for index in range(4):
            client.create(foo(f"foo-{index}", "team-a", app="sample"))
        informer: SharedIndexInformer[Foo] = SharedIndexInformer(
            ListWatch.from_client(client), name="shared-trees"
        )
        if transform is not None:
            informer.set_transform(_drop_labels)
        stop = threading.Event()
        thread = threading.Thread(target=informer.run, args=(stop,))
        thread.start()
        try:
            assert wait_for_cache_sync(stop, informer.has_synced, timeout=30)
            listed = [o.metadata.managed_fields[0].fields_v1 for o in informer.indexer.list()]  # type: ignore[index]
            for served_object in client.list().items:
                served_object.metadata.annotations = {"example.com/owner": "team-a"}
                client.update(served_object)
            served_objects = {o.metadata.name: o for o in client.list().items}
            versions = {n: o.metadata.resource_version for n, o in served_objects.items()}

            def caught_up() -> bool:
                return {
                    o.metadata.name: o.metadata.resource_version for o in informer.indexer.list()
                } == versions

            poll_until(caught_up, 0.01, timeout=30, immediate=True)
            cached = {o.metadata.name: o for o in informer.indexer.list()}
        finally:
            stop.set()
            thread.join(30)
    assert listed[0] == listed[1] and listed[0] is not listed[1]  # a list keeps its trees
    if transform is not None:
        for obj in served_objects.values():
            _drop_labels(obj)
    assert {n: o.model_dump() for n, o in cached.items()} == {
        n: o.model_dump() for n, o in served_objects.items()
    }
    entries = [o.metadata.managed_fields for o in cached.values()]
    assert all(e is not None and len(e) == len(entries[0] or ()) for e in entries)
    for index in range(len(entries[0] or ())):
        trees = [e[index].fields_v1 for e in entries]  # type: ignore[index]
        assert trees[0] and all(tree is trees[0] for tree in trees)


def _drop_labels(obj: Any) -> Any:
    obj.metadata.labels = None
    return obj
