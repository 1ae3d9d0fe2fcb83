"""Generic listers over an indexer: selectors, namespaces, NotFoundError."""

from __future__ import annotations

import pytest

from kgen_runtime import labels
from kgen_runtime.cache import (
    NAMESPACE_INDEX,
    ClusterLister,
    GenericLister,
    Indexer,
    NamespacedLister,
    meta_namespace_index_func,
)
from kgen_runtime.groupversion import GroupVersionResource
from kgen_runtime.rest.errors import NotFoundError
from tests.cache._fakes import Obj, obj

FOOS = GroupVersionResource("samplecontroller.k8s.io", "v1alpha1", "foos")


def indexer(*objects: Obj) -> Indexer[Obj]:
    store: Indexer[Obj] = Indexer(indexers={NAMESPACE_INDEX: meta_namespace_index_func})
    for o in objects:
        store.add(o)
    return store


def names(objects: list[Obj]) -> list[str]:
    return sorted(f"{o.metadata.namespace}/{o.metadata.name}" for o in objects)


def test_namespaced_lister_lists_by_selector_and_namespace() -> None:
    web1 = obj("web1", "a", labels={"app": "web", "tier": "front"})
    web2 = obj("web2", "b", labels={"app": "web"})
    db = obj("db", "a", labels={"app": "db"})
    bare = obj("bare", "a")
    lister = NamespacedLister(indexer(web1, web2, db, bare), FOOS)
    assert names(lister.list()) == ["a/bare", "a/db", "a/web1", "b/web2"]
    assert names(lister.list("app=web")) == ["a/web1", "b/web2"]
    assert names(lister.list(labels.parse("app!=web"))) == ["a/bare", "a/db"]
    ns_a = lister.namespaced("a")
    assert ns_a.namespace == "a"
    assert names(ns_a.list("app in (web,db),!tier")) == ["a/db"]
    assert ns_a.get("db") is db
    assert names(lister.namespaced("empty").list()) == []


def test_get_missing_raises_the_servers_not_found() -> None:
    lister = NamespacedLister(indexer(obj("x", "a")), FOOS)
    with pytest.raises(NotFoundError) as info:
        lister.namespaced("b").get("x")
    err = info.value
    assert err.code == 404
    assert str(err) == 'foos.samplecontroller.k8s.io "x" not found'
    details = err.status.details
    assert details is not None
    assert (details.name, details.group, details.kind) == ("x", "samplecontroller.k8s.io", "foos")


def test_cluster_lister_gets_by_name() -> None:
    node = obj("node1", None, labels={"zone": "z1"})
    lister = ClusterLister(indexer(node), GroupVersionResource("", "v1", "nodes"))
    assert lister.get("node1") is node
    assert lister.list("zone=z1") == [node]
    with pytest.raises(NotFoundError, match=r'^nodes "nope" not found$'):
        lister.get("nope")


def test_generic_lister_does_both_and_bad_selectors_raise() -> None:
    lister = GenericLister(indexer(obj("c", None), obj("n", "ns")), FOOS)
    assert lister.get("c").metadata.name == "c"
    assert lister.namespaced("ns").get("n").metadata.name == "n"
    with pytest.raises(labels.SelectorError):
        lister.list("a in (")


def test_resource_class_attribute_names_the_error() -> None:
    from kgen_runtime.resource import Resource

    class FooLister(NamespacedLister[Obj]):
        resource = Resource(
            group="samplecontroller.k8s.io",
            version="v1alpha1",
            kind="Foo",
            plural="foos",
            singular="foo",
            namespaced=True,
            model=Obj,
            list_model=Obj,  # type: ignore[arg-type]
        )

    with pytest.raises(NotFoundError, match=r'foos\.samplecontroller\.k8s\.io "z" not found'):
        FooLister(indexer()).namespaced("a").get("z")
