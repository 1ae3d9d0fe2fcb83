"""Objects as a real kube-apiserver v1.36 writes them back: zero-valued status blocks,
``metadata.generation`` only where the kind's strategy keeps one, the trailing newline of JSON
bodies and a create's ``metadata.resourceVersion`` (each answer is the one recorded in
../shared/fidelity/transcripts)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.testing._support import FOO_CRD, Api

NS = "/api/v1/namespaces/default"
POD_SPEC = {"containers": [{"name": "c", "image": "busybox:1.36"}]}
TEMPLATE = {"metadata": {"labels": {"app": "a"}}, "spec": POD_SPEC}
SELECTOR = {"matchLabels": {"app": "a"}}


def created(api: Api, path: str, body: dict[str, Any]) -> dict[str, Any]:
    status, obj = api.post(path, body)
    assert status == 201, obj
    return obj


@pytest.mark.parametrize(("path", "body", "status"), [
    (f"{NS}/services", {"metadata": {"name": "s"}, "spec": {"ports": [{"port": 80}]}},
     {"loadBalancer": {}}),
    (f"{NS}/replicationcontrollers",
     {"metadata": {"name": "rc"}, "spec": {"selector": {"app": "a"}, "template": TEMPLATE}},
     {"replicas": 0}),
    ("/apis/apps/v1/namespaces/default/deployments",
     {"metadata": {"name": "d"}, "spec": {"selector": SELECTOR, "template": TEMPLATE}}, {}),
    ("/apis/apps/v1/namespaces/default/daemonsets",
     {"metadata": {"name": "ds"}, "spec": {"selector": SELECTOR, "template": TEMPLATE}},
     {"currentNumberScheduled": 0, "numberMisscheduled": 0, "desiredNumberScheduled": 0,
      "numberReady": 0}),
    ("/apis/batch/v1/namespaces/default/jobs",
     {"metadata": {"name": "j"}, "spec": {"template": {"spec": {**POD_SPEC,
                                                                "restartPolicy": "Never"}}}},
     {}),
])
def test_a_create_answers_the_zero_valued_status_go_serialises(
    api: Api, path: str, body: dict[str, Any], status: dict[str, Any]
) -> None:
    assert created(api, path, body)["status"] == status
    assert api.get(f"{path}/{body['metadata']['name']}")[1]["status"] == status


def test_struct_fields_nobody_set_are_written_as_empty_objects(api: Api) -> None:
    """A CronJob's job template and its pod template get ``"metadata":{}`` (builtins #73)."""
    template = {"spec": {"template": {"spec": {**POD_SPEC, "restartPolicy": "OnFailure"}}}}
    cronjob = created(api, "/apis/batch/v1/namespaces/default/cronjobs", {
        "metadata": {"name": "nightly"},
        "spec": {"schedule": "0 3 * * *", "jobTemplate": template}})
    job_template = cronjob["spec"]["jobTemplate"]
    assert (job_template["metadata"], job_template["spec"]["template"]["metadata"]) == ({}, {})


@pytest.mark.parametrize(("path", "body"), [
    (f"{NS}/configmaps", {"metadata": {"name": "cm"}, "data": {"a": "1"}}),
    (f"{NS}/services", {"metadata": {"name": "s"}, "spec": {"ports": [{"port": 80}]}}),
    (f"{NS}/serviceaccounts", {"metadata": {"name": "sa"}}),
    ("/api/v1/namespaces", {"metadata": {"name": "other"}}),
    ("/apis/rbac.authorization.k8s.io/v1/namespaces/default/roles",
     {"metadata": {"name": "r"}, "rules": []}),
    ("/apis/coordination.k8s.io/v1/namespaces/default/leases", {"metadata": {"name": "l"}}),
])
def test_kinds_whose_strategy_keeps_no_generation_have_none(
    api: Api, path: str, body: dict[str, Any]
) -> None:
    assert "generation" not in created(api, path, body)["metadata"]


def test_a_deployment_counts_spec_and_annotation_changes_not_labels(api: Api) -> None:
    """pkg/registry/apps/deployment/strategy.go PrepareForUpdate."""
    path = "/apis/apps/v1/namespaces/default/deployments"
    created(api, path, {"metadata": {"name": "d"},
                        "spec": {"selector": SELECTOR, "template": TEMPLATE}})
    generations = [api.patch(f"{path}/d", patch)[1]["metadata"]["generation"] for patch in (
        {"metadata": {"labels": {"x": "1"}}},
        {"metadata": {"annotations": {"x": "1"}}},
        {"spec": {"replicas": 3}},
    )]
    assert generations == [1, 2, 3]


def test_a_configmap_update_keeps_having_no_generation(api: Api) -> None:
    created(api, f"{NS}/configmaps", {"metadata": {"name": "cm"}, "data": {"a": "1"}})
    status, patched = api.patch(f"{NS}/configmaps/cm", {"data": {"a": "2"}})
    assert (status, "generation" in patched["metadata"]) == (200, False)


def test_json_bodies_end_with_a_newline_as_go_s_encoder_writes_them(api: Api) -> None:
    ok = api.http.request("GET", f"{api.url}/api/v1/namespaces/default/configmaps")
    missing = api.http.request("GET", f"{api.url}/api/v1/namespaces/default/configmaps/none")
    assert (ok.status, missing.status) == (200, 404)
    assert ok.data.endswith(b"}\n") and missing.data.endswith(b"}\n")


@pytest.mark.parametrize("version", ["abc", "0", "", "-1"])
def test_a_create_clears_a_resource_version_that_is_no_positive_number(
    api: Api, version: str
) -> None:
    status, obj = api.post(f"{NS}/configmaps",
                           {"metadata": {"name": "cm", "resourceVersion": version}})
    assert status == 201
    assert obj["metadata"]["resourceVersion"] != version


def test_a_create_carrying_a_resource_version_gets_the_storage_s_plain_500(api: Api) -> None:
    """errors #53: etcd3 store.Create's error, not an API status (no reason)."""
    status, body = api.post(f"{NS}/configmaps",
                            {"metadata": {"name": "withrv", "resourceVersion": "12345"},
                             "data": {"k": "v"}})
    assert (status, body) == (500, {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": "resourceVersion should not be set on objects to be created", "code": 500})
    assert api.get(f"{NS}/configmaps/withrv")[0] == 404


def test_an_update_that_changes_only_managed_field_times_is_a_no_op(crd_api: Api) -> None:
    """crd #21: a PUT of the object as read, its managedFields ``time`` written by another
    clock, keeps the resourceVersion (IgnoreManagedFieldsTimestampsTransformer)."""
    foos = "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/default/foos"
    foo = created(crd_api, foos, {"metadata": {"name": "a"},
                                  "spec": {"deploymentName": "d", "replicas": 1}})
    foo["metadata"]["managedFields"][0]["time"] = "2001-01-01T00:00:00Z"
    status, updated = crd_api.put(f"{foos}/a", foo)
    assert status == 200
    assert updated["metadata"]["resourceVersion"] == foo["metadata"]["resourceVersion"]
    assert updated == crd_api.get(f"{foos}/a")[1]
    crd_api.patch(f"{foos}/a", {"metadata": {"labels": {"next": "write"}}})
    events = crd_api.watch(foos, resourceVersion=foo["metadata"]["resourceVersion"])
    first = next(events)  # no event for the no-op: the first after it is the label change
    assert (first["type"], first["object"]["metadata"]["labels"]) == (
        "MODIFIED", {"next": "write"})
    events.close()


def test_a_status_update_that_changes_nothing_is_a_no_op(crd_api: Api) -> None:
    """The same rule through the status subresource (k8s.io/apiserver rest/update.go, then
    etcd3 store.go ``GuaranteedUpdate``, shared by every update): writing the status as read
    keeps the resourceVersion and sends no watch event (what the Foo reconcilers rely on to
    skip such a write)."""
    foos = "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/default/foos"
    created(crd_api, foos, {"metadata": {"name": "s"},
                            "spec": {"deploymentName": "d", "replicas": 1}})
    status, written = crd_api.put(f"{foos}/s/status", {
        **crd_api.get(f"{foos}/s")[1], "status": {"availableReplicas": 1}})
    assert status == 200
    status, again = crd_api.put(f"{foos}/s/status", written)
    assert status == 200
    assert again == written == crd_api.get(f"{foos}/s")[1]
    crd_api.patch(f"{foos}/s", {"metadata": {"labels": {"next": "write"}}})
    events = crd_api.watch(foos, resourceVersion=written["metadata"]["resourceVersion"])
    first = next(events)  # no event for the no-op: the first after it is the label change
    assert (first["type"], first["object"]["metadata"]["labels"]) == (
        "MODIFIED", {"next": "write"})
    events.close()


def refusal(api: Api, path: str, patch: dict[str, Any]) -> tuple[int, str, list[Any]]:
    status, body = api.patch(path, patch)
    return status, body["message"], body["details"]["causes"]


def test_an_immutable_configmap_refuses_data_changes(api: Api) -> None:
    """builtins #9."""
    created(api, f"{NS}/configmaps", {"metadata": {"name": "cm-frozen"}, "data": {"x": "y"},
                                      "binaryData": {"b": "AA=="}, "immutable": True})
    message = "Forbidden: field is immutable when `immutable` is set"
    assert refusal(api, f"{NS}/configmaps/cm-frozen", {"data": {"x": "z"}}) == (
        422, f'ConfigMap "cm-frozen" is invalid: data: {message}',
        [{"reason": "FieldValueForbidden", "message": message, "field": "data"}])
    assert refusal(api, f"{NS}/configmaps/cm-frozen", {"immutable": False})[2] == [
        {"reason": "FieldValueForbidden", "message": message, "field": "immutable"}]
    assert api.patch(f"{NS}/configmaps/cm-frozen", {"metadata": {"labels": {"a": "b"}}})[0] == (
        200)


def test_a_secret_keeps_its_type_and_immutable_data(api: Api) -> None:
    """builtins #26."""
    created(api, f"{NS}/secrets", {"metadata": {"name": "tls1"}, "type": "kubernetes.io/tls",
                                   "data": {"tls.crt": "", "tls.key": ""}})
    assert refusal(api, f"{NS}/secrets/tls1", {"type": "Opaque"}) == (
        422, 'Secret "tls1" is invalid: type: Invalid value: "Opaque": field is immutable',
        [{"reason": "FieldValueInvalid", "message": 'Invalid value: "Opaque": field is immutable',
          "field": "type"}])
    created(api, f"{NS}/secrets", {"metadata": {"name": "s"}, "data": {"a": "YQ=="},
                                   "immutable": True})
    assert refusal(api, f"{NS}/secrets/s", {"stringData": {"a": "b"}})[2] == [{
        "reason": "FieldValueForbidden",
        "message": "Forbidden: field is immutable when `immutable` is set", "field": "data"}]


def test_a_service_cluster_ip_may_not_change_once_set(api: Api) -> None:
    """builtins #33: the changed clusterIP carries clusterIPs along, which validation
    refuses."""
    service = created(api, f"{NS}/services", {"metadata": {"name": "web"},
                                              "spec": {"ports": [{"port": 80}]}})
    other = "10.0.0.250"
    assert service["spec"]["clusterIP"] != other
    message = f'Invalid value: ["{other}"]: may not change once set'
    assert refusal(api, f"{NS}/services/web", {"spec": {"clusterIP": other}}) == (
        422, f'Service "web" is invalid: spec.clusterIPs[0]: {message}',
        [{"reason": "FieldValueInvalid", "message": message, "field": "spec.clusterIPs[0]"}])


def test_a_role_binding_refuses_a_new_role_ref(api: Api) -> None:
    """builtins #94."""
    bindings = "/apis/rbac.authorization.k8s.io/v1/namespaces/default/rolebindings"
    ref = {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role"}
    created(api, bindings, {"metadata": {"name": "reader-binding"},
                            "roleRef": {**ref, "name": "reader"},
                            "subjects": [{"kind": "User", "name": "u",
                                          "apiGroup": "rbac.authorization.k8s.io"}]})
    message = ('Invalid value: {"APIGroup":"rbac.authorization.k8s.io","Kind":"Role",'
               '"Name":"writer"}: cannot change roleRef')
    assert refusal(api, f"{bindings}/reader-binding", {"roleRef": {**ref, "name": "writer"}}) == (
        422, f'RoleBinding.rbac.authorization.k8s.io "reader-binding" is invalid: roleRef: '
        f'{message}', [{"reason": "FieldValueInvalid", "message": message, "field": "roleRef"}])


def test_a_requested_cluster_ip_outside_the_range_is_refused(api: Api) -> None:
    """builtins #34 (the range is envtest's 10.0.0.0/24, as the recorded server's)."""
    message = ('Invalid value: ["192.168.1.1"]: failed to allocate IP 192.168.1.1: the provided '
               "network does not match the current range")
    assert api.post(f"{NS}/services", {"metadata": {"name": "badip"}, "spec": {
        "clusterIP": "192.168.1.1", "ports": [{"port": 80}]}}) == (422, {
            "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": f'Service "badip" is invalid: spec.clusterIPs: {message}',
            "reason": "Invalid", "details": {"name": "badip", "kind": "Service", "causes": [
                {"reason": "FieldValueInvalid", "message": message, "field": "spec.clusterIPs"}]},
            "code": 422})
    assert api.post(f"{NS}/services", {"metadata": {"name": "inside"}, "spec": {
        "clusterIP": "10.0.0.200", "ports": [{"port": 80}]}})[0] == 201


@pytest.mark.parametrize(("path", "body", "field", "message"), [
    (f"{NS}/secrets", {"metadata": {"name": "badtls"}, "type": "kubernetes.io/tls",
                       "data": {"tls.crt": "Y2VydA=="}}, "data[tls.key]", "Required value"),
    ("/apis/coordination.k8s.io/v1/namespaces/default/leases",
     {"metadata": {"name": "l"}, "spec": {"leaseDurationSeconds": 0}},
     "spec.leaseDurationSeconds", "Invalid value: 0: must be greater than 0"),
    ("/apis/batch/v1/namespaces/default/cronjobs",
     {"metadata": {"name": "c"}, "spec": {"schedule": "every day", "jobTemplate": {"spec": {
         "template": {"spec": {**POD_SPEC, "restartPolicy": "OnFailure"}}}}}},
     "spec.schedule", 'Invalid value: "every day": expected exactly 5 fields, found 2: '
     "[every day]"),
])
def test_kind_rules_of_the_go_validators(
    api: Api, path: str, body: dict[str, Any], field: str, message: str
) -> None:
    """errors #28, builtins #104 and #75."""
    status, refusal = api.post(path, body)
    assert (status, refusal["details"]["causes"]) == (422, [
        {"reason": "FieldValueRequired" if message == "Required value" else "FieldValueInvalid",
         "message": message, "field": field}])


def test_a_job_gets_a_generated_selector_and_its_template_s_labels(api: Api) -> None:
    """builtins #66: PrepareForCreate labels the template and selects the uid; the Job,
    having no labels, gets its template's (SetDefaults_Job)."""
    job = created(api, "/apis/batch/v1/namespaces/default/jobs", {
        "metadata": {"name": "pi"},
        "spec": {"template": {"spec": {**POD_SPEC, "restartPolicy": "Never"}}}})
    uid = job["metadata"]["uid"]
    labels = {"batch.kubernetes.io/controller-uid": uid, "batch.kubernetes.io/job-name": "pi",
              "controller-uid": uid, "job-name": "pi"}
    assert (job["metadata"]["labels"], job["spec"]["template"]["metadata"]["labels"]) == (
        labels, labels)
    assert (job["spec"]["selector"], job["spec"]["manualSelector"]) == (
        {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}, False)
    owned = job["metadata"]["managedFields"][0]["fieldsV1"]
    assert "f:metadata" not in owned and "f:selector" not in owned["f:spec"]


def test_a_crd_gets_its_names_and_conversion_defaults(api: Api) -> None:
    """crd #2: SetDefaults of apiextensions v1."""
    crd = copy.deepcopy(FOO_CRD)
    del crd["spec"]["names"]["listKind"]
    del crd["spec"]["names"]["singular"]
    spec = created(api, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)["spec"]
    assert (spec["names"]["listKind"], spec["names"]["singular"], spec["conversion"]) == (
        "FooList", "foo", {"strategy": "None"})


@pytest.mark.parametrize(("path", "spec", "selector"), [
    ("/apis/apps/v1/namespaces/default/deployments",
     {"selector": {"matchLabels": {"app": "a"}, "matchExpressions": [
         {"key": "tier", "operator": "In", "values": ["x", "y"]}]},
      "template": {**TEMPLATE, "metadata": {"labels": {"app": "a", "tier": "x"}}}},
     "app=a,tier in (x,y)"),
    (f"{NS}/replicationcontrollers", {"selector": {"app": "a"}, "template": TEMPLATE},
     "app=a"),
])
def test_a_workload_s_scale_shows_its_selector(
    api: Api, path: str, spec: dict[str, Any], selector: str
) -> None:
    """builtins #41: the Scale's status.selector is the selector's string form."""
    created(api, path, {"metadata": {"name": "w"}, "spec": spec})
    status, scale = api.get(f"{path}/w/scale")
    assert (status, scale["status"]) == (200, {"replicas": 0, "selector": selector})


def test_a_namespace_s_creator_owns_neither_its_finalizer_nor_its_phase(api: Api) -> None:
    """builtins #1: the namespace strategy's PrepareForCreate follows the field manager."""
    namespace = created(api, "/api/v1/namespaces", {"metadata": {"name": "fid",
                                                                  "labels": {"a": "b"}}})
    assert (namespace["spec"], namespace["status"]) == (
        {"finalizers": ["kubernetes"]}, {"phase": "Active"})
    assert [entry["fieldsV1"] for entry in namespace["metadata"]["managedFields"]] == [
        {"f:metadata": {"f:labels": {".": {}, "f:a": {}, "f:kubernetes.io/metadata.name": {}}}}]


def test_empty_optional_maps_and_lists_are_not_written(crd_api: Api) -> None:
    """Go's omitempty: a ConfigMap's ``data: {}`` and ``labels: {}`` are left out; a custom
    resource keeps its own empty fields but not empty metadata maps (crd #16)."""
    configmap = created(crd_api, f"{NS}/configmaps", {
        "metadata": {"name": "cm", "labels": {}, "finalizers": []}, "data": {}})
    assert ("data" in configmap, "labels" in configmap["metadata"],
            "finalizers" in configmap["metadata"]) == (False, False, False)
    foos = "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/default/foos"
    foo = created(crd_api, foos, {"metadata": {"name": "f", "labels": {}},
                                  "spec": {"deploymentName": "d", "replicas": 1}})
    assert "labels" not in foo["metadata"]
    assert "f:metadata" not in foo["metadata"]["managedFields"][0]["fieldsV1"]  # nor owned


def test_micro_times_need_six_fraction_digits_and_are_written_in_utc(api: Api) -> None:
    """builtins #98-100: Go's time.Parse with RFC3339Micro, then UTC on the way out."""
    leases = "/apis/coordination.k8s.io/v1/namespaces/default/leases"
    status, body = api.post(leases, {"metadata": {"name": "l"}, "spec": {
        "acquireTime": "2026-01-01T00:00:00+00:00", "leaseDurationSeconds": 15}})
    assert (status, body["message"]) == (400, (
        'Lease in version "v1" cannot be handled as a Lease: parsing time '
        '"2026-01-01T00:00:00+00:00" as "2006-01-02T15:04:05.000000Z07:00": cannot parse '
        '"+00:00" as ".000000"'))
    lease = created(api, leases, {"metadata": {"name": "l"}, "spec": {
        "acquireTime": "2026-01-01T02:00:00.000000+02:00",
        "renewTime": "2026-01-01T00:00:05.123456Z"}})
    assert (lease["spec"]["acquireTime"], lease["spec"]["renewTime"]) == (
        "2026-01-01T00:00:00.000000Z", "2026-01-01T00:00:05.123456Z")


def test_times_are_written_in_utc_to_the_second(api: Api) -> None:
    """metav1.Time: RFC 3339, a fraction accepted and dropped."""
    events = "/api/v1/namespaces/default/events"
    event = created(api, events, {"metadata": {"name": "e"}, "involvedObject": {"name": "x"},
                                  "firstTimestamp": "2026-01-01T01:00:05.5+01:00"})
    assert event["firstTimestamp"] == "2026-01-01T00:00:05Z"


def test_a_job_s_pod_template_is_immutable(api: Api) -> None:
    """builtins #68, #69 (the real message prints Go's dump of the PodSpec)."""
    jobs = "/apis/batch/v1/namespaces/default/jobs"
    created(api, jobs, {"metadata": {"name": "pi"}, "spec": {"template": {"spec": {
        **POD_SPEC, "restartPolicy": "Never"}}}})
    assert api.patch(f"{jobs}/pi", {"spec": {"suspend": True}})[0] == 200
    assert api.patch(f"{jobs}/pi", {"spec": {"template": {"spec": {
        "nodeSelector": {"zone": "a"}}}}})[0] == 200  # a scheduling directive, suspended
    status, body = api.patch(f"{jobs}/pi", {"spec": {"template": {"spec": {"containers": [
        {"name": "c", "image": "busybox:1.37"}]}}}})
    assert (status, body["details"]["causes"][0]["field"]) == (422, "spec.template.spec")
    assert body["details"]["causes"][0]["message"].endswith(": field is immutable")
