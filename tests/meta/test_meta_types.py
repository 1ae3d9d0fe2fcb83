"""The meta/v1 types: wire round trips, construction rules, deepcopy independence."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import orjson
import pytest
from pydantic import ValidationError

import kgen_runtime.meta as meta
from kgen_runtime.meta import (
    Condition,
    FieldSelectorRequirement,
    KubeModel,
    LabelSelector,
    LabelSelectorRequirement,
    ListMeta,
    ManagedFieldsEntry,
    ObjectMeta,
    OwnerReference,
    ShardInfo,
    Status,
    StatusCause,
    StatusDetails,
    Unstructured,
    UnstructuredList,
    format_micro_time,
    format_time,
    parse_time,
)

OWNER = {
    "apiVersion": "apps/v1",
    "kind": "Deployment",
    "name": "web",
    "uid": "u-1",
    "controller": True,
    "blockOwnerDeletion": True,
}
MANAGED = {
    "manager": "kubectl",
    "operation": "Apply",
    "apiVersion": "v1",
    "time": "2024-05-01T12:00:00Z",
    "fieldsType": "FieldsV1",
    "fieldsV1": {"f:metadata": {"f:labels": {".": {}, "f:app": {}}}},
    "subresource": "status",
}
FULL_OBJECT_META = {
    "name": "web-1",
    "generateName": "web-",
    "namespace": "default",
    "selfLink": "/api/v1/namespaces/default/pods/web-1",
    "uid": "0b4f",
    "resourceVersion": "42",
    "generation": 3,
    "creationTimestamp": "2024-05-01T12:00:00Z",
    "deletionTimestamp": "2024-05-02T12:00:00Z",
    "deletionGracePeriodSeconds": 30,
    "labels": {"app": "web"},
    "annotations": {"note": "x"},
    "ownerReferences": [OWNER],
    "finalizers": ["example.com/cleanup"],
    "managedFields": [MANAGED],
}
CONDITION = {
    "type": "Ready",
    "status": "True",
    "observedGeneration": 3,
    "lastTransitionTime": "2024-05-01T12:00:00Z",
    "reason": "AllGood",
    "message": "",
}
STATUS_DETAILS: dict[str, Any] = {
    "name": "x",
    "group": "samplecontroller.k8s.io",
    "kind": "foos",
    "uid": "u",
    "causes": [{"reason": "FieldValueInvalid", "message": "bad", "field": "spec.x"}],
    "retryAfterSeconds": 1,
}
STATUS = {
    "apiVersion": "v1",
    "kind": "Status",
    "metadata": {},
    "status": "Failure",
    "message": 'foos "x" not found',
    "reason": "NotFound",
    "details": STATUS_DETAILS,
    "code": 404,
}
REQUIREMENT = {"key": "tier", "operator": "In", "values": ["a", "b"]}
SELECTOR = {
    "matchLabels": {"app": "web"},
    "matchExpressions": [REQUIREMENT],
}

WIRE_CASES: list[tuple[type[KubeModel], dict[str, Any]]] = [
    (ObjectMeta, FULL_OBJECT_META),
    (OwnerReference, OWNER),
    (ManagedFieldsEntry, MANAGED),
    (
        ListMeta,
        {"selfLink": "/x", "resourceVersion": "5", "continue": "c", "remainingItemCount": 2,
         "shardInfo": {"selector": "shardRange(object.metadata.uid, '0x0000000000000000', "
                                   "'0x8000000000000000')"}},
    ),
    (ShardInfo, {"selector": "s"}),
    (Condition, CONDITION),
    (Status, STATUS),
    (StatusDetails, STATUS_DETAILS),
    (StatusCause, {"reason": "r", "message": "m", "field": "f"}),
    (LabelSelector, SELECTOR),
    (LabelSelectorRequirement, REQUIREMENT),
    (FieldSelectorRequirement, {"key": "spec.nodeName", "operator": "NotIn", "values": ["n1"]}),
]


@pytest.mark.parametrize(("cls", "data"), WIRE_CASES, ids=lambda v: getattr(v, "__name__", ""))
def test_every_field_round_trips(cls: type[KubeModel], data: dict[str, Any]) -> None:
    with_unknown = {**data, "futureField": {"a": None}}
    decoded = cls.model_validate_json(orjson.dumps(with_unknown))
    assert decoded.model_dump() == with_unknown
    assert orjson.loads(decoded.model_dump_json()) == with_unknown
    assert decoded.__pydantic_fields_set__ == {*type(decoded).model_fields, "futureField"}


def test_object_meta_nested_types_are_models() -> None:
    m = ObjectMeta.model_validate(FULL_OBJECT_META)
    assert m.owner_references == [OwnerReference.model_validate(OWNER)]
    assert m.managed_fields is not None and m.managed_fields[0].fields_type == "FieldsV1"
    assert m.deletion_grace_period_seconds == 30


def test_null_timestamps_round_trip() -> None:
    m = ObjectMeta.model_validate({"name": "n", "creationTimestamp": None})
    assert m.model_dump() == {"name": "n", "creationTimestamp": None}


def _mutate_object_meta(m: Any) -> None:
    m.labels["app"] = "other"
    m.annotations.clear()
    m.owner_references[0].name = "changed"
    m.finalizers.append("more")
    m.managed_fields[0].fields_v1["f:metadata"]["f:labels"].clear()
    m.__pydantic_extra__["futureField"]["a"] = 1


def _mutate_status(s: Any) -> None:
    s.details.causes[0].message = "changed"
    s.details.causes.append(StatusCause())
    s.metadata.resource_version = "9"


def _mutate_selector(s: Any) -> None:
    s.match_labels["app"] = "x"
    s.match_expressions[0].values.append("c")


DEEPCOPY_CASES: list[tuple[type[KubeModel], dict[str, Any], Callable[[Any], None]]] = [
    (ObjectMeta, FULL_OBJECT_META, _mutate_object_meta),
    (Status, STATUS, _mutate_status),
    (LabelSelector, SELECTOR, _mutate_selector),
    (Condition, CONDITION, lambda c: setattr(c, "status", "False")),
    (ListMeta, {"continue": "c"}, lambda m: setattr(m, "continue_", None)),
    (OwnerReference, OWNER, lambda o: setattr(o, "uid", "x")),
]


@pytest.mark.parametrize(
    ("cls", "data", "mutate"), DEEPCOPY_CASES, ids=lambda v: getattr(v, "__name__", "")
)
def test_deepcopy_is_independent(
    cls: type[KubeModel], data: dict[str, Any], mutate: Callable[[Any], None]
) -> None:
    original = cls.model_validate({**data, "futureField": {"a": None}})
    before = original.model_dump()
    copy = original.deepcopy()
    assert type(copy) is cls
    assert copy == original
    assert copy.__pydantic_fields_set__ == original.__pydantic_fields_set__
    mutate(copy)
    assert copy.model_dump() != before
    assert original.model_dump() == before


def test_required_fields_are_checked_on_construction_only() -> None:
    with pytest.raises(ValidationError) as info:
        OwnerReference(kind="Deployment")
    assert sorted(e["loc"][0] for e in info.value.errors() if e["type"] == "missing") == [
        "api_version",
        "name",
        "uid",
    ]
    assert OwnerReference.model_validate({}).model_dump() == {}


def test_condition_rules() -> None:
    assert Condition(
        type="Ready", status="True", last_transition_time="t", reason="Ok", message=""
    ).model_dump() == {
        "type": "Ready",
        "status": "True",
        "lastTransitionTime": "t",
        "reason": "Ok",
        "message": "",
    }
    with pytest.raises(ValidationError) as info:
        Condition(
            type="Ready",
            status="Maybe",
            last_transition_time="t",
            reason="not ok",
            message="",
            observed_generation=-1,
        )
    assert sorted((e["loc"][0], e["type"]) for e in info.value.errors()) == [
        ("observed_generation", "greater_than_equal"),
        ("reason", "string_pattern_mismatch"),
        ("status", "literal_error"),
    ]
    assert Condition.model_validate({"status": "Maybe"}).status == "Maybe"


def test_label_selector_operator_enum() -> None:
    with pytest.raises(ValidationError):
        LabelSelectorRequirement(key="k", operator="Like")
    assert LabelSelectorRequirement(key="k", operator="Exists").values is None


def test_status_defaults() -> None:
    assert Status(status="Success").model_dump() == {
        "apiVersion": "v1",
        "kind": "Status",
        "metadata": {},
        "status": "Success",
    }


def test_unstructured_item_access() -> None:
    obj = Unstructured.model_validate(
        {"apiVersion": "x.io/v1", "kind": "Thing", "metadata": {"name": "a"}, "spec": {"n": 1}}
    )
    assert obj["apiVersion"] == "x.io/v1"
    assert obj["metadata"] is obj.metadata
    obj["spec"]["n"] = 2
    obj["status"] = {"ok": True}
    obj["metadata"] = {"name": "b", "labels": {"k": "v"}}
    obj["kind"] = "Other"
    assert "spec" in obj and "metadata" in obj and "nothing" not in obj
    del obj["status"]
    with pytest.raises(KeyError):
        obj["status"]
    with pytest.raises(KeyError):
        del obj["kind"]
    assert obj.model_dump() == {
        "apiVersion": "x.io/v1",
        "kind": "Other",
        "metadata": {"name": "b", "labels": {"k": "v"}},
        "spec": {"n": 2},
    }


def test_unstructured_deepcopy_and_list() -> None:
    data = {
        "apiVersion": "x.io/v1",
        "kind": "ThingList",
        "metadata": {"resourceVersion": "3"},
        "items": [{"apiVersion": "x.io/v1", "kind": "Thing", "metadata": {}, "spec": [1, {}]}],
        "listExtra": 1,
    }
    things = UnstructuredList.model_validate(data)
    copy = things.deepcopy()
    assert type(copy) is UnstructuredList and type(copy.items[0]) is Unstructured
    copy.items[0]["spec"][1]["x"] = 1
    copy.items[0].metadata.name = "n"
    assert things.model_dump() == data
    assert copy.model_dump() != data


def test_time_helpers() -> None:
    moment = datetime(2024, 5, 1, 14, 0, 0, 123456, tzinfo=timezone(timedelta(hours=2)))
    assert format_time(moment) == "2024-05-01T12:00:00Z"
    assert format_micro_time(moment) == "2024-05-01T12:00:00.123456Z"
    assert parse_time("2024-05-01T12:00:00Z") == datetime(2024, 5, 1, 12, tzinfo=UTC)
    assert parse_time(format_micro_time(moment)) == moment
    with pytest.raises(ValueError, match="time zone"):
        parse_time("2024-05-01T12:00:00")
    with pytest.raises(ValueError, match="naive"):
        format_time(datetime(2024, 5, 1))


def test_public_surface() -> None:
    assert sorted(meta.__all__) == [
        "APIObject",
        "Condition",
        "ConditionLike",
        "Field",
        "FieldRules",
        "FieldSelectorRequirement",
        "KubeList",
        "KubeModel",
        "KubeObject",
        "LabelSelector",
        "LabelSelectorRequirement",
        "ListMeta",
        "ManagedFieldsEntry",
        "MergeRules",
        "ObjectMeta",
        "OwnerReference",
        "ShardInfo",
        "Status",
        "StatusCause",
        "StatusDetails",
        "TypeMeta",
        "Unstructured",
        "UnstructuredList",
        "WireEventFilter",
        "WireFilter",
        "copy_json",
        "find_status_condition",
        "format_micro_time",
        "format_time",
        "is_status_condition_false",
        "is_status_condition_present_and_equal",
        "is_status_condition_true",
        "map_type",
        "merge_rules",
        "no_gc",
        "parse_time",
        "remove_status_condition",
        "set_status_condition",
        "wire_name",
    ]
    assert all(hasattr(meta, name) for name in meta.__all__)


def test_unstructured_list_items_get_the_lists_kind_when_they_have_none() -> None:
    """kube-apiserver writes a built-in list's items without kind and apiVersion; decoded as
    unstructured they get the list's (apimachinery ``decodeToList``), and an item's own stay."""
    listed = UnstructuredList.model_validate({
        "kind": "ConfigMapList", "apiVersion": "v1", "metadata": {},
        "items": [{"metadata": {"name": "a"}},
                  {"kind": "Other", "apiVersion": "x/v1", "metadata": {"name": "b"}}]})
    assert [(i.kind, i.api_version, i.metadata.name) for i in listed.items] == [
        ("ConfigMap", "v1", "a"), ("Other", "x/v1", "b")]
