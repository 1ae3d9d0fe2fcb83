"""get and list: selectors, paging, resourceVersion semantics, NotFound."""

from __future__ import annotations

import pytest

from kgen_runtime.rest import ListOptions
from kgen_runtime.rest.errors import InvalidError, NotFoundError
from tests.conformance._backends import Backend, normalised
from tests.conformance._foos import foo, names


def test_get_returns_the_stored_object(backend: Backend) -> None:
    created = backend.foos.create(foo("a", 2, labels={"app": "x"}))

    fetched = backend.foos.get("a")

    assert normalised(fetched) == normalised(created)
    assert fetched.spec is not None and fetched.spec.replicas == 2
    assert fetched.metadata.namespace == backend.namespace
    assert fetched.api_version == "samplecontroller.k8s.io/v1alpha1" and fetched.kind == "Foo"


def test_get_of_a_missing_object_is_not_found(backend: Backend) -> None:
    with pytest.raises(NotFoundError) as caught:
        backend.foos.get("missing")

    status = caught.value.status
    assert (status.code, status.reason) == (404, "NotFound")
    assert status.details is not None
    assert (status.details.name, status.details.group, status.details.kind) == (
        "missing",
        "samplecontroller.k8s.io",
        "foos",
    )


def test_list_is_ordered_by_name_and_carries_a_resource_version(backend: Backend) -> None:
    for name in ("c", "a", "b"):
        backend.foos.create(foo(name))

    listed = backend.foos.list()

    assert names(listed.items) == ["a", "b", "c"]
    assert listed.kind == "FooList" and listed.metadata.resource_version
    assert all(item.kind == "Foo" for item in listed.items)


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("app=x", ["a", "b"]),
        ("app=x,tier!=web", ["b"]),
        ("tier in (web,db)", ["a", "b"]),
        ("tier notin (web)", ["b", "c"]),
        ("!tier", ["c"]),
        ("app", ["a", "b", "c"]),
        ("app=z", []),
    ],
)
def test_list_by_label_selector(backend: Backend, selector: str, expected: list[str]) -> None:
    backend.foos.create(foo("a", labels={"app": "x", "tier": "web"}))
    backend.foos.create(foo("b", labels={"app": "x", "tier": "db"}))
    backend.foos.create(foo("c", labels={"app": "y"}))

    listed = backend.foos.list(ListOptions(label_selector=selector))

    assert names(listed.items) == expected


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("metadata.name=b", ["b"]),
        ("metadata.name!=b", ["a", "c"]),
        ("metadata.name!=a,metadata.name!=c", ["b"]),
    ],
)
def test_list_by_field_selector(backend: Backend, selector: str, expected: list[str]) -> None:
    for name in ("a", "b", "c"):
        backend.foos.create(foo(name))

    listed = backend.foos.list(ListOptions(field_selector=selector))

    assert names(listed.items) == expected
    namespace_selector = f"metadata.namespace={backend.namespace}"
    assert len(backend.foos.list(ListOptions(field_selector=namespace_selector)).items) == 3


def test_paging_with_limit_and_continue_reads_one_consistent_snapshot(backend: Backend) -> None:
    for index in range(5):
        backend.foos.create(foo(f"foo-{index}"))

    first = backend.foos.list(ListOptions(limit=2))
    backend.foos.create(foo("foo-9"))  # after the snapshot: not in the later pages
    backend.foos.delete("foo-3")  # likewise still listed
    second = backend.foos.list(ListOptions(limit=2, continue_=first.metadata.continue_))
    third = backend.foos.list(ListOptions(limit=2, continue_=second.metadata.continue_))

    assert names(first.items) == ["foo-0", "foo-1"]
    assert first.metadata.remaining_item_count == 3
    assert names(second.items) == ["foo-2", "foo-3"]
    assert names(third.items) == ["foo-4"]
    assert not third.metadata.continue_ and third.metadata.remaining_item_count is None
    assert first.metadata.resource_version == second.metadata.resource_version
    assert names(backend.foos.list().items) == ["foo-0", "foo-1", "foo-2", "foo-4", "foo-9"]


def test_list_at_an_exact_resource_version_sees_the_past(backend: Backend) -> None:
    backend.foos.create(foo("a"))
    then = backend.foos.list().metadata.resource_version
    assert then
    backend.foos.create(foo("b"))
    backend.foos.patch("a", {"spec": {"replicas": 5}})

    past = backend.foos.list(ListOptions(resource_version=then, resource_version_match="Exact"))
    recent = backend.foos.list(
        ListOptions(resource_version=then, resource_version_match="NotOlderThan")
    )

    assert names(past.items) == ["a"] and past.metadata.resource_version == then
    assert past.items[0].spec is not None and past.items[0].spec.replicas == 1
    assert names(recent.items) == ["a", "b"]
    assert recent.items[0].spec is not None and recent.items[0].spec.replicas == 5


def test_resource_version_match_without_a_version_is_invalid(backend: Backend) -> None:
    with pytest.raises(InvalidError):
        backend.foos.list(ListOptions(resource_version_match="NotOlderThan"))
