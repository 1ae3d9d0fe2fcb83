"""Server-side printing: a get or list asked for as a meta.k8s.io Table (kubectl's way)."""

from __future__ import annotations

import re
from typing import Any

import orjson

from kgen_runtime.groupversion import GroupVersionResource
from kgen_runtime.meta import Unstructured
from kgen_runtime.rest import Request
from tests.conformance._backends import Backend
from tests.conformance._foos import foo

TABLE = ("application/json;as=Table;v=v1;g=meta.k8s.io,"
         "application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json")
_SECONDS = re.compile(r"\d+s")


def as_table(backend: Backend, path: str) -> dict[str, Any]:
    response = backend.clientset.transport.send(Request("GET", path,
                                                        headers=(("Accept", TABLE),)))
    try:
        assert response.status == 200, response.read()
        body: dict[str, Any] = orjson.loads(response.read())
    finally:
        response.close()
    return body


def test_custom_resources_without_printer_columns_print_name_and_age(backend: Backend) -> None:
    backend.foos.create(foo("a"))

    body = as_table(backend, f"/apis/samplecontroller.k8s.io/v1alpha1/namespaces/"
                             f"{backend.namespace}/foos")

    assert (body["kind"], body["apiVersion"]) == ("Table", "meta.k8s.io/v1")
    assert [(c["name"], c["type"], c["format"], c["priority"])
            for c in body["columnDefinitions"]] == [("Name", "string", "name", 0),
                                                    ("Age", "date", "", 0)]
    [row] = body["rows"]
    assert row["cells"][0] == "a" and _SECONDS.fullmatch(row["cells"][1])
    assert (row["object"]["kind"], row["object"]["apiVersion"]) == (
        "PartialObjectMetadata", "meta.k8s.io/v1")
    assert row["object"]["metadata"]["name"] == "a"
    assert body["metadata"]["resourceVersion"]


def test_a_configmap_prints_its_data_count(backend: Backend) -> None:
    configmaps = backend.clientset.dynamic.resource(
        GroupVersionResource("", "v1", "configmaps")).namespace(backend.namespace)
    configmaps.create(Unstructured.model_validate(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "printed"},
         "data": {"a": "1", "b": "2"}}))
    try:
        body = as_table(backend, f"/api/v1/namespaces/{backend.namespace}/configmaps/printed")
    finally:
        configmaps.delete("printed")

    assert [c["name"] for c in body["columnDefinitions"]] == ["Name", "Data", "Age"]
    [row] = body["rows"]
    assert row["cells"][:2] == ["printed", 2] and _SECONDS.fullmatch(row["cells"][2])
