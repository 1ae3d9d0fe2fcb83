"""SharedInformerFactory over the in-process test API server (real HTTP)."""

from __future__ import annotations

import threading
from typing import Any

from kgen_runtime.cache import (
    GenericInformer,
    NamespacedLister,
    ResourceInformer,
    SharedInformerFactory,
    drop_managed_fields,
    wait_for_cache_sync,
)
from kgen_runtime.meta import Unstructured
from kgen_runtime.rest.options import ListOptions
from tests.cache._fakes import WAIT, Recorder, eventually
from tests.cache._foo import FOO, Foo, foo, foos, served


class FooLister(NamespacedLister[Foo]):
    resource = FOO


class FooInformer(ResourceInformer[Foo, FooLister]):
    resource = FOO
    lister_class = FooLister


def informer_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name.startswith("informer-")]


def test_one_informer_per_resource_and_start_is_idempotent() -> None:
    with served() as (_, transport):
        foos(transport).create(foo("a"))
        factory = SharedInformerFactory(transport)
        typed = FooInformer(factory)
        assert typed.informer is factory.informer_for(FOO)
        assert FooInformer(factory).informer is typed.informer
        stop = threading.Event()
        try:
            factory.start(stop)
            factory.start(stop)
            assert len(informer_threads()) == 1
            assert factory.wait_for_cache_sync(stop, timeout=WAIT) == {FOO.gvr: True}
            assert typed.lister.namespaced("default").get("a").metadata.name == "a"
            assert isinstance(typed.lister, FooLister)
        finally:
            factory.shutdown()
        assert stop.is_set()
        assert informer_threads() == []
        factory.start(stop)  # after shutdown: nothing starts
        assert informer_threads() == []


def test_namespace_and_tweak_filter_what_is_cached() -> None:
    with served() as (_, transport):
        foos(transport, "a").create(foo("web", "a", app="web"))
        foos(transport, "a").create(foo("db", "a", app="db"))
        foos(transport, "b").create(foo("web", "b", app="web"))

        def only_web(options: ListOptions) -> ListOptions:
            return ListOptions(**{**_fields(options), "label_selector": "app=web"})

        factory = SharedInformerFactory(transport, namespace="a", tweak_list_options=only_web)
        informer = factory.informer_for(FOO)
        stop = threading.Event()
        try:
            factory.start(stop)
            assert factory.wait_for_cache_sync(stop, timeout=WAIT)[FOO.gvr]
            assert informer.indexer.list_keys() == ["a/web"]
            foos(transport, "a").create(foo("web2", "a", app="web"))
            foos(transport, "a").create(foo("db2", "a", app="db"))
            foos(transport, "b").create(foo("web2", "b", app="web"))
            eventually(lambda: "a/web2" in informer.indexer)
            assert sorted(informer.indexer.list_keys()) == ["a/web", "a/web2"]
        finally:
            factory.shutdown()


def _fields(options: ListOptions) -> dict[str, Any]:
    return {name: getattr(options, name) for name in options.__slots__}


def test_per_resource_transform_and_resync() -> None:
    with served() as (_, transport):
        foos(transport).create(foo("a"))

        def mark(o: Any) -> Any:
            o.spec = {"transformed": True}
            return o

        factory = SharedInformerFactory(
            transport, resync_periods={FOO.gvr: 45.0}, transforms={FOO.gvr: mark}
        )
        informer = factory.informer_for(FOO)
        assert informer.add_event_handler().resync_period == 45.0
        stop = threading.Event()
        try:
            factory.start(stop)
            assert factory.wait_for_cache_sync(stop, timeout=WAIT)[FOO.gvr]
            cached = informer.indexer.get_by_key("default/a")
            assert cached is not None and cached.spec == {"transformed": True}
        finally:
            factory.shutdown()


def test_for_resource_uses_the_dynamic_client() -> None:
    with served() as (_, transport):
        foos(transport).create(foo("a"))
        factory = SharedInformerFactory(transport)
        generic = factory.for_resource(FOO.gvr)
        assert isinstance(generic, GenericInformer)
        assert factory.for_resource(FOO.gvr).informer is generic.informer
        typed: Any = factory.informer_for(FOO)
        assert generic.informer is not typed  # typed and dynamic informers are distinct
        stop = threading.Event()
        try:
            factory.start(stop)
            assert all(factory.wait_for_cache_sync(stop, timeout=WAIT).values())
            got = generic.lister.namespaced("default").get("a")
            assert isinstance(got, Unstructured)
            assert got.metadata.name == "a"
            assert got["kind"] == "Foo"
        finally:
            factory.shutdown()


def test_wait_for_cache_sync_gives_up_on_stop() -> None:
    with served() as (server, transport):
        server.fail_next(1000)  # every list fails: never synced
        factory = SharedInformerFactory(transport)
        factory.informer_for(FOO)
        stop = threading.Event()
        try:
            factory.start(stop)
            assert factory.wait_for_cache_sync(stop, timeout=0.2) == {FOO.gvr: False}
            stop.set()
            assert factory.wait_for_cache_sync(stop) == {FOO.gvr: False}
        finally:
            factory.shutdown()


def test_events_reach_handlers_over_http_in_order() -> None:
    with served() as (_, transport):
        client = foos(transport)
        for i in range(20):
            client.create(foo(f"f{i}"))
        factory = SharedInformerFactory(transport)
        informer = factory.informer_for(FOO)
        early = Recorder()
        informer.add_handler(early)
        stop = threading.Event()
        try:
            factory.start(stop)
            assert factory.wait_for_cache_sync(stop, timeout=WAIT)[FOO.gvr]
            a = client.get("f0")
            a.spec = {"v": 1}
            a = client.update(a)
            client.delete("f1")
            client.create(foo("new"))
            early.wait_for_count(23)
            late = Recorder()
            reg = informer.add_handler(late)
            late.wait_for_count(20)
            assert reg.has_synced()
        finally:
            factory.shutdown()
        assert early.events[20:] == [
            ("update", "f0", a.metadata.resource_version),
            ("delete", "f1", early.events[21][2]),
            ("add", "new", early.events[22][2]),
        ]
        assert sorted(n for _, n, _ in late.events) == sorted(
            [f"f{i}" for i in range(20) if i != 1] + ["new"]
        )
        assert late.initial_flags == [True] * 20


def test_thousand_foos_sync_and_changes_reach_every_handler_in_order() -> None:
    with served() as (_, transport):
        client = foos(transport)
        for i in range(1000):
            client.create(foo(f"f{i:04}"))
        factory = SharedInformerFactory(transport, transform=drop_managed_fields)
        informer = factory.informer_for(FOO)
        first, second = Recorder(), Recorder()
        informer.add_handler(first)
        informer.add_handler(second)
        stop = threading.Event()
        try:
            factory.start(stop)
            assert factory.wait_for_cache_sync(stop, timeout=WAIT)[FOO.gvr]
            assert len(informer.indexer) == 1000
            expected: list[tuple[str, str, str | None]] = []
            for i in range(0, 1000, 50):
                obj = client.get(f"f{i:04}")
                obj.spec = {"n": i}
                obj = client.update(obj)
                expected.append(("update", f"f{i:04}", obj.metadata.resource_version))
                if i % 100 == 0:
                    client.delete(f"f{i:04}")
                    expected.append(("delete", f"f{i:04}", None))
            first.wait_for_count(1000 + len(expected))
            second.wait_for_count(1000 + len(expected))
            late = Recorder()
            reg = informer.add_handler(late)
            assert wait_for_cache_sync(stop, reg.has_synced, timeout=WAIT)
        finally:
            factory.shutdown()
        for recorder in (first, second):
            assert sorted(n for _, n, _ in recorder.events[:1000]) == [
                f"f{i:04}" for i in range(1000)
            ]
            changes = [(k, n, rv if k == "update" else None) for k, n, rv in recorder.events[1000:]]
            assert changes == expected
        assert sorted(n for _, n, _ in late.events) == sorted(
            f"f{i:04}" for i in range(1000) if i % 100 != 0
        )
        assert late.initial_flags == [True] * 990
