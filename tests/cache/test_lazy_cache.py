"""Informers cache lazily decoded objects (``kgen_runtime.meta._lazy``), over real HTTP.

A sync whose handlers only key objects builds none of them; a read from the cache builds
the one it reads; a cached document that does not build lets the informer sync and raises,
naming the object, on the first touch (the typed client's own list raises at once).
"""

from __future__ import annotations

import asyncio
import copy
import threading
from typing import Any

import pytest
from pydantic import BaseModel, ValidationError

from kgen_runtime.cache import (
    AsyncSharedInformerFactory,
    DeletedFinalStateUnknown,
    KeyFuncError,
    SharedInformerFactory,
    drop_managed_fields,
    meta_namespace_key_func,
)
from kgen_runtime.meta import KubeList, KubeObject, ObjectMeta
from kgen_runtime.meta._lazy import lazy_model, untouched_document
from kgen_runtime.resource import Resource
from kgen_runtime.rest import AsyncHTTPTransport, AsyncResourceClient
from kgen_runtime.rest.client import ResourceClient
from tests.cache._fakes import WAIT, eventually
from tests.cache._foo import FOO, Foo, foo, foos, served


class Spec(BaseModel):
    replicas: int | None = None


class StrictFoo(KubeObject):
    """Foo with a typed spec: a ``replicas`` that is not an integer does not build."""

    api_version: str = "example.com/v1"
    kind: str = "Foo"
    spec: Spec | None = None


class StrictFooList(KubeList[StrictFoo]):
    api_version: str = "example.com/v1"
    kind: str = "FooList"


STRICT = Resource(group="example.com", version="v1", kind="Foo", plural="foos",
                  singular="foo", namespaced=True, model=StrictFoo, list_model=StrictFooList)


class Keys:
    """A handler that only keys what it hears of, as an enqueueing controller does."""

    def __init__(self) -> None:
        self.keys: list[str] = []
        self.lock = threading.Lock()

    def on_add(self, obj: Any) -> None:
        with self.lock:
            self.keys.append(meta_namespace_key_func(obj))

    def on_update(self, old: Any, new: Any) -> None:
        with self.lock:
            self.keys.append(meta_namespace_key_func(new))

    def on_delete(self, obj: Any) -> None:
        with self.lock:
            self.keys.append(meta_namespace_key_func(obj))


def test_a_sync_that_only_keys_objects_builds_none_and_a_read_builds_one() -> None:
    with served() as (_, transport):
        client = foos(transport)
        for name in ("a", "b", "c"):
            client.create(foo(name, app=name))
        factory = SharedInformerFactory(transport)
        informer = factory.informer_for(FOO)
        keys = Keys()
        informer.add_event_handler(keys.on_add, keys.on_update, keys.on_delete)
        stop = threading.Event()
        try:
            factory.start(stop)
            assert factory.wait_for_cache_sync(stop, timeout=WAIT) == {FOO.gvr: True}
            eventually(lambda: len(keys.keys) == 3)
            assert sorted(keys.keys) == ["default/a", "default/b", "default/c"]
            cached = informer.indexer.list()
            assert all(untouched_document(obj) is not None for obj in cached)
            assert sorted(map(id, informer.indexer.by_index("namespace", "default"))) == sorted(
                map(id, cached))
            assert all(untouched_document(obj) is not None for obj in cached)

            b = informer.indexer.get_by_key("default/b")
            assert b is not None and b.metadata.labels == {"app": "b"}
            assert type(b) is Foo and b == client.get("b")
            assert untouched_document(informer.indexer.get_by_key("default/a")) is not None

            changed = client.get("c")
            changed.metadata.labels = {"app": "changed"}
            client.update(changed)
            eventually(lambda: keys.keys.count("default/c") == 2)
            c = informer.indexer.get_by_key("default/c")
            assert untouched_document(c) is not None  # watched objects stay lazy too
            assert c.metadata.labels == {"app": "changed"}
        finally:
            factory.shutdown()


def bad_and_good(transport: Any) -> None:
    """Store a Foo whose spec.replicas is a string (the test server keeps any spec) and a
    good one."""
    client = foos(transport)
    client.create(Foo(metadata=ObjectMeta(name="bad", namespace="default"),
                      spec={"replicas": "three"}))
    client.create(Foo(metadata=ObjectMeta(name="good", namespace="default"),
                      spec={"replicas": 3}))


def assert_fails_on_touch(cached: Any) -> None:
    for _ in range(2):  # every touch raises again
        with pytest.raises(ValidationError) as error:
            _ = cached.spec
        assert error.value.title == "StrictFoo default/bad", error.value.title
        assert [e["loc"] for e in error.value.errors()] == [("spec", "replicas")]


def test_a_cached_document_that_does_not_build_raises_on_first_touch() -> None:
    with served() as (_, transport):
        bad_and_good(transport)
        strict = ResourceClient(transport, STRICT, "default")
        with pytest.raises(ValidationError, match=r"FooList: items\[0\] default/bad"):
            strict.list()  # the typed client stays eager
        factory = SharedInformerFactory(transport)
        informer = factory.informer_for(STRICT)
        stop = threading.Event()
        try:
            factory.start(stop)
            assert factory.wait_for_cache_sync(stop, timeout=WAIT) == {STRICT.gvr: True}
            assert sorted(informer.indexer.list_keys()) == ["default/bad", "default/good"]
            assert_fails_on_touch(informer.indexer.get_by_key("default/bad"))
            good = informer.indexer.get_by_key("default/good")
            assert good is not None and good.spec == Spec(replicas=3)
        finally:
            factory.shutdown()


def test_an_async_informer_caches_a_bad_document_the_same_way() -> None:
    async def run() -> None:
        with served() as (server, sync_transport):
            bad_and_good(sync_transport)
            transport = AsyncHTTPTransport(server.config())
            strict: AsyncResourceClient[StrictFoo, StrictFooList] = AsyncResourceClient(
                transport, STRICT, "default")
            factory = AsyncSharedInformerFactory(transport)
            informer = factory.informer_for(STRICT)
            try:
                with pytest.raises(ValidationError, match=r"FooList: items\[0\] default/bad"):
                    await strict.list()  # the typed client stays eager
                factory.start()
                assert await factory.wait_for_cache_sync(timeout=WAIT) == {STRICT.gvr: True}
                assert sorted(informer.indexer.list_keys()) == ["default/bad", "default/good"]
                assert_fails_on_touch(informer.indexer.get_by_key("default/bad"))
                good = informer.indexer.get_by_key("default/good")
                assert good is not None and good.spec == Spec(replicas=3)
            finally:
                await factory.shutdown()
                await transport.aclose()

    asyncio.run(run())


@pytest.mark.parametrize("managed", [[{"manager": "m", "operation": "Update"}], None])
def test_drop_managed_fields_drops_them_from_an_untouched_document(managed: Any) -> None:
    document = {"apiVersion": "example.com/v1", "kind": "Foo",
                "metadata": {"name": "a", "namespace": "default", "managedFields": managed}}
    lazy = lazy_model(Foo, copy.deepcopy(document))
    assert drop_managed_fields(lazy) is lazy
    assert untouched_document(lazy) is not None
    eager = drop_managed_fields(Foo.model_from_wire(copy.deepcopy(document)))
    assert lazy.model_dump() == eager.model_dump()
    assert lazy.metadata.model_fields_set == eager.metadata.model_fields_set


def test_the_key_function_keys_untouched_objects_from_their_documents() -> None:
    """``meta_namespace_key_func`` (the FIFO's and the indexer's) reads the key of an
    untouched object from its document without building it, gives the key an eager object
    of the same metadata gets, and raises (or builds) as the eager object would where the
    document has no usable name."""
    def lazy(**metadata: Any) -> StrictFoo:
        return lazy_model(StrictFoo, {"metadata": metadata})

    objects = [
        lazy(namespace="default", name="a"), lazy(namespace="", name="b"),
        lazy(namespace=None, name="c"), lazy(name="d"),
        StrictFoo(metadata=ObjectMeta(namespace="eager", name="e")),
        DeletedFinalStateUnknown("gone/f", None),
    ]
    assert [meta_namespace_key_func(obj) for obj in objects] == [
        "default/a", "b", "c", "d", "eager/e", "gone/f"]
    assert all(untouched_document(obj) is not None for obj in objects[:4])  # none built

    for unkeyable in (lazy(namespace="default"), lazy(namespace="default", name="")):
        with pytest.raises(KeyFuncError, match=r"no metadata\.name"):
            meta_namespace_key_func(unkeyable)
    with pytest.raises(ValidationError, match=r"metadata\.name"):
        meta_namespace_key_func(lazy(namespace="default", name=7))
