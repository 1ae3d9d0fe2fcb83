"""Server-side Table output (``Accept: application/json;as=Table;g=meta.k8s.io;v=v1``): printer
columns of CRDs and the common built-in kinds, includeObject, and the fake's core."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson
import pytest

from kgen_runtime.rest import Request
from kgen_runtime.testing import APIServerCore, TestAPIServer
from kgen_runtime.testing.apiserver.tables._jsonpath import find
from kgen_runtime.testing.apiserver.tables._tables import human_duration
from tests.testing._support import FOO_CRD, FOOS, Api, foo

TABLE = "application/json;as=Table;g=meta.k8s.io;v=v1"
KUBECTL_ACCEPT = ("application/json;as=Table;v=v1;g=meta.k8s.io,"
                  "application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json")
CREATED = datetime(2026, 5, 1, 12, 0, 0, tzinfo=UTC)
NS = "/api/v1/namespaces/ns"


class Clock:
    """A wall clock the test moves."""

    def __init__(self) -> None:
        self.now = CREATED

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def api(clock: Clock) -> Iterator[Api]:
    with TestAPIServer(wall_clock=clock) as server:
        yield Api(server)


def table(api: Api, path: str, accept: str = TABLE, **query: Any) -> dict[str, Any]:
    status, body = api.call("GET", path, query=query or None, headers={"Accept": accept})
    assert status == 200, body
    result: dict[str, Any] = body
    return result


def columns(body: dict[str, Any]) -> list[tuple[str, str, int]]:
    return [(c["name"], c["type"], c["priority"]) for c in body["columnDefinitions"]]


def cells(body: dict[str, Any]) -> list[list[Any]]:
    return [row["cells"] for row in body["rows"]]


def install_foo_crd(api: Api, printer_columns: list[dict[str, Any]] | None = None) -> None:
    crd = copy.deepcopy(FOO_CRD)
    if printer_columns is not None:
        crd["spec"]["versions"][0]["additionalPrinterColumns"] = printer_columns
    status, body = api.post("/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd)
    assert status == 201, body


def test_crd_printer_columns_typed_as_declared(api: Api, clock: Clock) -> None:
    install_foo_crd(api, [
        {"name": "Replicas", "type": "integer", "jsonPath": ".spec.replicas"},
        {"name": "Mode", "type": "string", "jsonPath": ".spec.mode", "description": "how"},
        {"name": "Ready", "type": "string",
         "jsonPath": '.status.conditions[?(@.type=="Ready")].status'},
        {"name": "Tag", "type": "string", "jsonPath": ".spec.tags[0]", "priority": 1},
        {"name": "Scale", "type": "number", "jsonPath": ".spec.replicas"},
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"},
        {"name": "Bad", "type": "date", "jsonPath": ".spec.mode"},
    ])
    api.post(FOOS, foo("a", replicas=2, mode="fast", tags=["blue"]))
    api.post(FOOS, foo("b"))
    clock.now += timedelta(minutes=5)

    body = table(api, FOOS)

    assert (body["kind"], body["apiVersion"]) == ("Table", "meta.k8s.io/v1")
    assert columns(body) == [("Name", "string", 0), ("Replicas", "integer", 0),
                             ("Mode", "string", 0), ("Ready", "string", 0),
                             ("Tag", "string", 1), ("Scale", "number", 0),
                             ("Age", "date", 0), ("Bad", "date", 0)]
    definitions = body["columnDefinitions"]
    assert definitions[0]["format"] == "name"
    assert definitions[2]["description"] == "how"
    assert definitions[3]["description"] == (
        'Custom resource definition column (in JSONPath format): '
        '.status.conditions[?(@.type=="Ready")].status')
    assert cells(body) == [["a", 2, "fast", None, "blue", 2.0, "5m", "<invalid>"],
                           ["b", 1, None, None, None, 1.0, "5m", None]]
    assert body["metadata"]["resourceVersion"]


def test_a_condition_filter_column_finds_its_item(api: Api) -> None:
    install_foo_crd(api, [{"name": "Ready", "type": "string",
                           "jsonPath": '.spec.extra.conditions[?(@.type=="Ready")].status'},
                          {"name": "Last", "type": "string",
                           "jsonPath": ".spec.extra.conditions[-1:].type"}])
    conditions = [{"type": "Ready", "status": "True"}, {"type": "Synced", "status": "False"}]
    api.post(FOOS, foo("a", extra={"conditions": conditions}))

    assert cells(table(api, f"{FOOS}/a")) == [["a", "True", "Synced"]]


def test_a_crd_without_printer_columns_shows_name_and_age(api: Api) -> None:
    install_foo_crd(api)
    api.post(FOOS, foo("a"))

    body = table(api, f"{FOOS}/a")

    assert columns(body) == [("Name", "string", 0), ("Age", "date", 0)]
    assert cells(body) == [["a", "0s"]]
    [row] = body["rows"]
    assert row["object"]["kind"] == "PartialObjectMetadata"
    assert row["object"]["apiVersion"] == "meta.k8s.io/v1"
    assert row["object"]["metadata"]["name"] == "a"
    assert body["metadata"] == {"resourceVersion": row["object"]["metadata"]["resourceVersion"]}


def test_kubectls_accept_header_and_the_v1beta1_variant(api: Api) -> None:
    install_foo_crd(api)
    api.post(FOOS, foo("a"))
    beta = "application/json;as=Table;v=v1beta1;g=meta.k8s.io"

    assert table(api, FOOS, KUBECTL_ACCEPT)["apiVersion"] == "meta.k8s.io/v1"
    body = table(api, FOOS, beta)
    assert body["apiVersion"] == "meta.k8s.io/v1beta1"
    assert body["rows"][0]["object"]["apiVersion"] == "meta.k8s.io/v1beta1"
    assert table(api, FOOS, "application/json")["kind"] == "FooList"


@pytest.mark.parametrize(("include", "kind"), [("Object", "Foo"), ("Metadata",
                                                                   "PartialObjectMetadata")])
def test_include_object(api: Api, include: str, kind: str) -> None:
    install_foo_crd(api)
    api.post(FOOS, foo("a"))

    [row] = table(api, FOOS, includeObject=include)["rows"]

    assert row["object"]["kind"] == kind


def test_include_object_none_and_a_bad_value(api: Api) -> None:
    install_foo_crd(api)
    api.post(FOOS, foo("a"))

    assert table(api, FOOS, includeObject="None")["rows"] == [{"cells": ["a", "0s"],
                                                               "object": None}]
    status, body = api.call("GET", FOOS, query={"includeObject": "All"},
                            headers={"Accept": TABLE})
    assert (status, body["message"]) == (400, 'unrecognized includeObject value: "All"')


def test_a_paged_list_keeps_its_list_metadata(api: Api) -> None:
    install_foo_crd(api)
    for name in "abc":
        api.post(FOOS, foo(name))

    body = table(api, FOOS, limit=2)

    assert cells(body) == [["a", "0s"], ["b", "0s"]]
    assert body["metadata"]["continue"] and body["metadata"]["remainingItemCount"] == 1


def test_pods_print_kubectls_columns(api: Api, clock: Clock) -> None:
    pod = {"metadata": {"name": "p"}, "spec": {"nodeName": "n1", "containers": [
        {"name": "a", "image": "i"}, {"name": "b", "image": "i"}]}}
    api.post(f"{NS}/pods", pod)
    api.patch(f"{NS}/pods/p/status", {"status": {"phase": "Running", "podIP": "10.0.0.5",
                                                 "containerStatuses": [
        {"name": "a", "ready": True, "restartCount": 1, "image": "i", "imageID": "i@sha256:1"},
        {"name": "b", "ready": False, "restartCount": 2, "image": "i", "imageID": "i@sha256:1",
         "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}})
    clock.now += timedelta(minutes=3, seconds=20)

    body = table(api, f"{NS}/pods")

    assert columns(body) == [("Name", "string", 0), ("Ready", "string", 0),
                             ("Status", "string", 0), ("Restarts", "string", 0),
                             ("Age", "string", 0), ("IP", "string", 1), ("Node", "string", 1),
                             ("Nominated Node", "string", 1), ("Readiness Gates", "string", 1)]
    assert cells(body) == [["p", "1/2", "CrashLoopBackOff", "3", "3m20s", "10.0.0.5", "n1",
                            "<none>", "<none>"]]


def test_deployments_services_configmaps_and_namespaces_print_their_columns(
    api: Api, clock: Clock
) -> None:
    api.post("/apis/apps/v1/namespaces/ns/deployments", {
        "metadata": {"name": "d"}, "spec": {
            "replicas": 3, "selector": {"matchLabels": {"app": "d"}},
            "template": {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [
                {"name": "web", "image": "nginx:1"}, {"name": "log", "image": "fluentd"}]}}}})
    api.post(f"{NS}/services", {"metadata": {"name": "s"}, "spec": {
        "type": "NodePort", "clusterIP": "10.0.0.9", "selector": {"app": "d"},
        "ports": [{"name": "http", "port": 80, "nodePort": 30080, "protocol": "TCP"},
                  {"name": "dns", "port": 53, "nodePort": 30053, "protocol": "UDP"}]}})
    api.post(f"{NS}/configmaps", {"metadata": {"name": "c"}, "data": {"a": "1", "b": "2"},
                                   "binaryData": {"c": "AA=="}})
    api.post("/api/v1/namespaces", {"metadata": {"name": "team"}})
    api.patch("/api/v1/namespaces/team/status", {"status": {"phase": "Active"}})
    clock.now += timedelta(hours=5)

    deployments = table(api, "/apis/apps/v1/namespaces/ns/deployments")
    services = table(api, f"{NS}/services")
    configmaps = table(api, f"{NS}/configmaps")
    namespace = table(api, "/api/v1/namespaces/team")

    assert [name for name, _, _ in columns(deployments)] == [
        "Name", "Ready", "Up-to-date", "Available", "Age", "Containers", "Images", "Selector"]
    assert cells(deployments) == [["d", "0/3", 0, 0, "5h", "web,log", "nginx:1,fluentd",
                                   "app=d"]]
    assert [name for name, _, _ in columns(services)] == [
        "Name", "Type", "Cluster-IP", "External-IP", "Port(s)", "Age", "Selector"]
    assert cells(services) == [["s", "NodePort", "10.0.0.9", "<none>", "80:30080/TCP,53:30053/UDP",
                                "5h", "app=d"]]
    assert columns(configmaps) == [("Name", "string", 0), ("Data", "string", 0),
                                   ("Age", "string", 0)]
    assert cells(configmaps) == [["c", 3, "5h"]]
    assert cells(namespace) == [["team", "Active", "5h"]]


def test_built_in_column_types_and_descriptions_are_printers_gos(api: Api) -> None:
    """Counts are string columns; descriptions are the fields' SwaggerDoc, without the
    enum values OpenAPI appends."""
    definitions = {
        column["name"]: (column["type"], column["description"]) for path in (
            "/apis/apps/v1/namespaces/ns/deployments", f"{NS}/services", f"{NS}/configmaps")
        for column in table(api, path)["columnDefinitions"]}
    assert definitions["Up-to-date"] == ("string", "Total number of non-terminating pods "
                                         "targeted by this deployment that have the desired "
                                         "template spec.")
    assert definitions["Port(s)"] == ("string", "The list of ports that are exposed by this "
                                      "service. More info: https://kubernetes.io/docs/concepts/"
                                      "services-networking/service/#virtual-ips-and-service-"
                                      "proxies")
    assert "Possible enum values" not in definitions["Type"][1]
    assert definitions["Data"] == ("string", "Data contains the configuration data. Each key "
                                   "must consist of alphanumeric characters, '-', '_' or '.'. "
                                   "Values with non-UTF-8 byte sequences must use the "
                                   "BinaryData field. The keys stored in Data must not overlap "
                                   "with the keys in the BinaryData field, this is enforced "
                                   "during validation process.")


def test_other_built_in_kinds_print_name_and_age(api: Api, clock: Clock) -> None:
    api.post(f"{NS}/secrets", {"metadata": {"name": "s"}})
    clock.now += timedelta(days=3, hours=2)

    body = table(api, f"{NS}/secrets")

    assert columns(body) == [("Name", "string", 0), ("Age", "string", 0)]
    assert cells(body) == [["s", "3d2h"]]


def test_the_fakes_core_answers_tables_too(clock: Clock) -> None:
    core = APIServerCore(wall_clock=clock)
    created = core.handle(Request("POST", f"{NS}/configmaps", body=orjson.dumps(
        {"metadata": {"name": "c"}, "data": {"a": "1"}}), content_type="application/json"))
    assert created.status == 201

    response = core.handle(Request("GET", f"{NS}/configmaps/c",
                                   headers=(("Accept", KUBECTL_ACCEPT),)))

    assert cells(orjson.loads(response.read())) == [["c", 1, "0s"]]


@pytest.mark.parametrize(("seconds", "printed"), [
    (-5, "<invalid>"), (-1, "0s"), (0, "0s"), (119, "119s"), (120, "2m"), (200, "3m20s"),
    (600, "10m"), (10_799, "179m"), (10_800, "3h"), (11_100, "3h5m"), (28_800, "8h"),
    (172_800, "2d"), (180_000, "2d2h"), (691_200, "8d"), (63_072_000, "2y"),
    (63_158_400, "2y1d"), (252_288_000, "8y"),
])
def test_human_duration(seconds: int, printed: str) -> None:
    assert human_duration(seconds) == printed


@pytest.mark.parametrize(("path", "found"), [
    (".metadata.labels.strimzi\\.io/cluster", ["c1"]),
    ("{.metadata.labels['app']}", ["web"]),
    (".status.addresses[*].value", ["10.0.0.1", "10.0.0.2"]),
    (".status.addresses[1].value", ["10.0.0.2"]),
    (".status.addresses[?(@.type=='Internal')].value", ["10.0.0.1"]),
    (".status.addresses[?(@.type!='Internal')].value", ["10.0.0.2"]),
    (".status.missing.value", []),
    (".status.addresses[5]", []),
])
def test_printer_column_json_paths(path: str, found: list[Any]) -> None:
    obj = {"metadata": {"labels": {"strimzi.io/cluster": "c1", "app": "web"}},
           "status": {"addresses": [{"type": "Internal", "value": "10.0.0.1"},
                                    {"type": "External", "value": "10.0.0.2"}]}}

    assert find(obj, path) == found


def test_a_watch_streams_one_row_tables_with_headers_first(api: Api, clock: Clock) -> None:
    api.post(f"{NS}/secrets", {"metadata": {"name": "s"}})  # the watch replays from here
    start = api.get(f"{NS}/configmaps")[1]["metadata"]["resourceVersion"]
    events = api.watch(f"{NS}/configmaps", headers={"Accept": KUBECTL_ACCEPT},
                       resourceVersion=start)
    api.post(f"{NS}/configmaps", {"metadata": {"name": "a"}, "data": {"k": "v"}})
    api.delete(f"{NS}/configmaps/a")

    first, second = next(events), next(events)

    assert (first["type"], second["type"]) == ("ADDED", "DELETED")
    assert first["object"]["kind"] == second["object"]["kind"] == "Table"
    assert columns(first["object"]) == [("Name", "string", 0), ("Data", "string", 0),
                                        ("Age", "string", 0)]
    assert second["object"]["columnDefinitions"] is None
    assert cells(first["object"]) == cells(second["object"]) == [["a", 1, "0s"]]
    assert first["object"]["rows"][0]["object"]["kind"] == "PartialObjectMetadata"


def test_a_table_watch_with_a_bad_include_object_is_refused(api: Api) -> None:
    status, body = api.call("GET", f"{NS}/configmaps", query={
        "watch": "true", "includeObject": "Everything"}, headers={"Accept": TABLE})

    assert (status, body["reason"]) == (400, "BadRequest")


def test_crds_print_name_and_created_at(api: Api) -> None:
    install_foo_crd(api)

    body = table(api, "/apis/apiextensions.k8s.io/v1/customresourcedefinitions")

    assert columns(body) == [("Name", "string", 0), ("Created At", "date", 0)]
    assert cells(body) == [["foos.samplecontroller.k8s.io", "2026-05-01T12:00:00Z"]]


def test_string_columns_print_other_values_as_go_does(api: Api) -> None:
    install_foo_crd(api, [{"name": name, "type": "string", "jsonPath": f".spec.extra.{name}"}
                          for name in ("count", "ratio", "whole", "flag", "map", "list")])
    extra = {"count": 3, "ratio": 2.5, "whole": 2.0, "flag": True, "map": {"b": 1, "a": "x"},
             "list": ["p", 1]}
    api.post(FOOS, foo("a", extra=extra))

    assert cells(table(api, f"{FOOS}/a")) == [
        ["a", "3", "2.5", "2", "true", "map[a:x b:1]", "[p 1]"]]
