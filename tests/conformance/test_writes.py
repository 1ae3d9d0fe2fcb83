"""create, update, update_status, patch and apply, and how metadata.generation moves."""

from __future__ import annotations

import pytest
from foo_api.samplecontroller.v1alpha1 import Foo
from foo_api.samplecontroller.v1alpha1.models import FooSpec, FooStatus

from kgen_runtime.meta import ObjectMeta
from kgen_runtime.rest.errors import (
    AlreadyExistsError,
    BadRequestError,
    ConflictError,
    InvalidError,
    NotFoundError,
)
from tests.conformance._backends import Backend, normalised
from tests.conformance._foos import foo

MANAGER = "kgen-conformance"

# -- create -----------------------------------------------------------------------------------


def test_create_fills_in_what_the_server_owns(backend: Backend) -> None:
    sent = foo("a", 3, labels={"app": "x"})
    sent.status = FooStatus(available_replicas=3)  # the status subresource drops it

    created = backend.foos.create(sent)

    meta = created.metadata
    assert meta.name == "a" and meta.namespace == backend.namespace
    assert meta.uid and meta.resource_version and meta.creation_timestamp is not None
    assert meta.generation == 1 and meta.labels == {"app": "x"}
    assert created.spec == FooSpec(deployment_name="a-deployment", replicas=3)
    assert created.status is None
    assert sent.metadata.uid is None  # the argument is only read


def test_create_with_generate_name_gets_a_unique_name(backend: Backend) -> None:
    template = Foo(metadata=ObjectMeta(generate_name="gen-"), spec=FooSpec(replicas=1))

    first, second = backend.foos.create(template), backend.foos.create(template)

    assert first.metadata.name and second.metadata.name
    assert first.metadata.name.startswith("gen-") and len(first.metadata.name) > len("gen-")
    assert first.metadata.name != second.metadata.name
    assert first.metadata.generate_name == "gen-"
    assert sorted(f.metadata.name or "" for f in backend.foos.list().items) == sorted(
        [first.metadata.name, second.metadata.name]
    )


def test_create_of_an_existing_name_is_already_exists(backend: Backend) -> None:
    original = backend.foos.create(foo("a"))

    with pytest.raises(AlreadyExistsError) as caught:
        backend.foos.create(foo("a", 7))

    status = caught.value.status
    assert (status.code, status.reason) == (409, "AlreadyExists")
    assert status.details is not None and status.details.name == "a"
    assert normalised(backend.foos.get("a")) == normalised(original)


def test_create_without_a_name_is_invalid(backend: Backend) -> None:
    with pytest.raises(InvalidError) as caught:
        backend.foos.create(Foo(spec=FooSpec(replicas=1)))

    assert [cause.field for cause in caught.value.causes] == ["metadata.name"]


def test_unknown_fields_are_pruned_or_refused_under_strict_validation(backend: Backend) -> None:
    sent = Foo.model_validate(
        {"metadata": {"name": "a"}, "spec": {"replicas": 1, "colour": "blue"}, "extra": True}
    )

    created = backend.foos.create(sent)
    with pytest.raises(BadRequestError) as caught:
        backend.foos.create(
            sent.model_copy(update={"metadata": ObjectMeta(name="b")}), field_validation="Strict"
        )

    assert created.spec is not None and created.spec.model_extra == {}
    assert created.model_extra == {}
    assert "colour" in caught.value.message
    with pytest.raises(NotFoundError):
        backend.foos.get("b")


# -- update -----------------------------------------------------------------------------------


def test_update_replaces_the_spec_and_refuses_a_stale_resource_version(backend: Backend) -> None:
    created = backend.foos.create(foo("a", 1))
    changed = created.deepcopy()
    assert changed.spec is not None
    changed.spec.replicas = 4

    updated = backend.foos.update(changed)
    with pytest.raises(ConflictError) as caught:
        backend.foos.update(changed)  # still carries the old resourceVersion

    assert updated.spec is not None and updated.spec.replicas == 4
    assert updated.metadata.resource_version != created.metadata.resource_version
    assert updated.metadata.generation == 2
    assert (caught.value.status.code, caught.value.status.reason) == (409, "Conflict")
    assert normalised(backend.foos.get("a")) == normalised(updated)


def test_update_ignores_status(backend: Backend) -> None:
    created = backend.foos.create(foo("a", 1))
    changed = created.deepcopy()
    changed.status = FooStatus(available_replicas=9)
    changed.metadata.labels = {"seen": "yes"}

    updated = backend.foos.update(changed)

    assert updated.status is None and updated.metadata.labels == {"seen": "yes"}
    assert backend.foos.get("a").status is None


def test_update_of_a_custom_resource_needs_a_resource_version(backend: Backend) -> None:
    backend.foos.create(foo("a", 1))

    with pytest.raises(InvalidError) as caught:
        backend.foos.update(foo("a", 2))  # no resourceVersion: not allowed for custom resources

    assert [cause.field for cause in caught.value.causes] == ["metadata.resourceVersion"]
    assert backend.foos.get("a").spec == FooSpec(deployment_name="a-deployment", replicas=1)


def test_update_of_a_missing_object_is_not_found(backend: Backend) -> None:
    created = backend.foos.create(foo("a"))
    backend.foos.delete("a")

    with pytest.raises(NotFoundError):
        backend.foos.update(created)


def test_update_status_changes_only_the_status(backend: Backend) -> None:
    created = backend.foos.create(foo("a", 1))
    changed = created.deepcopy()
    changed.status = FooStatus(available_replicas=1)
    changed.spec = FooSpec(deployment_name="elsewhere", replicas=5)

    updated = backend.foos.update_status(changed)

    assert updated.status == FooStatus(available_replicas=1)
    assert updated.spec == FooSpec(deployment_name="a-deployment", replicas=1)
    assert updated.metadata.generation == 1
    assert normalised(backend.foos.get("a")) == normalised(updated)
    with pytest.raises(ConflictError):
        backend.foos.update_status(changed)


# -- generation -------------------------------------------------------------------------------


def test_generation_moves_on_spec_changes_only(backend: Backend) -> None:
    backend.foos.create(foo("a", 1))

    labelled = backend.foos.patch("a", {"metadata": {"labels": {"app": "x"}}})
    with_status = backend.foos.patch_status("a", {"status": {"availableReplicas": 1}})
    same_spec = backend.foos.patch("a", {"spec": {"replicas": 1}})
    new_spec = backend.foos.patch("a", {"spec": {"replicas": 2}})
    again = backend.foos.patch("a", {"spec": {"deploymentName": "other"}})

    generations = [
        obj.metadata.generation for obj in (labelled, with_status, same_spec, new_spec, again)
    ]
    assert generations == [1, 1, 1, 2, 3]
    assert with_status.status == FooStatus(available_replicas=1)


# -- patch ------------------------------------------------------------------------------------


def test_merge_patch_merges_maps_and_null_deletes(backend: Backend) -> None:
    backend.foos.create(foo("a", 1, labels={"app": "x", "tier": "web"}))

    patched = backend.foos.patch(
        "a", {"metadata": {"labels": {"tier": None, "new": "yes"}}, "spec": {"replicas": 3}}
    )

    assert patched.metadata.labels == {"app": "x", "new": "yes"}
    assert patched.spec == FooSpec(deployment_name="a-deployment", replicas=3)


def test_json_patch_applies_operations_in_order(backend: Backend) -> None:
    backend.foos.create(foo("a", 1))

    patched = backend.foos.patch(
        "a",
        [
            {"op": "test", "path": "/spec/replicas", "value": 1},
            {"op": "replace", "path": "/spec/replicas", "value": 2},
            {"op": "add", "path": "/metadata/labels", "value": {"app": "x"}},
            {"op": "remove", "path": "/spec/deploymentName"},
        ],
        patch_type="json",
    )

    assert patched.spec == FooSpec(replicas=2)
    assert patched.metadata.labels == {"app": "x"}


def test_json_patch_with_a_failed_test_changes_nothing(backend: Backend) -> None:
    created = backend.foos.create(foo("a", 1))

    with pytest.raises(InvalidError):
        backend.foos.patch(
            "a",
            [
                {"op": "replace", "path": "/spec/replicas", "value": 2},
                {"op": "test", "path": "/spec/replicas", "value": 1},
            ],
            patch_type="json",
        )

    assert normalised(backend.foos.get("a")) == normalised(created)


def test_patch_of_a_missing_object_is_not_found(backend: Backend) -> None:
    with pytest.raises(NotFoundError):
        backend.foos.patch("missing", {"spec": {"replicas": 2}})


# -- server-side apply ------------------------------------------------------------------------


def test_apply_creates_then_updates_what_the_manager_sets(backend: Backend) -> None:
    applied = backend.foos.apply(foo("a", 2), field_manager=MANAGER)
    reapplied = backend.foos.apply(
        Foo(
            metadata=ObjectMeta(name="a", labels={"app": "x"}),
            spec=FooSpec(deployment_name="a-deployment", replicas=3),
        ),
        field_manager=MANAGER,
    )

    assert applied.metadata.uid and applied.spec == FooSpec(
        deployment_name="a-deployment", replicas=2
    )
    assert reapplied.metadata.uid == applied.metadata.uid
    assert reapplied.spec == FooSpec(deployment_name="a-deployment", replicas=3)
    assert reapplied.metadata.labels == {"app": "x"}
    assert reapplied.metadata.generation == 2


def test_apply_conflicts_on_another_managers_field_unless_forced(backend: Backend) -> None:
    backend.foos.apply(foo("a", 2), field_manager=MANAGER)
    takeover = Foo(metadata=ObjectMeta(name="a"), spec=FooSpec(replicas=5))

    with pytest.raises(ConflictError):
        backend.foos.apply(takeover, field_manager="someone-else")
    forced = backend.foos.apply(takeover, field_manager="someone-else", force=True)

    assert forced.spec is not None and forced.spec.replicas == 5


def test_apply_conflicts_with_fields_set_by_an_ordinary_write(backend: Backend) -> None:
    backend.foos.create(foo("a", 1), field_manager="creator")

    with pytest.raises(ConflictError):
        backend.foos.apply(foo("a", 2), field_manager=MANAGER)
    forced = backend.foos.apply(foo("a", 2), field_manager=MANAGER, force=True)

    assert forced.spec is not None and forced.spec.replicas == 2


def test_apply_fills_a_map_the_manager_applied_empty_before(backend: Backend) -> None:
    empty = foo("a", 1, labels={})
    backend.foos.apply(empty, field_manager=MANAGER)

    filled = backend.foos.apply(foo("a", 1, labels={"app": "x"}), field_manager=MANAGER)

    assert filled.metadata.labels == {"app": "x"}


def test_apply_needs_a_field_manager(backend: Backend) -> None:
    with pytest.raises(ValueError, match="field_manager"):
        backend.foos.apply(foo("a"), field_manager="")
