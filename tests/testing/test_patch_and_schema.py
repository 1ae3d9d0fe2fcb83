"""The patch formats and the structural-schema functions, unit by unit."""

from __future__ import annotations

from typing import Any

import pytest

from kgen_runtime.testing import StatusError
from kgen_runtime.testing.apiserver.openapi._schema import apply_defaults, prune, validate
from kgen_runtime.testing.apiserver.patch._patch import apply_merge, json_patch, merge_patch


@pytest.mark.parametrize(("target", "patch", "result"), [  # RFC 7386 appendix A
    ({"a": "b"}, {"a": "c"}, {"a": "c"}),
    ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
    ({"a": "b"}, {"a": None}, {}),
    ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
    ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
    ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
    ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
    (["a", "b"], ["c", "d"], ["c", "d"]),
    ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
    ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
    ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
])
def test_merge_patch_rfc_examples(target: Any, patch: Any, result: Any) -> None:
    assert merge_patch(target, patch) == result


def test_merge_patch_does_not_mutate_inputs() -> None:
    target = {"a": {"b": 1}}
    merge_patch(target, {"a": {"b": 2}})
    assert target == {"a": {"b": 1}}


def test_json_patch_operations() -> None:
    doc = {"a/b": 1, "m~n": 2, "list": [1, 2, 3], "obj": {"x": 1}}
    result = json_patch(doc, [
        {"op": "replace", "path": "/a~1b", "value": 10},
        {"op": "remove", "path": "/m~0n"},
        {"op": "add", "path": "/list/0", "value": 0},
        {"op": "remove", "path": "/list/3"},
        {"op": "copy", "from": "/obj", "path": "/copied"},
        {"op": "move", "from": "/obj/x", "path": "/moved"},
        {"op": "test", "path": "/moved", "value": 1},
    ])
    assert result == {"a/b": 10, "list": [0, 1, 2], "obj": {}, "copied": {"x": 1}, "moved": 1}
    assert doc["list"] == [1, 2, 3]  # input untouched


@pytest.mark.parametrize("operation", [
    {"op": "remove", "path": "/missing"},
    {"op": "replace", "path": "/missing", "value": 1},
    {"op": "add", "path": "/list/9", "value": 1},
    {"op": "add", "path": "/list/01", "value": 1},
    {"op": "test", "path": "/list/0", "value": 2},
    {"op": "frobnicate", "path": "/list"},
    {"op": "add", "path": "no-slash", "value": 1},
])
def test_json_patch_failures_are_invalid(operation: dict[str, Any]) -> None:
    with pytest.raises(StatusError) as error:
        json_patch({"list": [1]}, [operation])
    assert (error.value.code, error.value.reason) == (422, "Invalid")


def test_json_patch_malformed_is_bad_request() -> None:
    for patch in ({"op": "add"}, [{"path": "/a"}]):
        with pytest.raises(StatusError) as error:
            json_patch({}, patch)
        assert error.value.code == 400


def test_apply_merges_maps_and_replaces_lists() -> None:
    live = {"spec": {"a": 1, "list": [1, 2], "keep": True}, "status": {"x": 1}}
    applied = {"spec": {"a": 2, "list": [3], "gone": None}}
    assert apply_merge(live, applied) == {"spec": {"a": 2, "list": [3], "keep": True},
                                          "status": {"x": 1}}


SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "spec": {
            "type": "object",
            "properties": {
                "ratio": {"type": "number", "minimum": 0, "exclusiveMinimum": True,
                          "maximum": 1, "exclusiveMaximum": True},
                "labels": {"type": "object", "additionalProperties": {"type": "string"},
                           "maxProperties": 2},
                "items": {"type": "array", "minItems": 1, "items": {
                    "type": "object", "properties": {"name": {"type": "string",
                                                              "default": "x"}}}},
                "flag": {"type": "boolean"},
            },
        },
    },
}


def test_exclusive_bounds_and_additional_properties() -> None:
    obj = {"spec": {"ratio": 1, "labels": {"a": "1", "b": 2, "c": "3"}, "items": [],
                    "flag": "yes"}}
    assert [(c.field, c.reason) for c in validate(obj, SCHEMA)] == [
        ("spec.ratio", "FieldValueInvalid"),
        ("spec.labels", "FieldValueTooMany"),
        ("spec.labels.b", "FieldValueTypeInvalid"),
        ("spec.items", "FieldValueInvalid"),
        ("spec.flag", "FieldValueTypeInvalid"),
    ]
    assert validate({"spec": {"ratio": 0.5, "items": [{}]}}, SCHEMA) == []
    assert validate({"spec": None}, SCHEMA)[0].message == (
        "Invalid value: null: spec in body must be of type object: null")


def test_defaults_reach_into_arrays_and_pruning_keeps_root_metadata() -> None:
    obj = {"apiVersion": "v", "kind": "K", "metadata": {"name": "n"},
           "spec": {"items": [{}, {"name": "y", "junk": 1}], "junk": 2}, "junk": 3}
    apply_defaults(obj, SCHEMA)
    prune(obj, SCHEMA)
    assert obj == {"apiVersion": "v", "kind": "K", "metadata": {"name": "n"},
                   "spec": {"items": [{"name": "x"}, {"name": "y"}]}}


def test_list_types_must_be_unique() -> None:
    schema: dict[str, Any] = {"type": "object", "properties": {
        "tags": {"type": "array", "x-kubernetes-list-type": "set",
                 "items": {"type": "string"}},
        "ports": {"type": "array", "x-kubernetes-list-type": "map",
                  "x-kubernetes-list-map-keys": ["name"],
                  "items": {"type": "object", "properties": {"name": {"type": "string"},
                                                             "port": {"type": "integer"}}}},
    }}
    obj = {"tags": ["a", "b", "a"], "ports": [{"name": "http", "port": 80},
                                             {"name": "http", "port": 81}]}
    assert [(c.field, c.reason, c.message) for c in validate(obj, schema)] == [
        ("tags[2]", "FieldValueDuplicate", 'Duplicate value: "a"'),
        ("ports[1]", "FieldValueDuplicate", 'Duplicate value: {"name":"http"}'),
    ]
    assert validate({"tags": ["a", "b"], "ports": [{"name": "a"}, {"name": "b"}]}, schema) == []


@pytest.mark.parametrize(("fmt", "good", "bad"), [
    ("date-time", "2024-05-06T07:08:09Z", "2024-05-06"),
    ("date-time", "2024-05-06T07:08:09.5+02:00", "yesterday"),
    ("date", "2024-05-06", "2024-5-6"),
    ("uuid", "123e4567-e89b-12d3-a456-426614174000", "not-a-uuid"),
    ("ipv4", "10.0.0.1", "10.0.0.256"),
    ("ipv6", "::1", "10.0.0.1"),
    ("cidr", "10.0.0.0/8", "10.0.0.0/33"),
    ("byte", "aGVsbG8=", "not base64!"),
    ("int32", "anything", None),  # not a string format the server checks
])
def test_string_formats(fmt: str, good: str, bad: str | None) -> None:
    schema = {"type": "object", "properties": {"v": {"type": "string", "format": fmt}}}
    assert validate({"v": good}, schema) == []
    if bad is not None:
        (cause,) = validate({"v": bad}, schema)
        assert (cause.field, cause.reason) == ("v", "FieldValueInvalid")
        assert cause.message.endswith(f'v in body must be of type {fmt}: "{bad}"')
