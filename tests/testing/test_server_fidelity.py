"""The test server's answers where kube-apiserver's are fixed by its handlers rather than by
a registry strategy: ``/version``, discovery, the OpenAPI index, unknown paths, and the
serialisation of errors and lists. Expected values are those of the recorded v1.36.2 server
(../shared/fidelity/transcripts) and the Go sources named in the server's comments."""

from __future__ import annotations

import pytest

from tests.testing._support import FOO_CRD, Api

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def test_version_has_the_fields_of_kube_apiserver_v1_36(api: Api) -> None:
    status, body = api.get("/version")
    assert status == 200
    assert list(body) == [
        "major", "minor", "emulationMajor", "emulationMinor", "minCompatibilityMajor",
        "minCompatibilityMinor", "gitVersion", "gitCommit", "gitTreeState", "buildDate",
        "goVersion", "compiler", "platform"]
    assert (body["major"], body["minor"], body["minCompatibilityMinor"], body["gitVersion"],
            body["compiler"]) == ("1", "36", "35", "v1.36.2", "gc")


@pytest.mark.parametrize("path", [
    "/totally/unknown/path",
    "/apis/nope.example.com/v1/namespaces/default/things",
    "/apis/samplecontroller.k8s.io/v9/namespaces/default/foos",
])
def test_paths_no_handler_claims_get_go_s_plain_404_page(api: Api, path: str) -> None:
    assert api.post(CRDS, FOO_CRD)[0] == 201
    response = api.http.request("GET", api.url + path)
    assert (response.status, response.headers["Content-Type"], response.data) == (
        404, "text/plain; charset=utf-8", b"404 page not found\n")


@pytest.mark.parametrize("path", [
    "/api/v1/namespaces/default/nopes",
    "/apis/apps/v9/namespaces/default/deployments",
    "/api/v1/namespaces/default/configmaps/base/status",
])
def test_unknown_routes_of_built_in_groups_get_a_status_with_empty_details(
        api: Api, path: str) -> None:
    assert api.get(path) == (404, {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "the server could not find the requested resource", "reason": "NotFound",
        "details": {}, "code": 404})


def test_a_method_a_route_lacks_gets_405_with_empty_details(api: Api) -> None:
    status, body = api.put("/api/v1/namespaces/default/configmaps", {})
    assert (status, body["message"], body["details"]) == (
        405, "the server does not allow this method on the requested resource", {})


def test_status_details_leave_out_an_empty_name(api: Api) -> None:
    status, body = api.post("/api/v1/namespaces/default/configmaps",
                            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {}})
    assert (status, body["details"]["kind"], "name" in body["details"]) == (
        422, "ConfigMap", False)

