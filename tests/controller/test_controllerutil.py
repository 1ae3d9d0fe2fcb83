"""controllerutil: finalizers, create_or_update / create_or_patch, owner-reference setters,
merge patches; writes checked on the fake's recorded requests."""

from __future__ import annotations

from typing import Any

import pytest

from kgen_runtime.api.apps.v1 import Deployment
from kgen_runtime.api.apps.v1.models import DeploymentSpec, DeploymentStatus
from kgen_runtime.api.core.v1 import ConfigMap, Namespace
from kgen_runtime.api.core.v1.models import Container, PodSpec, PodTemplateSpec
from kgen_runtime.api.fake import FakeClientset
from kgen_runtime.controller import (
    AlreadyOwnedError,
    Client,
    Cluster,
    OperationResult,
    add_finalizer,
    contains_finalizer,
    create_or_patch,
    create_or_update,
    handle_finalizer,
    merge_patch,
    remove_finalizer,
    set_controller_reference,
    set_owner_reference,
)
from kgen_runtime.meta import LabelSelector, ObjectMeta, OwnerReference
from kgen_runtime.rest.errors import NotFoundError

NS = "ns"
FINALIZER = "example.com/cleanup"


def live_client(fake: FakeClientset) -> Client:
    """A client reading from the API (no cache), so each write is seen at once."""
    return Client(fake.transport, Cluster(fake.transport).kinds)


def writes(fake: FakeClientset) -> list[tuple[str, str, str]]:
    return [(a.verb, a.resource.resource, a.subresource) for a in fake.actions()
            if a.verb not in ("get", "list", "watch")]


# -- finalizers ------------------------------------------------------------------------------


def test_add_remove_and_contains_change_the_object_in_place() -> None:
    cm = ConfigMap(metadata=ObjectMeta(name="c", finalizers=["other"]))
    assert not contains_finalizer(cm, FINALIZER)
    assert add_finalizer(cm, FINALIZER) is True
    assert add_finalizer(cm, FINALIZER) is False
    assert cm.metadata.finalizers == ["other", FINALIZER]
    assert contains_finalizer(cm, FINALIZER)
    cm.metadata.finalizers = [FINALIZER, "other", FINALIZER]
    assert remove_finalizer(cm, FINALIZER) is True
    assert cm.metadata.finalizers == ["other"]
    assert remove_finalizer(cm, FINALIZER) is False
    assert remove_finalizer(ConfigMap(metadata=ObjectMeta(name="x")), FINALIZER) is False


def test_handle_finalizer_adds_it_to_a_live_object_once() -> None:
    fake = FakeClientset(ConfigMap(metadata=ObjectMeta(name="c", namespace=NS)))
    client = live_client(fake)
    cm = client.get(ConfigMap, NS, "c")
    cleaned: list[str] = []
    kept = handle_finalizer(client, cm, FINALIZER, lambda obj: cleaned.append("x"))
    assert kept is not None and kept.metadata.finalizers == [FINALIZER]
    assert cm.metadata.finalizers is None  # the argument is never changed
    assert handle_finalizer(client, kept, FINALIZER, lambda obj: cleaned.append("x")) is kept
    assert writes(fake) == [("update", "configmaps", "")]
    assert cleaned == []


def test_handle_finalizer_cleans_up_then_releases_a_deleted_object() -> None:
    fake = FakeClientset(ConfigMap(metadata=ObjectMeta(name="c", namespace=NS,
                                                       finalizers=[FINALIZER, "other"])))
    client = live_client(fake)
    fake.core_v1.configmaps(NS).delete("c")
    deleting = client.get(ConfigMap, NS, "c")
    assert deleting.metadata.deletion_timestamp is not None

    def failing(obj: ConfigMap) -> None:
        raise RuntimeError("the external resource is still there")

    with pytest.raises(RuntimeError, match="still there"):
        handle_finalizer(client, deleting, FINALIZER, failing)
    assert client.get(ConfigMap, NS, "c").metadata.finalizers == [FINALIZER, "other"]

    cleaned: list[str | None] = []
    assert handle_finalizer(client, deleting, FINALIZER,
                            lambda obj: cleaned.append(obj.metadata.name)) is None
    assert cleaned == ["c"]
    assert client.get(ConfigMap, NS, "c").metadata.finalizers == ["other"]
    again = client.get(ConfigMap, NS, "c")
    assert handle_finalizer(client, again, FINALIZER, lambda obj: cleaned.append("no")) is None
    assert cleaned == ["c"]


def test_the_last_finalizer_released_lets_the_object_go() -> None:
    fake = FakeClientset(ConfigMap(metadata=ObjectMeta(name="c", namespace=NS,
                                                       finalizers=[FINALIZER])))
    client = live_client(fake)
    fake.core_v1.configmaps(NS).delete("c")
    assert handle_finalizer(client, client.get(ConfigMap, NS, "c"), FINALIZER,
                            lambda obj: None) is None
    with pytest.raises(NotFoundError):
        client.get(ConfigMap, NS, "c")


# -- create_or_update / create_or_patch ------------------------------------------------------


def test_create_or_update_creates_updates_or_leaves_alone() -> None:
    fake = FakeClientset()
    client = live_client(fake)
    key = ConfigMap(metadata=ObjectMeta(name="c", namespace=NS))

    def set_data(value: str) -> Any:
        def mutate(cm: ConfigMap) -> None:
            cm.data = {"key": value}
        return mutate

    result, cm = create_or_update(client, key, set_data("1"))
    assert (result, cm.data) == (OperationResult.CREATED, {"key": "1"})
    assert key.data is None
    result, same = create_or_update(client, key, set_data("1"))
    assert (result, same.metadata.resource_version) == (OperationResult.UNCHANGED,
                                                        cm.metadata.resource_version)
    result, cm = create_or_update(client, key, set_data("2"))
    assert (result, cm.data) == (OperationResult.UPDATED, {"key": "2"})
    assert writes(fake) == [("create", "configmaps", ""), ("update", "configmaps", "")]

    def rename(obj: ConfigMap) -> None:
        obj.metadata.name = "other"

    with pytest.raises(ValueError, match="must not change the object's name or namespace"):
        create_or_update(client, key, rename)


def deployment(name: str) -> Deployment:
    labels = {"app": name}
    return Deployment(metadata=ObjectMeta(name=name, namespace=NS), spec=DeploymentSpec(
        replicas=1, selector=LabelSelector(match_labels=labels),
        template=PodTemplateSpec(metadata=ObjectMeta(labels=labels), spec=PodSpec(
            containers=[Container(name="c", image="nginx")]))))


def test_create_or_patch_patches_what_changed_with_status_apart() -> None:
    fake = FakeClientset()
    client = live_client(fake)

    def mutate(replicas: int, available: int | None) -> Any:
        def apply(d: Deployment) -> None:
            assert d.spec is not None
            d.spec.replicas = replicas
            if available is not None:
                d.status = DeploymentStatus(available_replicas=available)
        return apply

    key = Deployment(metadata=ObjectMeta(name="d", namespace=NS))
    base = deployment("d")
    result, _ = create_or_patch(client, base, mutate(1, None))
    assert result is OperationResult.CREATED
    cases = [
        (mutate(1, None), OperationResult.UNCHANGED, []),
        (mutate(2, None), OperationResult.UPDATED, [("patch", "deployments", "")]),
        (mutate(2, 1), OperationResult.UPDATED_STATUS_ONLY,
         [("patch", "deployments", "status")]),
        (mutate(3, 2), OperationResult.UPDATED_STATUS,
         [("patch", "deployments", ""), ("patch", "deployments", "status")]),
    ]
    for apply, expected, requests in cases:
        fake.clear_actions()
        result, stored = create_or_patch(client, key, apply)
        assert (result, writes(fake)) == (expected, requests)
    assert stored.spec is not None and stored.spec.replicas == 3
    assert stored.status is not None and stored.status.available_replicas == 2
    patches = [a.patch for a in fake.actions() if a.verb == "patch"]
    assert patches == [b'{"spec":{"replicas":3}}', b'{"status":{"availableReplicas":2}}']


def test_create_or_patch_of_a_kind_without_status_subresource_sends_one_patch() -> None:
    fake = FakeClientset(ConfigMap(metadata=ObjectMeta(name="c", namespace=NS),
                                   data={"a": "1", "b": "2"}))
    client = live_client(fake)

    def mutate(cm: ConfigMap) -> None:
        cm.data = {"a": "1", "c": "3"}

    result, cm = create_or_patch(client, ConfigMap(metadata=ObjectMeta(name="c", namespace=NS)),
                                 mutate)
    assert (result, cm.data) == (OperationResult.UPDATED, {"a": "1", "c": "3"})
    assert [a.patch for a in fake.actions() if a.verb == "patch"] == [
        b'{"data":{"b":null,"c":"3"}}']


@pytest.mark.parametrize(("original", "modified", "patch"), [
    ({}, {}, {}),
    ({"a": 1}, {"a": 1}, {}),
    ({"a": 1}, {"a": 2}, {"a": 2}),
    ({"a": 1, "b": 2}, {"a": 1}, {"b": None}),
    ({"a": {"x": 1, "y": 2}}, {"a": {"x": 1, "y": 3, "z": 4}}, {"a": {"y": 3, "z": 4}}),
    ({"a": [1, 2]}, {"a": [1]}, {"a": [1]}),
    ({"a": {"x": 1}}, {"a": 5}, {"a": 5}),
    ({"a": 5}, {"a": {"x": 1}}, {"a": {"x": 1}}),
])
def test_merge_patch(original: dict[str, Any], modified: dict[str, Any],
                     patch: dict[str, Any]) -> None:
    assert merge_patch(original, modified) == patch


# -- owner references ------------------------------------------------------------------------

SCHEME = Cluster(FakeClientset().transport).scheme


def owner(name: str = "owner", namespace: str | None = NS) -> Deployment:
    return Deployment(metadata=ObjectMeta(name=name, namespace=namespace, uid=f"uid-{name}"))


def test_set_controller_reference_adds_or_replaces_the_reference() -> None:
    child = ConfigMap(metadata=ObjectMeta(name="c", namespace=NS, owner_references=[
        OwnerReference(api_version="v1", kind="Secret", name="s", uid="uid-s")]))
    set_controller_reference(owner(), child, SCHEME)
    expected = OwnerReference(api_version="apps/v1", kind="Deployment", name="owner",
                              uid="uid-owner", controller=True, block_owner_deletion=True)
    assert child.metadata.owner_references == [
        OwnerReference(api_version="v1", kind="Secret", name="s", uid="uid-s"), expected]
    recreated = owner()
    recreated.metadata.uid = "uid-new"
    set_controller_reference(recreated, child, SCHEME)  # same group, kind, name: replaced
    assert child.metadata.owner_references is not None
    assert [r.uid for r in child.metadata.owner_references] == ["uid-s", "uid-new"]


def test_a_second_controller_is_refused() -> None:
    child = ConfigMap(metadata=ObjectMeta(name="c", namespace=NS))
    set_controller_reference(owner("first"), child, SCHEME)
    before = child.model_dump()
    with pytest.raises(AlreadyOwnedError,
                       match="Object ns/c is already owned by another Deployment controller "
                             "first") as caught:
        set_controller_reference(owner("second"), child, SCHEME)
    assert caught.value.owner.name == "first"
    assert child.model_dump() == before
    set_owner_reference(owner("second"), child, SCHEME)  # a plain owner is fine
    assert child.metadata.owner_references is not None
    assert [(r.name, r.controller) for r in child.metadata.owner_references] == [
        ("first", True), ("second", None)]


def test_owner_scope_is_checked() -> None:
    with pytest.raises(ValueError, match="cross-namespace owner references are disallowed, "
                                         "owner's namespace ns, obj's namespace other"):
        set_controller_reference(owner(), ConfigMap(metadata=ObjectMeta(
            name="c", namespace="other")), SCHEME)
    with pytest.raises(ValueError, match="cluster-scoped resource must not have a "
                                         "namespace-scoped owner, owner's namespace ns"):
        set_owner_reference(owner(), Namespace(metadata=ObjectMeta(name="n")), SCHEME)
    cluster_owner = Namespace(metadata=ObjectMeta(name="n", uid="uid-n"))
    child = ConfigMap(metadata=ObjectMeta(name="c", namespace=NS))
    set_owner_reference(cluster_owner, child, SCHEME)
    assert child.metadata.owner_references == [
        OwnerReference(api_version="v1", kind="Namespace", name="n", uid="uid-n")]
