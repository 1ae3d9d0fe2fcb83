"""Field selectors a core kind registers beyond metadata.name/namespace (events'), and the
server's refusal of a label neither it nor a custom resource supports."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from kgen_runtime.groupversion import GroupVersionResource
from kgen_runtime.meta import Unstructured
from kgen_runtime.rest import DynamicResourceClient, ListOptions
from kgen_runtime.rest.errors import BadRequestError
from tests.conformance._backends import Backend

EVENTS = GroupVersionResource("", "v1", "events")


@pytest.fixture
def events(backend: Backend) -> Iterator[DynamicResourceClient]:
    """The events of the test's namespace; the ones a test creates are deleted afterwards."""
    client = backend.clientset.dynamic.resource(EVENTS).namespace(backend.namespace)
    yield client
    client.delete_collection(ListOptions(label_selector="kgen-conformance=field-selectors"))


def event(backend: Backend, name: str, involved: str, reason: str) -> Unstructured:
    body: dict[str, Any] = {
        "apiVersion": "v1", "kind": "Event",
        "metadata": {"name": name, "labels": {"kgen-conformance": "field-selectors"}},
        "involvedObject": {"apiVersion": "v1", "kind": "ConfigMap", "name": involved,
                           "namespace": backend.namespace},
        "reason": reason, "message": "m", "type": "Normal", "source": {"component": "kgen"},
    }
    return Unstructured.model_validate(body)


def listed_names(client: DynamicResourceClient, selector: str) -> list[str]:
    items = client.list(ListOptions(field_selector=selector)).items
    return sorted(str(item.model_dump()["metadata"]["name"]) for item in items)


def test_events_select_by_involved_object_and_reason(
    backend: Backend, events: DynamicResourceClient
) -> None:
    target = f"cm-{uuid.uuid4().hex[:8]}"
    events.create(event(backend, "e1", target, "Created"))
    events.create(event(backend, "e2", target, "Updated"))
    events.create(event(backend, "e3", f"{target}-other", "Created"))

    assert listed_names(events, f"involvedObject.name={target}") == ["e1", "e2"]
    assert listed_names(events, f"involvedObject.name={target},reason=Updated") == ["e2"]
    assert listed_names(events, "involvedObject.kind=ConfigMap,source=kgen") == [
        "e1", "e2", "e3"]


def test_an_unsupported_label_is_refused_with_the_servers_message(
    backend: Backend, events: DynamicResourceClient
) -> None:
    with pytest.raises(BadRequestError) as core_kind:
        events.list(ListOptions(field_selector="involvedObject.color=red"))
    with pytest.raises(BadRequestError) as custom_resource:
        backend.foos.list(ListOptions(field_selector="spec.replicas=1"))

    assert core_kind.value.message == "field label not supported: involvedObject.color"
    assert custom_resource.value.message == "field label not supported: spec.replicas"
