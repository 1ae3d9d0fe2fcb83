"""What extraction keeps of an object for a fieldsV1 set, node kind by node kind (client-go's
``ExtractInto`` over the set's leaves)."""

from __future__ import annotations

from typing import Any

from kgen_runtime.api.core.v1.models import Pod
from kgen_runtime.apply import applied_fields, extract_owned

LIVE: dict[str, Any] = {
    "metadata": {"name": "p", "labels": {"a": "1", "b": "2"}, "finalizers": ["x", "y"]},
    "spec": {
        "nodeSelector": {"zone": "z1", "disk": "ssd"},
        "tolerations": [{"key": "k1"}, {"key": "k2"}],
        "containers": [{"name": "c1", "image": "i1", "args": ["--v"]},
                       {"name": "c2", "image": "i2"}],
        "securityContext": {"runAsUser": 1},
        "hostname": None,
    },
}


def test_leaves_sets_keyed_items_atomic_values_and_empty_objects() -> None:
    fields = {
        "f:metadata": {"f:labels": {"f:a": {}}, "f:finalizers": {'v:"y"': {}}},
        "f:spec": {
            "f:nodeSelector": {},  # atomic map: the whole map
            "f:tolerations": {},  # atomic list: the whole list
            "f:containers": {'k:{"name":"c2"}': {".": {}, "f:image": {}}},
            "f:securityContext": {},  # an object owned as a leaf: nothing
            "f:hostname": {},  # null: nothing
        },
    }

    assert extract_owned(LIVE, fields, Pod.model_validate(LIVE)) == {
        "metadata": {"labels": {"a": "1"}, "finalizers": ["y"]},
        "spec": {
            "nodeSelector": {"zone": "z1", "disk": "ssd"},
            "tolerations": [{"key": "k1"}, {"key": "k2"}],
            "containers": [{"name": "c2", "image": "i2"}],
        },
    }


def test_without_the_model_every_map_is_granular() -> None:
    assert extract_owned(LIVE, {"f:spec": {"f:nodeSelector": {}}}) == {}


def test_a_keyed_item_owned_as_a_leaf_is_the_whole_item_and_owned_nothing_is_empty() -> None:
    fields = {"f:spec": {"f:containers": {'k:{"name":"c1"}': {}}}}
    assert extract_owned(LIVE, fields) == {
        "spec": {"containers": [{"name": "c1", "image": "i1", "args": ["--v"]}]}}
    assert extract_owned(LIVE, {"f:spec": {"f:containers": {'k:{"name":"gone"}': {}}}}) == {}


def test_the_apply_entry_is_found_by_manager_operation_and_subresource() -> None:
    entries = [
        {"manager": "m", "operation": "Update", "fieldsV1": {"f:a": {}}},
        {"manager": "m", "operation": "Apply", "subresource": "status", "fieldsV1": {"f:b": {}}},
        {"manager": "m", "operation": "Apply", "fieldsV1": {"f:c": {}}},
    ]
    wire = {"metadata": {"managedFields": entries}}
    assert applied_fields(wire, "m") == {"f:c": {}}
    assert applied_fields(wire, "m", "status") == {"f:b": {}}
    assert applied_fields(wire, "other") is None
