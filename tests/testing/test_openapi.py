"""/openapi/v3 and /openapi/v2 of the test server: the shipped built-in documents and the
documents of installed CRDs, faithful enough for kubectl and for kgen's own OpenAPI loader."""

from __future__ import annotations

import copy
import shutil
import subprocess
from pathlib import Path
from typing import Any

import orjson
import pytest
import urllib3

from kgen.diagnostics import Location
from kgen.load.documents import Document
from kgen.load.openapi import OpenAPIKind, load_openapi
from kgen_runtime.testing import TestAPIServer
from tests.testing._support import FOO_CRD, Api

SHARED_OPENAPI = Path(__file__).resolve().parents[2].parent / "shared" / "openapi"


def fetch(api: Api, path: str, **headers: str) -> urllib3.BaseHTTPResponse:
    return api.http.request("GET", api.url + path, headers=headers, redirect=False)


def test_v3_discovery_lists_every_served_group_version_with_its_hash(api: Api) -> None:
    status, index = api.get("/openapi/v3")
    assert status == 200
    paths = index["paths"]
    assert {"api/v1", "apis/apps/v1", "apis/batch/v1"} <= set(paths)
    url = paths["apis/apps/v1"]["serverRelativeURL"]
    assert url.startswith("/openapi/v3/apis/apps/v1?hash=")
    response = fetch(api, url)
    assert response.status == 200
    assert response.headers["Etag"] == '"' + url.split("hash=")[1] + '"'
    assert response.headers["Cache-Control"] == "public, immutable"
    document = orjson.loads(response.data)
    assert "io.k8s.api.apps.v1.Deployment" in document["components"]["schemas"]


@pytest.mark.skipif(not SHARED_OPENAPI.is_dir(), reason="../shared/openapi is not there")
def test_built_in_documents_are_the_real_servers(api: Api) -> None:
    for name in ("api_v1.json", "apis_apps_v1.json", "apis_coordination.k8s.io_v1.json"):
        path = "/openapi/v3/" + name.removesuffix(".json").replace("_", "/")
        assert api.get(path) == (200, orjson.loads((SHARED_OPENAPI / name).read_bytes()))


def test_a_stale_hash_is_redirected_to_the_current_one(api: Api) -> None:
    current = api.get("/openapi/v3")[1]["paths"]["api/v1"]["serverRelativeURL"]
    response = fetch(api, "/openapi/v3/api/v1?hash=0123")
    assert (response.status, response.headers["Location"]) == (301, current)
    assert api.get("/openapi/v3/apis/nothing.example.com/v1")[0] == 404


def crd_kinds(api: Api, path: str) -> tuple[list[OpenAPIKind], dict[str, Any]]:
    document = api.get(path)[1]
    sources, problems = load_openapi([Document(Location(path), document)])
    assert problems == []
    return list(sources[0].kinds), document


def test_installed_crds_get_a_document_kgen_can_generate_from(crd_api: Api) -> None:
    paths = crd_api.get("/openapi/v3")[1]["paths"]
    url = paths["apis/samplecontroller.k8s.io/v1alpha1"]["serverRelativeURL"]
    kinds, document = crd_kinds(crd_api, url.split("?")[0])
    assert kinds == [OpenAPIKind(
        group="samplecontroller.k8s.io", version="v1alpha1", kind="Foo",
        schema="io.k8s.samplecontroller.v1alpha1.Foo", plural="foos", namespaced=True,
        subresources=("scale", "status"))]
    schemas = document["components"]["schemas"]
    foo = schemas["io.k8s.samplecontroller.v1alpha1.Foo"]
    crd_spec = FOO_CRD["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    assert foo["properties"]["spec"] == crd_spec
    assert foo["properties"]["metadata"]["allOf"] == [
        {"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}]
    assert schemas["io.k8s.samplecontroller.v1alpha1.FooList"][
        "x-kubernetes-group-version-kind"] == [
        {"group": "samplecontroller.k8s.io", "kind": "FooList", "version": "v1alpha1"}]
    refs = _refs(document)
    assert refs and all(ref.removeprefix("#/components/schemas/") in schemas for ref in refs
                        if not ref.endswith("autoscaling.v1.Scale"))


def test_a_cluster_scoped_crd_without_subresources(crd_api: Api) -> None:
    crd = copy.deepcopy(FOO_CRD)
    crd["metadata"]["name"] = "bazs.example.com"
    crd["spec"].update(group="example.com", scope="Cluster",
                       names={"plural": "bazs", "singular": "baz", "kind": "Baz"})
    crd["spec"]["versions"][0]["subresources"] = {}
    assert crd_api.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)[0] == 201
    kinds, document = crd_kinds(crd_api, "/openapi/v3/apis/example.com/v1alpha1")
    assert [(k.kind, k.plural, k.namespaced, k.subresources) for k in kinds] == [
        ("Baz", "bazs", False, ())]
    assert "/apis/example.com/v1alpha1/bazs/{name}" in document["paths"]
    assert crd_api.delete("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
                          "bazs.example.com")[0] == 200
    assert "apis/example.com/v1alpha1" not in crd_api.get("/openapi/v3")[1]["paths"]


def test_v2_is_swagger_with_every_definition(crd_api: Api) -> None:
    status, swagger = crd_api.get("/openapi/v2")
    assert status == 200 and swagger["swagger"] == "2.0"
    definitions = swagger["definitions"]
    deployment = definitions["io.k8s.api.apps.v1.Deployment"]
    assert deployment["properties"]["spec"] == {
        "$ref": "#/definitions/io.k8s.api.apps.v1.DeploymentSpec"}
    assert "io.k8s.samplecontroller.v1alpha1.Foo" in definitions
    assert not [ref for ref in _refs(swagger) if not ref.startswith("#/definitions/")]


def _refs(value: Any) -> list[str]:
    if isinstance(value, dict):
        own = [value["$ref"]] if isinstance(value.get("$ref"), str) else []
        return own + [r for v in value.values() for r in _refs(v)]
    if isinstance(value, list):
        return [r for v in value for r in _refs(v)]
    return []


@pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not on PATH")
def test_kubectl_explain_reads_the_crd_document(
    api_server: TestAPIServer, crd_api: Api, tmp_path: Path
) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        "apiVersion: v1\nkind: Config\n"
        f"clusters: [{{name: t, cluster: {{server: '{api_server.url}'}}}}]\n"
        "contexts: [{name: t, context: {cluster: t, user: u}}]\n"
        "users: [{name: u, user: {}}]\ncurrent-context: t\n")
    done = subprocess.run(
        [str(shutil.which("kubectl")), "explain", "foos.spec", "--kubeconfig", str(kubeconfig)],
        capture_output=True, text=True, timeout=60, check=False, env={"HOME": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert "deploymentName" in done.stdout and "replicas" in done.stdout
