"""dryRun=All: every write is validated and answered as if done, and nothing is stored."""

from __future__ import annotations

import pytest
from foo_api.samplecontroller.v1alpha1.models import FooSpec

from kgen_runtime.rest import ListOptions
from kgen_runtime.rest.errors import InvalidError, NotFoundError
from tests.conformance._backends import BOUND, Backend, normalised
from tests.conformance._foos import foo, invalid_foo, next_events


def test_dry_run_create_answers_without_storing(backend: Backend) -> None:
    answered = backend.foos.create(foo("a", 2), dry_run=True)

    assert answered.metadata.name == "a" and answered.spec == FooSpec(
        deployment_name="a-deployment", replicas=2
    )
    with pytest.raises(NotFoundError):
        backend.foos.get("a")
    with pytest.raises(InvalidError):
        backend.foos.create(invalid_foo("a", {"replicas": 11}), dry_run=True)


def test_dry_run_writes_leave_the_stored_object_alone(backend: Backend) -> None:
    created = backend.foos.create(foo("a", 1))
    changed = created.deepcopy()
    changed.spec = FooSpec(deployment_name="a-deployment", replicas=4)

    with backend.foos.watch(
        ListOptions(resource_version=created.metadata.resource_version), read_timeout=BOUND
    ) as watch:
        updated = backend.foos.update(changed, dry_run=True)
        patched = backend.foos.patch("a", {"spec": {"replicas": 5}}, dry_run=True)
        applied = backend.foos.apply(
            foo("a", 6), field_manager="kgen-conformance", force=True, dry_run=True
        )
        backend.foos.delete("a", dry_run=True)
        backend.foos.delete_collection(dry_run=True)
        backend.foos.patch("a", {"metadata": {"labels": {"real": "write"}}})

        [(kind, first_event)] = next_events(iter(watch), 1)

    assert [obj.spec.replicas if obj.spec else None for obj in (updated, patched, applied)] == [
        4,
        5,
        6,
    ]
    assert kind == "MODIFIED" and first_event.metadata.labels == {"real": "write"}
    assert first_event.spec == created.spec
    stored = backend.foos.get("a")
    assert normalised(stored)["spec"] == normalised(created)["spec"]
