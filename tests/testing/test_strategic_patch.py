"""Strategic merge patch on built-in kinds: apimachinery's semantics, driven by the patch
metadata of the shipped OpenAPI documents, in the test server and the fake alike."""

from __future__ import annotations

import copy
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from kgen_runtime.api.fake import FakeClientset
from kgen_runtime.testing import TestAPIServer
from kgen_runtime.testing.apiserver.openapi._openapi import patch_schema
from kgen_runtime.testing.apiserver.patch._strategicpatch import (
    StrategicMergePatchError,
    strategic_merge_patch,
)
from tests.testing._support import Api

SMP = "application/strategic-merge-patch+json"
DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def deployment_manifest(image: str, env: list[dict[str, str]]) -> dict[str, Any]:
    """The two-container Deployment a user keeps in a file and applies."""
    return {
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {
            "replicas": 2,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [
                    {"name": "app", "image": image, "env": env},
                    {"name": "sidecar", "image": "busybox:1.36",
                     "command": ["sleep", "infinity"]},
                ]},
            },
        },
    }


V1 = deployment_manifest("nginx:1.25", [{"name": "A", "value": "1"}, {"name": "B", "value": "2"}])
V2 = deployment_manifest("nginx:1.26", [{"name": "A", "value": "10"}, {"name": "C", "value": "3"}])


def last_applied(manifest: dict[str, Any]) -> str:
    """The annotation kubectl writes: the manifest with empty annotations, sorted keys."""
    recorded = copy.deepcopy(manifest)
    recorded["metadata"]["annotations"] = {}
    return orjson.dumps(recorded, option=orjson.OPT_SORT_KEYS).decode() + "\n"


def with_annotation(manifest: dict[str, Any]) -> dict[str, Any]:
    body = copy.deepcopy(manifest)
    body["metadata"]["annotations"] = {LAST_APPLIED: last_applied(manifest)}
    return body


#: What kubectl 1.32's `apply -f` sends the second time (captured with -v=8): a three-way
#: patch with $setElementOrder for both lists and a $patch: delete for the removed variable.
SECOND_APPLY_PATCH = {
    "metadata": {"annotations": {LAST_APPLIED: last_applied(V2)}},
    "spec": {"template": {"spec": {
        "$setElementOrder/containers": [{"name": "app"}, {"name": "sidecar"}],
        "containers": [{
            "$setElementOrder/env": [{"name": "A"}, {"name": "C"}],
            "env": [{"name": "A", "value": "10"}, {"name": "C", "value": "3"},
                    {"$patch": "delete", "name": "B"}],
            "image": "nginx:1.26",
            "name": "app",
        }],
    }}},
}


def evolve(manifest: dict[str, Any], *, strategy: dict[str, Any], finalizers: list[str],
           containers: int) -> dict[str, Any]:
    changed = copy.deepcopy(manifest)
    changed["metadata"]["finalizers"] = finalizers
    changed["spec"]["strategy"] = strategy
    spec = changed["spec"]["template"]["spec"]
    spec["containers"] = spec["containers"][:containers]
    return changed


#: V2 with finalizers and a RollingUpdate strategy, then V3: one finalizer and the sidecar
#: removed, the strategy switched to Recreate (whose rollingUpdate must go).
V2_WITH_STRATEGY = evolve(V2, strategy={"type": "RollingUpdate", "rollingUpdate": {
    "maxSurge": 1}}, finalizers=["example.com/a", "example.com/b"], containers=2)
V3 = evolve(V2, strategy={"type": "Recreate"}, finalizers=["example.com/b"], containers=1)

#: What kubectl 1.32 sends to go from V2_WITH_STRATEGY to V3 (captured with -v=8).
THIRD_APPLY_PATCH = {
    "metadata": {
        "$deleteFromPrimitiveList/finalizers": ["example.com/a"],
        "$setElementOrder/finalizers": ["example.com/b"],
        "annotations": {LAST_APPLIED: last_applied(V3)},
    },
    "spec": {
        "strategy": {"$retainKeys": ["type"], "rollingUpdate": None, "type": "Recreate"},
        "template": {"spec": {"$setElementOrder/containers": [{"name": "app"}],
                              "containers": [{"$patch": "delete", "name": "sidecar"}]}},
    },
}


def projected(stored: Any, expected: Any) -> Any:
    """``stored`` cut down to the keys ``expected`` has (server defaults aside), lists kept
    whole: a dropped, extra or reordered element still shows."""
    if isinstance(expected, dict) and isinstance(stored, dict):
        return {k: projected(stored[k], v) for k, v in expected.items() if k in stored}
    if isinstance(expected, list) and isinstance(stored, list) and len(expected) == len(stored):
        return [projected(s, e) for s, e in zip(stored, expected, strict=True)]
    return stored


def directive_keys(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [k for k in value if k.startswith("$")] + [
            found for v in value.values() for found in directive_keys(v)]
    if isinstance(value, list):
        return [found for v in value for found in directive_keys(v)]
    return []


def test_second_kubectl_apply_merges_containers_and_env_by_name(api: Api) -> None:
    assert api.call("POST", DEPLOYMENTS, with_annotation(V1),
                    query={"fieldManager": "kubectl-client-side-apply"})[0] == 201
    status, stored = api.patch(f"{DEPLOYMENTS}/web", SECOND_APPLY_PATCH, SMP,
                               fieldManager="kubectl-client-side-apply")
    assert status == 200
    assert directive_keys(stored) == []
    expected = with_annotation(V2)
    assert projected(stored["spec"], expected["spec"]) == expected["spec"]
    assert stored["metadata"]["annotations"] == expected["metadata"]["annotations"]
    assert api.get(f"{DEPLOYMENTS}/web")[1] == stored


def test_kubectl_apply_removing_a_container_a_finalizer_and_a_strategy(api: Api) -> None:
    assert api.post(DEPLOYMENTS, with_annotation(V2_WITH_STRATEGY))[0] == 201
    status, stored = api.patch(f"{DEPLOYMENTS}/web", THIRD_APPLY_PATCH, SMP)
    assert status == 200
    assert directive_keys(stored) == []
    expected = with_annotation(V3)
    assert projected(stored["spec"], expected["spec"]) == expected["spec"]
    assert stored["spec"]["strategy"] == {"type": "Recreate"}
    assert stored["metadata"]["finalizers"] == ["example.com/b"]
    assert stored["metadata"]["annotations"] == expected["metadata"]["annotations"]


def test_kubernetes_package_patch_merges_containers_by_name(
    api_server: TestAPIServer,
) -> None:
    kubernetes = pytest.importorskip("kubernetes")
    configuration = kubernetes.client.Configuration()
    configuration.host = api_server.url
    with kubernetes.client.ApiClient(configuration) as client:
        apps = kubernetes.client.AppsV1Api(client)
        apps.create_namespaced_deployment("default", with_annotation(V1))
        patched = apps.patch_namespaced_deployment(
            "web", "default",
            {"spec": {"template": {"spec": {"containers": [
                {"name": "sidecar", "image": "busybox:1.37"}]}}}})
    containers = patched.spec.template.spec.containers
    assert [(c.name, c.image) for c in containers] == [
        ("app", "nginx:1.25"), ("sidecar", "busybox:1.37")]
    assert containers[1].command == ["sleep", "infinity"]
    assert [(e.name, e.value) for e in containers[0].env] == [("A", "1"), ("B", "2")]


def test_fake_clientset_applies_strategic_merge_patch() -> None:
    fake = FakeClientset()
    deployments = fake.apps_v1.deployments("default")
    deployments.create(deployments.resource.model.model_validate(V1))
    patched = deployments.patch("web", {"spec": {"template": {"spec": {"containers": [
        {"name": "app", "env": [{"name": "B", "$patch": "delete"}]}]}}}},
        patch_type="strategic")
    containers = patched.spec.template.spec.containers
    assert [c.name for c in containers] == ["app", "sidecar"]
    assert [e.name for e in containers[0].env] == ["A"]


# -- the algorithm, one directive at a time ----------------------------------------------------

POD = patch_schema("", "v1", "Pod")
DEPLOYMENT = patch_schema("apps", "v1", "Deployment")


def pod(**spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "p"}, "spec": spec}


def test_lists_without_merge_strategy_are_replaced_and_maps_merge() -> None:
    live = pod(containers=[{"name": "a", "image": "x", "args": ["1", "2"]}],
               nodeSelector={"k": "v"})
    patched = strategic_merge_patch(live, pod(containers=[{"name": "a", "args": ["3"]}],
                                              nodeSelector={"z": "w", "k": None}), POD)
    assert patched == pod(containers=[{"name": "a", "image": "x", "args": ["3"]}],
                          nodeSelector={"z": "w"})


def test_merge_keys_other_than_name() -> None:
    live = pod(containers=[{"name": "a", "ports": [{"containerPort": 80, "name": "http"}]}])
    patch = pod(containers=[{"name": "a", "ports": [{"containerPort": 443, "name": "tls"},
                                                    {"containerPort": 80, "protocol": "TCP"}]}])
    assert strategic_merge_patch(live, patch, POD)["spec"]["containers"][0]["ports"] == [
        {"containerPort": 443, "name": "tls"},
        {"containerPort": 80, "name": "http", "protocol": "TCP"},
    ]


def test_scalar_merge_list_is_a_union_and_delete_from_primitive_list() -> None:
    live = {"metadata": {"finalizers": ["a", "b"]}}
    assert strategic_merge_patch(live, {"metadata": {"finalizers": ["c", "a"]}}, POD) == {
        "metadata": {"finalizers": ["c", "a", "b"]}}
    patch = {"metadata": {"$deleteFromPrimitiveList/finalizers": ["a"]}}
    assert strategic_merge_patch(live, patch, POD) == {"metadata": {"finalizers": ["b"]}}


def test_set_element_order_reorders_and_keeps_server_only_items_in_place() -> None:
    live = pod(containers=[{"name": "a"}, {"name": "b"}, {"name": "c"}])
    patch = {"spec": {"$setElementOrder/containers": [{"name": "c"}, {"name": "a"}],
                      "containers": [{"name": "a", "image": "new"}]}}
    # The patch's items follow the given order; b, only on the server, keeps its place
    # before c (apimachinery's mergeSortedSlice: live order decides between the two).
    assert [c["name"] for c in strategic_merge_patch(live, patch, POD)["spec"]["containers"]] \
        == ["b", "c", "a"]
    scalars = {"metadata": {"$setElementOrder/finalizers": ["y", "x"]}}
    assert strategic_merge_patch({"metadata": {"finalizers": ["x", "y"]}}, scalars, POD) == {
        "metadata": {"finalizers": ["y", "x"]}}


def test_patch_directive_in_maps_and_list_elements() -> None:
    live = pod(containers=[{"name": "a"}, {"name": "b"}], nodeSelector={"k": "v"})
    replaced_map = strategic_merge_patch(
        live, {"spec": {"nodeSelector": {"$patch": "replace", "z": "w"}}}, POD)
    assert replaced_map["spec"]["nodeSelector"] == {"z": "w"}
    deleted_map = strategic_merge_patch(live, {"spec": {"nodeSelector": {"$patch": "delete"}}},
                                        POD)
    assert deleted_map["spec"]["nodeSelector"] == {}
    replaced_list = strategic_merge_patch(
        live, pod(containers=[{"name": "z"}, {"$patch": "replace"}]), POD)
    assert replaced_list["spec"]["containers"] == [{"name": "z"}]
    assert strategic_merge_patch(live, {"$patch": "replace", "kind": "Pod"}, POD) == {
        "kind": "Pod"}


def test_retain_keys_clears_the_fields_not_listed() -> None:
    live = {"spec": {"strategy": {"type": "RollingUpdate",
                                  "rollingUpdate": {"maxSurge": 1}}}}
    patch = {"spec": {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}}
    assert strategic_merge_patch(live, patch, DEPLOYMENT) == {
        "spec": {"strategy": {"type": "Recreate"}}}


@pytest.mark.parametrize(("patch", "code", "message"), [
    ({"spec": {"strategy": {"$retainKeys": ["type"], "rollingUpdate": {}}}}, 400,
     "invalid patch format of retainKeys"),
    ({"spec": {"$setElementOrder": []}}, 400, "invalid patch format of setElementOrder list"),
    ({"spec": {"$deleteFromPrimitiveList": []}}, 400, "invalid patch format of primitive list"),
    ({"spec": {"template": {"spec": {"containers": [{"image": "x"}]}}}}, 500,
     "does not contain declared merge key: name"),
    ({"spec": {"template": {"spec": {"containers": [{"name": "a", "$patch": "merge"}]}}}},
     500, "merging lists cannot yet be specified in the patch"),
    ({"spec": {"template": {"$patch": "bogus"}}}, 500, "unknown patch type: bogus"),
    (["not", "a", "map"], 400, "cannot unmarshal"),
])
def test_malformed_patches_are_refused_with_the_servers_status(
    patch: Any, code: int, message: str
) -> None:
    live = {"spec": {"template": {"spec": {"containers": [{"name": "a"}]}},
                     "strategy": {"type": "Recreate"}}}
    with pytest.raises(StrategicMergePatchError) as caught:
        strategic_merge_patch(live, patch, DEPLOYMENT)
    assert caught.value.code == code and message in str(caught.value)


def test_malformed_patch_over_http_is_a_status(api: Api) -> None:
    deployment = with_annotation(V1)
    deployment["spec"]["strategy"] = {"type": "Recreate"}
    assert api.post(DEPLOYMENTS, deployment)[0] == 201
    status, body = api.patch(f"{DEPLOYMENTS}/web", {"spec": {"strategy": {
        "$retainKeys": ["type"], "rollingUpdate": {}}}}, SMP)
    assert (status, body["reason"], body["message"]) == (
        400, "BadRequest", "invalid patch format of retainKeys")


def test_inputs_are_not_modified() -> None:
    live = pod(containers=[{"name": "a", "env": [{"name": "X"}]}])
    patch = pod(containers=[{"name": "a", "env": [{"name": "X", "$patch": "delete"}]}])
    before = copy.deepcopy((live, patch))
    strategic_merge_patch(live, patch, POD)
    assert (live, patch) == before


# -- kubectl itself, when installed --------------------------------------------------------------

@pytest.fixture
def kubectl(api_server: TestAPIServer, tmp_path: Path) -> Iterator[Any]:
    binary = shutil.which("kubectl")
    if binary is None:
        pytest.skip("kubectl is not on PATH")
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\n"
        f"clusters: [{{name: t, cluster: {{server: '{api_server.url}'}}}}]\n"
        "contexts: [{name: t, context: {cluster: t, user: u}}]\n"
        "users: [{name: u, user: {}}]\ncurrent-context: t\n")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(tmp_path),
           "KUBECONFIG": str(kubeconfig)}

    def run(*args: str, stdin: str | None = None) -> str:
        done = subprocess.run([binary, *args], input=stdin, capture_output=True, text=True,
                              env=env, timeout=60, check=False)
        assert done.returncode == 0, done.stderr
        return done.stdout

    yield run


def test_kubectl_apply_twice_stores_what_a_real_server_stores(
    kubectl: Any, api: Api
) -> None:
    """Default (client-side) apply, with validation against /openapi/v3."""
    for manifest in (V1, V2, V2_WITH_STRATEGY, V3):
        kubectl("apply", "-f", "-", stdin=orjson.dumps(manifest).decode())
        stored = api.get(f"{DEPLOYMENTS}/web")[1]
        expected = with_annotation(manifest)
        assert directive_keys(stored) == []
        assert projected(stored["spec"], expected["spec"]) == expected["spec"]
        assert stored["metadata"]["annotations"] == expected["metadata"]["annotations"]
        assert stored["metadata"].get("finalizers") == manifest["metadata"].get("finalizers")
    assert stored["spec"]["strategy"] == {"type": "Recreate"}
