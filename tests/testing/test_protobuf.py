"""Protobuf bodies of built-in kinds, checked against what kubectl and kube-apiserver v1.36
exchanged (../shared/fidelity/transcripts/kubectl.jsonl, the ``kubectl create`` steps): the
recorded request bodies decode to the object kubectl meant, every recorded body encodes back
byte for byte, and the test server answers kubectl's own bytes with bytes kubectl reads."""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import zlib
from pathlib import Path
from typing import Any

import orjson
import pytest
import urllib3

from kgen_runtime.rest import Request
from kgen_runtime.testing import TestAPIServer
from kgen_runtime.testing.apiserver.endpoints import _protobuf as protobuf_module
from kgen_runtime.testing.apiserver.endpoints._protobuf import (
    MEDIA_TYPE,
    NoSchema,
    decode_body,
    encode_object,
    has_schema,
    negotiated,
    prefers_protobuf,
)
from kgen_runtime.testing.apiserver.endpoints._protobuf_fields import FIELDS
from kgen_runtime.testing.apiserver.endpoints._protobuf_wire import Writer
from kgen_runtime.testing.apiserver.endpoints._protobuf_wire import fields as wire_fields
from kgen_runtime.testing.apiserver.endpoints._responses import json_response
from kgen_runtime.testing.apiserver.openapi._openapi import builtin_kinds, builtin_paths
from tests.shared import SHARED, requires_shared

TRANSCRIPT = SHARED / "fidelity" / "transcripts" / "kubectl.jsonl"
KUBECTL_ACCEPT = "application/vnd.kubernetes.protobuf,application/json"


def recorded() -> dict[int, dict[str, Any]]:
    """The kubectl exchanges whose bodies are protobuf, by sequence number."""
    if not TRANSCRIPT.exists():
        return {}
    exchanges = (json.loads(line) for line in TRANSCRIPT.read_text().splitlines())
    return {e["seq"]: e for e in exchanges if e["request"].get("protobuf")}


EXCHANGES = recorded()
#: The tests that read ../shared's recordings (skipped where it is missing, outside CI).
needs_recordings = requires_shared(TRANSCRIPT)


def body(exchange: dict[str, Any], side: str) -> bytes:
    return base64.b64decode(exchange[side]["body"])


def configmap(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "namespace": "fid-kubectl"}, "data": {"a": "b"}}


@needs_recordings
@pytest.mark.parametrize(("seq", "name"), [(90, "dry"), (92, "proto"), (148, "late")])
def test_kubectls_create_bodies_decode_to_the_configmap_it_printed(seq: int, name: str) -> None:
    """``kubectl create configmap <name> --from-literal=a=b``: Go writes every non-pointer
    field (empty generateName, uid, resourceVersion, a zero generation and creationTimestamp);
    the JSON the server stores leaves them out, as Go's encoding/json does."""
    assert decode_body(body(EXCHANGES[seq], "request")) == configmap(name)


@needs_recordings
def test_the_created_configmap_decodes_as_kube_apiserver_answered_it() -> None:
    answer = decode_body(body(EXCHANGES[92], "response"))
    assert answer == {
        **configmap("proto"),
        "metadata": {
            "name": "proto", "namespace": "fid-kubectl",
            "uid": "9884d719-09ca-4ae2-a463-8ab86370e86a", "resourceVersion": "5610",
            "creationTimestamp": "2026-11-28T02:02:14Z",
            "managedFields": [{
                "manager": "kubectl-create", "operation": "Update", "apiVersion": "v1",
                "time": "2026-11-28T02:02:14Z", "fieldsType": "FieldsV1",
                "fieldsV1": {"f:data": {".": {}, "f:a": {}}}}]},
    }


@needs_recordings
def test_the_forbidden_status_decodes_with_its_cause() -> None:
    status = decode_body(body(EXCHANGES[148], "response"))
    assert status == {
        "apiVersion": "v1", "kind": "Status", "metadata": {}, "status": "Failure",
        "message": 'configmaps "late" is forbidden: unable to create new content in namespace '
                   "fid-kubectl because it is being terminated",
        "reason": "Forbidden", "code": 403,
        "details": {"name": "late", "kind": "configmaps", "causes": [{
            "reason": "NamespaceTerminating", "field": "metadata.namespace",
            "message": "namespace fid-kubectl is being terminated"}]},
    }


@needs_recordings
@pytest.mark.parametrize("side", ["request", "response"])
@pytest.mark.parametrize("seq", sorted(EXCHANGES))
def test_every_recorded_body_encodes_back_byte_for_byte(seq: int, side: str) -> None:
    """Fields in number order, value fields written even when empty, map entries sorted:
    what Go's generated marshallers write."""
    recorded_bytes = body(EXCHANGES[seq], side)
    assert encode_object(decode_body(recorded_bytes)) == recorded_bytes


@pytest.mark.parametrize(("accept", "expected"), [
    (KUBECTL_ACCEPT, True),
    ("application/json, application/vnd.kubernetes.protobuf", False),
    ("application/vnd.kubernetes.protobuf;q=0.5, application/json", False),
    ("application/json;q=0.5, application/vnd.kubernetes.protobuf", True),
    ("application/vnd.kubernetes.protobuf;as=Table;g=meta.k8s.io;v=v1, application/json", False),
    ("*/*", False),
    ("*/*, application/vnd.kubernetes.protobuf", True),
    ("application/*, application/vnd.kubernetes.protobuf", True),
    (None, False),
])
def test_protobuf_is_answered_when_it_ranks_first(accept: str | None, expected: bool) -> None:
    assert prefers_protobuf(accept) is expected


def post(server: TestAPIServer, path: str, payload: bytes, accept: str) -> (
        urllib3.BaseHTTPResponse):
    return urllib3.PoolManager().request(
        "POST", server.url + path, body=payload,
        headers={"Content-Type": MEDIA_TYPE, "Accept": accept})


@needs_recordings
def test_the_server_takes_kubectls_bytes_and_answers_in_protobuf() -> None:
    exchange = EXCHANGES[92]
    with TestAPIServer() as server:
        response = post(server, exchange["request"]["path"] + "?fieldManager=kubectl-create",
                        body(exchange, "request"), KUBECTL_ACCEPT)
        assert (response.status, response.headers["Content-Type"]) == (201, MEDIA_TYPE)
        created = decode_body(response.data)
        stored = get(server, exchange["request"]["path"] + "/proto")
    assert created == stored
    assert (created["data"], created["metadata"]["managedFields"][0]["manager"]) == (
        {"a": "b"}, "kubectl-create")


def get(server: TestAPIServer, path: str) -> Any:
    return orjson.loads(urllib3.PoolManager().request("GET", server.url + path).data)


@needs_recordings
def test_errors_are_answered_in_protobuf_too() -> None:
    """kube-apiserver encodes the Status of a failed protobuf create in protobuf (seq 148)."""
    exchange = EXCHANGES[92]
    with TestAPIServer() as server:
        path = exchange["request"]["path"]
        assert post(server, path, body(exchange, "request"), KUBECTL_ACCEPT).status == 201
        again = post(server, path, body(exchange, "request"), KUBECTL_ACCEPT)
    assert (again.status, again.headers["Content-Type"]) == (409, MEDIA_TYPE)
    status = decode_body(again.data)
    assert (status["kind"], status["reason"], status["details"]) == (
        "Status", "AlreadyExists", {"name": "proto", "kind": "configmaps"})


def test_a_list_is_answered_in_protobuf() -> None:
    """A typed client's list (ConfigMapList: ListMeta and the items as messages)."""
    path = "/api/v1/namespaces/fid-kubectl/configmaps"
    with TestAPIServer() as server:
        for name in ("a", "b"):
            assert post(server, path, encode_object(configmap(name)), KUBECTL_ACCEPT).status == 201
        response = urllib3.PoolManager().request("GET", server.url + path,
                                                 headers={"Accept": KUBECTL_ACCEPT})
        as_json = get(server, path)
    listed = decode_body(response.data)
    assert (response.headers["Content-Type"], listed["kind"]) == (MEDIA_TYPE, "ConfigMapList")
    assert listed["metadata"] == as_json["metadata"]
    assert [item["data"] for item in listed["items"]] == [{"a": "b"}, {"a": "b"}]
    assert [item["metadata"]["name"] for item in listed["items"]] == ["a", "b"]


def test_delete_options_are_read_from_a_protobuf_body() -> None:
    """client-go's typed Delete sends DeleteOptions in the client's media type: a uid
    precondition that does not hold must refuse the delete (409), as its JSON form does."""
    options = encode_object({"apiVersion": "v1", "kind": "DeleteOptions",
                             "preconditions": {"uid": "not-the-uid"}})
    path = "/api/v1/namespaces/fid-kubectl/configmaps"
    with TestAPIServer() as server:
        assert post(server, path, encode_object(configmap("c")), KUBECTL_ACCEPT).status == 201
        response = urllib3.PoolManager().request(
            "DELETE", f"{server.url}{path}/c", body=options,
            headers={"Content-Type": MEDIA_TYPE, "Accept": KUBECTL_ACCEPT})
        still_there = get(server, f"{path}/c")
    assert (response.status, decode_body(response.data)["reason"]) == (409, "Conflict")
    assert still_there["metadata"]["name"] == "c"


@needs_recordings
def test_a_subresource_body_of_another_group_goes_both_ways_in_protobuf() -> None:
    """A typed client's GetScale/UpdateScale: autoscaling/v1 Scale under apps/v1 (its schema
    is in the apps document, not autoscaling's)."""
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment",
                  "metadata": {"name": "d", "namespace": "default"},
                  "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "d"}},
                           "template": {"metadata": {"labels": {"app": "d"}},
                                        "spec": {"containers": [{"name": "c", "image": "i"}]}}}}
    path = "/apis/apps/v1/namespaces/default/deployments"
    pool = urllib3.PoolManager()
    with TestAPIServer() as server:
        assert post(server, path, encode_object(deployment), KUBECTL_ACCEPT).status == 201
        read = pool.request("GET", f"{server.url}{path}/d/scale",
                            headers={"Accept": KUBECTL_ACCEPT})
        scale = decode_body(read.data)
        assert (read.headers["Content-Type"], scale["kind"], scale["apiVersion"]) == (
            MEDIA_TYPE, "Scale", "autoscaling/v1")
        assert scale == get(server, f"{path}/d/scale")
        scale["spec"]["replicas"] = 3
        written = pool.request("PUT", f"{server.url}{path}/d/scale", body=encode_object(scale),
                               headers={"Content-Type": MEDIA_TYPE, "Accept": KUBECTL_ACCEPT})
        assert (written.status, decode_body(written.data)["spec"]) == (200, {"replicas": 3})
        assert get(server, f"{path}/d")["spec"]["replicas"] == 3


def test_metadata_only_answers_go_in_protobuf_for_client_gos_metadata_client() -> None:
    """client-go's metadata client asks for PartialObjectMetadata(List) in protobuf first;
    the items carry no TypeMeta on the wire (Go's inline TypeMeta has no protobuf tag)."""
    as_list = "as=PartialObjectMetadataList;g=meta.k8s.io;v=v1"
    as_object = "as=PartialObjectMetadata;g=meta.k8s.io;v=v1"
    path = "/api/v1/namespaces/fid-kubectl/configmaps"
    pool = urllib3.PoolManager()
    with TestAPIServer() as server:
        assert post(server, path, encode_object(configmap("a")), KUBECTL_ACCEPT).status == 201
        answers = {}
        for url, as_kind in ((path, as_list), (f"{path}/a", as_object)):
            for media in (MEDIA_TYPE, "application/json"):
                accept = f"{media};{as_kind},application/json;{as_kind},application/json"
                answer = pool.request("GET", server.url + url, headers={"Accept": accept})
                answers[url, media] = (answer.headers["Content-Type"], answer.data)
    listed = answers[path, MEDIA_TYPE]
    assert listed[0] == MEDIA_TYPE
    as_json = orjson.loads(answers[path, "application/json"][1])
    for item in as_json["items"]:
        del item["kind"], item["apiVersion"]
    assert decode_body(listed[1]) == as_json
    one = answers[f"{path}/a", MEDIA_TYPE]
    assert one[0] == MEDIA_TYPE
    assert decode_body(one[1]) == orjson.loads(answers[f"{path}/a", "application/json"][1])


def test_a_json_accept_gets_json_for_a_protobuf_body() -> None:
    exchange = EXCHANGES[92]
    with TestAPIServer() as server:
        response = post(server, exchange["request"]["path"], body(exchange, "request"),
                        "application/json")
    assert response.headers["Content-Type"] == "application/json"
    assert orjson.loads(response.data)["data"] == {"a": "b"}


@needs_recordings
def test_a_body_in_another_media_type_gets_the_recorded_415() -> None:
    """errors.jsonl #63: kube-apiserver lists protobuf among the media types it reads."""
    exchange = json.loads((SHARED / "fidelity" / "transcripts" / "errors.jsonl")
                          .read_text().splitlines()[62])
    with TestAPIServer() as server:
        response = urllib3.PoolManager().request(
            "POST", server.url + "/api/v1/namespaces/default/configmaps",
            body=orjson.dumps(configmap("ct")), headers={"Content-Type": "text/plain"})
    assert (exchange["seq"], response.status) == (63, 415)
    assert orjson.loads(response.data) == exchange["response"]["body"]


def test_a_body_without_the_magic_is_a_bad_request() -> None:
    """pkg/runtime/serializer/protobuf Decode refuses data without the ``k8s\\x00`` prefix."""
    with TestAPIServer() as server:
        response = post(server, "/api/v1/namespaces/default/configmaps",
                        orjson.dumps(configmap("json")), "application/json")
    status = orjson.loads(response.data)
    assert (response.status, status["reason"], status["message"]) == (
        400, "BadRequest", "provided data does not appear to be a protobuf message, expected "
                           "prefix [107 56 115 0]")


def run_kubectl(server: TestAPIServer, home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    kubeconfig = home / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\n"
        f"clusters: [{{name: t, cluster: {{server: '{server.url}'}}}}]\n"
        "contexts: [{name: t, context: {cluster: t, user: u}}]\n"
        "users: [{name: u, user: {}}]\ncurrent-context: t\n")
    env = {"PATH": os.environ.get("PATH", ""), "HOME": str(home), "KUBECONFIG": str(kubeconfig)}
    return subprocess.run(["kubectl", *args], capture_output=True, text=True, env=env,
                          timeout=60, check=False)


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not on PATH")
def test_kubectl_create_prints_what_it_printed_against_kube_apiserver(tmp_path: Path) -> None:
    """kubectl.kubectl-output.txt: ``configmap/proto created`` after a protobuf exchange."""
    with TestAPIServer() as server:
        done = run_kubectl(server, tmp_path, "-n", "default", "create", "configmap", "proto",
                           "--from-literal=a=b", "-v=8")
        stored = get(server, "/api/v1/namespaces/default/configmaps/proto")
    assert (done.returncode, done.stdout) == (0, "configmap/proto created\n"), done.stderr
    headers = [line.split("]", 1)[1].strip() for line in done.stderr.splitlines()
               if "Content-Type:" in line]
    assert headers == [f"Content-Type: {MEDIA_TYPE}"] * 2  # kubectl's request, our answer
    assert stored["data"] == {"a": "b"}


#: Built-in kinds the test server answers in JSON only: those whose types.go was not read
#: (mutating admission policies, CRDs, dynamic resource allocation), discovery
#: documents, and WatchEvent (watches stay JSON).
WITHOUT_SCHEMA = {
    "apiextensions.k8s.io/v1": {"CustomResourceDefinition", "CustomResourceDefinitionList"},
    "resource.k8s.io/v1": {"DeviceClass", "DeviceClassList", "ResourceClaim",
                           "ResourceClaimList", "ResourceClaimTemplate",
                           "ResourceClaimTemplateList", "ResourceSlice", "ResourceSliceList"},
}


def test_every_other_built_in_kind_has_a_complete_protobuf_schema() -> None:
    missing: dict[str, set[str]] = {}
    for path in builtin_paths():
        api_version = path.removeprefix("api/").removeprefix("apis/")
        for kind in builtin_kinds(path):
            if kind not in ("WatchEvent", "APIResourceList") and not has_schema(api_version,
                                                                                  kind):
                missing.setdefault(api_version, set()).add(kind)
    assert missing == WITHOUT_SCHEMA


# -- Go's field semantics, on objects built here --------------------------------------------

def roundtrip(obj: dict[str, Any]) -> dict[str, Any]:
    return decode_body(encode_object(obj))


def test_a_pointer_set_to_zero_stays_and_an_unset_one_stays_unset() -> None:
    """DeploymentSpec.replicas is *int32: an explicit 0 is written and read back (a dropped
    one would default to 1); progressDeadlineSeconds left unset is not invented."""
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                  "spec": {"replicas": 0, "selector": {"matchLabels": {"app": "d"}},
                           "template": {"metadata": {"labels": {"app": "d"}},
                                        "spec": {"containers": [{"name": "c", "image": "i"}]}}}}
    back = roundtrip(deployment)
    assert back["spec"]["replicas"] == 0
    assert "progressDeadlineSeconds" not in back["spec"]


def test_value_fields_go_on_the_wire_and_come_back_as_go_json_prints_them() -> None:
    """A non-pointer struct (container resources, Deployment status) is written even when
    absent and reads back as {}; an omitempty scalar written as zero (stdin: false) is left
    out; a scalar without omitempty (ContainerPort.containerPort) keeps its zero."""
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"containers": [{"name": "c", "image": "i", "ports": [{"containerPort": 0}]}]}}
    back = roundtrip(pod)
    container = back["spec"]["containers"][0]
    assert container == {"name": "c", "image": "i", "ports": [{"containerPort": 0}],
                         "resources": {}}
    assert back["status"] == {}


def test_special_types_keep_their_json_forms() -> None:
    """IntOrString (both arms), Quantity, MicroTime (microseconds kept), negative int32,
    map entries, and an inlined struct (Volume's VolumeSource, ConfigMapVolumeSource's
    LocalObjectReference)."""
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {
        "containers": [{"name": "c", "image": "i",
                        "resources": {"limits": {"cpu": "500m", "memory": "1Gi"}},
                        "livenessProbe": {"httpGet": {"port": "http", "path": "/"},
                                          "periodSeconds": 3},
                        "readinessProbe": {"tcpSocket": {"port": 8080}}}],
        "volumes": [{"name": "v", "configMap": {"name": "cm", "defaultMode": 420}}],
        "priority": -5}}
    back = roundtrip(pod)
    container = back["spec"]["containers"][0]
    assert container["resources"] == {"limits": {"cpu": "500m", "memory": "1Gi"}}
    assert container["livenessProbe"] == {"httpGet": {"port": "http", "path": "/"},
                                          "periodSeconds": 3}
    assert container["readinessProbe"] == {"tcpSocket": {"port": 8080}}
    assert back["spec"]["volumes"] == [{"name": "v",
                                        "configMap": {"name": "cm", "defaultMode": 420}}]
    assert back["spec"]["priority"] == -5
    lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l"},
             "spec": {"holderIdentity": "a", "renewTime": "2026-11-28T02:02:14.123456Z"}}
    assert roundtrip(lease)["spec"] == lease["spec"]


SAMPLES = {"string": "s", "bytes": "eA==", "int32": -7, "int64": 1 << 40, "bool": True,
           "double": 1.5, "time": "2026-01-02T03:04:05Z",
           "microtime": "2026-01-02T03:04:05.123456Z", "quantity": "1500m", "intstr": "http",
           "raw": {"a": [1, "b"]}, "strings": ["x", "y"]}


def sample(message: Any, depth: int = 0) -> dict[str, Any]:
    """Every numbered field of ``message`` set to a non-zero value (messages 12 deep)."""
    obj: dict[str, Any] = {}
    for field in message.fields:
        if field.kind == "inline":
            obj.update(sample(protobuf_module._sub(message, field), depth))
            continue
        if field.kind == "message":
            if depth >= 12:
                continue
            value: Any = sample(protobuf_module._sub(message, field), depth + 1)
        else:
            value = SAMPLES[field.kind]
        obj[field.name] = ({"k": value} if field.label == "map"
                           else [value] if field.label == "rep" else value)
    return obj


@pytest.mark.parametrize("api_version", sorted(
    path.removeprefix("api/").removeprefix("apis/") for path in builtin_paths()))
def test_every_field_of_every_kind_survives_a_round_trip(api_version: str) -> None:
    """Each numbered field, set, comes back as it went (types from OpenAPI, kinds of value
    from the table): scalars, maps, lists, inlined structs and the special types."""
    path = "api/" + api_version if "/" not in api_version else "apis/" + api_version
    for kind in builtin_kinds(path):
        if not has_schema(api_version, kind):
            continue
        message = protobuf_module._message(*protobuf_module._schema_of(api_version, kind))
        obj = {"apiVersion": api_version, "kind": kind, **sample(message)}
        assert roundtrip(obj) == obj, kind


def test_a_webhook_configuration_keeps_its_inlined_rule_and_bytes() -> None:
    """RuleWithOperations inlines Rule (field 2); caBundle is []byte (base64 in JSON)."""
    config = {"apiVersion": "admissionregistration.k8s.io/v1",
              "kind": "ValidatingWebhookConfiguration", "metadata": {"name": "v"},
              "webhooks": [{"name": "v.example.com", "sideEffects": "None",
                            "admissionReviewVersions": ["v1"],
                            "clientConfig": {"url": "https://127.0.0.1:9443/validate",
                                             "caBundle": "Q0EgYnVuZGxl"},
                            "rules": [{"operations": ["CREATE"], "apiGroups": [""],
                                       "apiVersions": ["v1"], "resources": ["configmaps"],
                                       "scope": "*"}]}]}
    assert roundtrip(config) == config


def test_a_field_whose_number_is_unknown_is_answered_in_json() -> None:
    """EndpointSlice's endpoints[].hints.forNodes (newer than the sources read) has no number
    here: an object that sets it is not encoded; one that does not is."""
    hints: dict[str, Any] = {"forNodes": [{"name": "n1"}]}
    slice_ = {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
              "metadata": {"name": "s"}, "addressType": "IPv4",
              "endpoints": [{"addresses": ["10.0.0.1"], "hints": hints}]}
    with pytest.raises(NoSchema):
        encode_object(slice_)
    hints.pop("forNodes")
    encode_object(slice_)


@pytest.mark.parametrize(("path", "body", "content_type"), [
    ("/api/v1/namespaces/n/configmaps/c", configmap("c"), MEDIA_TYPE),
    ("/apis/apps/v1/namespaces/n/deployments/d",
     {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
      "spec": {"replicas": "many"}}, "application/json"),
    ("/apis/samplecontroller.k8s.io/v1alpha1/namespaces/n/foos/f",
     {"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
      "metadata": {"name": "f"}}, "application/json"),
    ("/apis/samplecontroller.k8s.io/v1alpha1/namespaces/n/foos/f",
     {"apiVersion": "v1", "kind": "Status", "status": "Failure", "code": 404},
     "application/json"),
])
def test_an_answer_protobuf_cannot_carry_stays_json(path: str, body: dict[str, Any],
                                                     content_type: str) -> None:
    """A custom resource's endpoint (its errors too: kube-apiserver serves CRDs without a
    protobuf serializer) or a value no Go field could hold is answered in JSON, which
    client-go's Accept allows."""
    request = Request("GET", path, headers=(("Accept", KUBECTL_ACCEPT),))
    response = negotiated(request, json_response(200, body))
    assert response.headers["Content-Type"] == content_type


def test_a_kind_without_a_protobuf_schema_is_refused_with_415_in_protobuf() -> None:
    """The test server's limit (a real server decodes every built-in kind); the Status comes
    back in protobuf, as kubectl asked."""
    type_meta = Writer()
    type_meta.delimited(1, b"samplecontroller.k8s.io/v1alpha1")
    type_meta.delimited(2, b"Foo")
    envelope = Writer()
    envelope.delimited(1, type_meta.getvalue())
    envelope.delimited(2, b"")
    with TestAPIServer() as server:
        response = post(server, "/api/v1/namespaces/default/configmaps",
                        b"k8s\x00" + envelope.getvalue(), KUBECTL_ACCEPT)
    status = decode_body(response.data)
    assert (response.status, status["reason"]) == (415, "UnsupportedMediaType")
    assert "Foo (samplecontroller.k8s.io/v1alpha1)" in status["message"]


# -- kubectl itself: its protobuf path and its JSON path store the same objects --------------

# ``kubectl create <kind>`` sends and accepts protobuf; ``kubectl run`` and ``expose`` (and the
# GET of ``--from``) use JSON (kubectl v1.32), kept here as controls of the same comparison.
KUBECTL_CREATES = [
    ("configmap", ["create", "configmap", "cm", "--from-literal=a=b", "--from-file=f=/dev/null"]),
    ("secret", ["create", "secret", "generic", "s", "--from-literal=k=v"]),
    ("pod", ["run", "p", "--image=nginx", "--port=80", "--env=A=b", "--labels=app=p",
             "--restart=Never", "--overrides={\"spec\": {\"priority\": 0}}"]),
    ("service", ["create", "service", "nodeport", "np", "--tcp=80:8080"]),
    ("deployment", ["create", "deployment", "d", "--image=nginx", "--replicas=0", "--port=80"]),
    ("job", ["create", "job", "j", "--image=busybox", "--", "echo", "hi"]),
    ("cronjob", ["create", "cronjob", "cj", "--image=busybox", "--schedule=*/5 * * * *"]),
    ("role", ["create", "role", "r", "--verb=get", "--resource=pods"]),
    ("rolebinding", ["create", "rolebinding", "rb", "--role=r", "--user=bob"]),
    ("ingress", ["create", "ingress", "i", "--rule=foo.com/bar=svc:8080"]),
    ("pdb", ["create", "pdb", "pdb", "--selector=app=a", "--min-available=50%"]),
    ("quota", ["create", "quota", "q", "--hard=pods=2,cpu=1"]),
    ("priorityclass", ["create", "priorityclass", "pc", "--value=1000"]),
    ("namespace", ["create", "namespace", "ns2"]),
    ("serviceaccount", ["create", "serviceaccount", "sa"]),
    ("clusterrole", ["create", "clusterrole", "cr", "--verb=get", "--resource=nodes",
                     "--non-resource-url=/logs/*"]),
    ("aggregated-clusterrole", ["create", "clusterrole", "acr",
                                "--aggregation-rule=rbac.example.com/aggregate=true"]),
    ("clusterrolebinding", ["create", "clusterrolebinding", "crb", "--clusterrole=cr",
                            "--group=devs", "--serviceaccount=pb:sa"]),
    ("docker-registry-secret", ["create", "secret", "docker-registry", "reg",
                                "--docker-server=r.example.com", "--docker-username=u",
                                "--docker-password=p"]),
    ("clusterip-service", ["create", "service", "clusterip", "headless", "--clusterip=None"]),
    ("externalname-service", ["create", "service", "externalname", "ext",
                              "--external-name=example.com"]),
    ("loadbalancer-service", ["create", "service", "loadbalancer", "lb", "--tcp=443:8443"]),
    ("job-from-cronjob", ["create", "job", "manual", "--from=cronjob/nightly"]),  # GETs it
    ("expose", ["expose", "deployment", "web", "--port=80", "--target-port=8080"]),
]


@pytest.fixture(scope="module")
def kubectl_server(tmp_path_factory: pytest.TempPathFactory) -> Any:
    with TestAPIServer() as server:
        home = tmp_path_factory.mktemp("kubectl-home")
        assert run_kubectl(server, home, "create", "namespace", "pb").returncode == 0
        assert run_kubectl(server, home, "-n", "pb", "create", "cronjob", "nightly",
                           "--image=busybox", "--schedule=0 0 * * *").returncode == 0
        assert run_kubectl(server, home, "-n", "pb", "create", "deployment", "web",
                           "--image=nginx").returncode == 0
        yield server, home


def is_empty(value: Any) -> bool:
    if isinstance(value, dict):
        return all(is_empty(v) for v in value.values())
    return value in (0, "", False)


def volatile_free(obj: dict[str, Any]) -> dict[str, Any]:
    """Without uid, times and managedFields, and without an all-zero ``status``: kubectl
    prints the protobuf answer from a Go struct, whose value-typed status always prints
    (``{}``, ``{"loadBalancer": {}}``, a PDB's zero counters); the JSON answer it prints as
    the server sent it. The uid is also cut from where the server copies it (a Job's
    generated selector and labels)."""
    uid = obj["metadata"].get("uid")
    if uid:
        obj = json.loads(json.dumps(obj).replace(uid, "UID"))
    metadata = {k: v for k, v in obj["metadata"].items()
                if k not in ("uid", "creationTimestamp", "managedFields")}
    rest = {k: v for k, v in obj.items() if not (k == "status" and is_empty(v))}
    return {**rest, "metadata": metadata}


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not on PATH")
@pytest.mark.parametrize(("kind", "args"), KUBECTL_CREATES, ids=[k for k, _ in KUBECTL_CREATES])
def test_kubectls_protobuf_create_stores_what_its_json_create_stores(
    kubectl_server: Any, tmp_path: Path, kind: str, args: list[str]
) -> None:
    """``kubectl create <kind> --dry-run=server -o json`` goes out and comes back in protobuf;
    the object kubectl builds (``--dry-run=client``) sent as JSON (``create -f``, the
    dynamic client) must come back the same from the test server."""
    server, home = kubectl_server

    def kubectl(command: list[str], dry_run: str) -> dict[str, Any]:
        end = command.index("--") if "--" in command else len(command)  # before the argv
        flags = [f"--dry-run={dry_run}", "-o", "json"]
        done = run_kubectl(server, home, "-n", "pb", *command[:end], *flags, *command[end:])
        assert done.returncode == 0, done.stderr
        result: dict[str, Any] = json.loads(done.stdout)
        return result

    over_protobuf = kubectl(args, "server")
    manifest = tmp_path / f"{kind}.json"
    manifest.write_text(json.dumps(kubectl(args, "client")))
    over_json = kubectl(["create", "-f", str(manifest)], "server")
    assert volatile_free(over_protobuf) == volatile_free(over_json)


KUBECTL_OUTPUT = SHARED / "fidelity" / "transcripts" / "kubectl.kubectl-output.txt"


def printed(command: str) -> str:
    """What kubectl printed for ``$ <command>`` in the recording."""
    text = KUBECTL_OUTPUT.read_text()
    start = text.index(f"$ {command}\n") + len(command) + 3
    return text[start:text.index("\n$ ", start) + 1]


def normalised(yaml_text: str) -> str:
    """Server-chosen values (uid, resourceVersion, creation time) replaced by placeholders."""
    lines = []
    for line in yaml_text.splitlines():
        key = line.strip().split(":", 1)[0]
        if key in ("uid", "resourceVersion", "creationTimestamp"):
            line = f"{line.split(':', 1)[0]}: <{key}>"
        lines.append(line)
    return "\n".join(lines).strip()


@needs_recordings
@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not on PATH")
def test_kubectl_prints_what_it_printed_against_kube_apiserver(tmp_path: Path) -> None:
    """The recorded protobuf steps (seq 90, 92), as kubectl printed them."""
    commands = [
        "kubectl create configmap dry -n fid-kubectl --from-literal=a=b --dry-run=server -o yaml",
        "kubectl create configmap proto -n fid-kubectl --from-literal=a=b",
        "kubectl get configmap proto -n fid-kubectl -o yaml",
    ]
    with TestAPIServer() as server:
        assert run_kubectl(server, tmp_path, "create", "namespace", "fid-kubectl").returncode == 0
        for command in commands:
            done = run_kubectl(server, tmp_path, *command.split()[1:])
            assert normalised(done.stdout) == normalised(printed(command)), done.stderr


# -- the table against the descriptors compiled into kubectl -----------------------------------

def compiled_descriptors(binary: Path) -> dict[str, dict[int, tuple[str, str]]]:
    """Message (named as the OpenAPI names it) -> field number -> (proto name, type name),
    from the gzipped ``FileDescriptorProto``s that gogo-protobuf compiles into every Go binary
    linking k8s.io/api (``generated.pb.go``'s ``fileDescriptor_*``): the ``generated.proto``
    files of the kubectl release at hand, an independent source for the table's numbers."""
    data = binary.read_bytes()
    messages: dict[str, dict[int, tuple[str, str]]] = {}

    def walk(message: bytes, prefix: str) -> None:
        parts = {1: b"", 2: [], 3: []}  # name, fields, nested messages
        for number, _, value in wire_fields(message):
            if number == 1:
                parts[1] = value
            elif number in (2, 3):
                parts[number].append(value)
        name = prefix + bytes(parts[1]).decode()
        messages[name] = {}
        for field in parts[2]:
            values = {number: value for number, _, value in wire_fields(field)}
            messages[name][values[3]] = (values[1].decode(), values.get(6, b"").decode())
        for nested in parts[3]:
            walk(nested, name + ".")

    start = data.find(b"\x1f\x8b\x08\x00\x00\x00\x00\x00")
    while start >= 0:
        try:
            file = zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data[start:start + 1 << 20])
        except zlib.error:
            file = b""
        if file[:1] == b"\x0a" and b"generated.proto" in file[:200]:
            package, bodies = "", []
            for number, _, value in wire_fields(file):
                if number == 2:
                    package = value.decode().replace("k8s.io.", "k8s.", 1)
                elif number == 4:
                    bodies.append(value)
            for body in bodies:
                walk(body, f"io.{package}.")
        start = data.find(b"\x1f\x8b\x08\x00\x00\x00\x00\x00", start + 1)
    return messages


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not on PATH")
def test_the_table_agrees_with_the_protos_compiled_into_kubectl() -> None:
    """Every numbered field that kubectl's release also has (its message in the same group
    version, else in a sibling version the type was copied from) has that number there,
    under its name (the proto name is the struct tag's ``name=``: ``uID``, ``Webhooks``; an
    inline struct's field is typed with that struct); and no field left ``?`` is numbered
    there."""
    compiled = compiled_descriptors(Path(shutil.which("kubectl") or ""))
    assert len(compiled) > 1000  # kubectl v1.32: 67 generated.proto files
    checked, wrong = 0, []
    for name, fields_ in FIELDS.items():
        group, _, message = name.rpartition(".")
        group = group.rpartition(".")[0]
        found = compiled.get(name) or next(
            (compiled[f"{group}.{version}.{message}"] for version in ("v1beta1", "v1alpha1")
             if f"{group}.{version}.{message}" in compiled), None)
        if found is None:
            continue
        by_name = {proto.lower(): number for number, (proto, _) in found.items()}
        for field, (number, flag) in fields_.items():
            if flag == "?":
                if field.lower() in by_name:
                    wrong.append(f"{name}.{field}: ? but {by_name[field.lower()]}")
                continue
            if number not in found:  # newer than kubectl's release
                continue
            proto, type_name = found[number]
            inline = field.startswith("@") and type_name.endswith("." + field[1:])
            if proto.lower() != field.lower() and not inline:
                wrong.append(f"{name}.{field}={number}: kubectl's {number} is {proto}")
            checked += 1
    assert wrong == []
    assert checked > 1700
