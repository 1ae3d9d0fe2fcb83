"""ResourceClient verbs over HTTP: the exact requests sent and the typed results."""

from __future__ import annotations

import json
from typing import Any

import pytest

from kgen_runtime.meta import ObjectMeta
from kgen_runtime.rest import (
    ListOptions,
    Preconditions,
    ResourceClient,
    Scale,
    ScaleClientMixin,
    ScaleSpec,
    StatusClientMixin,
    watch_read_timeout,
)
from kgen_runtime.rest.errors import ConflictError, InvalidError, NotFoundError
from kgen_runtime.rest.transport import HTTPTransport
from tests.rest.conftest import (
    CLUSTER_THING,
    CORE_THING,
    FOO_RESOURCE,
    Foo,
    FooList,
    FooSpec,
    FooStatus,
    StubServer,
    Thing,
    ThingList,
)

FOOS = "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/ns/foos"


class FooClient(StatusClientMixin[Foo, FooList], ScaleClientMixin[Foo, FooList]):
    """What a generated client looks like: no logic."""


def foo_wire(name: str = "a", rv: str = "7", **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "samplecontroller.k8s.io/v1alpha1",
        "kind": "Foo",
        "metadata": {"name": name, "namespace": "ns", "resourceVersion": rv},
        "spec": {"deploymentName": "d", "replicas": 1},
        **extra,
    }


@pytest.fixture
def foos(transport: HTTPTransport) -> FooClient:
    return FooClient(transport, FOO_RESOURCE, "ns")


def new_foo(name: str = "a") -> Foo:
    return Foo(metadata=ObjectMeta(name=name), spec=FooSpec(deployment_name="d", replicas=1))


def test_get(server: StubServer, foos: FooClient) -> None:
    server.reply(200, foo_wire(future="kept"))
    foo = foos.get("a")
    assert (server.last.method, server.last.path, server.last.query) == ("GET", f"{FOOS}/a", [])
    assert isinstance(foo, Foo)
    assert foo.metadata.resource_version == "7"
    assert foo.spec == FooSpec(deployment_name="d", replicas=1)
    assert foo.model_dump()["future"] == "kept"
    foos.get("a", resource_version="0")
    assert server.last.query == [("resourceVersion", "0")]


def test_list_with_options(server: StubServer, foos: FooClient) -> None:
    server.reply(
        200,
        {
            "apiVersion": "samplecontroller.k8s.io/v1alpha1",
            "kind": "FooList",
            "metadata": {"resourceVersion": "9", "continue": "tok2"},
            "items": [foo_wire("a"), foo_wire("b")],
        },
    )
    options = ListOptions(
        label_selector="app=x",
        field_selector="metadata.name!=c",
        limit=2,
        continue_="tok1",
        resource_version="5",
        resource_version_match="NotOlderThan",
        timeout_seconds=30,
    )
    result = foos.list(options)
    assert (server.last.method, server.last.path) == ("GET", FOOS)
    assert server.last.query == [
        ("labelSelector", "app=x"),
        ("fieldSelector", "metadata.name!=c"),
        ("resourceVersion", "5"),
        ("resourceVersionMatch", "NotOlderThan"),
        ("limit", "2"),
        ("continue", "tok1"),
        ("timeoutSeconds", "30"),
    ]
    assert isinstance(result, FooList)
    assert [f.metadata.name for f in result.items] == ["a", "b"]
    assert all(isinstance(f, Foo) for f in result.items)
    assert result.metadata.continue_ == "tok2"


def test_list_keep_is_asked_with_each_items_wire_document_and_its_rejects_are_left_out(
    server: StubServer, foos: FooClient
) -> None:
    items = [foo_wire("a"), foo_wire("b"), foo_wire("c")]
    server.reply(200, {"kind": "FooList", "metadata": {"resourceVersion": "9"}, "items": items})
    asked: list[Any] = []

    def keep(document: dict[str, Any]) -> bool:
        asked.append(document)
        return document["metadata"]["name"] != "b"

    result = foos.list(keep=keep)
    assert asked == items
    assert [f.metadata.name for f in result.items] == ["a", "c"]
    assert result.metadata.resource_version == "9"


def test_list_across_namespaces(server: StubServer, transport: HTTPTransport) -> None:
    server.reply(200, {"items": []})
    assert FooClient(transport, FOO_RESOURCE, None).list().items == []
    assert server.last.path == "/apis/samplecontroller.k8s.io/v1alpha1/foos"
    assert server.last.query == []


def test_create(server: StubServer, foos: FooClient) -> None:
    server.reply(201, foo_wire(rv="1"))
    created = foos.create(new_foo(), dry_run=True, field_manager="me", field_validation="Strict")
    seen = server.last
    assert (seen.method, seen.path) == ("POST", FOOS)
    assert seen.query == [("dryRun", "All"), ("fieldManager", "me"), ("fieldValidation", "Strict")]
    assert seen.headers["content-type"] == "application/json"
    assert seen.json() == {
        "apiVersion": "samplecontroller.k8s.io/v1alpha1",
        "kind": "Foo",
        "metadata": {"name": "a"},
        "spec": {"deploymentName": "d", "replicas": 1},
    }
    assert created.metadata.resource_version == "1"


def test_create_fills_in_missing_type_fields(server: StubServer, transport: HTTPTransport) -> None:
    things: ResourceClient[Thing, ThingList] = ResourceClient(transport, CORE_THING, "ns")
    server.reply(201, {"metadata": {"name": "t"}})
    obj = Thing.model_validate({"metadata": {"name": "t"}, "data": {"k": "v"}})
    things.create(obj)
    assert server.last.path == "/api/v1/namespaces/ns/configmaps"
    assert server.last.json() == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "t"},
        "data": {"k": "v"},
    }
    assert (obj.api_version, obj.kind) == ("", "")


def test_update_and_conflict(server: StubServer, foos: FooClient) -> None:
    foo = Foo.model_validate(foo_wire())
    foo.spec = FooSpec(replicas=3)
    server.reply(200, foo_wire(rv="8"))
    assert foos.update(foo).metadata.resource_version == "8"
    assert (server.last.method, server.last.path) == ("PUT", f"{FOOS}/a")
    assert server.last.json()["spec"] == {"replicas": 3}
    assert server.last.json()["metadata"]["resourceVersion"] == "7"

    server.reply(
        409,
        {"kind": "Status", "code": 409, "reason": "Conflict", "message": "modified"},
    )
    with pytest.raises(ConflictError, match="modified") as caught:
        foos.update(foo)
    assert caught.value.status.code == 409


@pytest.mark.parametrize(
    ("patch_type", "content_type"),
    [
        ("merge", "application/merge-patch+json"),
        ("json", "application/json-patch+json"),
        ("strategic", "application/strategic-merge-patch+json"),
    ],
)
def test_patch(server: StubServer, foos: FooClient, patch_type: Any, content_type: str) -> None:
    server.reply(200, foo_wire())
    body: Any = (
        [{"op": "replace", "path": "/spec/replicas", "value": 2}]
        if patch_type == "json"
        else {"spec": {"replicas": 2, "deploymentName": None}}
    )
    foos.patch("a", body, patch_type=patch_type, field_manager="m")
    seen = server.last
    assert (seen.method, seen.path, seen.query) == ("PATCH", f"{FOOS}/a", [("fieldManager", "m")])
    assert seen.headers["content-type"] == content_type
    assert seen.json() == body


def test_patch_with_raw_bytes_and_bad_type(server: StubServer, foos: FooClient) -> None:
    server.reply(200, foo_wire())
    foos.patch("a", b'{"spec":{}}')
    assert server.last.body == b'{"spec":{}}'
    with pytest.raises(ValueError, match="unknown patch type"):
        foos.patch("a", {}, patch_type="apply")  # type: ignore[arg-type]


def test_apply(server: StubServer, foos: FooClient) -> None:
    server.reply(200, foo_wire())
    intent = Foo(metadata=ObjectMeta(name="a"), spec=FooSpec(replicas=2))
    applied = foos.apply(intent, field_manager="ctl", force=True, dry_run=True)
    seen = server.last
    assert (seen.method, seen.path) == ("PATCH", f"{FOOS}/a")
    assert seen.query == [("dryRun", "All"), ("fieldManager", "ctl"), ("force", "true")]
    assert seen.headers["content-type"] == "application/apply-patch+yaml"
    assert seen.json() == {
        "apiVersion": "samplecontroller.k8s.io/v1alpha1",
        "kind": "Foo",
        "metadata": {"name": "a"},
        "spec": {"replicas": 2},
    }
    assert isinstance(applied, Foo)
    with pytest.raises(ValueError, match="field_manager"):
        foos.apply(intent, field_manager="")


def test_delete_with_options(server: StubServer, foos: FooClient) -> None:
    server.reply(200, {"kind": "Status", "status": "Success"})
    foos.delete(
        "a",
        propagation_policy="Foreground",
        grace_period_seconds=0,
        preconditions=Preconditions(uid="u1", resource_version="7"),
        dry_run=True,
    )
    seen = server.last
    assert (seen.method, seen.path, seen.query) == ("DELETE", f"{FOOS}/a", [])
    assert seen.json() == {
        "kind": "DeleteOptions",
        "apiVersion": "v1",
        "propagationPolicy": "Foreground",
        "gracePeriodSeconds": 0,
        "preconditions": {"uid": "u1", "resourceVersion": "7"},
        "dryRun": ["All"],
    }
    server.reply(404, {"kind": "Status", "code": 404, "reason": "NotFound", "message": "nope"})
    with pytest.raises(NotFoundError, match="nope"):
        foos.delete("a")
    assert server.last.json() == {"kind": "DeleteOptions", "apiVersion": "v1"}


def test_delete_collection(server: StubServer, foos: FooClient) -> None:
    foos.delete_collection(ListOptions(label_selector="app=x"), propagation_policy="Background")
    seen = server.last
    assert (seen.method, seen.path) == ("DELETE", FOOS)
    assert seen.query == [("labelSelector", "app=x")]
    assert seen.json()["propagationPolicy"] == "Background"


def test_status_subresource(server: StubServer, foos: FooClient) -> None:
    foo = Foo.model_validate(foo_wire())
    foo.status = FooStatus(available_replicas=1)
    server.reply(200, foo_wire(status={"availableReplicas": 1}))
    updated = foos.update_status(foo, field_manager="ctl")
    assert (server.last.method, server.last.path) == ("PUT", f"{FOOS}/a/status")
    assert server.last.json()["status"] == {"availableReplicas": 1}
    assert updated.status == FooStatus(available_replicas=1)

    server.reply(200, foo_wire())
    foos.patch_status("a", {"status": {"availableReplicas": 2}})
    assert (server.last.method, server.last.path) == ("PATCH", f"{FOOS}/a/status")
    assert server.last.headers["content-type"] == "application/merge-patch+json"

    server.reply(200, foo_wire())
    foos.apply_status(foo, field_manager="ctl")
    assert (server.last.method, server.last.path) == ("PATCH", f"{FOOS}/a/status")
    assert server.last.headers["content-type"] == "application/apply-patch+yaml"
    assert server.last.query == [("fieldManager", "ctl")]


def test_scale_subresource(server: StubServer, foos: FooClient) -> None:
    scale_wire = {
        "apiVersion": "autoscaling/v1",
        "kind": "Scale",
        "metadata": {"name": "a", "namespace": "ns", "resourceVersion": "7"},
        "spec": {"replicas": 1},
        "status": {"replicas": 1, "selector": "app=a"},
    }
    server.reply(200, scale_wire)
    scale = foos.get_scale("a")
    assert (server.last.method, server.last.path) == ("GET", f"{FOOS}/a/scale")
    assert scale.spec.replicas == 1 and scale.status is not None
    assert scale.status.selector == "app=a"

    server.reply(200, scale_wire)
    foos.update_scale("a", Scale(spec=ScaleSpec(replicas=4)))
    assert (server.last.method, server.last.path) == ("PUT", f"{FOOS}/a/scale")
    assert server.last.json() == {
        "apiVersion": "autoscaling/v1",
        "kind": "Scale",
        "metadata": {"name": "a"},
        "spec": {"replicas": 4},
    }
    with pytest.raises(ValueError, match="is not 'a'"):
        foos.update_scale("a", Scale(metadata=ObjectMeta(name="b")))

    server.reply(200, scale_wire)
    foos.patch_scale("a", {"spec": {"replicas": 5}})
    assert (server.last.method, server.last.path) == ("PATCH", f"{FOOS}/a/scale")


def test_cluster_scoped_paths_ignore_the_namespace(
    server: StubServer, transport: HTTPTransport
) -> None:
    things: ResourceClient[Thing, ThingList] = ResourceClient(transport, CLUSTER_THING, "ns")
    server.reply(200, {"metadata": {"name": "t"}})
    things.get("t")
    assert server.last.path == "/apis/example.com/v1/things/t"
    server.reply(200, {"items": []})
    things.list()
    assert server.last.path == "/apis/example.com/v1/things"


def test_namespaced_single_object_verbs_need_a_namespace(transport: HTTPTransport) -> None:
    everywhere = FooClient(transport, FOO_RESOURCE, "")
    for call in (
        lambda: everywhere.get("a"),
        lambda: everywhere.create(new_foo()),
        lambda: everywhere.update(new_foo()),
        lambda: everywhere.delete("a"),
        lambda: everywhere.get_scale("a"),
    ):
        with pytest.raises(ValueError, match="namespaced"):
            call()


@pytest.mark.parametrize("name", ["", ".", "..", "a/b", "a%2F"])
def test_bad_names_are_refused_before_sending(
    server: StubServer, foos: FooClient, name: str
) -> None:
    with pytest.raises(ValueError, match="name"):
        foos.get(name)
    with pytest.raises(ValueError, match="name"):
        foos.update(Foo(metadata=ObjectMeta(name=name or None)))
    assert server.requests == []


def test_invalid_error_carries_field_causes(server: StubServer, foos: FooClient) -> None:
    server.reply(
        422,
        {
            "kind": "Status",
            "code": 422,
            "reason": "Invalid",
            "message": 'Foo "a" is invalid',
            "details": {"causes": [{"field": "spec.replicas", "reason": "FieldValueInvalid"}]},
        },
    )
    with pytest.raises(InvalidError) as caught:
        foos.create(new_foo())
    assert [c.field for c in caught.value.causes] == ["spec.replicas"]


def test_repr(foos: FooClient) -> None:
    assert repr(foos) == "FooClient('foos', namespace='ns')"


def test_watch_read_timeout_default() -> None:
    assert watch_read_timeout(None) is None
    assert watch_read_timeout(60) == 70.0
    assert watch_read_timeout(600) == 660.0


def test_objects_are_fresh_per_call(server: StubServer, foos: FooClient) -> None:
    server.reply(200, foo_wire())
    server.reply(200, foo_wire())
    first, second = foos.get("a"), foos.get("a")
    assert first == second and first is not second
    assert json.loads(first.model_dump_json()) == foo_wire()
