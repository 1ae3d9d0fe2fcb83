"""Event handlers: keys, tombstones, enqueue-owner; and the owner-reference helpers."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from kgen_runtime.cache import DeletedFinalStateUnknown
from kgen_runtime.controller import (
    EnqueueHandler,
    EnqueueOwnerHandler,
    deleted_object,
    get_controller_of,
    is_controlled_by,
    new_controller_ref,
)
from kgen_runtime.groupversion import GroupVersionKind
from kgen_runtime.meta import KubeObject, ObjectMeta, OwnerReference, Unstructured
from tests.controller._support import obj

FOO = GroupVersionKind("samplecontroller.k8s.io", "v1alpha1", "Foo")


def foo(name: str = "f", namespace: str = "ns", uid: str = "foo-uid") -> Unstructured:
    return obj(name, namespace, uid=uid, kind="Foo", api_version=FOO.api_version)


def owned(name: str, owner: Unstructured, *, rv: str = "1", controller: bool = True,
          gvk: GroupVersionKind = FOO) -> Unstructured:
    ref = new_controller_ref(owner, gvk)
    ref.controller = controller
    return obj(name, owner.metadata.namespace or "ns", owners=[ref], resource_version=rv,
               kind="Deployment", api_version="apps/v1")


# -- owner references -------------------------------------------------------------------------


def test_new_controller_ref_names_the_owner() -> None:
    ref = new_controller_ref(foo(), FOO)
    assert ref == OwnerReference(api_version="samplecontroller.k8s.io/v1alpha1", kind="Foo",
                                 name="f", uid="foo-uid", controller=True,
                                 block_owner_deletion=True)
    assert ref.model_dump() == {"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
                                "name": "f", "uid": "foo-uid", "controller": True,
                                "blockOwnerDeletion": True}


def test_new_controller_ref_needs_name_and_uid() -> None:
    with pytest.raises(ValueError, match="name and a uid"):
        new_controller_ref(Unstructured(metadata=ObjectMeta(name="x")), FOO)


def test_get_controller_of_returns_a_copy_of_the_controller_ref() -> None:
    owner = foo()
    plain = OwnerReference(api_version="v1", kind="ConfigMap", name="c", uid="c-uid")
    child = obj("d", owners=[plain, new_controller_ref(owner, FOO)])
    ref = get_controller_of(child)
    assert ref is not None and ref.uid == "foo-uid"
    ref.name = "changed"
    assert child.metadata.owner_references is not None
    assert child.metadata.owner_references[1].name == "f"  # the cached object is untouched
    assert get_controller_of(obj("lonely", owners=[plain])) is None
    assert get_controller_of(obj("none")) is None


def test_is_controlled_by_compares_uids() -> None:
    owner = foo()
    child = owned("d", owner)
    assert is_controlled_by(child, owner)
    assert not is_controlled_by(child, foo(uid="other"))
    assert not is_controlled_by(owned("d", owner, controller=False), owner)
    assert not is_controlled_by(child, Unstructured(metadata=ObjectMeta(name="f")))


# -- tombstones ---------------------------------------------------------------------------------


def test_deleted_object_unwraps_tombstones(caplog: pytest.LogCaptureFixture) -> None:
    o = obj("a")
    assert deleted_object(o, Unstructured) is o
    assert deleted_object(DeletedFinalStateUnknown("ns/a", o), Unstructured) is o
    with caplog.at_level(logging.ERROR):
        assert deleted_object("junk", Unstructured) is None
        assert deleted_object(DeletedFinalStateUnknown("ns/a", "junk"), KubeObject) is None
    messages = [r.getMessage() for r in caplog.records]
    assert any("couldn't get object from tombstone 'junk'" in m for m in messages)
    assert any("tombstone contained object that is not a KubeObject" in m for m in messages)


# -- EnqueueHandler ---------------------------------------------------------------------------


def test_enqueue_handler_keys_every_notification() -> None:
    keys: list[str] = []
    h = EnqueueHandler(keys.append)
    h.on_add(obj("a"), True)
    h.on_update(obj("a"), obj("b"))
    h.on_update(obj("c"), obj("c"))  # resyncs too: level-triggered
    h.on_delete(obj("d"))
    h.on_delete(DeletedFinalStateUnknown("ns/e", obj("stale-e")))
    h.on_add(obj("cluster", namespace=""), False)
    assert keys == ["ns/a", "ns/b", "ns/c", "ns/d", "ns/e", "cluster"]


def test_enqueue_handler_reports_unkeyable_objects(caplog: pytest.LogCaptureFixture) -> None:
    keys: list[str] = []
    with caplog.at_level(logging.ERROR):
        EnqueueHandler(keys.append).on_add(Unstructured(), False)
    assert keys == []
    assert any("cannot enqueue object" in r.getMessage() for r in caplog.records)


def test_enqueue_handler_custom_key_func() -> None:
    keys: list[str] = []
    EnqueueHandler(keys.append, key_func=lambda o: o.metadata.uid).on_add(obj("a"), False)
    assert keys == ["uid-a"]


# -- EnqueueOwnerHandler --------------------------------------------------------------------


def test_enqueue_owner_handler_enqueues_the_controlling_foo() -> None:
    keys: list[str] = []
    h = EnqueueOwnerHandler(keys.append, FOO)
    owner = foo("my-foo")
    h.on_add(owned("d", owner), False)
    h.on_delete(owned("d", owner))
    h.on_delete(DeletedFinalStateUnknown("ns/d", owned("d", owner)))
    assert keys == ["ns/my-foo"] * 3


def test_enqueue_owner_handler_ignores_other_owners() -> None:
    keys: list[str] = []
    h = EnqueueOwnerHandler(keys.append, FOO)
    owner = foo()
    h.on_add(obj("no-owner"), False)
    h.on_add(owned("not-controller", owner, controller=False), False)
    h.on_add(owned("other-kind", owner, gvk=GroupVersionKind("apps", "v1", "ReplicaSet")), False)
    h.on_add(owned("other-group", owner, gvk=GroupVersionKind("x.io", "v1alpha1", "Foo")), False)
    h.on_add(owned("bad-api-version", owner, gvk=GroupVersionKind("a/b", "v1", "Foo")), False)
    h.on_delete("junk")
    assert keys == []


def test_enqueue_owner_handler_matches_any_version_of_the_group() -> None:
    keys: list[str] = []
    h = EnqueueOwnerHandler(keys.append, FOO)
    h.on_add(owned("d", foo(), gvk=GroupVersionKind(FOO.group, "v1", "Foo")), False)
    assert keys == ["ns/f"]


def test_enqueue_owner_handler_updates() -> None:
    keys: list[str] = []
    h = EnqueueOwnerHandler(keys.append, FOO)
    a, b = foo("a", uid="ua"), foo("b", uid="ub")
    h.on_update(owned("d", a, rv="5"), owned("d", a, rv="5"))  # resync: skipped
    assert keys == []
    h.on_update(owned("d", a, rv="5"), owned("d", b, rv="6"))  # re-parented: both owners
    assert keys == ["ns/a", "ns/b"]


def test_enqueue_owner_handler_cluster_scoped_owner() -> None:
    keys: list[str] = []
    h = EnqueueOwnerHandler(keys.append, FOO, owner_namespaced=False)
    h.on_add(owned("d", foo("cluster-foo")), False)
    assert keys == ["cluster-foo"]


def test_enqueue_owner_handler_resolves_the_owner_and_checks_its_uid() -> None:
    keys: list[str] = []
    lookups: list[tuple[str, str]] = []
    live = {"ns/current": foo("current", uid="u1"), "ns/recreated": foo("recreated", uid="new")}

    def resolve(namespace: str, name: str) -> Any:
        lookups.append((namespace, name))
        return live.get(f"{namespace}/{name}")

    h = EnqueueOwnerHandler(keys.append, FOO, resolve=resolve)
    h.on_add(owned("d1", foo("current", uid="u1")), False)
    h.on_add(owned("d2", foo("gone", uid="u2")), False)
    h.on_add(owned("d3", foo("recreated", uid="old")), False)
    assert keys == ["ns/current"]
    assert lookups == [("ns", "current"), ("ns", "gone"), ("ns", "recreated")]
