"""Field sets as structured-merge-diff computes them: ToFieldSet, Compare, Merge, fieldsV1."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import orjson
import pytest

from kgen_runtime.testing.apiserver.fieldmanager._fieldsets import (
    compare,
    describe,
    field_set,
    from_fields_v1,
    merge,
    remove,
    to_fields_v1,
)
from kgen_runtime.testing.apiserver.fieldmanager._managed_fields import FieldManager
from kgen_runtime.testing.apiserver.openapi._field_types import (
    FieldType,
    openapi_types,
    schema_types,
)
from kgen_runtime.testing.apiserver.openapi._openapi import builtin_field_types
from kgen_runtime.testing.apiserver.openapi._zero_values import as_go_serialises, empty_object
from kgen_runtime.testing.apiserver.storage._resources import builtin

SCHEMA: dict[str, Any] = {"type": "object", "properties": {
    "spec": {"type": "object", "properties": {
        "items": {"type": "array", "x-kubernetes-list-type": "map",
                  "x-kubernetes-list-map-keys": ["name"],
                  "items": {"type": "object", "properties": {
                      "name": {"type": "string"}, "value": {"type": "string"}}}},
        "tags": {"type": "array", "x-kubernetes-list-type": "set",
                 "items": {"type": "string"}},
        "args": {"type": "array", "items": {"type": "string"}},
        "selector": {"type": "object", "x-kubernetes-map-type": "atomic",
                     "additionalProperties": {"type": "string"}},
        "free": {"type": "object", "additionalProperties": {
            "type": "object", "properties": {"x": {"type": "integer"}}}},
    }},
}}
TYPES = schema_types(SCHEMA)


def test_an_apply_configuration_owns_leaves_items_and_free_map_entries() -> None:
    config = {"spec": {"items": [{"name": "a", "value": "1"}], "tags": ["t"], "args": ["x"],
                       "selector": {"k": "v"}, "free": {"one": {"x": 1}}, "empty": {}}}

    fields = field_set(config, TYPES)

    assert to_fields_v1(fields) == {"f:spec": {
        "f:items": {'k:{"name":"a"}': {".": {}, "f:name": {}, "f:value": {}}},
        "f:tags": {'v:"t"': {}},
        "f:args": {}, "f:selector": {}, "f:empty": {},
        "f:free": {"f:one": {".": {}, "f:x": {}}},
    }}


def test_compare_reports_added_modified_and_removed() -> None:
    old = {"spec": {"items": [{"name": "a", "value": "1"}, {"name": "b"}], "args": ["x"]}}
    new = {"spec": {"items": [{"name": "a", "value": "2"}, {"name": "c"}], "args": ["x"]}}

    change = compare(old, new, TYPES)

    assert change.modified == {("f:spec", "f:items", 'k:{"name":"a"}', "f:value")}
    assert change.added == {("f:spec", "f:items", 'k:{"name":"c"}'),
                            ("f:spec", "f:items", 'k:{"name":"c"}', "f:name")}
    assert change.removed == {("f:spec", "f:items", 'k:{"name":"b"}'),
                              ("f:spec", "f:items", 'k:{"name":"b"}', "f:name")}


def test_a_null_list_or_map_that_gets_content_is_not_itself_added() -> None:
    # typed/helpers.go listValue/mapValue: null is an empty list or map
    old = {"spec": {"items": None, "free": None}}
    new = {"spec": {"items": [{"name": "a"}], "free": {"one": {"x": 1}}}}

    change = compare(old, new, TYPES)

    assert change.added == {
        ("f:spec", "f:items", 'k:{"name":"a"}'), ("f:spec", "f:items", 'k:{"name":"a"}', "f:name"),
        ("f:spec", "f:free", "f:one"), ("f:spec", "f:free", "f:one", "f:x")}
    assert change.modified == set()
    assert compare(new, old, TYPES).removed == change.added


def test_merge_keeps_live_only_items_in_place_and_follows_the_configurations_order() -> None:
    live = {"spec": {"items": [{"name": "a", "value": "1"}, {"name": "b"}, {"name": "c"}],
                     "tags": ["x"], "args": ["live"], "selector": {"old": "1"}}}
    config = {"spec": {"items": [{"name": "c", "value": "3"}, {"name": "a"}], "tags": ["y"],
                       "args": ["new"], "selector": {"new": "2"}}}

    merged = merge(live, config, TYPES)

    assert merged == {"spec": {
        "items": [{"name": "b"}, {"name": "c", "value": "3"}, {"name": "a", "value": "1"}],
        "tags": ["x", "y"], "args": ["new"], "selector": {"new": "2"}}}


def test_remove_drops_list_items_and_emptied_maps() -> None:
    obj = {"spec": {"items": [{"name": "a", "value": "1"}, {"name": "b"}]}, "keep": 1}
    paths = [("f:spec", "f:items", 'k:{"name":"a"}'),
             ("f:spec", "f:items", 'k:{"name":"a"}', "f:value"),
             ("f:spec", "f:items", 'k:{"name":"b"}')]

    assert remove(obj, paths, TYPES) == {"keep": 1}
    assert obj["spec"]["items"][0] == {"name": "a", "value": "1"}  # the input is untouched


@pytest.mark.parametrize("tree", [
    {},
    {"f:a": {}},
    {"f:a": {".": {}, "f:b": {}}, "f:c": {'k:{"n":1}': {".": {}, "f:n": {}}}},
    {"f:metadata": {"f:finalizers": {".": {}, 'v:"x"': {}}}},
])
def test_fields_v1_round_trips(tree: dict[str, Any]) -> None:
    assert to_fields_v1(from_fields_v1(tree)) == tree


@pytest.mark.parametrize(("path", "printed"), [
    (("f:spec", "f:replicas"), ".spec.replicas"),
    (("f:spec", "f:ports", 'k:{"port":80,"protocol":"TCP"}', "f:name"),
     '.spec.ports[port=80,protocol="TCP"].name'),
    (("f:metadata", "f:finalizers", 'v:"a/b"'), '.metadata.finalizers[="a/b"]'),
])
def test_paths_print_as_conflict_messages_show_them(path: tuple[str, ...], printed: str) -> None:
    assert describe(path) == printed


def deployment_types() -> FieldType:
    types = builtin_field_types("apps", "v1", "Deployment")
    assert types is not None
    return types


def test_built_in_value_structs_are_not_recorded_as_added() -> None:
    # both sides as Go serialises them: the empty Deployment (Creater.New) already has
    # spec.template.spec and spec.strategy; the new container's resources: {} is new
    new: dict[str, Any] = {"spec": {"template": {"spec": {"containers": [{"name": "c"}]}},
                                    "strategy": {"rollingUpdate": {"maxSurge": 1}}}}
    as_go_serialises("apps", "v1", "Deployment", new, custom=False)

    change = compare(empty_object("apps", "v1", "Deployment", custom=False), new,
                     deployment_types())

    container = ("f:spec", "f:template", "f:spec", "f:containers", 'k:{"name":"c"}')
    assert change.added == {
        container, (*container, "f:name"), (*container, "f:resources"),
        ("f:spec", "f:strategy", "f:rollingUpdate"),
        ("f:spec", "f:strategy", "f:rollingUpdate", "f:maxSurge"),
    }


OPENAPI = Path(os.environ.get("KGEN_SHARED_DIR", Path(__file__).resolve().parents[2].parent /
                              "shared")) / "openapi" / "apis_apps_v1.json"


@pytest.mark.skipif(not OPENAPI.is_file(), reason=f"{OPENAPI} not found (set KGEN_SHARED_DIR)")
def test_the_field_manager_reads_list_types_from_the_openapi_documents() -> None:
    document = orjson.loads(OPENAPI.read_bytes())
    manager = FieldManager(lambda: "2026-01-01T00:00:00Z",
                           types_for=lambda info: openapi_types(
                               document, "io.k8s.api.apps.v1.Deployment"))
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                  "spec": {"selector": {"matchLabels": {"app": "d"}}, "template": {"spec": {
                      "containers": [{"name": "c", "image": "i",
                                      "ports": [{"containerPort": 80, "protocol": "TCP"}],
                                      "volumeMounts": [{"name": "v", "mountPath": "/v"}]}],
                      "tolerations": [{"key": "k"}]}}}}

    manager.update(builtin("apps", "v1", "Deployment", "deployments"), None, deployment, "m",
                   "")

    [entry] = deployment["metadata"]["managedFields"]
    assert entry["fieldsV1"] == {"f:spec": {"f:selector": {}, "f:template": {"f:spec": {
        "f:containers": {'k:{"name":"c"}': {
            ".": {}, "f:image": {}, "f:name": {},
            "f:ports": {".": {}, 'k:{"containerPort":80,"protocol":"TCP"}': {
                ".": {}, "f:containerPort": {}, "f:protocol": {}}},
            "f:volumeMounts": {".": {}, 'k:{"mountPath":"/v"}': {
                ".": {}, "f:mountPath": {}, "f:name": {}}}}},
        "f:tolerations": {}}}}}
