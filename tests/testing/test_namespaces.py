"""Namespace lifecycle on the test server: the namespace controller (on by default) empties a
deleted namespace and removes it; off, the namespace stays Terminating as on a bare server."""

from __future__ import annotations

from typing import Any

from kgen_runtime.groupversion import GroupVersionResource
from kgen_runtime.testing import FakeClientsetBase, TestAPIServer
from tests.testing._support import Api

NAMESPACES = "/api/v1/namespaces"
NAMESPACES_GVR = GroupVersionResource("", "v1", "namespaces")


def configmap(name: str, *finalizers: str) -> dict[str, Any]:
    return {"metadata": {"name": name, "finalizers": list(finalizers)}, "data": {"k": "v"}}


def test_namespaces_are_created_active_and_keep_their_finalizer(api: Api) -> None:
    status, created = api.post(NAMESPACES, {"metadata": {"name": "team"},
                                            "spec": {"finalizers": ["mine"]}})
    assert (status, created["status"], created["spec"]) == (  # PrepareForCreate appends it
        201, {"phase": "Active"}, {"finalizers": ["mine", "kubernetes"]})
    assert created["metadata"]["labels"] == {"kubernetes.io/metadata.name": "team"}
    updated = api.put(f"{NAMESPACES}/team", {**created, "spec": {"finalizers": []},
                                             "status": {"phase": "Terminating"}})[1]
    assert (updated["spec"], updated["status"]) == ({"finalizers": ["mine", "kubernetes"]},
                                                    {"phase": "Active"})
    status, body = api.post(NAMESPACES, {"metadata": {"name": "Team.A"}})
    assert (status, body["details"]["causes"][0]["field"]) == (422, "metadata.name")


def test_the_namespace_controller_empties_and_removes_a_deleted_namespace(api: Api) -> None:
    api.post(NAMESPACES, {"metadata": {"name": "team"}})
    path = f"{NAMESPACES}/team/configmaps"
    api.post(path, configmap("plain"))
    api.post(path, configmap("held", "example.com/hold"))
    events = api.watch(NAMESPACES, resourceVersion=api.get(NAMESPACES)[1]["metadata"][
        "resourceVersion"])
    status, deleted = api.delete(f"{NAMESPACES}/team")
    assert (status, deleted["status"]["phase"]) == (200, "Terminating")
    assert deleted["metadata"]["deletionTimestamp"]
    assert api.get(f"{path}/plain")[0] == 404
    held = api.get(f"{path}/held")[1]
    assert held["metadata"]["deletionTimestamp"]  # marked, kept by its finalizer
    assert api.get(f"{NAMESPACES}/team")[1]["status"]["phase"] == "Terminating"
    status, body = api.delete(f"{NAMESPACES}/team")
    assert (status, body["reason"]) == (409, "Conflict")
    assert body["message"].endswith("this namespace will automatically be purged by the system.")
    api.patch(f"{path}/held", {"metadata": {"finalizers": None}})
    assert api.get(f"{NAMESPACES}/team")[0] == 404
    seen = [(next(events)["type"]) for _ in range(2)]
    assert seen == ["MODIFIED", "DELETED"]


def test_without_the_controller_a_deleted_namespace_stays_terminating() -> None:
    with TestAPIServer(namespace_controller=False) as server:
        api = Api(server)
        api.post(NAMESPACES, {"metadata": {"name": "team"}})
        api.post(f"{NAMESPACES}/team/configmaps", configmap("plain"))
        assert api.delete(f"{NAMESPACES}/team")[0] == 200
        assert api.get(f"{NAMESPACES}/team/configmaps/plain")[1]["data"] == {"k": "v"}
        assert api.delete(f"{NAMESPACES}/team/configmaps/plain")[0] == 200
        namespace = api.get(f"{NAMESPACES}/team")[1]
        assert (namespace["status"], namespace["spec"]) == (
            {"phase": "Terminating"}, {"finalizers": ["kubernetes"]})
        status, body = api.post(f"{NAMESPACES}/team/configmaps", configmap("new"))
        assert (status, body["reason"]) == (403, "Forbidden")


def test_the_fakes_tracker_deletes_namespaces_through_the_lifecycle() -> None:
    fake = FakeClientsetBase()
    fake.tracker.create(NAMESPACES_GVR, {"apiVersion": "v1", "kind": "Namespace",
                                         "metadata": {"name": "team"}})
    created = fake.tracker.get(NAMESPACES_GVR, "", "team")
    assert (created["status"], created["spec"]) == ({"phase": "Active"},
                                                    {"finalizers": ["kubernetes"]})
    assert fake.tracker.delete(NAMESPACES_GVR, "", "team")["status"]["phase"] == "Terminating"
    assert fake.tracker.list(NAMESPACES_GVR) == []
