"""The deletion lifecycle as kube-apiserver v1.36 runs it without a garbage collector or
namespace controller (the recordings in ../shared/fidelity/transcripts: builtins.jsonl
#55-#72 and #123-#126, crd.jsonl #107, kubectl.jsonl #148): the garbage collector's
finalizers, Jobs' default orphaning, a CRD's cleanup finalizer, a namespace's ``/finalize``."""

from __future__ import annotations

from typing import Any

import orjson

from kgen_runtime.testing import TestAPIServer
from tests.testing._support import FOO_CRD, FOOS, Api, foo

DEPLOYMENTS = "/apis/apps/v1/namespaces/ns/deployments"
JOBS = "/apis/batch/v1/namespaces/ns/jobs"
CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
NAMESPACES = "/api/v1/namespaces"
JOB_WARNING = (
    '299 - "child pods are preserved by default when jobs are deleted; set '
    'propagationPolicy=Background to remove them or set propagationPolicy=Orphan to '
    'suppress this warning"')


def deployment(name: str) -> dict[str, Any]:
    labels = {"app": name}
    return {"metadata": {"name": name}, "spec": {
        "selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}, "spec": {
            "containers": [{"name": "only", "image": "nginx:1.27"}]}}}}


def job(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"template": {"spec": {
        "restartPolicy": "Never", "containers": [{"name": "pi", "image": "perl:5.34"}]}}}}


def delete_with_warnings(api: Api, path: str, **query: str) -> tuple[int, Any, list[str]]:
    """DELETE ``path``; the status, the body and the Warning headers."""
    response = api.http.request("DELETE", api.url + path, fields=query or None)
    return response.status, orjson.loads(response.data), response.headers.getlist("Warning")


def test_foreground_deletion_marks_the_object_and_a_client_finishes_it(api: Api) -> None:
    created = api.post(DEPLOYMENTS, deployment("web"))[1]
    status, marked = api.delete(f"{DEPLOYMENTS}/web", {"propagationPolicy": "Foreground"})
    meta = marked["metadata"]
    assert (status, marked["kind"], meta["finalizers"]) == (200, "Deployment",
                                                            ["foregroundDeletion"])
    assert meta["deletionTimestamp"] and meta["deletionGracePeriodSeconds"] == 0
    assert meta["generation"] == created["metadata"]["generation"] + 1  # markAsDeleting
    assert api.get(f"{DEPLOYMENTS}/web")[1] == marked
    # A second DELETE recomputes the garbage collector's finalizers, but marks only once.
    status, orphaning = api.delete(f"{DEPLOYMENTS}/web", {"propagationPolicy": "Orphan"})
    assert (status, orphaning["metadata"]["finalizers"]) == (200, ["orphan"])
    assert orphaning["metadata"]["deletionTimestamp"] == meta["deletionTimestamp"]
    assert orphaning["metadata"]["generation"] == meta["generation"]
    # Removing the last finalizer deletes it; the answer is the object as read (#58).
    status, gone = api.patch(f"{DEPLOYMENTS}/web", {"metadata": {"finalizers": None}})
    assert status == 200 and "finalizers" not in gone["metadata"]
    assert gone["metadata"]["resourceVersion"] == orphaning["metadata"]["resourceVersion"]
    assert api.get(f"{DEPLOYMENTS}/web")[0] == 404


def test_background_deletion_and_events_go_at_once(api: Api) -> None:
    api.post(DEPLOYMENTS, deployment("bg"))
    status, body = api.delete(f"{DEPLOYMENTS}/bg", propagationPolicy="Background")
    assert (status, body["kind"], body["status"]) == (200, "Status", "Success")
    assert api.get(f"{DEPLOYMENTS}/bg")[0] == 404
    # pkg/registry/core/event/strategy.go: garbage collection Unsupported, no finalizer
    events = "/api/v1/namespaces/ns/events"
    api.post(events, {"metadata": {"name": "e"}, "involvedObject": {"name": "x"},
                      "reason": "R", "message": "m"})
    assert api.delete(f"{events}/e", {"propagationPolicy": "Foreground"})[0] == 200
    assert api.get(f"{events}/e")[0] == 404


def test_jobs_orphan_their_pods_by_default_and_say_so(api: Api) -> None:
    api.post(JOBS, job("pi"))
    status, marked, warnings = delete_with_warnings(api, f"{JOBS}/pi")
    assert (status, warnings) == (200, [JOB_WARNING])
    assert marked["kind"] == "Job" and marked["metadata"]["finalizers"] == ["orphan"]
    assert marked["metadata"]["deletionTimestamp"]
    api.post(JOBS, job("quiet"))
    status, body, warnings = delete_with_warnings(api, f"{JOBS}/quiet",
                                                  propagationPolicy="Background")
    assert (status, body["kind"], warnings) == (200, "Status", [])
    api.post(JOBS, job("batch"))
    status, _, warnings = delete_with_warnings(api, JOBS, labelSelector="job-name=batch")
    assert (status, warnings) == (200, [JOB_WARNING])  # DeleteCollection warns too
    # ReplicationControllers orphan by default in v1 as well, without a warning.
    rcs = "/api/v1/namespaces/ns/replicationcontrollers"
    api.post(rcs, {"metadata": {"name": "rc"}, "spec": {"selector": {"app": "rc"}, "template": {
        "metadata": {"labels": {"app": "rc"}},
        "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}})
    status, marked, warnings = delete_with_warnings(api, f"{rcs}/rc")
    assert (status, marked["metadata"]["finalizers"], warnings) == (200, ["orphan"], [])


def test_a_deleted_crd_is_marked_with_its_cleanup_finalizer_then_goes(crd_api: Api) -> None:
    crd_api.post(FOOS, foo("a"))
    name = FOO_CRD["metadata"]["name"]
    events = crd_api.watch(CRDS, resourceVersion=crd_api.get(CRDS)[1]["metadata"][
        "resourceVersion"])
    status, marked = crd_api.delete(f"{CRDS}/{name}")
    assert status == 200 and marked["kind"] == "CustomResourceDefinition"
    assert marked["metadata"]["finalizers"] == ["customresourcecleanup.apiextensions.k8s.io"]
    assert marked["metadata"]["deletionTimestamp"] and marked["metadata"]["generation"] == 1
    terminating = marked["status"]["conditions"][-1]
    assert terminating == {
        "type": "Terminating", "status": "True", "reason": "InstanceDeletionPending",
        "message": "CustomResourceDefinition marked for deletion; CustomResource deletion "
                   "will begin soon", "lastTransitionTime": terminating["lastTransitionTime"]}
    assert crd_api.get(f"{CRDS}/{name}")[0] == 404
    assert crd_api.get(FOOS)[0] == 404
    assert [next(events)["type"] for _ in range(2)] == ["MODIFIED", "DELETED"]


def test_a_bare_server_leaves_namespaces_terminating_until_finalize() -> None:
    with TestAPIServer(namespace_controller=False) as server:
        api = Api(server)
        api.post(NAMESPACES, {"metadata": {"name": "team"}})
        status, terminating = api.delete(f"{NAMESPACES}/team")
        assert (status, terminating["status"], terminating["spec"]) == (
            200, {"phase": "Terminating"}, {"finalizers": ["kubernetes"]})
        # The namespace registry's Delete sets no deletionGracePeriodSeconds (#123).
        assert "deletionGracePeriodSeconds" not in terminating["metadata"]
        status, refused = api.post(f"{NAMESPACES}/team/configmaps", {"metadata": {
            "name": "late"}})
        assert (status, refused["message"], refused["details"]) == (403, (
            'configmaps "late" is forbidden: unable to create new content in namespace team '
            "because it is being terminated"), {"name": "late", "kind": "configmaps", "causes": [{
                "reason": "NamespaceTerminating", "message": "namespace team is being terminated",
                "field": "metadata.namespace"}]})
        stale = {**terminating, "metadata": {**terminating["metadata"], "resourceVersion": "1"},
                 "spec": {"finalizers": []}}
        assert api.put(f"{NAMESPACES}/team/finalize", stale)[0] == 409
        status, finalized = api.put(f"{NAMESPACES}/team/finalize",
                                    {**terminating, "spec": {"finalizers": []}})
        assert (status, finalized["spec"], finalized["status"]) == (
            200, {}, {"phase": "Terminating"})
        assert finalized["metadata"] == terminating["metadata"]  # answered as read (#125)
        assert api.get(f"{NAMESPACES}/team")[0] == 404


def test_a_pod_is_deleted_gracefully_with_a_zero_grace_period(api: Api) -> None:
    """builtins.jsonl #88: the graceful update (deletionTimestamp, grace 0, generation),
    then the delete; watchers see both writes."""
    pods = "/api/v1/namespaces/ns/pods"
    created = api.post(pods, {"metadata": {"name": "p"}, "spec": {"containers": [
        {"name": "c", "image": "busybox"}]}})[1]
    events = api.watch(pods, resourceVersion=created["metadata"]["resourceVersion"])
    status, deleted = api.delete(f"{pods}/p")
    meta = deleted["metadata"]
    assert (status, deleted["kind"], meta["deletionGracePeriodSeconds"]) == (200, "Pod", 0)
    assert meta["deletionTimestamp"] and meta["generation"] == created["metadata"][
        "generation"] + 1
    assert int(meta["resourceVersion"]) == int(created["metadata"]["resourceVersion"]) + 2
    assert [next(events)["type"] for _ in range(2)] == ["MODIFIED", "DELETED"]


def test_delete_collection_answers_with_the_list_it_read(crd_api: Api) -> None:
    """crd.jsonl #103: store.go DeleteCollection answers with the objects as listed."""
    created = [crd_api.post(FOOS, foo(name))[1] for name in ("a", "b")]
    listed_at = crd_api.get(FOOS)[1]["metadata"]["resourceVersion"]
    status, deleted = crd_api.delete(FOOS)
    assert status == 200 and deleted["metadata"]["resourceVersion"] == listed_at
    assert deleted["items"] == created
    assert crd_api.get(FOOS)[1]["items"] == []


def test_a_delete_options_body_wins_over_the_querys_dry_run() -> None:
    # handlers/delete.go reads the query only for a DELETE without a body (errors.jsonl #61)
    with TestAPIServer() as server:
        api = Api(server)
        cms = "/api/v1/namespaces/ns/configmaps"
        assert api.post(cms, {"metadata": {"name": "victim"}, "data": {"k": "v"}})[0] == 201

        status, _ = api.delete(f"{cms}/victim", {"kind": "DeleteOptions", "apiVersion": "v1"},
                               dryRun="All")

        assert status == 200
        assert api.get(f"{cms}/victim")[0] == 404
