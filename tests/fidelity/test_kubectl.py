"""kubectl itself (skipped when it is not on PATH): client-side apply with its default
validation against /openapi/v3, table output with printer columns, explain, field selectors."""

from __future__ import annotations

import json
import re
import shutil
from typing import Any

import pytest
import yaml

from tests.fidelity._targets import Target

pytestmark = pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not on PATH")

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"


def manifest(app_image: str, sidecar_env: list[dict[str, str]]) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
            "spec": {"selector": {"matchLabels": {"app": "web"}},
                     "template": {"metadata": {"labels": {"app": "web"}}, "spec": {
                         "containers": [
                             {"name": "app", "image": app_image,
                              "ports": [{"containerPort": 8080}]},
                             {"name": "sidecar", "image": "busybox:1.37",
                              "env": sidecar_env}]}}}}


def defaulted(container: dict[str, Any]) -> dict[str, Any]:
    """A container as kube-apiserver stores it."""
    ports = [{**p, "protocol": "TCP"} for p in container.get("ports", ())]
    return {**container, **({"ports": ports} if ports else {}),
            "resources": {}, "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File", "imagePullPolicy": "IfNotPresent"}


def test_apply_twice_stores_what_a_real_server_stores(target: Target) -> None:
    first = manifest("nginx:1.27", [{"name": "A", "value": "1"}])
    second = manifest("nginx:1.28", [{"name": "B", "value": "2"}])
    outputs = [target.kubectl("apply", "-f", "-", stdin=json.dumps(applied))
               for applied in (first, second)]
    assert outputs == ["deployment.apps/web created\n", "deployment.apps/web configured\n"]
    stored = json.loads(target.kubectl("get", "deployment", "web", "-o", "json",
                                       "--show-managed-fields"))
    annotations = stored["metadata"]["annotations"]
    assert json.loads(annotations.pop(LAST_APPLIED)) == {
        **second, "metadata": {"annotations": {}, "name": "web", "namespace": target.namespace}}
    assert (annotations, stored["metadata"]["generation"]) == ({}, 2)
    containers = second["spec"]["template"]["spec"]["containers"]
    assert stored["spec"] == {
        "replicas": 1, "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600,
        "selector": {"matchLabels": {"app": "web"}},
        "strategy": {"type": "RollingUpdate",
                     "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}},
        "template": {"metadata": {"labels": {"app": "web"}}, "spec": {
            "containers": [defaulted(c) for c in containers],
            "restartPolicy": "Always", "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst", "securityContext": {},
            "schedulerName": "default-scheduler"}}}
    managers = {(m["manager"], m["operation"]) for m in stored["metadata"]["managedFields"]}
    assert managers == {("kubectl-client-side-apply", "Update")}


def test_get_prints_the_kinds_columns(target: Target) -> None:
    target.kubectl("apply", "-f", "-", stdin=json.dumps(manifest("nginx:1.27", [])))
    target.kubectl("apply", "-f", "-", stdin=json.dumps({
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm"},
        "data": {"a": "1", "b": "2"}}))
    target.kubectl("apply", "-f", "-", stdin=json.dumps({
        "apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
        "metadata": {"name": "foo"}, "spec": {"deploymentName": "foo", "replicas": 1}}))
    age = r"\d+s"
    # Foos in their storage version: the preferred one, v1beta1, needs the conversion webhook.
    rows = target.kubectl("get", "deployments,configmaps,foos.v1alpha1.samplecontroller.k8s.io"
                          ).splitlines()
    shape = [re.sub(r"\s+", " ", row).strip() for row in rows if row]
    assert [re.sub(age + "$", "AGE", row) for row in shape] == [
        "NAME READY UP-TO-DATE AVAILABLE AGE", "deployment.apps/web 0/1 0 0 AGE",
        "NAME DATA AGE", "configmap/cm 2 AGE",
        "NAME AGE", "foo.samplecontroller.k8s.io/foo AGE"]
    wide = target.kubectl("get", "deployment", "web", "-o", "wide", "--no-headers").split()
    assert wide[:4] + wide[5:] == ["web", "0/1", "0", "0", "app,sidecar",
                                   "nginx:1.27,busybox:1.37", "app=web"]


def test_explain_reads_the_openapi_documents(target: Target) -> None:
    foo = target.kubectl("explain", "foos.spec")  # the preferred version: v1beta1
    assert [line.split() for line in foo.splitlines() if line.strip()] == [
        ["GROUP:", "samplecontroller.k8s.io"], ["KIND:", "Foo"], ["VERSION:", "v1beta1"],
        ["FIELD:", "spec", "<Object>"], ["DESCRIPTION:"], ["<empty>"], ["FIELDS:"],
        ["deployment", "<Object>"], ["<no", "description>"],
        ["replicas", "<integer>"], ["<no", "description>"]]
    alpha = target.kubectl("explain", "foos.spec",
                           "--api-version=samplecontroller.k8s.io/v1alpha1")
    assert [line.split() for line in alpha.splitlines() if line.strip()][2:] == [
        ["VERSION:", "v1alpha1"], ["FIELD:", "spec", "<Object>"], ["DESCRIPTION:"], ["<empty>"],
        ["FIELDS:"], ["deploymentName", "<string>"], ["<no", "description>"],
        ["replicas", "<integer>"], ["<no", "description>"]]
    replicas = target.kubectl("explain", "deployment.spec.replicas")
    assert replicas.splitlines()[:5] == [
        "GROUP:      apps", "KIND:       Deployment", "VERSION:    v1", "",
        "FIELD: replicas <integer>"]


def test_field_selector_on_pod_phase(target: Target) -> None:
    objects = [{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "default"}},
               *({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": {
                   "automountServiceAccountToken": False,
                   "containers": [{"name": "c", "image": "nginx:1.27"}]}}
                 for name in ("running", "pending"))]
    target.kubectl("apply", "-f", "-", stdin=yaml.safe_dump_all(objects))
    target.kubectl("patch", "pod", "running", "--subresource=status", "--type=merge",
                   "-p", '{"status": {"phase": "Running"}}')
    out = target.kubectl("get", "pods", "--field-selector", "status.phase=Running",
                         "-o", "name")
    assert out == "pod/running\n"
    refused = target.kubectl("get", "pods", "--field-selector", "spec.bogus=x", check=False)
    assert refused.strip() == (
        'Error from server (BadRequest): Unable to find "/v1, Resource=pods" that match label '
        'selector "", field selector "spec.bogus=x": field label not supported: spec.bogus')


def test_create_sends_protobuf_bodies(target: Target) -> None:
    """kubectl create/run send built-in kinds as protobuf and ask for protobuf back."""
    out = target.kubectl("create", "configmap", "cm", "--from-literal=a=1")
    assert out == "configmap/cm created\n"
    stored = json.loads(target.kubectl("get", "configmap", "cm", "-o", "json"))
    assert stored["data"] == {"a": "1"}


@pytest.mark.gap("kubectl validates a v1 List (not a kind of /openapi/v3) with /openapi/v2 in "
                 "protobuf, which the test server does not encode (406)")
def test_apply_of_a_list_validates_with_openapi_v2_protobuf(target: Target) -> None:
    items = [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}
             for name in ("a", "b")]
    out = target.kubectl("apply", "-f", "-", stdin=json.dumps(
        {"apiVersion": "v1", "kind": "List", "items": items}))
    assert out == "configmap/a created\nconfigmap/b created\n"
