"""422 Invalid from the CRD's schema (replicas in 1..10, types), on every write verb.

All three backends validate with the same schema: the fake has the CRD installed in its core,
so it shares the test server's validation (a bare ``FakeClientset()`` would not validate).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from foo_api.samplecontroller.v1alpha1.models import FooSpec

from kgen_runtime.rest.errors import InvalidError, NotFoundError
from tests.conformance._backends import Backend, normalised
from tests.conformance._foos import foo, invalid_foo


def causes_of(error: InvalidError) -> list[tuple[str | None, str | None]]:
    return [(cause.field, cause.reason) for cause in error.causes]


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"replicas": 11}, [("spec.replicas", "FieldValueInvalid")]),
        ({"replicas": 0}, [("spec.replicas", "FieldValueInvalid")]),
        ({"replicas": 0, "deploymentName": "x"}, [("spec.replicas", "FieldValueInvalid")]),
    ],
)
def test_create_against_the_schema_is_invalid_with_causes(
    backend: Backend, spec: dict[str, Any], expected: list[tuple[str, str]]
) -> None:
    with pytest.raises(InvalidError) as caught:
        backend.foos.create(invalid_foo("a", spec))

    status = caught.value.status
    assert (status.code, status.reason) == (422, "Invalid")
    assert status.details is not None and status.details.name == "a"
    assert (status.details.group, status.details.kind) == ("samplecontroller.k8s.io", "Foo")
    assert causes_of(caught.value) == expected
    with pytest.raises(NotFoundError):
        backend.foos.get("a")


def test_every_write_verb_is_validated_and_changes_nothing_when_invalid(
    backend: Backend,
) -> None:
    created = backend.foos.create(foo("a", 1))
    too_many = invalid_foo("a", {"replicas": 20})
    too_many.metadata.resource_version = created.metadata.resource_version

    attempts: dict[str, Callable[[], object]] = {
        "update": lambda: backend.foos.update(too_many),
        "merge patch": lambda: backend.foos.patch("a", {"spec": {"replicas": 20}}),
        "json patch": lambda: backend.foos.patch(
            "a", [{"op": "replace", "path": "/spec/replicas", "value": 20}], patch_type="json"
        ),
        "apply": lambda: backend.foos.apply(
            invalid_foo("a", {"replicas": 20}), field_manager="kgen-conformance", force=True
        ),  # forced: on a real server the creator owns spec.replicas
    }
    refused: dict[str, list[tuple[str | None, str | None]]] = {}
    for verb, attempt in attempts.items():
        with pytest.raises(InvalidError) as caught:
            attempt()
        refused[verb] = causes_of(caught.value)

    assert refused == {verb: [("spec.replicas", "FieldValueInvalid")] for verb in attempts}
    assert normalised(backend.foos.get("a")) == normalised(created)


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"replicas": "three"}, [("spec.replicas", "FieldValueTypeInvalid")]),
        ({"deploymentName": 7}, [("spec.deploymentName", "FieldValueTypeInvalid")]),
    ],
)
def test_values_of_the_wrong_type_are_invalid(
    backend: Backend, spec: dict[str, Any], expected: list[tuple[str, str]]
) -> None:
    """Typed models refuse these on the client; a patch is how they reach the server."""
    created = backend.foos.create(foo("a", 1))

    with pytest.raises(InvalidError) as caught:
        backend.foos.patch("a", {"spec": spec})

    assert causes_of(caught.value) == expected
    assert normalised(backend.foos.get("a")) == normalised(created)


def test_the_bounds_themselves_are_valid(backend: Backend) -> None:
    low, high = backend.foos.create(foo("low", 1)), backend.foos.create(foo("high", 10))

    assert low.spec == FooSpec(deployment_name="low-deployment", replicas=1)
    assert high.spec == FooSpec(deployment_name="high-deployment", replicas=10)
