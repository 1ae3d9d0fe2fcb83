"""The ``kubernetes`` package's typed clients (CoreV1Api, AppsV1Api) against the target:
CRUD with every patch type, server-side apply and its conflicts, watch events, field
selectors, the namespace lifecycle."""

from __future__ import annotations

import json
from typing import Any

import kubernetes
import pytest
from kubernetes.client.exceptions import ApiException

from tests.fidelity._targets import Target, wire

JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
APPLY = "application/apply-patch+yaml"


def error(raised: pytest.ExceptionInfo[ApiException]) -> tuple[int, str, str]:
    """The HTTP status, reason and message of the Status a refused request got."""
    status = json.loads(raised.value.body)
    return raised.value.status, status["reason"], status["message"]


def test_config_map_create_get_list_patch_replace_delete(target: Target) -> None:
    core, ns = target.core, target.namespace
    created = core.create_namespaced_config_map(ns, {"metadata": {"name": "cm"},
                                                     "data": {"a": "1", "b": "2"}})
    assert (created.data, created.metadata.resource_version is not None) == (
        {"a": "1", "b": "2"}, True)
    assert wire(target.client, core.read_namespaced_config_map("cm", ns)) == wire(
        target.client, created)
    assert [i.metadata.name for i in core.list_namespaced_config_map(ns).items] == ["cm"]
    merged = core.patch_namespaced_config_map("cm", ns, {"data": {"a": None, "c": "3"}},
                                              _content_type=MERGE_PATCH)
    assert merged.data == {"b": "2", "c": "3"}
    strategic = core.patch_namespaced_config_map("cm", ns, {"data": {"d": "4"}})
    assert strategic.data == {"b": "2", "c": "3", "d": "4"}
    patched = core.patch_namespaced_config_map(
        "cm", ns, [{"op": "replace", "path": "/data/b", "value": "20"},
                   {"op": "remove", "path": "/data/c"}], _content_type=JSON_PATCH)
    assert patched.data == {"b": "20", "d": "4"}
    patched.data = {"only": "this"}
    replaced = core.replace_namespaced_config_map("cm", ns, patched)
    assert replaced.data == {"only": "this"}
    stale = wire(target.client, patched)
    with pytest.raises(ApiException) as conflict:
        core.replace_namespaced_config_map("cm", ns, stale)
    assert error(conflict) == (409, "Conflict", (
        'Operation cannot be fulfilled on configmaps "cm": the object has been modified; '
        "please apply your changes to the latest version and try again"))
    deleted = core.delete_namespaced_config_map("cm", ns)
    assert deleted == {"kind": "Status", "apiVersion": "v1", "metadata": {},
                       "status": "Success", "details": {
                           "name": "cm", "kind": "configmaps", "uid": created.metadata.uid}}
    with pytest.raises(ApiException) as missing:
        core.read_namespaced_config_map("cm", ns)
    assert error(missing) == (404, "NotFound", 'configmaps "cm" not found')


def deployment(containers: list[dict[str, Any]]) -> dict[str, Any]:
    return {"metadata": {"name": "web"}, "spec": {
        "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}},
                     "spec": {"containers": containers}}}}


def test_deployment_patches_merge_containers_by_name(target: Target) -> None:
    apps, ns = target.apps, target.namespace
    created = apps.create_namespaced_deployment(ns, deployment([
        {"name": "app", "image": "nginx:1.27", "env": [{"name": "A", "value": "1"}]}]))
    spec = wire(target.client, created)["spec"]
    assert {k: spec[k] for k in ("replicas", "revisionHistoryLimit", "progressDeadlineSeconds",
                                 "strategy")} == {
        "replicas": 1, "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600,
        "strategy": {"type": "RollingUpdate",
                     "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}}
    strategic = apps.patch_namespaced_deployment("web", ns, {"spec": {"template": {"spec": {
        "containers": [{"name": "sidecar", "image": "busybox:1.37"},
                       {"name": "app", "env": [{"name": "B", "value": "2"}]}]}}}})
    containers = strategic.spec.template.spec.containers
    assert [(c.name, c.image, [(e.name, e.value) for e in c.env or ()]) for c in containers] == [
        ("sidecar", "busybox:1.37", []), ("app", "nginx:1.27", [("B", "2"), ("A", "1")])]
    assert strategic.metadata.generation == 2
    scaled = apps.patch_namespaced_deployment(
        "web", ns, [{"op": "replace", "path": "/spec/replicas", "value": 3}],
        _content_type=JSON_PATCH)
    assert (scaled.spec.replicas, scaled.metadata.generation) == (3, 3)
    merged = apps.patch_namespaced_deployment("web", ns, {"spec": {"template": {"spec": {
        "containers": [{"name": "only", "image": "nginx:1.28"}]}}}}, _content_type=MERGE_PATCH)
    assert [c.name for c in merged.spec.template.spec.containers] == ["only"]
    labelled = apps.patch_namespaced_deployment("web", ns, {"metadata": {"labels": {"x": "y"}}})
    assert labelled.metadata.generation == 4
    labelled.spec.paused = True
    replaced = apps.replace_namespaced_deployment("web", ns, labelled)
    assert (replaced.spec.paused, replaced.metadata.labels, replaced.metadata.generation) == (
        True, {"x": "y"}, 5)
    apps.delete_namespaced_deployment("web", ns)
    assert apps.list_namespaced_deployment(ns).items == []


def test_service_defaults_and_port_patch(target: Target) -> None:
    core, ns = target.core, target.namespace
    created = core.create_namespaced_service(ns, {"metadata": {"name": "svc"}, "spec": {
        "selector": {"app": "web"}, "ports": [{"name": "http", "port": 80}]}})
    spec = wire(target.client, created)["spec"]
    assert spec["ports"] == [{"name": "http", "port": 80, "protocol": "TCP", "targetPort": 80}]
    assert (spec["type"], spec["sessionAffinity"], spec["clusterIPs"]) == (
        "ClusterIP", "None", [spec["clusterIP"]])
    patched = core.patch_namespaced_service("svc", ns, {"spec": {"ports": [
        {"name": "https", "port": 443, "targetPort": 8443}]}})
    assert [(p.name, p.port, p.target_port) for p in patched.spec.ports] == [
        ("https", 443, 8443), ("http", 80, 80)]
    patched.spec.session_affinity = "ClientIP"
    replaced = core.replace_namespaced_service("svc", ns, patched)
    assert (replaced.spec.session_affinity, replaced.spec.cluster_ip) == (
        "ClientIP", created.spec.cluster_ip)
    assert wire(target.client, replaced.spec.session_affinity_config) == {
        "clientIP": {"timeoutSeconds": 10800}}
    deleted = core.delete_namespaced_service("svc", ns)
    assert (deleted.kind, deleted.metadata.name, deleted.spec.ports) == (
        "Service", "svc", replaced.spec.ports)


def test_server_side_apply_owns_fields_and_reports_conflicts(target: Target) -> None:
    core, ns = target.core, target.namespace
    manifest = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"},
                "data": {"owned": "a"}}
    applied = core.patch_namespaced_config_map("cm", ns, manifest, field_manager="alice",
                                               _content_type=APPLY)
    assert applied.data == {"owned": "a"}
    assert [(m.manager, m.operation, m.fields_v1) for m in applied.metadata.managed_fields] == [
        ("alice", "Apply", {"f:data": {"f:owned": {}}})]
    taken = {**manifest, "data": {"owned": "b"}}
    with pytest.raises(ApiException) as conflict:
        core.patch_namespaced_config_map("cm", ns, taken, field_manager="bob",
                                         _content_type=APPLY)
    assert error(conflict) == (409, "Conflict", (
        'Apply failed with 1 conflict: conflict with "alice": .data.owned'))
    forced = core.patch_namespaced_config_map("cm", ns, taken, field_manager="bob",
                                              force=True, _content_type=APPLY)
    assert forced.data == {"owned": "b"}
    assert [(m.manager, m.fields_v1) for m in forced.metadata.managed_fields] == [
        ("bob", {"f:data": {"f:owned": {}}})]


def test_watch_sees_added_modified_deleted(target: Target) -> None:
    core, ns = target.core, target.namespace
    start = core.list_namespaced_config_map(ns).metadata.resource_version
    core.create_namespaced_config_map(ns, {"metadata": {"name": "cm"}, "data": {"k": "1"}})
    core.patch_namespaced_config_map("cm", ns, {"data": {"k": "2"}})
    core.delete_namespaced_config_map("cm", ns)
    watch = kubernetes.watch.Watch()
    seen = []
    for event in watch.stream(core.list_namespaced_config_map, ns, resource_version=start,
                              timeout_seconds=5):
        seen.append((event["type"], event["object"].metadata.name, event["object"].data))
        if len(seen) == 3:
            watch.stop()
    assert seen == [("ADDED", "cm", {"k": "1"}), ("MODIFIED", "cm", {"k": "2"}),
                    ("DELETED", "cm", {"k": "2"})]


def test_field_selector_on_pod_phase(target: Target) -> None:
    core, ns = target.core, target.namespace
    core.create_namespaced_service_account(ns, {"metadata": {"name": "default"}})
    for name in ("running", "pending"):
        core.create_namespaced_pod(ns, {"metadata": {"name": name}, "spec": {
            "automountServiceAccountToken": False,
            "containers": [{"name": "c", "image": "nginx:1.27"}]}})
    core.patch_namespaced_pod_status("running", ns, {"status": {"phase": "Running"}})
    running = core.list_namespaced_pod(ns, field_selector="status.phase=Running")
    assert [p.metadata.name for p in running.items] == ["running"]
    other = core.list_namespaced_pod(ns, field_selector="status.phase!=Running")
    assert [p.metadata.name for p in other.items] == ["pending"]
    with pytest.raises(ApiException) as refused:
        core.list_namespaced_pod(ns, field_selector="spec.bogus=x")
    assert error(refused) == (400, "BadRequest",
                              'field label not supported: spec.bogus')
    for name in ("running", "pending"):
        core.delete_namespaced_pod(name, ns, grace_period_seconds=0)


def test_namespace_deletion_is_terminating_and_refuses_creates(target: Target) -> None:
    core = target.core
    name = f"{target.namespace}-gone"
    core.create_namespace({"metadata": {"name": name}})
    core.create_namespaced_config_map(name, {"metadata": {"name": "cm"}})
    core.delete_namespace(name)
    try:
        namespace = core.read_namespace(name)
    except ApiException as gone:  # a cluster with a namespace controller finished already
        assert gone.status == 404
        return
    assert (namespace.status.phase, namespace.metadata.deletion_timestamp is not None,
            namespace.spec.finalizers) == ("Terminating", True, ["kubernetes"])
    with pytest.raises(ApiException) as refused:
        core.create_namespaced_config_map(name, {"metadata": {"name": "new"}})
    assert error(refused) == (403, "Forbidden", (
        f'configmaps "new" is forbidden: unable to create new content in namespace {name} '
        "because it is being terminated"))
