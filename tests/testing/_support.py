"""Helpers of the test-server tests: a raw HTTP client, the Foo CRD and Foo bodies."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Generator, Iterator
from typing import Any
from urllib.parse import urlencode

import orjson
import urllib3
from pydantic import Field

from kgen_runtime.groupversion import GroupVersionResource
from kgen_runtime.meta import KubeList, KubeObject
from kgen_runtime.resource import Resource, ScaleSubresource
from kgen_runtime.rest import Request
from kgen_runtime.testing import FakeClientsetBase, TestAPIServer

__all__ = [
    "BAR",
    "BARS",
    "BARS_GVR",
    "FOOS",
    "FOO_CRD",
    "Api",
    "Bar",
    "BarList",
    "FakeApi",
    "eventually",
    "foo",
    "take",
]

FOOS = "/apis/samplecontroller.k8s.io/v1alpha1/namespaces/ns/foos"

FOO_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "foos.samplecontroller.k8s.io",
                 "annotations": {"api-approved.kubernetes.io": "unapproved"}},
    "spec": {
        "group": "samplecontroller.k8s.io",
        "scope": "Namespaced",
        "names": {"plural": "foos", "singular": "foo", "kind": "Foo", "listKind": "FooList"},
        "versions": [{
            "name": "v1alpha1",
            "served": True,
            "storage": True,
            "subresources": {"status": {}, "scale": {
                "specReplicasPath": ".spec.replicas",
                "statusReplicasPath": ".status.availableReplicas",
                "labelSelectorPath": ".status.selector"}},
            "schema": {"openAPIV3Schema": {
                "type": "object",
                "properties": {
                    "spec": {
                        "type": "object",
                        "required": ["deploymentName"],
                        "properties": {
                            "deploymentName": {"type": "string", "maxLength": 20,
                                               "pattern": "^[a-z-]+$"},
                            "replicas": {"type": "integer", "minimum": 1, "maximum": 10,
                                         "default": 1},
                            "mode": {"type": "string", "enum": ["fast", "slow"]},
                            "port": {"x-kubernetes-int-or-string": True},
                            "tags": {"type": "array", "maxItems": 2,
                                     "items": {"type": "string", "minLength": 1}},
                            "extra": {"type": "object",
                                      "x-kubernetes-preserve-unknown-fields": True},
                            "note": {"type": "string", "nullable": True},
                            "template": {"type": "object",
                                         "x-kubernetes-embedded-resource": True,
                                         "x-kubernetes-preserve-unknown-fields": True},
                        },
                    },
                    "status": {"type": "object", "properties": {
                        "availableReplicas": {"type": "integer"},
                        "selector": {"type": "string"}}},
                },
            }},
        }],
    },
}


class Bar(KubeObject):
    api_version: str = Field(default="example.com/v1", validation_alias="apiVersion",
                             serialization_alias="apiVersion")
    kind: str = "Bar"
    spec: dict[str, Any] | None = None
    status: dict[str, Any] | None = None


class BarList(KubeList[Bar]):
    pass


BAR = Resource(group="example.com", version="v1", kind="Bar", plural="bars", singular="bar",
               namespaced=True, model=Bar, list_model=BarList, status_subresource=True,
               scale_subresource=ScaleSubresource(".spec.replicas", ".status.replicas"))
BARS_GVR = GroupVersionResource("example.com", "v1", "bars")
BARS = "/apis/example.com/v1/namespaces/ns/bars"


def foo(name: str, **spec: Any) -> dict[str, Any]:
    """A Foo body in namespace ``ns``."""
    return {"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
            "metadata": {"name": name}, "spec": {"deploymentName": "dep", **spec}}


def eventually(condition: Callable[[], bool], timeout: float = 5.0) -> bool:
    """Poll ``condition`` until it holds or ``timeout`` passes; returns its last value."""
    deadline = time.monotonic() + timeout
    pause = threading.Event()
    while not condition():
        if time.monotonic() >= deadline:
            return False
        pause.wait(0.005)
    return True


def take(events: Iterator[Any], count: int) -> list[tuple[str, str]]:
    """The next ``count`` events as ``(type, name)`` pairs."""
    return [(e["type"], e["object"]["metadata"]["name"]) for e in
            (next(events) for _ in range(count))]


class Api:
    """Raw HTTP against the server: every call returns ``(status, decoded JSON body)`` (the
    text of a body that is not JSON)."""

    def __init__(self, server: TestAPIServer) -> None:
        self.url = server.url
        self.http = urllib3.PoolManager(retries=False, timeout=urllib3.Timeout(10, 10))

    def call(self, method: str, path: str, body: Any = None, *, query: dict[str, Any] | None =
             None, content_type: str = "application/json",
             headers: dict[str, str] | None = None) -> tuple[int, Any]:
        url = self.url + path + ("?" + urlencode(query) if query else "")
        data = body if isinstance(body, bytes) else (
            None if body is None else orjson.dumps(body))
        headers = {**({"Content-Type": content_type} if data is not None else {}),
                   **(headers or {})}
        response = self.http.request(method, url, body=data, headers=headers)
        if not response.data:
            return response.status, None
        try:  # JSON also comes as text/plain (the /openapi/v3 index)
            return response.status, orjson.loads(response.data)
        except orjson.JSONDecodeError:
            return response.status, response.data.decode()  # e.g. Go's "404 page not found"

    def get(self, path: str, **query: Any) -> tuple[int, Any]:
        return self.call("GET", path, query=query or None)

    def post(self, path: str, body: Any) -> tuple[int, Any]:
        return self.call("POST", path, body)

    def put(self, path: str, body: Any) -> tuple[int, Any]:
        return self.call("PUT", path, body)

    def patch(self, path: str, body: Any, content_type: str = "application/merge-patch+json",
              **query: Any) -> tuple[int, Any]:
        return self.call("PATCH", path, body, content_type=content_type, query=query or None)

    def delete(self, path: str, body: Any = None, **query: Any) -> tuple[int, Any]:
        return self.call("DELETE", path, body, query=query or None)

    def watch(self, path: str, read_timeout: float = 5.0, headers: dict[str, str] | None = None,
              **query: Any) -> Generator[Any]:
        """Stream a watch; yields decoded events, ends with the stream."""
        query = {"watch": "true", **query}
        response = self.http.request("GET", self.url + path + "?" + urlencode(query),
                                     preload_content=False, headers=headers,
                                     timeout=urllib3.Timeout(connect=5, read=read_timeout))
        try:
            buffer = b""
            for chunk in response.stream(1024, decode_content=True):
                buffer += chunk
                while b"\n" in buffer:
                    line, buffer = buffer.split(b"\n", 1)
                    yield orjson.loads(line)
        finally:  # a stream left early cannot go back to the pool half-read
            response.close()
            response.release_conn()


class FakeApi(Api):
    """:class:`Api`'s calls (not ``watch``) through a fake clientset's transport, in process:
    the same core, with the fake's action log and reactors in front."""

    def __init__(self, fake: FakeClientsetBase) -> None:
        self.fake = fake

    def call(self, method: str, path: str, body: Any = None, *, query: dict[str, Any] | None =
             None, content_type: str = "application/json",
             headers: dict[str, str] | None = None) -> tuple[int, Any]:
        data = body if isinstance(body, bytes) else (
            None if body is None else orjson.dumps(body))
        response = self.fake.transport.send(Request(
            method, path, tuple((key, str(value)) for key, value in (query or {}).items()),
            data, content_type if data is not None else None,
            tuple((headers or {}).items())))
        raw = response.read()
        return response.status, orjson.loads(raw) if raw else None
