"""delete (preconditions, propagation policy, grace period, finalizers) and delete_collection."""

from __future__ import annotations

import pytest

from kgen_runtime.rest import ListOptions, Preconditions, PropagationPolicy
from kgen_runtime.rest.errors import ConflictError, NotFoundError
from tests.conformance._backends import BOUND, Backend
from tests.conformance._foos import foo, names, next_events


def test_delete_removes_the_object(backend: Backend) -> None:
    backend.foos.create(foo("a"))

    backend.foos.delete("a")

    with pytest.raises(NotFoundError):
        backend.foos.get("a")
    with pytest.raises(NotFoundError):
        backend.foos.delete("a")


def test_delete_preconditions_must_match(backend: Backend) -> None:
    created = backend.foos.create(foo("a"))
    newer = backend.foos.patch("a", {"spec": {"replicas": 2}})

    with pytest.raises(ConflictError):
        backend.foos.delete("a", preconditions=Preconditions(uid="not-the-uid"))
    with pytest.raises(ConflictError):
        backend.foos.delete(
            "a", preconditions=Preconditions(resource_version=created.metadata.resource_version)
        )
    backend.foos.get("a")  # still there
    backend.foos.delete(
        "a",
        preconditions=Preconditions(
            uid=newer.metadata.uid, resource_version=newer.metadata.resource_version
        ),
    )

    with pytest.raises(NotFoundError):
        backend.foos.get("a")


@pytest.mark.parametrize(
    ("policy", "grace_period"), [("Background", None), (None, 0), ("Background", 30)]
)
def test_background_deletion_is_immediate_whatever_the_grace_period(
    backend: Backend, policy: PropagationPolicy | None, grace_period: int | None
) -> None:
    """Custom resources have no graceful deletion: without finalizers they go at once."""
    backend.foos.create(foo("a"))

    backend.foos.delete("a", propagation_policy=policy, grace_period_seconds=grace_period)

    with pytest.raises(NotFoundError):
        backend.foos.get("a")


@pytest.mark.parametrize(
    ("policy", "finalizer"), [("Foreground", "foregroundDeletion"), ("Orphan", "orphan")]
)
def test_foreground_and_orphan_deletion_hand_the_object_to_the_garbage_collector(
    backend: Backend, policy: PropagationPolicy, finalizer: str
) -> None:
    created = backend.foos.create(foo("a"))
    with backend.foos.watch(
        ListOptions(resource_version=created.metadata.resource_version), read_timeout=BOUND
    ) as watch:
        backend.foos.delete("a", propagation_policy=policy)

        [(kind, terminating)] = next_events(iter(watch), 1)

    assert kind == "MODIFIED"
    assert terminating.metadata.deletion_timestamp is not None
    assert terminating.metadata.finalizers == [finalizer]


def test_finalizers_hold_a_deleted_object_until_removed(backend: Backend) -> None:
    created = backend.foos.create(foo("a", finalizers=["example.com/hold"]))
    with backend.foos.watch(
        ListOptions(resource_version=created.metadata.resource_version), read_timeout=BOUND
    ) as watch:
        events = iter(watch)
        backend.foos.delete("a")
        terminating = backend.foos.get("a")
        backend.foos.delete("a")  # deleting again changes nothing
        backend.foos.patch("a", {"metadata": {"finalizers": None}})

        seen = next_events(events, 2)

    assert terminating.metadata.deletion_timestamp is not None
    assert terminating.metadata.finalizers == ["example.com/hold"]
    assert [kind for kind, _ in seen] == ["MODIFIED", "DELETED"]
    assert seen[0][1].metadata.deletion_timestamp == terminating.metadata.deletion_timestamp
    with pytest.raises(NotFoundError):
        backend.foos.get("a")


def test_delete_collection_deletes_what_the_selector_matches(backend: Backend) -> None:
    backend.foos.create(foo("a", labels={"app": "x"}))
    backend.foos.create(foo("b", labels={"app": "x"}))
    backend.foos.create(foo("c", labels={"app": "y"}))

    backend.foos.delete_collection(ListOptions(label_selector="app=x"))

    assert names(backend.foos.list().items) == ["c"]
    backend.foos.delete_collection()
    assert backend.foos.list().items == []
