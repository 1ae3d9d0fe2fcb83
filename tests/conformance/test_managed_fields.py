"""metadata.managedFields: every write recorded per manager, and server-side apply's conflicts
with the managers of ordinary writes."""

from __future__ import annotations

import re
from typing import Any

import pytest
from foo_api.samplecontroller.v1alpha1.models import FooSpec, FooStatus

from kgen_runtime.groupversion import GroupVersionResource
from kgen_runtime.meta import Unstructured
from kgen_runtime.rest.errors import BadRequestError, ConflictError
from tests.conformance._backends import Backend
from tests.conformance._foos import foo

API_VERSION = "samplecontroller.k8s.io/v1alpha1"
FOOS = GroupVersionResource("samplecontroller.k8s.io", "v1alpha1", "foos")
_RFC3339_SECONDS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ")


def entries(obj: Any) -> list[dict[str, Any]]:
    """The managedFields of ``obj`` with each ``time`` checked (RFC 3339, seconds) and dropped,
    sorted by manager (the server sorts by operation, then time: the second a test's writes
    fall in is not for it to decide). An entry of a write that changed nothing has no time
    (see :func:`stamped`)."""
    managed: list[dict[str, Any]] = obj.model_dump()["metadata"]["managedFields"]
    for entry in managed:
        time = entry.pop("time", None)
        assert time is None or _RFC3339_SECONDS.fullmatch(time), entry
    return sorted(managed, key=lambda entry: entry["manager"])


def stamped(obj: Any) -> dict[str, bool]:
    """Which managers' entries carry a ``time``."""
    return {entry["manager"]: entry.get("time") is not None
            for entry in obj.model_dump()["metadata"]["managedFields"]}


def update_entry(manager: str, fields: dict[str, Any], **extra: str) -> dict[str, Any]:
    return {"manager": manager, "operation": "Update", "apiVersion": API_VERSION,
            "fieldsType": "FieldsV1", "fieldsV1": fields, **extra}


SPEC_FIELDS = {"f:spec": {".": {}, "f:deploymentName": {}, "f:replicas": {}}}


def test_a_create_records_its_manager_and_fields(backend: Backend) -> None:
    created = backend.foos.create(foo("a", 2, labels={"app": "x"}), field_manager="creator")

    assert entries(created) == [update_entry("creator", {
        "f:metadata": {"f:labels": {".": {}, "f:app": {}}}, **SPEC_FIELDS})]


def test_without_a_field_manager_the_user_agent_names_the_manager(backend: Backend) -> None:
    created = backend.foos.create(foo("a"))

    assert [entry["manager"] for entry in entries(created)] == ["kgen-runtime"]


def test_an_update_takes_the_fields_it_changes_from_their_owner(backend: Backend) -> None:
    created = backend.foos.create(foo("a", 2), field_manager="creator")
    created.spec = FooSpec(deployment_name="a-deployment", replicas=3)

    updated = backend.foos.update(created, field_manager="scaler")

    assert entries(updated) == [
        update_entry("creator", {"f:spec": {".": {}, "f:deploymentName": {}}}),
        update_entry("scaler", {"f:spec": {"f:replicas": {}}}),
    ]


def test_a_status_write_is_recorded_with_its_subresource(backend: Backend) -> None:
    created = backend.foos.create(foo("a"), field_manager="creator")
    created.status = FooStatus(available_replicas=1)

    updated = backend.foos.update_status(created, field_manager="controller")

    assert entries(updated) == [
        update_entry("controller", {"f:status": {".": {}, "f:availableReplicas": {}}},
                     subresource="status"),
        update_entry("creator", SPEC_FIELDS),
    ]


def test_a_write_that_changes_nothing_records_nothing(backend: Backend) -> None:
    created = backend.foos.create(foo("a"), field_manager="creator")

    unchanged = backend.foos.update(created, field_manager="idle")

    assert unchanged.metadata.resource_version == created.metadata.resource_version
    assert entries(unchanged) == [update_entry("creator", SPEC_FIELDS)]


def test_apply_owns_what_it_applies_and_shares_equal_values(backend: Backend) -> None:
    backend.foos.create(foo("a", 2), field_manager="creator")

    applied = backend.foos.apply(foo("a", 2), field_manager="applier")

    # managedFieldsUpdater.Apply: the object did not change, so the new entry gets no time
    assert stamped(applied) == {"applier": False, "creator": True}
    assert entries(applied) == [
        {"manager": "applier", "operation": "Apply", "apiVersion": API_VERSION,
         "fieldsType": "FieldsV1",
         "fieldsV1": {"f:spec": {"f:deploymentName": {}, "f:replicas": {}}}},
        update_entry("creator", SPEC_FIELDS),
    ]


def test_apply_conflicts_with_an_update_manager_with_the_servers_message(
    backend: Backend,
) -> None:
    backend.foos.create(foo("a", 1), field_manager="creator")

    with pytest.raises(ConflictError) as raised:
        backend.foos.apply(foo("a", 2), field_manager="applier")

    assert raised.value.message == (
        f'Apply failed with 1 conflict: conflict with "creator" using {API_VERSION}: '
        ".spec.replicas")
    [cause] = raised.value.causes
    assert (cause.reason, cause.message, cause.field) == (
        "FieldManagerConflict", f'conflict with "creator" using {API_VERSION}',
        ".spec.replicas")


def test_forced_apply_takes_the_field_and_a_manager_left_with_nothing_goes(
    backend: Backend,
) -> None:
    created = backend.foos.create(foo("a", 1), field_manager="creator")
    created.spec = FooSpec(deployment_name="a-deployment", replicas=2)
    backend.foos.update(created, field_manager="scaler")

    forced = backend.foos.apply(foo("a", 3), field_manager="applier", force=True)

    assert forced.spec == FooSpec(deployment_name="a-deployment", replicas=3)
    assert [(entry["manager"], entry["fieldsV1"]) for entry in entries(forced)] == [
        ("applier", {"f:spec": {"f:deploymentName": {}, "f:replicas": {}}}),
        ("creator", {"f:spec": {".": {}, "f:deploymentName": {}}}),
    ]


def test_apply_without_a_kind_is_a_bad_request(backend: Backend) -> None:
    foos = backend.clientset.dynamic.resource(FOOS).namespace(backend.namespace)
    config = Unstructured.model_validate(
        {"apiVersion": API_VERSION, "metadata": {"name": "a"}, "spec": {"replicas": 1}})

    with pytest.raises(BadRequestError) as raised:
        foos.apply(config, field_manager="applier")

    assert raised.value.message == f"invalid object type: {API_VERSION}, Kind="
