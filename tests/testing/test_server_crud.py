"""CRUD over raw HTTP: status codes, Status bodies, metadata, generation and the status split."""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest

from kgen_runtime.testing import TestAPIServer
from tests.testing._support import FOO_CRD, FOOS, Api, foo

CMS = "/api/v1/namespaces/default/configmaps"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def configmap(name: str, **data: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data}


def test_create_sets_server_metadata(api: Api) -> None:
    status, created = api.post(CMS, configmap("a", k="v"))
    assert status == 201
    meta = created["metadata"]
    assert meta["namespace"] == "default"
    assert int(meta["resourceVersion"]) > 0
    assert "generation" not in meta  # a ConfigMap's strategy keeps none
    assert len(meta["uid"]) == 36
    assert meta["creationTimestamp"].endswith("Z")
    assert api.get(f"{CMS}/a") == (200, created)


def test_create_errors_are_apiserver_status_bodies(api: Api) -> None:
    api.post(CMS, configmap("a"))
    assert api.post(CMS, configmap("a")) == (409, {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'configmaps "a" already exists', "reason": "AlreadyExists",
        "details": {"name": "a", "kind": "configmaps"}, "code": 409,
    })
    with_rv = configmap("b")
    with_rv["metadata"]["resourceVersion"] = "5"
    status, body = api.post(CMS, with_rv)
    assert (status, body.get("reason")) == (500, None)  # a storage error, not an API status
    assert body["message"] == "resourceVersion should not be set on objects to be created"
    status, body = api.post(CMS, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}})
    assert (status, body["reason"]) == (422, "Invalid")
    assert body["details"]["causes"] == [{"reason": "FieldValueRequired", "message":
                                          "Required value: name or generateName is required",
                                          "field": "metadata.name"}]
    wrong_ns = configmap("c")
    wrong_ns["metadata"]["namespace"] = "other"
    assert api.post(CMS, wrong_ns)[0] == 400
    assert api.post(CMS, {**configmap("d"), "kind": "Secret"})[0] == 400
    assert api.post(CMS, b"{not json")[0] == 400


def test_generate_name_appends_a_random_suffix(api: Api) -> None:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "job-"}}
    names = {api.post(CMS, body)[1]["metadata"]["name"] for _ in range(5)}
    assert len(names) == 5
    assert all(name.startswith("job-") and len(name) == 9 for name in names)


def test_get_missing_and_unknown_paths(api: Api) -> None:
    assert api.get(f"{CMS}/nope") == (404, {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'configmaps "nope" not found', "reason": "NotFound",
        "details": {"name": "nope", "kind": "configmaps"}, "code": 404,
    })
    _status, body = api.get("/apis/apps/v1/namespaces/x/deployments/d")
    assert body["details"] == {"name": "d", "group": "apps", "kind": "deployments"}
    assert body["message"] == 'deployments.apps "d" not found'
    assert api.get("/apis/nope.io/v1/things")[0] == 404
    assert api.get("/apis/apps/v1/deployments/d")[0] == 404  # namespaced without namespace
    assert api.get("/api/v1/namespaces/default/configmaps/a/status")[0] == 404


def test_update_conflicts_on_stale_resource_version(api: Api) -> None:
    _, created = api.post(CMS, configmap("a", k="1"))
    first = int(created["metadata"]["resourceVersion"])
    created["data"] = {"k": "2"}
    status, updated = api.put(f"{CMS}/a", created)
    assert status == 200
    assert updated["metadata"]["resourceVersion"] == str(first + 1)
    created["data"] = {"k": "3"}
    status, body = api.put(f"{CMS}/a", created)
    assert (status, body["reason"]) == (409, "Conflict")
    assert body["message"] == (
        'Operation cannot be fulfilled on configmaps "a": the object has been modified; '
        "please apply your changes to the latest version and try again")
    del created["metadata"]["resourceVersion"]  # unconditional update
    status, body = api.put(f"{CMS}/a", created)
    assert (status, body["data"], body["metadata"]["resourceVersion"]) == (
        200, {"k": "3"}, str(first + 2))
    assert api.put(f"{CMS}/zz", configmap("zz"))[0] == 404
    assert api.put(f"{CMS}/a", configmap("other"))[0] == 400


def test_update_keeps_server_owned_metadata_and_skips_no_op_writes(api: Api) -> None:
    _, created = api.post(CMS, configmap("a"))
    forged = {**created, "metadata": {**created["metadata"], "creationTimestamp":
                                      "2000-01-01T00:00:00Z", "generation": 42}}
    _, updated = api.put(f"{CMS}/a", forged)
    assert updated == created  # nothing the client may change changed: no write, same RV
    assert api.get(CMS)[1]["metadata"]["resourceVersion"] == created["metadata"][
        "resourceVersion"]


def test_generation_moves_only_outside_metadata_and_status(crd_api: Api) -> None:
    _, created = crd_api.post(FOOS, foo("a", replicas=2))
    assert created["metadata"]["generation"] == 1
    _, labelled = crd_api.patch(f"{FOOS}/a", {"metadata": {"labels": {"x": "y"}}})
    assert labelled["metadata"]["generation"] == 1
    _, with_status = crd_api.patch(f"{FOOS}/a/status", {"status": {"availableReplicas": 2}})
    assert with_status["metadata"]["generation"] == 1
    assert with_status["status"] == {"availableReplicas": 2}
    _, respec = crd_api.patch(f"{FOOS}/a", {"spec": {"replicas": 3}})
    assert respec["metadata"]["generation"] == 2


def test_status_subresource_splits_writes(crd_api: Api) -> None:
    body = foo("a")
    body["status"] = {"availableReplicas": 9}
    _, created = crd_api.post(FOOS, body)
    assert "status" not in created  # create ignores status
    created["status"] = {"availableReplicas": 1}
    created["spec"]["replicas"] = 5
    _, updated = crd_api.put(f"{FOOS}/a", created)
    assert "status" not in updated and updated["spec"]["replicas"] == 5
    updated["status"] = {"availableReplicas": 3}
    updated["spec"]["replicas"] = 7
    updated["metadata"]["labels"] = {"ignored": "yes"}
    _, by_status = crd_api.put(f"{FOOS}/a/status", updated)
    assert by_status["status"] == {"availableReplicas": 3}
    assert by_status["spec"]["replicas"] == 5  # update_status ignores everything else
    assert "labels" not in by_status["metadata"]
    assert crd_api.get(f"{FOOS}/a/status") == (200, by_status)


def test_delete_without_finalizers(api: Api, crd_api: Api) -> None:
    _, created = api.post(CMS, configmap("a"))
    status, body = api.delete(f"{CMS}/a")
    assert (status, body) == (200, {"kind": "Status", "apiVersion": "v1", "metadata": {},
                                    "status": "Success", "details": {
                                        "name": "a", "kind": "configmaps",
                                        "uid": created["metadata"]["uid"]}})
    assert api.get(f"{CMS}/a")[0] == 404
    assert api.delete(f"{CMS}/a")[0] == 404
    _, created = crd_api.post(FOOS, foo("f"))
    # apiextensions' customresource store leaves ReturnDeletedObject unset: a Status too
    assert crd_api.delete(f"{FOOS}/f") == (200, {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
        "details": {"name": "f", "group": "samplecontroller.k8s.io", "kind": "foos",
                    "uid": created["metadata"]["uid"]}})


@pytest.mark.parametrize(("path", "body"), [
    ("/api/v1/namespaces/default/services",
     {"metadata": {"name": "a"}, "spec": {"ports": [{"port": 80}]}}),
    ("/api/v1/namespaces/default/pods",
     {"metadata": {"name": "a"}, "spec": {"containers": [{"name": "c", "image": "nginx"}]}}),
    ("/api/v1/namespaces/default/serviceaccounts", {"metadata": {"name": "a"}}),
    ("/apis/storage.k8s.io/v1/storageclasses",
     {"metadata": {"name": "a"}, "provisioner": "example.com/disk"}),
    ("/apis/storage.k8s.io/v1/csidrivers", {"metadata": {"name": "a"}, "spec": {}}),
    ("/apis/resource.k8s.io/v1/deviceclasses", {"metadata": {"name": "a"}, "spec": {}}),
    ("/api/v1/namespaces/default/resourcequotas", {"metadata": {"name": "a"}, "spec": {}}),
    ("/api/v1/namespaces/default/persistentvolumeclaims",
     {"metadata": {"name": "a"}, "spec": {"accessModes": ["ReadWriteOnce"],
                                          "resources": {"requests": {"storage": "1Gi"}}}}),
])
def test_kinds_whose_registry_returns_the_deleted_object(
    api: Api, path: str, body: dict[str, Any]
) -> None:
    """ReturnDeletedObject in their kube-apiserver registries: a DELETE answers with the
    object (the kubernetes package decodes it as the kind), not a Status."""
    created = api.post(path, body)[1]
    status, deleted = api.delete(f"{path}/a")
    assert (status, deleted["kind"], deleted["metadata"]["uid"]) == (
        200, created["kind"], created["metadata"]["uid"])


@pytest.mark.parametrize(("path", "body", "group"), [
    ("/api/v1/namespaces/default/secrets", {"metadata": {"name": "a"}}, ""),
    ("/apis/networking.k8s.io/v1/ingressclasses", {"metadata": {"name": "a"}, "spec": {}},
     "networking.k8s.io"),
    ("/apis/storage.k8s.io/v1/namespaces/default/csistoragecapacities",
     {"metadata": {"name": "a"}, "storageClassName": "disk"}, "storage.k8s.io"),
])
def test_kinds_whose_registry_answers_a_status(
    api: Api, path: str, body: dict[str, Any], group: str
) -> None:
    """Registries without ReturnDeletedObject: the generic store's finalizeDelete Status,
    whose details carry the resource (not the kind) and the group when there is one."""
    created = api.post(path, body)[1]
    status, deleted = api.delete(f"{path}/a")
    plural = path.rsplit("/", 1)[1]
    assert (status, deleted) == (200, {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
        "details": {"name": "a", **({"group": group} if group else {}), "kind": plural,
                    "uid": created["metadata"]["uid"]}})


def test_a_deleted_crd_is_answered_with_itself(api: Api) -> None:
    """The CRD registry's Delete marks the CRD first (its cleanup finalizer), so the answer
    is the CRD, never a Status."""
    _, created = api.post(CRDS, FOO_CRD)
    status, deleted = api.delete(f"{CRDS}/{FOO_CRD['metadata']['name']}")
    assert (status, deleted["kind"], deleted["metadata"]["uid"]) == (
        200, "CustomResourceDefinition", created["metadata"]["uid"])


def test_an_object_that_stays_is_accepted_when_dependents_are_not_orphaned(
    crd_api: Api,
) -> None:
    """delete.go: 202 when the object was not deleted at once (finalizers) and the request
    said orphanDependents=false; 200 otherwise, and 200 for an object deleted at once."""
    for name in ("kept", "query", "other"):
        crd_api.post(FOOS, foo(name) | {"metadata": {"name": name,
                                                     "finalizers": ["example.com/x"]}})
    status, marked = crd_api.delete(f"{FOOS}/kept", {"orphanDependents": False})
    assert (status, marked["kind"], bool(marked["metadata"]["deletionTimestamp"])) == (
        202, "Foo", True)
    assert crd_api.delete(f"{FOOS}/query", orphanDependents="false")[0] == 202
    assert crd_api.delete(f"{FOOS}/other", {"orphanDependents": True})[0] == 200
    crd_api.post(FOOS, foo("gone"))
    status, body = crd_api.delete(f"{FOOS}/gone", {"orphanDependents": False})
    assert (status, body["kind"]) == (200, "Status")


def test_finalizers_keep_the_object_until_removed(crd_api: Api) -> None:
    body = foo("a")
    body["metadata"]["finalizers"] = ["example.com/cleanup"]
    crd_api.post(FOOS, body)
    status, marked = crd_api.delete(f"{FOOS}/a")
    assert status == 200
    assert marked["metadata"]["deletionTimestamp"].endswith("Z")
    assert marked["metadata"]["generation"] == 2
    assert crd_api.get(f"{FOOS}/a")[1] == marked
    assert crd_api.delete(f"{FOOS}/a")[1] == marked  # deleting again changes nothing
    status, body = crd_api.patch(f"{FOOS}/a", {"metadata": {"finalizers": ["a", "b"]}})
    assert (status, body["reason"]) == (422, "Invalid")
    assert body["details"]["causes"][0]["field"] == "metadata.finalizers"
    status, gone = crd_api.patch(f"{FOOS}/a", {"metadata": {"finalizers": None}})
    assert status == 200 and "finalizers" not in gone["metadata"]
    assert crd_api.get(f"{FOOS}/a")[0] == 404


def test_delete_preconditions_and_propagation_policy(crd_api: Api) -> None:
    _, created = crd_api.post(FOOS, foo("a"))
    status, body = crd_api.delete(f"{FOOS}/a", {"preconditions": {"uid": "other"}})
    assert (status, body["reason"]) == (409, "Conflict")
    assert body["message"] == (  # crd.jsonl #97: rest.BeforeDelete's message, naming the kind
        'Operation cannot be fulfilled on Foo.samplecontroller.k8s.io "a": the UID in the '
        f"precondition (other) does not match the UID in record ({created['metadata']['uid']})"
        ". The object might have been deleted and then recreated")
    assert body["details"] == {"name": "a", "group": "samplecontroller.k8s.io", "kind": "Foo"}
    status, body = crd_api.delete(f"{FOOS}/a", {"preconditions": {"resourceVersion": "999"}})
    assert status == 409
    status, body = crd_api.delete(f"{FOOS}/a", {"propagationPolicy": "Sideways"})
    assert (status, body["message"]) == (422, (  # builtins.jsonl #63
        'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: '
        '"Sideways": supported values: "Foreground", "Background", "Orphan", "nil"'))
    assert body["details"] == {"group": "meta.k8s.io", "kind": "DeleteOptions", "causes": [{
        "reason": "FieldValueNotSupported", "field": "propagationPolicy",
        "message": 'Unsupported value: "Sideways": supported values: "Foreground", '
                   '"Background", "Orphan", "nil"'}]}
    status, _ = crd_api.delete(f"{FOOS}/a", {
        "propagationPolicy": "Background",
        "preconditions": {"uid": created["metadata"]["uid"],
                          "resourceVersion": created["metadata"]["resourceVersion"]}})
    assert status == 200
    assert crd_api.get(f"{FOOS}/a")[0] == 404


def test_delete_collection_by_selector(crd_api: Api) -> None:
    for name, tier in (("a", "web"), ("b", "db"), ("c", "web")):
        body = foo(name)
        body["metadata"]["labels"] = {"tier": tier}
        crd_api.post(FOOS, body)
    status, deleted = crd_api.delete(FOOS, labelSelector="tier=web")
    assert status == 200 and deleted["kind"] == "FooList"
    assert [item["metadata"]["name"] for item in deleted["items"]] == ["a", "c"]
    assert [i["metadata"]["name"] for i in crd_api.get(FOOS)[1]["items"]] == ["b"]


def test_patch_types(crd_api: Api) -> None:
    crd_api.post(FOOS, foo("a", tags=["x"], mode="fast"))
    _, merged = crd_api.patch(f"{FOOS}/a", {"spec": {"mode": None, "replicas": 4}})
    assert merged["spec"] == {"deploymentName": "dep", "replicas": 4, "tags": ["x"]}
    _, patched = crd_api.patch(f"{FOOS}/a", [
        {"op": "test", "path": "/spec/replicas", "value": 4},
        {"op": "add", "path": "/spec/tags/-", "value": "y"},
        {"op": "replace", "path": "/spec/replicas", "value": 5},
    ], "application/json-patch+json")
    assert patched["spec"]["tags"] == ["x", "y"] and patched["spec"]["replicas"] == 5
    status, body = crd_api.patch(f"{FOOS}/a", [{"op": "test", "path": "/spec/replicas",
                                                "value": 1}], "application/json-patch+json")
    assert (status, body["reason"]) == (422, "Invalid")
    assert crd_api.patch(f"{FOOS}/a", {}, "application/strategic-merge-patch+json")[0] == 415
    assert crd_api.patch(f"{FOOS}/a", {}, "text/plain")[0] == 415
    assert crd_api.patch(f"{FOOS}/zz", {"spec": {}})[0] == 404
    stale = {"metadata": {"resourceVersion": "1"}, "spec": {"replicas": 6}}
    assert crd_api.patch(f"{FOOS}/a", stale)[1]["reason"] == "Conflict"


def test_server_side_apply_creates_then_merges(crd_api: Api) -> None:
    applied = foo("a", replicas=2, tags=["p", "q"])
    apply_type = "application/apply-patch+yaml"
    status, body = crd_api.patch(f"{FOOS}/a", applied, apply_type)
    assert (status, body["reason"]) == (422, "Invalid")  # fieldManager is required
    status, created = crd_api.patch(f"{FOOS}/a", applied, apply_type, fieldManager="me")
    assert status == 201 and created["spec"]["tags"] == ["p", "q"]
    yaml_body = (b"apiVersion: samplecontroller.k8s.io/v1alpha1\nkind: Foo\n"
                 b"metadata:\n  name: a\nspec:\n  deploymentName: dep\n  tags: [r]\n")
    status, merged = crd_api.patch(f"{FOOS}/a", yaml_body, apply_type, fieldManager="me")
    assert status == 200
    assert crd_api.patch(f"{FOOS}/b", foo("c"), apply_type, fieldManager="me")[0] == 400
    # replicas, applied before and left out now, is removed (then defaulted again)
    assert merged["spec"] == {"deploymentName": "dep", "replicas": 1, "tags": ["r"]}


def test_strategic_merge_patch_on_builtins_merges(api: Api) -> None:
    api.post(CMS, configmap("a", k="1"))
    status, body = api.patch(f"{CMS}/a", {"data": {"j": "2"}},
                             "application/strategic-merge-patch+json")
    assert (status, body["data"]) == (200, {"k": "1", "j": "2"})


def test_cluster_scoped_resources(api: Api) -> None:
    status, ns = api.post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                 "metadata": {"name": "team"}})
    assert status == 201 and "namespace" not in ns["metadata"]
    assert api.get("/api/v1/namespaces/team")[1] == ns
    assert api.post("/apis/apps/v1/deployments", {"metadata": {"name": "d"}})[0] == 405


def test_registered_builtin_is_served(api_server: TestAPIServer, api: Api) -> None:
    api_server.register_builtin("policy", "v1", "PodDisruptionBudget",
                                "poddisruptionbudgets", status_subresource=True)
    path = "/apis/policy/v1/namespaces/default/poddisruptionbudgets"
    assert api.post(path, {"metadata": {"name": "p"}, "spec": {"anything": True}})[0] == 201
    assert api.get(f"{path}/p/status")[0] == 200


def test_metadata_is_validated(api: Api) -> None:
    status, error = api.post(CMS, configmap("Not_Valid"))
    assert (status, error["details"]["causes"][0]["field"]) == (422, "metadata.name")
    assert error["details"]["causes"][0]["message"].startswith(
        'Invalid value: "Not_Valid": a lowercase RFC 1123 subdomain must consist of')
    labelled = configmap("a")
    labelled["metadata"]["labels"] = {"good": "yes", "bad key!": "x", "k": "bad value!"}
    status, error = api.post(CMS, labelled)
    assert status == 422
    assert [c["field"] for c in error["details"]["causes"]] == ["metadata.labels"] * 2
    api.post(CMS, configmap("b"))
    assert api.patch(f"{CMS}/b", {"metadata": {"labels": {"-x": "1"}}})[0] == 422


def test_scale_subresource(crd_api: Api) -> None:
    crd_api.post(FOOS, foo("a", replicas=2))
    crd_api.patch(f"{FOOS}/a/status", {"status": {"availableReplicas": 1, "selector": "app=a"}})
    status, scale = crd_api.get(f"{FOOS}/a/scale")
    assert status == 200
    assert (scale["kind"], scale["apiVersion"], scale["spec"], scale["status"]) == (
        "Scale", "autoscaling/v1", {"replicas": 2}, {"replicas": 1, "selector": "app=a"})
    scale["spec"]["replicas"] = 4
    status, scaled = crd_api.put(f"{FOOS}/a/scale", scale)
    assert (status, scaled["spec"]["replicas"]) == (200, 4)
    assert crd_api.put(f"{FOOS}/a/scale", scale)[1]["reason"] == "Conflict"  # stale version
    status, scaled = crd_api.patch(f"{FOOS}/a/scale", {"spec": {"replicas": 6}})
    assert (status, scaled["spec"]["replicas"]) == (200, 6)
    obj = crd_api.get(f"{FOOS}/a")[1]
    assert obj["spec"]["replicas"] == 6 and obj["metadata"]["generation"] == 3
    assert obj["metadata"]["resourceVersion"] == scaled["metadata"]["resourceVersion"]
    assert crd_api.patch(f"{FOOS}/a/scale", {"spec": {"replicas": -1}})[0] == 422
    assert crd_api.patch(f"{FOOS}/a/scale", {"spec": {"replicas": 11}})[0] == 422  # schema max
    assert crd_api.get("/api/v1/namespaces/default/configmaps/x/scale")[0] == 404


def test_scale_of_a_custom_resource_without_spec_replicas(api: Api) -> None:
    """apiextensions-apiserver's ScaleREST: reading the Scale of an object without the spec
    replicas field is an internal error; a write that leaves them unset is refused, one
    that sets them works."""
    crd = copy.deepcopy(FOO_CRD)
    spec_schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    del spec_schema["properties"]["replicas"]["default"]
    assert api.post(CRDS, crd)[0] == 201
    api.post(FOOS, foo("a"))
    missing = 'the spec replicas field ".spec.replicas" does not exist'
    assert api.get(f"{FOOS}/a/scale") == (500, {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": f"Internal error occurred: {missing}", "reason": "InternalError",
        "details": {"causes": [{"message": missing}]}, "code": 500})
    assert api.patch(f"{FOOS}/a/scale", {"metadata": {"labels": {"x": "y"}}}) == (400, {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'the spec replicas field ".spec.replicas" cannot be empty',
        "reason": "BadRequest", "code": 400})
    status, scaled = api.patch(f"{FOOS}/a/scale", {"spec": {"replicas": 3}})
    assert (status, scaled["spec"]) == (200, {"replicas": 3})
    assert api.get(f"{FOOS}/a")[1]["spec"] == {"deploymentName": "dep", "replicas": 3}


def test_builtin_deployment_scale(api: Api) -> None:
    path = "/apis/apps/v1/namespaces/default/deployments"
    api.post(path, {"metadata": {"name": "d"}, "spec": {
        "replicas": 1, "selector": {"matchLabels": {"app": "d"}},
        "template": {"metadata": {"labels": {"app": "d"}},
                     "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}})
    status, scaled = api.patch(f"{path}/d/scale", [
        {"op": "replace", "path": "/spec/replicas", "value": 3}], "application/json-patch+json")
    assert (status, scaled["spec"], scaled["status"]) == (
        200, {"replicas": 3}, {"replicas": 0, "selector": "app=d"})  # as builtins #42


def test_namespace_lifecycle_when_enabled() -> None:
    with TestAPIServer(namespace_lifecycle=True, namespace_controller=False) as server:
        api = Api(server)
        path = "/api/v1/namespaces/team/configmaps"
        status, body = api.post(path, configmap("a"))
        assert (status, body["message"]) == (404, 'namespaces "team" not found')
        namespace = {"metadata": {"name": "team", "finalizers": ["example.com/hold"]}}
        assert api.post("/api/v1/namespaces", namespace)[0] == 201
        assert api.post(path, configmap("a"))[0] == 201
        api.delete("/api/v1/namespaces/team")
        status, body = api.post(path, configmap("b"))
        assert (status, body["reason"], body["message"]) == (
            403, "Forbidden", 'configmaps "b" is forbidden: unable to create new content in '
            "namespace team because it is being terminated")
        assert api.put(f"{path}/a", configmap("a"))[0] == 200  # updates are still allowed


def test_server_side_apply_field_ownership(crd_api: Api) -> None:
    apply_type = "application/apply-patch+yaml"
    path = f"{FOOS}/a"
    crd_api.patch(path, foo("a", replicas=2, mode="fast"), apply_type, fieldManager="alice")
    status, body = crd_api.patch(path, {**foo("a", replicas=3), "spec": {"replicas": 3}},
                                 apply_type, fieldManager="bob")
    assert (status, body["reason"]) == (409, "Conflict")
    assert body["message"] == (
        'Apply failed with 1 conflict: conflict with "alice": .spec.replicas')
    assert body["details"]["causes"] == [{"reason": "FieldManagerConflict",
                                          "message": 'conflict with "alice"',
                                          "field": ".spec.replicas"}]
    same = {**foo("a"), "spec": {"replicas": 2}}  # agreeing on a value is no conflict
    assert crd_api.patch(path, same, apply_type, fieldManager="bob")[0] == 200
    forced = {**foo("a"), "spec": {"replicas": 4}}
    status, body = crd_api.patch(path, forced, apply_type, fieldManager="bob", force="true")
    assert (status, body["spec"]["replicas"]) == (200, 4)
    status, body = crd_api.patch(path, foo("a"), apply_type, fieldManager="alice")
    assert status == 200  # alice dropped mode (removed) and replicas (bob owns it now: kept)
    assert body["spec"] == {"deploymentName": "dep", "replicas": 4}


def test_generate_name_retries_a_taken_name(api: Api, monkeypatch: pytest.MonkeyPatch) -> None:
    suffixes = iter(["bbbbb", "bbbbb", "ccccc"])
    monkeypatch.setattr(random, "choices", lambda alphabet, k: list(next(suffixes)))
    body = {"metadata": {"generateName": "job-"}}
    assert api.post(CMS, body)[1]["metadata"]["name"] == "job-bbbbb"
    assert api.post(CMS, body)[1]["metadata"]["name"] == "job-ccccc"


def test_finalizers_and_owner_references_are_validated(api: Api) -> None:
    bad_finalizer = configmap("a")
    bad_finalizer["metadata"]["finalizers"] = ["not a finalizer!"]
    status, error = api.post(CMS, bad_finalizer)
    assert (status, error["details"]["causes"][0]["field"]) == (422, "metadata.finalizers")
    owner = {"apiVersion": "v1", "kind": "ConfigMap", "name": "o", "uid": "1", "controller": True}
    two_controllers = configmap("b")
    two_controllers["metadata"]["ownerReferences"] = [owner, {**owner, "name": "p", "uid": "2"}]
    status, error = api.post(CMS, two_controllers)
    assert status == 422
    assert error["details"]["causes"][0]["message"] == (
        'Only one reference can have Controller set to true. Found "true" in references for '
        "ConfigMap/o and ConfigMap/p")
    no_uid = configmap("c")
    no_uid["metadata"]["ownerReferences"] = [{**owner, "uid": ""}]
    assert api.post(CMS, no_uid)[1]["details"]["causes"][0]["field"] == (
        "metadata.ownerReferences.uid")
    fine = configmap("d")
    fine["metadata"]["ownerReferences"] = [owner]
    fine["metadata"]["finalizers"] = ["kubernetes", "example.com/cleanup"]
    assert api.post(CMS, fine)[0] == 201
