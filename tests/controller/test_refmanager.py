"""ControllerRefManager against the fake clientset: adoptions and releases are recorded patches."""

from __future__ import annotations

import orjson
import pytest

from kgen_runtime.controller import (
    ControllerRefManager,
    new_controller_ref,
    recheck_deletion_timestamp,
)
from kgen_runtime.groupversion import GroupVersionKind, GroupVersionResource
from kgen_runtime.labels import parse
from kgen_runtime.meta import ObjectMeta, OwnerReference, Unstructured
from kgen_runtime.rest import DynamicResourceClient
from kgen_runtime.rest.errors import ConflictError
from kgen_runtime.testing import FakeClientsetBase
from kgen_runtime.util import Aggregate
from tests.controller._support import obj

PODS = GroupVersionResource("", "v1", "pods")
RS = GroupVersionKind("apps", "v1", "ReplicaSet")
OWNER = Unstructured(api_version="apps/v1", kind="ReplicaSet",
                     metadata=ObjectMeta(name="rs", namespace="ns", uid="rs-uid"))
OTHER = OwnerReference(api_version="apps/v1", kind="ReplicaSet", name="other", uid="other-uid",
                       controller=True)
MINE = new_controller_ref(OWNER, RS)
SELECTOR = parse("app=web")


class Fixture:
    def __init__(self, *pods: Unstructured) -> None:
        self.fake = FakeClientsetBase(*pods)

    def client(self, namespace: str) -> DynamicResourceClient:
        return self.fake.dynamic.resource(PODS).namespace(namespace)

    def cached(self, name: str, namespace: str = "ns") -> Unstructured:
        """The pod as an informer would have it (with the server's uid and resourceVersion)."""
        return self.client(namespace).get(name)

    def patches(self) -> list[tuple[str, dict[str, object]]]:
        return [(a.name, orjson.loads(a.patch or b"")) for a in self.fake.actions()
                if a.verb == "patch"]

    def manager(self, owner: Unstructured = OWNER, **kwargs: object) -> ControllerRefManager:
        return ControllerRefManager(owner, RS, SELECTOR, self.client, **kwargs)  # type: ignore[arg-type]


def web(name: str, *owners: OwnerReference, namespace: str = "ns") -> Unstructured:
    return _pod(obj(name, namespace, labels={"app": "web"}, owners=list(owners) or None))


def db(name: str, *owners: OwnerReference) -> Unstructured:
    return _pod(obj(name, labels={"app": "db"}, owners=list(owners) or None))


def _pod(pod: Unstructured) -> Unstructured:
    """A pod the API server accepts on update: it needs a container."""
    return Unstructured.model_validate(
        {**pod.model_dump(), "spec": {"containers": [{"name": "c", "image": "nginx"}]}})


def test_claim_adopts_releases_and_ignores_per_the_table() -> None:
    f = Fixture(web("orphan"), db("orphan-db"), web("mine", MINE), db("mine-db", MINE),
                web("theirs", OTHER), web("elsewhere", namespace="other"))
    pods = [f.cached(n) for n in ("orphan", "orphan-db", "mine", "mine-db", "theirs")]
    pods.append(f.cached("elsewhere", "other"))
    f.fake.clear_actions()

    claimed = f.manager().claim_objects(pods)

    assert [p.metadata.name for p in claimed] == ["orphan", "mine"]
    orphan_rv, mine_db_rv = pods[0].metadata.resource_version, pods[3].metadata.resource_version
    assert f.patches() == [
        ("orphan", {"metadata": {"uid": pods[0].metadata.uid, "resourceVersion": orphan_rv,
                                 "ownerReferences": [MINE.model_dump()]}}),
        ("mine-db", {"metadata": {"uid": pods[3].metadata.uid, "resourceVersion": mine_db_rv,
                                  "ownerReferences": None}}),
    ]
    assert f.cached("orphan").metadata.owner_references == [MINE]
    assert f.cached("mine-db").metadata.owner_references is None


def test_adoption_keeps_other_non_controller_references() -> None:
    plain = OwnerReference(api_version="v1", kind="ConfigMap", name="c", uid="c-uid")
    f = Fixture(web("p", plain))
    f.manager().claim_objects([f.cached("p")])
    assert f.cached("p").metadata.owner_references == [plain, MINE]


def test_filters_narrow_the_selector() -> None:
    f = Fixture(web("a"), web("b"))
    claimed = f.manager().claim_objects([f.cached("a"), f.cached("b")],
                                        lambda p: p.metadata.name == "b")
    assert [p.metadata.name for p in claimed] == ["b"]
    assert [name for name, _ in f.patches()] == ["b"]


def test_deleting_owner_neither_adopts_nor_releases() -> None:
    f = Fixture(web("orphan"), db("mine-db", MINE), web("mine", MINE))
    owner = OWNER.deepcopy()
    owner.metadata.deletion_timestamp = "2026-01-01T00:00:00Z"
    claimed = f.manager(owner).claim_objects([f.cached(n) for n in ("orphan", "mine-db", "mine")])
    assert [p.metadata.name for p in claimed] == ["mine"]
    assert f.patches() == []


def test_deleting_orphans_are_not_adopted() -> None:
    f = Fixture(web("orphan"))
    pod = f.cached("orphan")
    pod.metadata.deletion_timestamp = "2026-01-01T00:00:00Z"
    assert f.manager().claim_objects([pod]) == []
    assert f.patches() == []


def test_stale_cache_conflicts_and_the_rest_is_still_claimed() -> None:
    f = Fixture(web("stale"), web("fresh"), db("stale-db", MINE))
    stale, fresh, stale_db = f.cached("stale"), f.cached("fresh"), f.cached("stale-db")
    for name in ("stale", "stale-db"):  # someone writes the pods after the cache saw them
        f.client("ns").patch(name, {"metadata": {"annotations": {"touched": "yes"}}})
    f.fake.clear_actions()
    with pytest.raises(Aggregate) as info:
        f.manager().claim_objects([stale, fresh, stale_db])
    assert [type(e) for e in info.value.exceptions] == [ConflictError, ConflictError]
    assert [name for name, _ in f.patches()] == ["stale", "fresh", "stale-db"]
    assert f.cached("fresh").metadata.owner_references == [MINE]
    assert f.cached("stale").metadata.owner_references is None  # unchanged, retried later


def test_vanished_children_are_skipped_silently() -> None:
    f = Fixture(web("gone"), db("gone-db", MINE))
    pods = [f.cached("gone"), f.cached("gone-db")]
    for pod in pods:
        f.client("ns").delete(pod.metadata.name or "")
    assert f.manager().claim_objects(pods) == []
    assert [name for name, _ in f.patches()] == ["gone", "gone-db"]


def test_can_adopt_runs_once_and_refuses_every_adoption() -> None:
    calls = 0

    def can_adopt() -> None:
        nonlocal calls
        calls += 1
        raise RuntimeError("owner is going away")

    f = Fixture(web("a"), web("b"), web("mine", MINE))
    with pytest.raises(Aggregate) as info:
        f.manager(can_adopt=can_adopt).claim_objects([f.cached(n) for n in ("a", "b", "mine")])
    assert calls == 1
    assert len(info.value.exceptions) == 2
    assert str(info.value.exceptions[0]) == (
        "can't adopt objects for ReplicaSet ns/rs: owner is going away")
    assert f.patches() == []


def test_recheck_deletion_timestamp() -> None:
    fresh = OWNER.deepcopy()
    check = recheck_deletion_timestamp(OWNER, lambda: fresh)
    check()  # same uid, not deleting: fine
    fresh.metadata.deletion_timestamp = "2026-01-01T00:00:00Z"
    with pytest.raises(RuntimeError, match="has just been deleted"):
        check()
    fresh.metadata.uid = "new-uid"
    with pytest.raises(RuntimeError, match="got uid new-uid, wanted rs-uid"):
        check()
