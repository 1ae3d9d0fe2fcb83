"""A small typed kind served by the test API server, for the over-HTTP cache tests."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from kgen_runtime.meta import KubeList, KubeObject, ObjectMeta
from kgen_runtime.resource import Resource
from kgen_runtime.rest._request import Transport
from kgen_runtime.rest.client import ResourceClient
from kgen_runtime.rest.transport import HTTPTransport
from kgen_runtime.testing import TestAPIServer


class Foo(KubeObject):
    api_version: str = "example.com/v1"
    kind: str = "Foo"
    spec: dict[str, Any] | None = None


class FooList(KubeList[Foo]):
    api_version: str = "example.com/v1"
    kind: str = "FooList"


FOO = Resource(
    group="example.com",
    version="v1",
    kind="Foo",
    plural="foos",
    singular="foo",
    namespaced=True,
    model=Foo,
    list_model=FooList,
)


def foo(name: str, namespace: str = "default", **labels: str) -> Foo:
    return Foo(metadata=ObjectMeta(name=name, namespace=namespace, labels=labels or None))


@contextmanager
def served(**options: Any) -> Iterator[tuple[TestAPIServer, HTTPTransport]]:
    """A started test API server serving Foo (``options`` for TestAPIServer), and an HTTP
    transport to it."""
    with TestAPIServer(bookmark_interval=0.2, **options) as server:
        server.register(FOO)
        transport = HTTPTransport(server.config())
        try:
            yield server, transport
        finally:
            transport.close()


def foos(transport: Transport, namespace: str = "default") -> ResourceClient[Foo, FooList]:
    return ResourceClient(transport, FOO, namespace)
