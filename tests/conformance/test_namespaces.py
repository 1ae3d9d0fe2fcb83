"""Namespace lifecycle: Active on create; a deleted namespace is Terminating, what is in it
stays readable while its finalizers hold, and nothing new may be created in it (403).

The namespace keeps a finalized ConfigMap, so every backend holds it Terminating: a bare
cluster (no namespace controller) and the test doubles (whose namespace controller deletes
the contents and waits for that ConfigMap's finalizer) alike.
"""

from __future__ import annotations

import uuid
from contextlib import suppress

import pytest

from kgen_runtime.groupversion import GroupVersionResource
from kgen_runtime.meta import Unstructured
from kgen_runtime.rest.errors import ForbiddenError, NotFoundError
from tests.conformance._backends import Backend

NAMESPACES = GroupVersionResource("", "v1", "namespaces")
CONFIGMAPS = GroupVersionResource("", "v1", "configmaps")


def configmap(name: str, *finalizers: str) -> Unstructured:
    return Unstructured.model_validate({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "finalizers": list(finalizers)}, "data": {"k": "v"}})


def test_a_deleted_namespace_is_terminating_and_refuses_new_content(backend: Backend) -> None:
    dynamic = backend.clientset.dynamic
    namespaces = dynamic.resource(NAMESPACES, namespaced=False)
    name = f"kgen-terminating-{uuid.uuid4().hex[:8]}"
    created = namespaces.create(Unstructured.model_validate(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})).model_dump()
    assert created["status"] == {"phase": "Active"}
    assert created["spec"] == {"finalizers": ["kubernetes"]}
    assert created["metadata"]["labels"] == {"kubernetes.io/metadata.name": name}
    configmaps = dynamic.resource(CONFIGMAPS).namespace(name)
    configmaps.create(configmap("held", "example.com/hold"))
    try:
        namespaces.delete(name)
        terminating = namespaces.get(name).model_dump()
        assert terminating["status"]["phase"] == "Terminating"
        assert terminating["metadata"]["deletionTimestamp"]
        assert configmaps.get("held").model_dump()["data"] == {"k": "v"}
        with pytest.raises(ForbiddenError) as refused:
            configmaps.create(configmap("new"))
        assert refused.value.status.message == (
            f'configmaps "new" is forbidden: unable to create new content in namespace {name} '
            f"because it is being terminated")
    finally:
        with suppress(NotFoundError):
            configmaps.patch("held", {"metadata": {"finalizers": None}})
