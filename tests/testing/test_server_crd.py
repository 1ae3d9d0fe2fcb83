"""CRD installation, schema validation (422 with causes), defaulting, pruning and discovery."""

from __future__ import annotations

import copy
from typing import Any

import orjson

from kgen_runtime.testing import TestAPIServer
from tests.testing._support import FOO_CRD, FOOS, Api, foo

CRDS = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def causes(body: dict[str, Any]) -> list[tuple[str, str, str]]:
    return [(c["field"], c["reason"], c["message"]) for c in body["details"]["causes"]]


def test_posted_crd_is_answered_as_created_then_established_and_served(api: Api) -> None:
    assert api.get(FOOS)[0] == 404
    approved = copy.deepcopy(FOO_CRD)  # a *.k8s.io group: approval is checked
    approved["metadata"]["annotations"] = {
        "api-approved.kubernetes.io": "https://github.com/kubernetes/kubernetes/pull/1"}
    status, created = api.post(CRDS, approved)
    assert status == 201
    # customresourcedefinition/strategy.go PrepareForCreate: only the storage version
    assert created["status"] == {"conditions": None, "acceptedNames": {"plural": "", "kind": ""},
                                 "storedVersions": ["v1alpha1"]}
    status, crd = api.get(f"{CRDS}/foos.samplecontroller.k8s.io")
    established = crd["metadata"]["resourceVersion"]  # the controllers' status write
    assert established != created["metadata"]["resourceVersion"]
    conditions = {c["type"]: c["status"] for c in crd["status"]["conditions"]}
    assert conditions == {"NamesAccepted": "True", "Established": "True",
                          "KubernetesAPIApprovalPolicyConformant": "True"}
    assert crd["status"]["conditions"][2]["message"] == (
        "approved in https://github.com/kubernetes/kubernetes/pull/1")
    assert crd["status"]["acceptedNames"] == FOO_CRD["spec"]["names"]
    assert crd["status"]["storedVersions"] == ["v1alpha1"]
    assert {m["manager"]: (m.get("subresource"), m["fieldsV1"].get("f:status"))
            for m in crd["metadata"]["managedFields"]}["kube-apiserver"] == ("status", {
        "f:acceptedNames": {f"f:{name}": {} for name in FOO_CRD["spec"]["names"]},
        "f:conditions": {f'k:{{"type":"{kind}"}}': {
            ".": {}, "f:lastTransitionTime": {}, "f:message": {}, "f:reason": {},
            "f:status": {}, "f:type": {}} for kind in (
                "Established", "KubernetesAPIApprovalPolicyConformant", "NamesAccepted")}})
    assert api.get(FOOS) == (200, {"kind": "FooList", "apiVersion":
                                   "samplecontroller.k8s.io/v1alpha1",
                                   "metadata": {"resourceVersion": established,
                                                "continue": ""}, "items": []})


def test_a_crd_of_a_protected_group_gets_the_api_approval_condition(api: Api) -> None:
    # apiapproval_controller.go calculateCondition, apihelpers GetAPIApprovalState
    crd = copy.deepcopy(FOO_CRD)
    crd["metadata"]["annotations"] = {"api-approved.kubernetes.io": "unapproved, testing"}
    assert api.post(CRDS, crd)[0] == 201

    status, got = api.get(f"{CRDS}/foos.samplecontroller.k8s.io")

    assert status == 200
    assert got["status"]["conditions"][2] == {
        "type": "KubernetesAPIApprovalPolicyConformant", "status": "False",
        "lastTransitionTime": got["status"]["conditions"][0]["lastTransitionTime"],
        "reason": "UnapprovedAnnotation", "message": 'not approved: "unapproved, testing"'}


def test_discovery_lists_the_crd(crd_api: Api) -> None:
    groups = crd_api.get("/apis")[1]
    assert groups["kind"] == "APIGroupList"
    sample = next(g for g in groups["groups"] if g["name"] == "samplecontroller.k8s.io")
    assert sample["preferredVersion"] == {"groupVersion": "samplecontroller.k8s.io/v1alpha1",
                                          "version": "v1alpha1"}
    resources = crd_api.get("/apis/samplecontroller.k8s.io/v1alpha1")[1]
    assert resources["kind"] == "APIResourceList"
    assert [(r["name"], r["kind"], r["namespaced"]) for r in resources["resources"]] == [
        ("foos", "Foo", True), ("foos/status", "Foo", True), ("foos/scale", "Scale", True)]
    assert crd_api.get("/api")[1]["versions"] == ["v1"]
    core = crd_api.get("/api/v1")[1]
    assert {"configmaps", "namespaces", "pods/status"} <= {r["name"] for r in
                                                            core["resources"]}
    assert crd_api.get("/version")[1]["major"] == "1"
    assert crd_api.get("/apis/samplecontroller.k8s.io")[1]["kind"] == "APIGroup"
    assert crd_api.get("/apis/nope.io/v1")[0] == 404


def test_validation_reports_every_broken_rule(crd_api: Api) -> None:
    body = foo("a", replicas=11, mode="medium", tags=["", "b", "c"])
    body["spec"]["deploymentName"] = "Way-Too-Long-For-The-Schema-Limit"
    status, error = crd_api.post(FOOS, body)
    assert (status, error["reason"], error["code"]) == (422, "Invalid", 422)
    assert error["details"]["name"] == "a"
    assert error["details"]["group"] == "samplecontroller.k8s.io"
    assert error["details"]["kind"] == "Foo"
    assert causes(error) == [
        ("spec.deploymentName", "FieldValueTooLong", "Too long: may not be more than 20 bytes"),
        ("spec.deploymentName", "FieldValueInvalid", 'Invalid value: "Way-Too-Long-For-The-'
         'Schema-Limit": spec.deploymentName in body should match \'^[a-z-]+$\''),
        ("spec.replicas", "FieldValueInvalid",
         "Invalid value: 11: spec.replicas in body should be less than or equal to 10"),
        ("spec.mode", "FieldValueNotSupported",
         'Unsupported value: "medium": supported values: "fast", "slow"'),
        ("spec.tags", "FieldValueTooMany", "Too many: 3: must have at most 2 items"),
        ("spec.tags[0]", "FieldValueInvalid",
         'Invalid value: "": spec.tags[0] in body should be at least 1 chars long'),
    ]
    assert error["message"].startswith('Foo.samplecontroller.k8s.io "a" is invalid: [')


def test_type_required_and_single_cause_message(crd_api: Api) -> None:
    status, error = crd_api.post(FOOS, foo("a", replicas="two"))
    assert status == 422
    assert error["message"] == (
        'Foo.samplecontroller.k8s.io "a" is invalid: spec.replicas: Invalid value: "string": '
        'spec.replicas in body must be of type integer: "string"')  # the value's type name
    status, error = crd_api.post(FOOS, foo("a", replicas=2.5))
    assert error["details"]["causes"][0]["message"] == (
        'Invalid value: "number": spec.replicas in body must be of type integer: "number"')
    missing = foo("b")
    del missing["spec"]["deploymentName"]
    assert causes(crd_api.post(FOOS, missing)[1]) == [
        ("spec.deploymentName", "FieldValueRequired", "Required value")]


def test_int_or_string_nullable_and_embedded_resources(crd_api: Api) -> None:
    assert crd_api.post(FOOS, foo("a", port=80, note=None))[0] == 201
    assert crd_api.post(FOOS, foo("b", port="http"))[0] == 201
    assert causes(crd_api.post(FOOS, foo("c", port=1.5))[1])[0][:2] == (
        "spec.port", "FieldValueTypeInvalid")
    embedded = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {}}
    status, created = crd_api.post(FOOS, foo("d", template=embedded))
    assert status == 201 and created["spec"]["template"] == embedded
    assert [c[0] for c in causes(crd_api.post(FOOS, foo("e", template={"spec": {}}))[1])] == [
        "spec.template.apiVersion", "spec.template.kind"]


def test_defaults_applied_and_unknown_fields_pruned(crd_api: Api) -> None:
    body = foo("a", extra={"kept": {"deep": 1}}, unknown="dropped")
    body["topLevelJunk"] = True
    status, created = crd_api.post(FOOS, body)
    assert status == 201
    assert created["spec"] == {"deploymentName": "dep", "replicas": 1,
                               "extra": {"kept": {"deep": 1}}}
    assert "topLevelJunk" not in created
    status, updated = crd_api.patch(f"{FOOS}/a", {"spec": {"replicas": None, "bogus": 1}})
    assert status == 200 and updated["spec"]["replicas"] == 1 and "bogus" not in updated["spec"]


def test_metadata_is_kept_when_the_schema_declares_it_a_bare_object(api: Api) -> None:
    crd = copy.deepcopy(FOO_CRD)  # as controller-gen writes every CRD
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    schema.setdefault("properties", {})["metadata"] = {"type": "object"}
    assert api.post(CRDS, crd)[0] == 201
    body = foo("a")
    body["metadata"]["labels"] = {"app": "web"}
    status, created = api.post(FOOS, body)
    assert status == 201
    assert (created["metadata"]["name"], created["metadata"]["labels"]) == ("a", {"app": "web"})


def test_updates_are_validated_too(crd_api: Api) -> None:
    crd_api.post(FOOS, foo("a"))
    status, error = crd_api.patch(f"{FOOS}/a", {"spec": {"replicas": 0}})
    assert (status, causes(error)) == (422, [(
        "spec.replicas", "FieldValueInvalid",
        "Invalid value: 0: spec.replicas in body should be greater than or equal to 1")])
    status, error = crd_api.patch(f"{FOOS}/a/status", {"status": {"availableReplicas": "x"}})
    assert (status, causes(error)[0][0]) == (422, "status.availableReplicas")


def test_invalid_crd_manifest_is_refused(api: Api) -> None:
    broken = copy.deepcopy(FOO_CRD)
    del broken["spec"]["scope"]
    status, error = api.post(CRDS, broken)
    assert (status, causes(error)) == (422, [("spec.scope", "FieldValueRequired",
                                               "Required value")])
    misnamed = copy.deepcopy(FOO_CRD)
    misnamed["metadata"]["name"] = "bars.samplecontroller.k8s.io"
    assert causes(api.post(CRDS, misnamed)[1])[0][0] == "metadata.name"


def test_deleting_the_crd_removes_its_objects(crd_api: Api) -> None:
    crd_api.post(FOOS, foo("a"))
    status, _ = crd_api.delete(f"{CRDS}/foos.samplecontroller.k8s.io")
    assert status == 200
    assert crd_api.get(FOOS)[0] == 404
    assert crd_api.post(CRDS, copy.deepcopy(FOO_CRD))[0] == 201
    assert crd_api.get(FOOS)[1]["items"] == []


def test_install_crd_and_multiple_versions(api_server: TestAPIServer, api: Api) -> None:
    crd = copy.deepcopy(FOO_CRD)
    v1 = copy.deepcopy(crd["spec"]["versions"][0])
    v1.update(name="v1", storage=False)
    crd["spec"]["versions"].append(v1)
    installed = api_server.install_crd(crd)
    assert "status" not in crd and "uid" not in crd["metadata"]  # the manifest is untouched
    assert installed["status"]["conditions"][1]["type"] == "Established"
    api.post(FOOS, foo("a"))
    status, other = api.get("/apis/samplecontroller.k8s.io/v1/namespaces/ns/foos/a")
    assert (status, other["apiVersion"]) == (200, "samplecontroller.k8s.io/v1")
    preferred = next(g for g in api.get("/apis")[1]["groups"]
                     if g["name"] == "samplecontroller.k8s.io")["preferredVersion"]
    assert preferred["version"] == "v1"


def test_field_validation_modes(crd_api: Api) -> None:
    body = foo("a", bogus=1)
    status, error = crd_api.call("POST", FOOS, body, query={"fieldValidation": "Strict"})
    assert (status, error["reason"], error["message"]) == (
        400, "BadRequest", 'Foo in version "v1alpha1" cannot be handled as a Foo: strict '
                           'decoding error: unknown field "spec.bogus"')
    response = crd_api.http.request("POST", crd_api.url + FOOS, body=orjson.dumps(body),
                                    headers={"Content-Type": "application/json"})
    assert response.status == 201
    assert response.headers["Warning"] == '299 - "unknown field \\"spec.bogus\\""'
    status, _ = crd_api.call("POST", FOOS, foo("b", bogus=1),
                             query={"fieldValidation": "Ignore"})
    assert status == 201
    assert crd_api.call("POST", FOOS, foo("c"), query={"fieldValidation": "Loud"})[0] == 422


def test_dry_run_writes_nothing(crd_api: Api) -> None:
    _, created = crd_api.post(FOOS, foo("a"))
    rv = created["metadata"]["resourceVersion"]
    status, dry = crd_api.call("POST", FOOS, foo("b"), query={"dryRun": "All"})
    assert status == 201 and dry["spec"]["replicas"] == 1
    assert "resourceVersion" not in dry["metadata"]
    status, dry = crd_api.call("PATCH", f"{FOOS}/a", {"spec": {"replicas": 5}},
                               content_type="application/merge-patch+json",
                               query={"dryRun": "All"})
    assert (status, dry["spec"]["replicas"], dry["metadata"]["generation"]) == (200, 5, 2)
    assert crd_api.delete(f"{FOOS}/a", {"dryRun": ["All"]})[0] == 200
    assert crd_api.call("POST", FOOS, foo("c"), query={"dryRun": "Some"})[0] == 422
    listed = crd_api.get(FOOS)[1]
    assert [i["metadata"]["name"] for i in listed["items"]] == ["a"]
    assert listed["items"][0] == created
    assert listed["metadata"]["resourceVersion"] == rv
