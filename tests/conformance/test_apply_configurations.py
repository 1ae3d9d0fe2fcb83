"""Typed server-side apply round trip: apply an apply configuration, extract what a manager
owns from managedFields, modify it, apply it again; with two managers and a forced conflict."""

from __future__ import annotations

import pytest
from foo_api.samplecontroller.v1alpha1.applyconfigurations import (
    FooApplyConfiguration,
    FooSpecApplyConfiguration,
    FooStatusApplyConfiguration,
    extract_foo,
)
from foo_api.samplecontroller.v1alpha1.models import FooSpec, FooStatus

from kgen_runtime.apply import UNSET, ObjectMetaApplyConfiguration
from kgen_runtime.rest.errors import ConflictError
from tests.conformance._backends import Backend
from tests.conformance._foos import foo
from tests.conformance.test_managed_fields import API_VERSION, entries


def config(
    namespace: str, *, labels: dict[str, str] | None = None, **spec: int | str
) -> FooApplyConfiguration:
    """A Foo ``a`` apply configuration of exactly ``labels`` and ``spec``."""
    metadata = ObjectMetaApplyConfiguration(name="a", namespace=namespace)
    if labels is not None:
        metadata.labels = labels
    return FooApplyConfiguration(metadata=metadata, spec=FooSpecApplyConfiguration(**spec))


def apply_entry(manager: str, fields: dict[str, object]) -> dict[str, object]:
    return {"manager": manager, "operation": "Apply", "apiVersion": API_VERSION,
            "fieldsType": "FieldsV1", "fieldsV1": fields}


def test_apply_extract_modify_reapply_with_two_managers_and_a_forced_conflict(
    backend: Backend,
) -> None:
    ns = backend.namespace
    alice = config(ns, labels={"app": "web"}, deployment_name="a-deployment", replicas=1)

    applied = backend.foos.apply(alice, field_manager="alice")

    assert applied.spec == FooSpec(deployment_name="a-deployment", replicas=1)
    assert applied.metadata.labels == {"app": "web"}
    assert extract_foo(applied, "alice") == alice
    assert extract_foo(applied, "alice").model_dump() == {
        "apiVersion": API_VERSION, "kind": "Foo",
        "metadata": {"name": "a", "namespace": ns, "labels": {"app": "web"}},
        "spec": {"deploymentName": "a-deployment", "replicas": 1},
    }
    # Another manager owns nothing yet: its extraction is the object's identity only.
    assert extract_foo(applied, "bob") == FooApplyConfiguration(
        metadata=ObjectMetaApplyConfiguration(name="a", namespace=ns))

    with pytest.raises(ConflictError) as raised:
        backend.foos.apply(config(ns, replicas=3), field_manager="bob")
    assert raised.value.message == (
        'Apply failed with 1 conflict: conflict with "alice": .spec.replicas')
    [cause] = raised.value.causes
    assert (cause.reason, cause.message, cause.field) == (
        "FieldManagerConflict", 'conflict with "alice"', ".spec.replicas")

    forced = backend.foos.apply(config(ns, replicas=3), field_manager="bob", force=True)

    assert forced.spec == FooSpec(deployment_name="a-deployment", replicas=3)
    assert entries(forced) == [
        apply_entry("alice", {"f:metadata": {"f:labels": {"f:app": {}}},
                              "f:spec": {"f:deploymentName": {}}}),
        apply_entry("bob", {"f:spec": {"f:replicas": {}}}),
    ]
    assert extract_foo(forced, "bob") == config(ns, replicas=3)
    mine = extract_foo(forced, "alice")
    assert mine == config(ns, labels={"app": "web"}, deployment_name="a-deployment")

    # Alice changes what she owns and applies her extraction again: no conflict, and bob's
    # replicas stay.
    assert isinstance(mine.metadata, ObjectMetaApplyConfiguration)
    assert isinstance(mine.spec, FooSpecApplyConfiguration)
    mine.metadata.labels = {"app": "web", "tier": "front"}
    mine.spec.deployment_name = "a-deployment-2"

    reapplied = backend.foos.apply(mine, field_manager="alice")

    assert reapplied.spec == FooSpec(deployment_name="a-deployment-2", replicas=3)
    assert reapplied.metadata.labels == {"app": "web", "tier": "front"}
    assert extract_foo(reapplied, "alice") == mine
    assert extract_foo(reapplied, "bob") == config(ns, replicas=3)

    # Leaving a field out of the next apply gives it up: what alice drops and nobody else
    # owns is removed. Her empty spec extracts as unset, as client-go's does.
    mine.metadata.labels = {"app": "web"}
    mine.spec.deployment_name = UNSET
    dropped = backend.foos.apply(mine, field_manager="alice")

    assert dropped.metadata.labels == {"app": "web"}
    assert dropped.spec == FooSpec(replicas=3)
    assert extract_foo(dropped, "alice") == FooApplyConfiguration(
        metadata=ObjectMetaApplyConfiguration(name="a", namespace=ns, labels={"app": "web"}))


def test_extraction_leaves_out_what_the_manager_wrote_by_update(backend: Backend) -> None:
    created = backend.foos.create(foo("a", 2), field_manager="alice")

    assert extract_foo(created, "alice").model_dump() == {
        "apiVersion": API_VERSION, "kind": "Foo",
        "metadata": {"name": "a", "namespace": backend.namespace}}


def test_status_applied_through_its_subresource_is_extracted_with_it(backend: Backend) -> None:
    ns = backend.namespace
    backend.foos.apply(config(ns, replicas=1), field_manager="alice")
    status = FooApplyConfiguration(
        metadata=ObjectMetaApplyConfiguration(name="a", namespace=ns),
        status=FooStatusApplyConfiguration(available_replicas=1))

    applied = backend.foos.apply_status(status, field_manager="controller")

    assert applied.status == FooStatus(available_replicas=1)
    assert extract_foo(applied, "controller", subresource="status") == status
    assert extract_foo(applied, "controller") == FooApplyConfiguration(
        metadata=ObjectMetaApplyConfiguration(name="a", namespace=ns))
    assert extract_foo(applied, "alice") == config(ns, replicas=1)
