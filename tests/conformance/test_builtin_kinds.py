"""Built-in kinds are defaulted and validated by the server: a Deployment's defaults, and the
422 of a selector that misses its template."""

from __future__ import annotations

from contextlib import suppress
from typing import Any

import pytest

from kgen_runtime.groupversion import GroupVersionResource
from kgen_runtime.meta import Unstructured
from kgen_runtime.rest.errors import InvalidError, NotFoundError
from tests.conformance._backends import Backend

DEPLOYMENTS = GroupVersionResource("apps", "v1", "deployments")


def deployment(name: str, template_labels: dict[str, str]) -> Unstructured:
    return Unstructured.model_validate({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {
            "metadata": {"labels": template_labels},
            "spec": {"containers": [{"name": "web", "image": "nginx:1.27"}]}}}})


def test_a_deployment_is_stored_with_the_servers_defaults(backend: Backend) -> None:
    deployments = backend.clientset.dynamic.resource(DEPLOYMENTS).namespace(backend.namespace)
    try:
        spec: dict[str, Any] = deployments.create(
            deployment("web", {"app": "web"})).model_dump()["spec"]
        assert {k: spec[k] for k in ("replicas", "revisionHistoryLimit",
                                     "progressDeadlineSeconds", "strategy")} == {
            "replicas": 1, "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600,
            "strategy": {"type": "RollingUpdate",
                         "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}}}
        pod = spec["template"]["spec"]
        assert {k: pod[k] for k in ("restartPolicy", "terminationGracePeriodSeconds",
                                    "dnsPolicy", "securityContext", "schedulerName")} == {
            "restartPolicy": "Always", "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst", "securityContext": {},
            "schedulerName": "default-scheduler"}
        assert pod["containers"] == [{
            "name": "web", "image": "nginx:1.27", "imagePullPolicy": "IfNotPresent",
            "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File", "resources": {}}]
    finally:
        with suppress(NotFoundError):
            deployments.delete("web")


def test_a_deployment_whose_selector_misses_its_template_is_invalid(backend: Backend) -> None:
    deployments = backend.clientset.dynamic.resource(DEPLOYMENTS).namespace(backend.namespace)
    with pytest.raises(InvalidError) as refused:
        deployments.create(deployment("lost", {"app": "other"}))
    assert [(c.reason, c.field, c.message) for c in refused.value.causes] == [(
        "FieldValueInvalid", "spec.template.metadata.labels",
        'Invalid value: {"app":"other"}: `selector` does not match template `labels`')]
