"""managedFields on built-in kinds: keyed lists and sets in fieldsV1, apply merging list items by
key, entry order and times, resets, and the server's answers to bad apply bodies."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
import pytest

from kgen_runtime.rest import HTTPTransport, Request
from kgen_runtime.testing import TestAPIServer
from tests.testing._support import Api

DEPLOYMENTS = "/apis/apps/v1/namespaces/ns/deployments"
CMS = "/api/v1/namespaces/ns/configmaps"
APPLY = "application/apply-patch+yaml"


class SteppingClock:
    """A wall clock that moves one second each time it is read."""

    def __init__(self) -> None:
        self.now = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


@pytest.fixture
def api() -> Iterator[Api]:
    # No system objects: the entries' times count this test's own writes.
    with TestAPIServer(wall_clock=SteppingClock(), system_objects=False) as server:
        yield Api(server)


def deployment(*containers: dict[str, Any]) -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
            "spec": {"selector": {"matchLabels": {"app": "d"}},
                     "template": {"metadata": {"labels": {"app": "d"}},
                                  "spec": {"containers": list(containers)}}}}


#: What the Deployment defaulter sets, recorded for the creating manager of an Update as a
#: real server records it (defaulting runs before the field manager sees the object).
DEPLOYMENT_DEFAULTS: dict[str, Any] = {
    "f:progressDeadlineSeconds": {}, "f:revisionHistoryLimit": {},
    "f:strategy": {"f:rollingUpdate": {".": {}, "f:maxSurge": {}, "f:maxUnavailable": {}},
                   "f:type": {}}}
POD_SPEC_DEFAULTS: dict[str, Any] = {
    "f:dnsPolicy": {}, "f:restartPolicy": {}, "f:schedulerName": {}, "f:securityContext": {},
    "f:terminationGracePeriodSeconds": {}}
CONTAINER_DEFAULTS: dict[str, Any] = {
    "f:imagePullPolicy": {}, "f:resources": {}, "f:terminationMessagePath": {},
    "f:terminationMessagePolicy": {}}


def fields_of(obj: dict[str, Any]) -> list[tuple[str, str, Any]]:
    return [(e["manager"], e["operation"], e["fieldsV1"])
            for e in obj["metadata"]["managedFields"]]


def test_keyed_lists_are_recorded_by_key(api: Api) -> None:
    body = deployment({"name": "web", "image": "nginx",
                       "ports": [{"containerPort": 80, "protocol": "TCP"}],
                       "env": [{"name": "A", "value": "1"}]})

    status, created = api.call("POST", DEPLOYMENTS, body, query={"fieldManager": "kubectl-create"})

    assert status == 201, created
    [entry] = created["metadata"]["managedFields"]
    assert entry == {
        "manager": "kubectl-create", "operation": "Update", "apiVersion": "apps/v1",
        "time": "2026-01-02T03:04:07Z", "fieldsType": "FieldsV1",
        "fieldsV1": {"f:spec": {
            **DEPLOYMENT_DEFAULTS, "f:replicas": {}, "f:selector": {}, "f:template": {
                "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
                "f:spec": {**POD_SPEC_DEFAULTS, "f:containers": {'k:{"name":"web"}': {
                    ".": {}, "f:image": {}, "f:name": {}, **CONTAINER_DEFAULTS,
                    "f:env": {".": {}, 'k:{"name":"A"}': {".": {}, "f:name": {},
                                                           "f:value": {}}},
                    "f:ports": {".": {}, 'k:{"containerPort":80,"protocol":"TCP"}': {
                        ".": {}, "f:containerPort": {}, "f:protocol": {}}},
                }}},
            }}},
    }


def test_apply_merges_containers_by_name_and_conflicts_name_the_list_item(api: Api) -> None:
    api.call("POST", DEPLOYMENTS, deployment({"name": "web", "image": "nginx"}),
             query={"fieldManager": "kubectl-edit"})
    sidecar = deployment({"name": "log", "image": "fluentd"})

    status, merged = api.patch(f"{DEPLOYMENTS}/d", sidecar, APPLY, fieldManager="mesh")
    assert status == 200, merged
    assert [c["name"] for c in merged["spec"]["template"]["spec"]["containers"]] == [
        "web", "log"]

    takeover = deployment({"name": "web", "image": "nginx:2"})
    status, body = api.patch(f"{DEPLOYMENTS}/d", takeover, APPLY, fieldManager="mesh")
    assert (status, body["message"]) == (
        409, 'Apply failed with 1 conflict: conflict with "kubectl-edit" using apps/v1: '
             '.spec.template.spec.containers[name="web"].image')


def test_an_applier_dropping_a_list_item_removes_it(api: Api) -> None:
    both = deployment({"name": "web", "image": "nginx"}, {"name": "log", "image": "fluentd"})
    api.patch(f"{DEPLOYMENTS}/d", both, APPLY, fieldManager="ci")

    status, body = api.patch(f"{DEPLOYMENTS}/d", deployment({"name": "web", "image": "nginx"}),
                             APPLY, fieldManager="ci")

    assert status == 200, body
    assert body["spec"]["template"]["spec"]["containers"] == [{
        "name": "web", "image": "nginx", "imagePullPolicy": "Always", "resources": {},
        "terminationMessagePath": "/dev/termination-log", "terminationMessagePolicy": "File"}]


def test_set_lists_are_recorded_by_value(api: Api) -> None:
    body = {"metadata": {"name": "c", "finalizers": ["example.com/a"]}, "data": {"k": "v"}}

    created = api.call("POST", CMS, body, query={"fieldManager": "m"})[1]

    assert fields_of(created) == [("m", "Update", {
        "f:data": {".": {}, "f:k": {}},
        "f:metadata": {"f:finalizers": {".": {}, 'v:"example.com/a"': {}}}})]


def test_entries_merge_per_manager_and_sort_by_operation_then_time(api: Api) -> None:
    api.call("POST", CMS, {"metadata": {"name": "c"}, "data": {"a": "1"}},
             query={"fieldManager": "zed"})
    api.patch(f"{CMS}/c", {"data": {"b": "2"}}, fieldManager="amy")
    api.patch(f"{CMS}/c", {"data": {"c": "3"}}, fieldManager="zed")
    applied = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
               "data": {"d": "4"}}
    status, body = api.patch(f"{CMS}/c", applied, APPLY, fieldManager="ssa")

    assert status == 200, body
    assert [(e["manager"], e["operation"], e["time"], e["fieldsV1"])
            for e in body["metadata"]["managedFields"]] == [
        ("ssa", "Apply", "2026-01-02T03:04:10Z", {"f:data": {"f:d": {}}}),
        ("amy", "Update", "2026-01-02T03:04:08Z", {"f:data": {"f:b": {}}}),
        ("zed", "Update", "2026-01-02T03:04:09Z", {"f:data": {".": {}, "f:a": {}, "f:c": {}}}),
    ]


def test_the_user_agent_names_the_manager_when_no_field_manager_is_given(api: Api) -> None:
    body = {"metadata": {"name": "c"}, "data": {"a": "1"}}

    created = api.call("POST", CMS, body, headers={"User-Agent": "kubectl/v1.32.0 (linux)"})[1]

    assert [e["manager"] for e in created["metadata"]["managedFields"]] == ["kubectl"]


@pytest.mark.parametrize("reset", [[], [{}]])
def test_sending_empty_managed_fields_resets_them(api: Api, reset: list[Any]) -> None:
    api.call("POST", CMS, {"metadata": {"name": "c"}, "data": {"a": "1"}},
             query={"fieldManager": "m"})

    status, body = api.patch(f"{CMS}/c", {"metadata": {"managedFields": reset}})

    assert status == 200, body
    assert "managedFields" not in body["metadata"]


def test_sending_no_managed_fields_keeps_them(api: Api) -> None:
    created = api.call("POST", CMS, {"metadata": {"name": "c"}, "data": {"a": "1"}},
                       query={"fieldManager": "m"})[1]
    replacement = {"metadata": {"name": "c", "resourceVersion": created["metadata"][
        "resourceVersion"]}, "data": {"a": "1", "b": "2"}}

    updated = api.call("PUT", f"{CMS}/c", replacement, query={"fieldManager": "m"})[1]

    assert fields_of(updated) == [("m", "Update", {"f:data": {".": {}, "f:a": {}, "f:b": {}}})]


@pytest.mark.parametrize(("config", "message"), [
    ({"metadata": {"name": "c"}, "data": {"a": "1"}}, "invalid object type: /, Kind="),
    ({"apiVersion": "v1", "metadata": {"name": "c"}}, "invalid object type: /v1, Kind="),
    ({"apiVersion": "apps/v1", "kind": "ConfigMap", "metadata": {"name": "c"}},
     "invalid object type: apps/v1, Kind=ConfigMap"),
    ({"apiVersion": "v1", "kind": "ConfigMap",
      "metadata": {"name": "c", "managedFields": [{"manager": "x"}]}},
     "metadata.managedFields must be nil"),
])
def test_bad_apply_bodies_are_refused(api: Api, config: dict[str, Any], message: str) -> None:
    status, body = api.patch(f"{CMS}/c", config, APPLY, fieldManager="ssa")

    assert (status, body["reason"], body["message"]) == (400, "BadRequest", message)
    assert api.get(f"{CMS}/c")[0] == 404


def test_the_transport_sends_the_configs_user_agent_and_a_requests_own_headers() -> None:
    body = orjson.dumps({"metadata": {"name": "c"}, "data": {"a": "1"}})
    with TestAPIServer() as server:
        transport = HTTPTransport(server.config(user_agent="operator/1.2 (linux)"))
        try:
            by_config = transport.send(Request("POST", CMS, body=body))
            by_request = transport.send(Request(
                "POST", CMS, body=body.replace(b'"c"', b'"d"'),
                headers=(("User-Agent", "custom/2"), ("Accept", "application/json"))))
            managers = [orjson.loads(response.read())["metadata"]["managedFields"][0]["manager"]
                        for response in (by_config, by_request)]
        finally:
            transport.close()

    assert (by_config.status, by_request.status) == (201, 201)
    assert managers == ["operator", "custom"]


def test_request_header_lookup_is_case_insensitive() -> None:
    request = Request("GET", "/api/v1/pods", headers=(("user-agent", "a/1"),))

    assert (request.header("User-Agent"), request.header("Accept")) == ("a/1", None)


def test_a_scale_write_is_recorded_against_the_parent_with_its_subresource(api: Api) -> None:
    body = deployment({"name": "web", "image": "nginx"})
    body["spec"]["replicas"] = 1
    api.call("POST", DEPLOYMENTS, body, query={"fieldManager": "creator"})

    status, scale = api.patch(f"{DEPLOYMENTS}/d/scale", {"spec": {"replicas": 4}},
                              fieldManager="hpa")
    assert (status, scale["spec"]["replicas"]) == (200, 4), scale

    # builtins.jsonl #46, crd.jsonl #94: the scale entry has no time, so it sorts first
    entries = api.get(f"{DEPLOYMENTS}/d")[1]["metadata"]["managedFields"]
    assert [(e["manager"], e.get("subresource"), "time" in e, e["fieldsV1"])
            for e in entries] == [
        ("hpa", "scale", False, {"f:spec": {"f:replicas": {}}}),
        ("creator", None, True, {"f:spec": {
            **DEPLOYMENT_DEFAULTS, "f:selector": {}, "f:template": {
                "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
                "f:spec": {**POD_SPEC_DEFAULTS, "f:containers": {'k:{"name":"web"}': {
                    ".": {}, "f:image": {}, "f:name": {}, **CONTAINER_DEFAULTS}}}}}}),
    ]


def test_update_managers_beyond_ten_merge_into_ancient_changes(api: Api) -> None:
    api.call("POST", CMS, {"metadata": {"name": "c"}, "data": {"k0": "0"}},
             query={"fieldManager": "m00"})
    for index in range(1, 12):
        status, body = api.patch(f"{CMS}/c", {"data": {f"k{index}": "x"}},
                                 fieldManager=f"m{index:02}")
        assert status == 200, body

    entries = body["metadata"]["managedFields"]

    assert len(entries) == 10
    assert (entries[0]["manager"], entries[0]["time"], entries[0]["fieldsV1"]) == (
        "ancient-changes", "2026-01-02T03:04:09Z",
        {"f:data": {".": {}, "f:k0": {}, "f:k1": {}, "f:k2": {}}})
    assert [e["manager"] for e in entries[1:]] == [f"m{index:02}" for index in range(3, 12)]


def test_conflicts_with_several_managers_are_grouped_by_manager(api: Api) -> None:
    api.call("POST", CMS, {"metadata": {"name": "c"}, "data": {"a": "1", "b": "1"}},
             query={"fieldManager": "zed"})
    api.patch(f"{CMS}/c", {"data": {"c": "1"}}, fieldManager="amy")
    applied = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"},
               "data": {"a": "2", "b": "2", "c": "2"}}

    status, body = api.patch(f"{CMS}/c", applied, APPLY, fieldManager="ssa")

    assert (status, body["message"]) == (409, (
        'Apply failed with 3 conflicts: conflicts with "amy" using v1:\n- .data.c\n'
        'conflicts with "zed" using v1:\n- .data.a\n- .data.b'))
    assert [(c["message"], c["field"]) for c in body["details"]["causes"]] == [
        ('conflict with "amy" using v1', ".data.c"), ('conflict with "zed" using v1', ".data.a"),
        ('conflict with "zed" using v1', ".data.b")]


def test_what_the_strategy_sets_and_resets_is_nobodys(api: Api) -> None:
    """builtins.jsonl #1: a Namespace's creator owns its labels, not the ``kubernetes``
    finalizer (set by ``PrepareForCreate``, after the field manager) nor the defaulted
    ``status.phase`` (a reset field of the main resource)."""
    created = api.call("POST", "/api/v1/namespaces", {"metadata": {
        "name": "team", "labels": {"fidelity": "true"}}}, query={"fieldManager": "maker"})[1]
    assert (created["spec"], created["status"]) == ({"finalizers": ["kubernetes"]},
                                                    {"phase": "Active"})
    [entry] = created["metadata"]["managedFields"]
    assert (entry["manager"], entry["fieldsV1"]) == ("maker", {"f:metadata": {"f:labels": {
        ".": {}, "f:fidelity": {}, "f:kubernetes.io/metadata.name": {}}}})
