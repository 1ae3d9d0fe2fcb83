"""The test server's answers where kube-apiserver's are fixed by its handlers rather than by
a registry strategy: ``/version``, discovery, the OpenAPI index, unknown paths, and the
serialisation of errors and lists. Expected values are those of the recorded v1.36.2 server
(../shared/fidelity/transcripts) and the Go sources named in the server's comments."""

from __future__ import annotations

import orjson
import pytest

from tests.testing._support import FOO_CRD, Api

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
DELETE_OPTIONS = {"apiVersion": "v1", "kind": "DeleteOptions"}


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



def test_delete_preconditions_fail_with_before_delete_s_conflict(api: Api) -> None:
    cms = "/api/v1/namespaces/default/configmaps"
    created = api.post(cms, {"apiVersion": "v1", "kind": "ConfigMap",
                             "metadata": {"name": "cm1"}})[1]
    uid, version = created["metadata"]["uid"], created["metadata"]["resourceVersion"]
    stale_version = str(int(version) + 100)
    stale = api.delete(f"{cms}/cm1", {**DELETE_OPTIONS,
                                      "preconditions": {"resourceVersion": stale_version}})
    assert stale == (409, {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": f'Operation cannot be fulfilled on ConfigMap "cm1": the ResourceVersion in '
                   f"the precondition ({stale_version}) does not match the ResourceVersion in "
                   f"record ({version}). The object might have been modified",
        "reason": "Conflict", "details": {"name": "cm1", "kind": "ConfigMap"}, "code": 409})
    other = "00000000-0000-0000-0000-000000000000"
    status, body = api.delete(f"{cms}/cm1", {**DELETE_OPTIONS, "preconditions": {"uid": other}})
    assert (status, body["message"]) == (
        409, f'Operation cannot be fulfilled on ConfigMap "cm1": the UID in the precondition '
             f"({other}) does not match the UID in record ({uid}). The object might have been "
             f"deleted and then recreated")


def test_the_legacy_watch_path_watches_one_object_by_name(api: Api) -> None:
    cms = "/api/v1/namespaces/default/configmaps"
    for name in ("a", "b"):
        api.post(cms, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}})
    events = api.watch("/api/v1/watch/namespaces/default/configmaps/b", resourceVersion="0",
                       timeoutSeconds="1")
    assert [(event["type"], event["object"]["metadata"]["name"]) for event in events] == [
        ("ADDED", "b")]


FOOS_CRD_NS = "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/default/foos"
PARTIAL_LIST = ("application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,"
                "application/json")


def _foo(name: str) -> dict[str, object]:
    return {"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
            "metadata": {"name": name, "labels": {"app": "web"}},
            "spec": {"deploymentName": name}}


def test_a_custom_resource_list_always_carries_continue(api: Api) -> None:
    assert api.post(CRDS, FOO_CRD)[0] == 201
    api.post(FOOS_CRD_NS, _foo("a"))
    status, body = api.get(FOOS_CRD_NS)
    assert (status, body["metadata"]["continue"]) == (200, "")
    assert "continue" not in api.get("/api/v1/namespaces/default/configmaps")[1]["metadata"]


def test_a_metadata_only_list_has_partial_object_metadata_items(api: Api) -> None:
    assert api.post(CRDS, FOO_CRD)[0] == 201
    created = api.post(FOOS_CRD_NS, _foo("a"))[1]
    status, body = api.call("GET", FOOS_CRD_NS, headers={"Accept": PARTIAL_LIST})
    assert status == 200
    assert body == {
        "kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1",
        "metadata": {"resourceVersion": body["metadata"]["resourceVersion"]},
        "items": [{"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                   "metadata": created["metadata"]}]}
    one = api.call("GET", f"{FOOS_CRD_NS}/a", headers={
        "Accept": "application/json;as=PartialObjectMetadata;v=v1;g=meta.k8s.io"})
    assert one == (200, {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                         "metadata": created["metadata"]})


def test_a_table_of_custom_resources_leaves_out_an_empty_continue(api: Api) -> None:
    assert api.post(CRDS, FOO_CRD)[0] == 201
    api.post(FOOS_CRD_NS, _foo("a"))
    status, table = api.call("GET", FOOS_CRD_NS, headers={
        "Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})
    assert (status, table["kind"], list(table["metadata"])) == (200, "Table", ["resourceVersion"])


def test_a_generated_name_cuts_the_prefix_to_58_characters(api: Api) -> None:
    status, body = api.post("/api/v1/namespaces/default/configmaps", {
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "g" * 70}})
    name = body["metadata"]["name"]
    assert (status, len(name), name[:58]) == (201, 63, "g" * 58)


def test_a_too_long_generate_name_gets_the_length_error_alone(api: Api) -> None:
    prefix = "g" * 300
    status, body = api.post("/api/v1/namespaces/default/configmaps", {
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": prefix}})
    assert (status, body["details"]["causes"]) == (422, [{
        "reason": "FieldValueInvalid", "field": "metadata.generateName",
        "message": f'Invalid value: "{prefix}": must be no more than 253 characters'}])


def test_empty_metadata_maps_and_lists_do_not_survive_a_write(api: Api) -> None:
    assert api.post(CRDS, FOO_CRD)[0] == 201
    body = _foo("a")
    body["metadata"] = {"name": "a", "labels": {}, "annotations": {}, "finalizers": [],
                        "generateName": ""}
    status, created = api.post(FOOS_CRD_NS, body)
    assert status == 201
    assert not {"labels", "annotations", "finalizers", "generateName"} & set(created["metadata"])
    assert "f:metadata" not in created["metadata"]["managedFields"][0]["fieldsV1"]
    status, cm = api.post("/api/v1/namespaces/default/configmaps", {
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c", "labels": {}}})
    assert (status, "labels" in cm["metadata"]) == (201, False)


AGGREGATED = ("application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
              "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,"
              "application/json")


def test_aggregated_discovery_lists_groups_in_priority_order_then_crds(api: Api) -> None:
    assert api.post(CRDS, FOO_CRD)[0] == 201
    response = api.http.request("GET", api.url + "/apis", headers={"Accept": AGGREGATED})
    assert (response.status, response.headers["Content-Type"]) == (
        200, "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList")
    body = orjson.loads(response.data)
    names = [item["metadata"]["name"] for item in body["items"]]
    assert (body["kind"], body["apiVersion"]) == ("APIGroupDiscoveryList",
                                                  "apidiscovery.k8s.io/v2")
    assert names[:3] == ["apiregistration.k8s.io", "apps", "events.k8s.io"]
    assert names[-1] == "samplecontroller.k8s.io"
    autoscaling = next(item for item in body["items"] if item["metadata"]["name"] ==
                       "autoscaling")
    assert [version["version"] for version in autoscaling["versions"]] == ["v2", "v1"]
    foos = body["items"][-1]["versions"][0]["resources"][0]
    assert foos["verbs"] == ["delete", "deletecollection", "get", "list", "patch", "create",
                             "update", "watch"]
    assert foos["responseKind"] == {"group": "samplecontroller.k8s.io", "version": "v1alpha1",
                                    "kind": "Foo"}


def test_aggregated_discovery_answers_304_to_its_etag(api: Api) -> None:
    first = api.http.request("GET", api.url + "/api", headers={"Accept": AGGREGATED})
    core = orjson.loads(first.data)["items"]
    assert core[0]["metadata"] == {}
    configmaps = next(r for r in core[0]["versions"][0]["resources"]
                      if r["resource"] == "configmaps")
    assert configmaps["shortNames"] == ["cm"]
    again = api.http.request("GET", api.url + "/api", headers={
        "Accept": AGGREGATED, "If-None-Match": first.headers["ETag"]})
    assert (again.status, again.data, "Content-Type" in again.headers) == (304, b"", False)


def test_plain_json_discovery_stays_the_legacy_document(api: Api) -> None:
    assert api.get("/api")[1]["kind"] == "APIVersions"


def test_a_crd_s_legacy_discovery_has_its_verbs_and_storage_version_hash(api: Api) -> None:
    assert api.post(CRDS, FOO_CRD)[0] == 201
    foos = api.get("/apis/samplecontroller.k8s.io/v1alpha1")[1]["resources"][0]
    assert (foos["verbs"], foos["storageVersionHash"]) == (
        ["delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"],
        "H8mNWb07qhE=")  # base64(sha256("samplecontroller.k8s.io/v1alpha1/Foo")[:8])


SSARS = "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"


def test_a_self_subject_access_review_is_allowed_as_for_the_admin(api: Api) -> None:
    spec = {"resourceAttributes": {"verb": "delete", "resource": "pods", "namespace": "x"}}
    assert api.post(SSARS, {"apiVersion": "authorization.k8s.io/v1",
                            "kind": "SelfSubjectAccessReview", "spec": spec}) == (201, {
        "kind": "SelfSubjectAccessReview", "apiVersion": "authorization.k8s.io/v1",
        "metadata": {}, "spec": spec, "status": {"allowed": True}})
    status, body = api.post(SSARS, {"spec": {}})
    assert (status, body["details"]["causes"][0]["field"]) == (422, "spec.resourceAttributes")
    assert api.get(SSARS)[0] == 405


def test_the_openapi_index_is_served_as_go_s_serve_content_does(api: Api) -> None:
    index = api.http.request("GET", api.url + "/openapi/v3")
    assert index.headers["Content-Type"] == "text/plain; charset=utf-8"
    url = orjson.loads(index.data)["paths"]["api/v1"]["serverRelativeURL"]
    unchanged = api.http.request("GET", api.url + "/openapi/v3", headers={
        "If-Modified-Since": index.headers["Last-Modified"]})
    assert (unchanged.status, unchanged.data) == (304, b"")
    document = api.http.request("GET", api.url + url)
    again = api.http.request("GET", api.url + url, headers={
        "If-None-Match": document.headers["ETag"]})
    assert (again.status, again.data) == (304, b"")


def test_unsupported_write_options_are_invalid_options(api: Api) -> None:
    cms = "/api/v1/namespaces/default/configmaps"
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    status, refused = api.call("POST", cms, body, query={"dryRun": "Some",
                                                         "fieldValidation": "Loud"})
    assert (status, refused["message"], refused["details"]["kind"]) == (
        422, 'CreateOptions.meta.k8s.io "" is invalid: [dryRun: Unsupported value: ["Some"]: '
             'supported values: "All", fieldValidation: Unsupported value: "Loud": supported '
             'values: "", "Ignore", "Strict", "Warn"]', "CreateOptions")
    api.post(cms, body)
    status, refused = api.patch(f"{cms}/c", {}, "application/apply-patch+yaml")
    assert (status, refused["message"]) == (
        422, 'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is '
             "required for apply patch")


def test_a_patch_in_no_patch_media_type_gets_go_restful_s_415(api: Api) -> None:
    cms = "/api/v1/namespaces/default/configmaps"
    api.post(cms, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}})
    assert api.patch(f"{cms}/c", {}, "application/json") == (415, {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "415: Unsupported Media Type", "reason": "UnsupportedMediaType",
        "details": {}, "code": 415})
