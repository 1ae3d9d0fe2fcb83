"""A Pod create as kube-apiserver answers it: the Pod defaults, ``PrepareForCreate``'s status
and the admission plugins ServiceAccount, DefaultTolerationSeconds and Priority (builtins
#77, #81, #82 of ../shared/fidelity/transcripts); ServiceAccount is off by default, as
envtest turns it off. And what a fresh server holds: the objects a bare kube-apiserver
creates itself."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kgen_runtime.testing import TestAPIServer
from tests.testing._support import Api

PODS = "/api/v1/namespaces/default/pods"
ACCOUNTS = "/api/v1/namespaces/default/serviceaccounts"
TOLERATIONS = [{"key": f"node.kubernetes.io/{taint}", "operator": "Exists",
                "effect": "NoExecute", "tolerationSeconds": 300}
               for taint in ("not-ready", "unreachable")]
TOKEN_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"


def pod(name: str, **spec: Any) -> dict[str, Any]:
    container = {"name": "c", "image": "busybox:1.36", "command": ["sleep", "1d"]}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [container], **spec}}


@pytest.fixture
def cluster() -> Iterator[Api]:
    """A server running every Pod admission plugin, as the recorded kube-apiserver did."""
    with TestAPIServer(disabled_admission_plugins=()) as server:
        yield Api(server)


def test_a_new_pod_is_pending_with_its_defaults_and_the_plugins_additions(api: Api) -> None:
    status, created = api.post(PODS, pod("p"))
    assert status == 201
    assert created["status"] == {"phase": "Pending", "qosClass": "BestEffort"}
    spec = created["spec"]
    assert {key: spec[key] for key in (
        "restartPolicy", "terminationGracePeriodSeconds", "dnsPolicy", "securityContext",
        "schedulerName", "enableServiceLinks", "tolerations", "priority",
        "preemptionPolicy")} == {
        "restartPolicy": "Always", "terminationGracePeriodSeconds": 30,
        "dnsPolicy": "ClusterFirst", "securityContext": {}, "schedulerName": "default-scheduler",
        "enableServiceLinks": True, "tolerations": TOLERATIONS, "priority": 0,
        "preemptionPolicy": "PreemptLowerPriority"}
    assert "serviceAccountName" not in spec  # ServiceAccount is disabled, as in envtest
    owned = created["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"]
    assert {"f:enableServiceLinks", "f:dnsPolicy"} <= set(owned)
    assert not {"f:tolerations", "f:priority"} & set(owned)  # admission came after


@pytest.mark.parametrize(("resources", "qos"), [
    ({"requests": {"cpu": "100m", "memory": "64Mi"}}, "Burstable"),
    ({"limits": {"cpu": "1", "memory": "1Gi"}}, "Guaranteed"),
    ({"limits": {"cpu": "1"}}, "Burstable"),
    ({"requests": {"cpu": "0"}}, "BestEffort"),
    ({"requests": {"ephemeral-storage": "1Gi"}}, "BestEffort"),
])
def test_the_qos_class_follows_cpu_and_memory(
    api: Api, resources: dict[str, Any], qos: str
) -> None:
    body = pod("p")
    body["spec"]["containers"][0]["resources"] = resources
    status, created = api.post(PODS, body)
    assert (status, created["status"]["qosClass"]) == (201, qos)


def test_limits_without_requests_default_the_requests(api: Api) -> None:
    body = pod("p")
    body["spec"]["containers"][0]["resources"] = {"limits": {"cpu": "1"}}
    resources = api.post(PODS, body)[1]["spec"]["containers"][0]["resources"]
    assert resources == {"limits": {"cpu": "1"}, "requests": {"cpu": "1"}}


def test_a_pod_waits_for_the_default_service_account(cluster: Api) -> None:
    """builtins #77 then #81."""
    assert cluster.post(PODS, pod("p1")) == (403, {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": 'pods "p1" is forbidden: error looking up service account default/default: '
                   'serviceaccount "default" not found',
        "reason": "Forbidden", "details": {"name": "p1", "kind": "pods"}, "code": 403})
    assert cluster.post(ACCOUNTS, {"metadata": {"name": "default"}})[0] == 201
    status, created = cluster.post(PODS, pod("p1"))
    assert status == 201
    spec = created["spec"]
    assert (spec["serviceAccountName"], spec["serviceAccount"]) == ("default", "default")
    [volume] = spec["volumes"]
    assert volume["name"].startswith("kube-api-access-") and len(volume["name"]) == 21
    assert volume["projected"] == {"defaultMode": 420, "sources": [
        {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
        {"configMap": {"name": "kube-root-ca.crt",
                       "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
        {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {
            "apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}}]}
    assert spec["containers"][0]["volumeMounts"] == [
        {"name": volume["name"], "readOnly": True, "mountPath": TOKEN_PATH}]


def test_an_account_without_automount_gives_its_pull_secrets_only(cluster: Api) -> None:
    """builtins #79, #82."""
    assert cluster.post(ACCOUNTS, {"metadata": {"name": "builder"}, "automountServiceAccountToken":
                                   False, "imagePullSecrets": [{"name": "regcred"}]})[0] == 201
    status, created = cluster.post(PODS, pod("p2", serviceAccountName="builder"))
    assert status == 201
    spec = created["spec"]
    assert (spec["serviceAccount"], spec["imagePullSecrets"]) == (
        "builder", [{"name": "regcred"}])
    assert "volumes" not in spec and "volumeMounts" not in spec["containers"][0]
    owned = created["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"]
    assert {"f:serviceAccount", "f:serviceAccountName"} <= set(owned)  # set by the creator


def test_priority_comes_from_the_named_class(api: Api) -> None:
    assert api.post(PODS, pod("p", priorityClassName="system-node-critical"))[1]["spec"][
        "priority"] == 2000001000
    status, body = api.post(PODS, pod("q", priorityClassName="missing"))
    assert (status, body["message"]) == (
        403, 'pods "q" is forbidden: no PriorityClass with name missing was found')


def test_own_tolerations_of_every_taint_keep_the_defaults_out(api: Api) -> None:
    tolerate_all = [{"operator": "Exists"}]
    assert api.post(PODS, pod("p", tolerations=tolerate_all))[1]["spec"]["tolerations"] == (
        tolerate_all)


def test_unknown_plugins_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown admission plugins"):
        TestAPIServer(disabled_admission_plugins=("NoSuchPlugin",))


def test_a_fresh_server_has_what_a_bare_kube_apiserver_creates(api: Api) -> None:
    namespaces = [ns["metadata"]["name"] for ns in api.get("/api/v1/namespaces")[1]["items"]]
    assert namespaces == ["default", "kube-node-lease", "kube-public", "kube-system"]
    status, service = api.get("/api/v1/namespaces/default/services/kubernetes")
    assert status == 200
    assert service["metadata"]["labels"] == {"component": "apiserver", "provider": "kubernetes"}
    assert service["spec"]["clusterIP"] == "10.0.0.1"
    assert service["spec"]["ports"] == [{"name": "https", "protocol": "TCP", "port": 443,
                                         "targetPort": 6443}]
    classes = api.get("/apis/scheduling.k8s.io/v1/priorityclasses")[1]["items"]
    assert [(c["metadata"]["name"], c["value"]) for c in classes] == [
        ("system-cluster-critical", 2000000000), ("system-node-critical", 2000001000)]


def test_a_server_without_system_objects_starts_empty() -> None:
    with TestAPIServer(system_objects=False) as server:
        assert Api(server).get("/api/v1/namespaces")[1]["items"] == []


@pytest.mark.parametrize("subresource", ["exec", "attach", "portforward"])
def test_streams_of_an_unscheduled_pod_have_no_host(api: Api, subresource: str) -> None:
    """pkg/registry/core/pod/strategy.go streamLocation / PortForwardLocation."""
    assert api.post(PODS, pod("p"))[0] == 201
    assert api.call("POST", f"{PODS}/p/{subresource}", query={"command": "ls"}) == (400, {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "pod p does not have a host assigned", "reason": "BadRequest", "code": 400})
    assert api.call("POST", f"{PODS}/missing/{subresource}")[0] == 404


def test_the_log_of_an_unscheduled_pod_is_empty(api: Api) -> None:
    assert api.post(PODS, pod("p"))[0] == 201
    response = api.http.request("GET", f"{api.url}{PODS}/p/log")
    assert (response.status, response.headers["Content-Type"], response.data) == (
        200, "text/plain", b"")
    status, body = api.get(f"{PODS}/p/log", container="other")
    assert (status, body["message"]) == (400, "container other is not valid for pod p")


def test_a_pod_on_a_node_that_does_not_exist_gets_the_node_s_404(api: Api) -> None:
    assert api.post(PODS, pod("p", nodeName="n1"))[0] == 201
    status, body = api.get(f"{PODS}/p/log")
    assert (status, body["message"]) == (404, 'nodes "n1" not found')


def test_a_pod_update_may_change_images_but_not_commands(api: Api) -> None:
    """builtins #85, #86: ValidatePodUpdate (its message's diff of the Go specs left out)."""
    assert api.post(PODS, pod("p"))[0] == 201
    image = {"spec": {"containers": [{"name": "c", "image": "busybox:1.37"}]}}
    status, patched = api.patch(f"{PODS}/p", image, "application/strategic-merge-patch+json")
    assert (status, patched["spec"]["containers"][0]["image"]) == (200, "busybox:1.37")
    command = {"spec": {"containers": [{"name": "c", "command": ["sleep", "2d"]}]}}
    status, body = api.patch(f"{PODS}/p", command, "application/strategic-merge-patch+json")
    assert (status, body["details"]["causes"][0]["field"]) == (422, "spec")
    assert body["message"].startswith(
        'Pod "p" is invalid: spec: Forbidden: pod updates may not change fields other than '
        "`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`")
    labelled = api.patch(f"{PODS}/p", {"metadata": {"labels": {"a": "b"}}})
    assert labelled[0] == 200


def test_a_pod_update_may_add_tolerations_but_not_drop_them(api: Api) -> None:
    """ValidatePodUpdate's validateOnlyAddedTolerations."""
    assert api.post(PODS, pod("p"))[0] == 201
    added = [*TOLERATIONS, {"key": "k", "operator": "Exists"}]
    assert api.patch(f"{PODS}/p", {"spec": {"tolerations": added}})[0] == 200
    status, body = api.patch(f"{PODS}/p", {"spec": {"tolerations": TOLERATIONS[:1]}})
    assert (status, body["details"]["causes"]) == (422, [{
        "reason": "FieldValueForbidden", "field": "spec.tolerations",
        "message": "Forbidden: existing toleration can not be modified except its "
                   "tolerationSeconds"}])


def test_a_pod_conditions_unset_times_are_null_and_owned(api: Api) -> None:
    # PodCondition holds its Times by value: Go writes null (builtins.jsonl #87)
    assert api.post(PODS, pod("t"))[0] == 201

    status, patched = api.call(
        "PATCH", f"{PODS}/t/status",
        {"status": {"conditions": [{"type": "PodScheduled", "status": "False"}]}},
        query={"fieldManager": "s"}, content_type="application/strategic-merge-patch+json")

    assert status == 200, patched
    assert patched["status"]["conditions"] == [{
        "type": "PodScheduled", "status": "False", "lastProbeTime": None,
        "lastTransitionTime": None}]
    [entry] = [e for e in patched["metadata"]["managedFields"] if e["manager"] == "s"]
    assert entry["fieldsV1"]["f:status"]["f:conditions"] == {".": {}, 'k:{"type":"PodScheduled"}': {
        ".": {}, "f:lastProbeTime": {}, "f:lastTransitionTime": {}, "f:status": {},
        "f:type": {}}}
