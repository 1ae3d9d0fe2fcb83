"""Built-in kinds are defaulted and checked like kube-apiserver does it (the common cases)."""

from __future__ import annotations

import base64
import copy
from typing import Any

import orjson
import pytest

from kgen_runtime.rest import Request
from kgen_runtime.testing import APIServerCore
from tests.testing._support import Api

DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
POD_SPEC = {"containers": [{"name": "web", "image": "nginx:1.27"}]}


def deployment(name: str = "web", **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {
        "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}}, "spec": copy.deepcopy(POD_SPEC)},
        **spec}}


def causes(body: Any) -> list[tuple[str, str, str]]:
    return [(c["reason"], c["field"], c["message"]) for c in body["details"]["causes"]]


def test_a_deployment_gets_the_servers_defaults(api: Api) -> None:
    status, created = api.post(DEPLOYMENTS, deployment())
    assert status == 201
    spec = created["spec"]
    assert {k: v for k, v in spec.items() if k not in ("selector", "template")} == {
        "replicas": 1, "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600,
        "strategy": {"type": "RollingUpdate",
                     "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}}
    assert spec["template"]["spec"] == {
        "containers": [{"name": "web", "image": "nginx:1.27",
                        "terminationMessagePath": "/dev/termination-log",
                        "terminationMessagePolicy": "File", "imagePullPolicy": "IfNotPresent",
                        "resources": {}}],
        "restartPolicy": "Always", "terminationGracePeriodSeconds": 30,
        "dnsPolicy": "ClusterFirst", "securityContext": {}, "schedulerName": "default-scheduler"}
    recreate = deployment("other", strategy={"type": "Recreate"})
    assert api.post(DEPLOYMENTS, recreate)[1]["spec"]["strategy"] == {"type": "Recreate"}


@pytest.mark.parametrize(("image", "policy"), [
    ("nginx", "Always"), ("nginx:latest", "Always"), ("registry:5000/nginx", "Always"),
    ("registry:5000/nginx:1.2", "IfNotPresent"), ("nginx@sha256:abc", "IfNotPresent"),
])
def test_image_pull_policy_follows_the_tag(api: Api, image: str, policy: str) -> None:
    body = {"metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": image}]}}
    created = api.post("/api/v1/namespaces/default/pods", body)[1]
    assert created["spec"]["containers"][0]["imagePullPolicy"] == policy


def test_deployments_users_get_wrong_are_refused(api: Api) -> None:
    mismatched = deployment()
    mismatched["spec"]["template"]["metadata"]["labels"] = {"app": "other"}
    status, body = api.post(DEPLOYMENTS, mismatched)
    assert (status, body["message"]) == (
        422, 'Deployment.apps "web" is invalid: spec.template.metadata.labels: Invalid value: '
             '{"app":"other"}: `selector` does not match template `labels`')
    empty = deployment(replicas=-1)
    empty["spec"]["template"]["spec"] = {"containers": []}
    assert causes(api.post(DEPLOYMENTS, empty)[1]) == [
        ("FieldValueInvalid", "spec.replicas",
         "Invalid value: -1: must be greater than or equal to 0"),
        ("FieldValueRequired", "spec.template.spec.containers", "Required value")]
    unnamed = deployment()
    unnamed["spec"]["template"]["spec"]["containers"] = [{"image": "x"}, {"name": "Web"}]
    del unnamed["spec"]["selector"]
    assert [c[:2] for c in causes(api.post(DEPLOYMENTS, unnamed)[1])] == [
        ("FieldValueRequired", "spec.selector"),
        ("FieldValueRequired", "spec.template.spec.containers[0].name"),
        ("FieldValueInvalid", "spec.template.spec.containers[1].name"),
        ("FieldValueRequired", "spec.template.spec.containers[1].image")]
    assert api.get(f"{DEPLOYMENTS}/web")[0] == 404


def test_a_job_template_must_not_restart_always(api: Api) -> None:
    job = {"metadata": {"name": "j"}, "spec": {"template": {"spec": copy.deepcopy(POD_SPEC)}}}
    status, body = api.post("/apis/batch/v1/namespaces/default/jobs", job)
    assert (status, causes(body)) == (422, [(
        "FieldValueNotSupported", "spec.template.spec.restartPolicy",
        'Unsupported value: "Always": supported values: "OnFailure", "Never"')])
    job["spec"]["template"]["spec"]["restartPolicy"] = "Never"
    created = api.post("/apis/batch/v1/namespaces/default/jobs", job)[1]
    assert (created["spec"]["backoffLimit"], created["spec"]["completions"]) == (6, 1)
    job["metadata"]["name"] = "parallel"
    job["spec"]["parallelism"] = 3  # a work queue: completions stay unset
    assert "completions" not in api.post("/apis/batch/v1/namespaces/default/jobs", job)[1][
        "spec"]


def test_configmap_and_secret_keys_and_base64(api: Api) -> None:
    status, body = api.post("/api/v1/namespaces/default/configmaps", {
        "metadata": {"name": "c"}, "data": {"ok.key": "1", "bad key": "2"},
        "binaryData": {"ok.key": "AA=="}})
    assert (status, [c[:2] for c in causes(body)]) == (422, [
        ("FieldValueInvalid", "data[bad key]"), ("FieldValueInvalid", "binaryData[ok.key]")])
    assert causes(body)[0][2].startswith(
        "Invalid value: \"bad key\": a valid config key must consist of alphanumeric characters")
    status, body = api.post("/api/v1/namespaces/default/secrets", {
        "metadata": {"name": "s"}, "data": {"token": "not base64!"}})
    assert (status, body["reason"], body["message"]) == (
        400, "BadRequest", 'Secret in version "v1" cannot be handled as a Secret: illegal '
                           "base64 data at input byte 3")
    status, secret = api.post("/api/v1/namespaces/default/secrets", {
        "metadata": {"name": "s"}, "data": {"token": "c2VjcmV0"}, "stringData": {"user": "me"}})
    assert (status, secret["type"], secret["data"]) == (
        201, "Opaque", {"token": "c2VjcmV0", "user": "bWU="})
    assert "stringData" not in secret


def test_services_are_defaulted_and_their_ports_checked(api: Api) -> None:
    path = "/api/v1/namespaces/default/services"
    created = api.post(path, {"metadata": {"name": "web"}, "spec": {
        "selector": {"app": "web"}, "ports": [{"port": 80}]}})[1]
    assert {k: v for k, v in created["spec"].items() if k != "selector"} == {
        "type": "ClusterIP", "sessionAffinity": "None", "internalTrafficPolicy": "Cluster",
        "clusterIP": "10.0.0.10", "clusterIPs": ["10.0.0.10"], "ipFamilies": ["IPv4"],
        "ipFamilyPolicy": "SingleStack",
        "ports": [{"port": 80, "protocol": "TCP", "targetPort": 80}]}
    replaced = api.put(f"{path}/web", {"metadata": {"name": "web"}, "spec": {
        "ports": [{"port": 81}]}})[1]["spec"]  # allocated values survive an update
    assert (replaced["clusterIP"], replaced["clusterIPs"]) == ("10.0.0.10", ["10.0.0.10"])
    node_port = api.post(path, {"metadata": {"name": "np"}, "spec": {
        "type": "NodePort", "ports": [{"port": 80}]}})[1]["spec"]
    assert (node_port["externalTrafficPolicy"], node_port["internalTrafficPolicy"]) == (
        "Cluster", "Cluster")
    assert (node_port["clusterIP"], node_port["ports"][0]["nodePort"]) == ("10.0.0.11", 30000)
    headless = api.post(path, {"metadata": {"name": "h"}, "spec": {"clusterIP": "None",
                                                                   "selector": {"a": "b"}}})
    assert headless[1]["spec"]["clusterIPs"] == ["None"]
    sticky = api.post(path, {"metadata": {"name": "sticky"}, "spec": {
        "sessionAffinity": "ClientIP", "ports": [{"port": 80}]}})[1]["spec"]
    assert sticky["sessionAffinityConfig"] == {"clientIP": {"timeoutSeconds": 10800}}
    status, body = api.post(path, {"metadata": {"name": "bad"}, "spec": {
        "ports": [{"port": 70000}, {"port": 81, "protocol": "HTTP"}]}})
    assert (status, [c[:2] for c in causes(body)]) == (422, [
        ("FieldValueRequired", "spec.ports[0].name"),
        ("FieldValueInvalid", "spec.ports[0].port"),
        ("FieldValueInvalid", "spec.ports[0].targetPort"),  # defaulted to the port
        ("FieldValueRequired", "spec.ports[1].name"),
        ("FieldValueNotSupported", "spec.ports[1].protocol")])
    assert causes(body)[1][2] == "Invalid value: 70000: must be between 1 and 65535, inclusive"


def _core_call(core: APIServerCore, method: str, path: str, body: Any,
               **query: str) -> tuple[int, Any, dict[str, str]]:
    response = core.handle(Request(method, path, tuple(query.items()), orjson.dumps(body),
                                   "application/json"))
    return response.status, orjson.loads(response.read()), dict(response.headers)


def test_unknown_fields_are_dropped_and_reported_per_field_validation() -> None:
    core = APIServerCore()
    body = deployment()
    body["spec"]["bogus"] = 1
    body["spec"]["template"]["spec"]["containers"][0]["imagePullPolicyy"] = "Always"
    status, answer, _ = _core_call(core, "POST", DEPLOYMENTS, body, fieldValidation="Strict")
    assert (status, answer["reason"], answer["message"]) == (
        400, "BadRequest", 'Deployment in version "v1" cannot be handled as a Deployment: '
                           'strict decoding error: unknown field '
                           '"spec.template.spec.containers[0].imagePullPolicyy", unknown field '
                           '"spec.bogus"')
    status, created, headers = _core_call(core, "POST", DEPLOYMENTS, body)
    assert status == 201 and "bogus" not in created["spec"]
    assert headers["Warning"] == (
        '299 - "unknown field \\"spec.template.spec.containers[0].imagePullPolicyy\\"", '
        '299 - "unknown field \\"spec.bogus\\""')


def test_values_of_the_wrong_type_fail_decoding_like_the_go_decoder() -> None:
    core = APIServerCore()
    status, answer, _ = _core_call(core, "POST", DEPLOYMENTS, deployment(replicas="3"))
    assert (status, answer["message"]) == (
        400, 'Deployment in version "v1" cannot be handled as a Deployment: json: cannot '
             "unmarshal string into Go struct field DeploymentSpec.spec.replicas of type int32")
    assert _core_call(core, "POST", DEPLOYMENTS, deployment(replicas=2**31))[1][
        "message"].endswith("cannot unmarshal number 2147483648 into Go struct field "
                            "DeploymentSpec.spec.replicas of type int32")
    body = deployment()
    body["spec"]["template"]["spec"]["containers"] = {"name": "web"}
    assert _core_call(core, "POST", DEPLOYMENTS, body)[1]["message"].endswith(
        "cannot unmarshal object into Go struct field PodSpec.spec.template.spec.containers of "
        "type []v1.Container")


def test_required_properties_and_enums_of_the_openapi_schema(api: Api) -> None:
    body = deployment()
    container = body["spec"]["template"]["spec"]["containers"][0]
    container["env"] = [{"value": "x"}]
    container["imagePullPolicy"] = "Sometimes"
    assert [c[:2] for c in causes(api.post(DEPLOYMENTS, body)[1])] == [
        ("FieldValueRequired", "spec.template.spec.containers[0].env[0].name"),
        ("FieldValueNotSupported", "spec.template.spec.containers[0].imagePullPolicy")]


def test_required_properties_the_go_validators_do_not_check_are_accepted(api: Api) -> None:
    """OpenAPI says ContainerStatus requires image, imageID, ready and restartCount and
    DeploymentCondition requires status; kube-apiserver decodes them to zero values and
    accepts them, since its Go validators never test them (and writes the zero values back).
    """
    pods = "/api/v1/namespaces/default/pods"
    assert api.post(pods, {"metadata": {"name": "p"}, "spec": POD_SPEC})[0] == 201
    status = {"containerStatuses": [{"name": "web"}], "conditions": [{"type": "Ready",
                                                                      "status": "True"}]}
    code, updated = api.patch(f"{pods}/p/status", {"status": status},
                              "application/merge-patch+json")
    assert code == 200, updated
    assert updated["status"]["containerStatuses"] == [{
        "name": "web", "state": {}, "lastState": {}, "ready": False, "restartCount": 0,
        "image": "", "imageID": ""}]
    assert api.post(DEPLOYMENTS, deployment())[0] == 201
    code, body = api.patch(f"{DEPLOYMENTS}/web/status", {"status": {"conditions": [
        {"type": "Available"}]}}, "application/merge-patch+json")
    assert (code, body["status"]["conditions"]) == (200, [{"type": "Available", "status": ""}])


def test_a_service_port_without_port_is_invalid_not_required(api: Api) -> None:
    """ServicePort.port is OpenAPI-required; Go's validateServicePort reports the zero value
    as out of range, once."""
    body = {"metadata": {"name": "s"}, "spec": {"ports": [{"targetPort": 80}]}}
    status, refused = api.post("/api/v1/namespaces/default/services", body)
    assert (status, causes(refused)) == (422, [
        ("FieldValueInvalid", "spec.ports[0].port",
         "Invalid value: null: must be between 1 and 65535, inclusive")])


def test_required_properties_the_go_validators_check_are_refused(api: Api) -> None:
    pod = {"metadata": {"name": "p"}, "spec": {"containers": [{
        "name": "web", "image": "nginx", "ports": [{"name": "http"}], "env": [{"value": "x"}],
        "volumeMounts": [{"name": "v"}]}]}}
    status, refused = api.post("/api/v1/namespaces/default/pods", pod)
    assert (status, causes(refused)) == (422, [
        ("FieldValueRequired", "spec.containers[0].ports[0].containerPort", "Required value"),
        ("FieldValueRequired", "spec.containers[0].env[0].name", "Required value"),
        ("FieldValueRequired", "spec.containers[0].volumeMounts[0].mountPath",
         "Required value")])
    role = {"metadata": {"name": "r"}, "rules": [{"apiGroups": [""], "resources": ["pods"]}]}
    status, refused = api.post("/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles",
                               role)
    assert (status, causes(refused)) == (422, [
        ("FieldValueRequired", "rules[0].verbs", "Required value")])


def test_only_tabled_required_properties_are_enforced() -> None:
    from kgen_runtime.testing.apiserver.openapi._builtin_required import enforced_required

    assert enforced_required("io.k8s.api.core.v1.ContainerStatus",
                             ["name", "ready", "restartCount", "image", "imageID"]) == []
    assert enforced_required("io.k8s.api.core.v1.VolumeMount", ["name", "mountPath"]) == [
        "mountPath", "name"]
    assert enforced_required("io.k8s.api.core.v1.ServicePort", ["port"]) == []


def test_enums_the_go_validators_check_are_refused_in_their_order(api: Api) -> None:
    """validateRestartPolicy lists its values as Always, OnFailure, Never (not the OpenAPI
    enum's sorted order); ValidateStorageClass accepts no Recycle, which the enum has."""
    pod = {"metadata": {"name": "p"}, "spec": {**POD_SPEC, "restartPolicy": "Sometimes"}}
    status, refused = api.post("/api/v1/namespaces/default/pods", pod)
    assert (status, refused["message"], causes(refused)) == (
        422, 'Pod "p" is invalid: spec.restartPolicy: Unsupported value: "Sometimes": '
        'supported values: "Always", "OnFailure", "Never"',
        [("FieldValueNotSupported", "spec.restartPolicy",
          'Unsupported value: "Sometimes": supported values: "Always", "OnFailure", "Never"')])
    storage_class = {"metadata": {"name": "slow"}, "provisioner": "example.com/disk",
                     "reclaimPolicy": "Recycle"}
    status, refused = api.post("/apis/storage.k8s.io/v1/storageclasses", storage_class)
    assert (status, causes(refused)) == (422, [
        ("FieldValueNotSupported", "reclaimPolicy",
         'Unsupported value: "Recycle": supported values: "Delete", "Retain"')])


def test_enums_the_go_validators_do_not_check_are_accepted(api: Api) -> None:
    """PodStatus.phase and qosClass have OpenAPI enums, but ValidatePodStatusUpdate never
    tests them against a set: a status write with other values is stored."""
    pods = "/api/v1/namespaces/default/pods"
    assert api.post(pods, {"metadata": {"name": "p"}, "spec": POD_SPEC})[0] == 201
    code, updated = api.patch(f"{pods}/p/status", {"status": {"phase": "Hibernating"}},
                              "application/merge-patch+json")
    assert (code, updated["status"]["phase"]) == (200, "Hibernating")


def test_only_tabled_enums_are_enforced() -> None:
    from kgen_runtime.testing.apiserver.openapi._builtin_enums import enforced_enum

    assert enforced_enum("io.k8s.api.core.v1.PodStatus", "phase") is None
    assert enforced_enum("io.k8s.api.core.v1.NodeSelectorRequirement", "operator") is None
    assert enforced_enum("io.k8s.api.core.v1.Container", "imagePullPolicy") == (
        "Always", "IfNotPresent", "Never")


@pytest.mark.parametrize("kind", ["mutating", "validating"])
def test_webhook_names_are_fully_qualified_and_unique(api: Api, kind: str) -> None:
    path = f"/apis/admissionregistration.k8s.io/v1/{kind}webhookconfigurations"

    def configuration(*names: str) -> dict[str, Any]:
        return {"metadata": {"name": "hooks"}, "webhooks": [
            {"name": name, "clientConfig": {"url": "https://127.0.0.1:9443/hook"},
             "sideEffects": "None", "admissionReviewVersions": ["v1"]} for name in names]}

    status, body = api.post(path, configuration("foo.example", "Bad_Name.example.com",
                                                "a.b.c", "a.b.c"))
    assert (status, causes(body)) == (422, [
        ("FieldValueInvalid", "webhooks[0].name",
         'Invalid value: "foo.example": should be a domain with at least three segments '
         "separated by dots"),
        ("FieldValueInvalid", "webhooks[1].name",
         'Invalid value: "Bad_Name.example.com": a lowercase RFC 1123 subdomain must consist '
         "of lower case alphanumeric characters, '-' or '.', and must start and end with an "
         "alphanumeric character (e.g. 'example.com', regex used for validation is "
         "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"),
        ("FieldValueDuplicate", "webhooks[3].name", 'Duplicate value: "a.b.c"'),
    ])
    assert api.post(path, configuration("foo.example.com", "bar.example.com"))[0] == 201


PEM_KEY = b"-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"
PEM_CERT = b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"


@pytest.mark.parametrize(("cert", "key", "warning"), [
    (b"cert", b"key", '299 - "tls: failed to find any PEM data in certificate input"'),
    (PEM_KEY, PEM_KEY, '299 - "tls: failed to find certificate PEM data in certificate input, '
     'but did find a private key; PEM inputs may have been switched"'),
    (PEM_CERT, b"key", '299 - "tls: failed to find any PEM data in key input"'),
    (PEM_CERT, PEM_KEY, None),
])
def test_a_tls_secret_that_go_cannot_pair_is_stored_with_a_warning(
    api: Api, cert: bytes, key: bytes, warning: str | None,
) -> None:
    # pkg/api/secret/util.go GetWarningsForSecret: tls.X509KeyPair's error
    body = {"metadata": {"name": "tls1"}, "type": "kubernetes.io/tls", "data": {
        "tls.crt": base64.b64encode(cert).decode(), "tls.key": base64.b64encode(key).decode()}}

    response = api.http.request("POST", api.url + "/api/v1/namespaces/default/secrets",
                                body=orjson.dumps(body),
                                headers={"Content-Type": "application/json"})

    assert response.status == 201
    assert response.headers.get("Warning") == warning
