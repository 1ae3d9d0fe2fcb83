"""The cluster's readers and client: the cache and the API read alike; informers start on
the first read; a namespace- or label-restricted cache never lists anything else (checked
on the fake's recorded requests); writes by model class."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from kgen_runtime.api.core.v1 import ConfigMap, Node, Pod, Secret
from kgen_runtime.api.core.v1.models import Container, PodSpec
from kgen_runtime.api.fake import FakeClientset
from kgen_runtime.controller import (
    ByObject,
    CacheNotStartedError,
    CacheOptions,
    Cluster,
    NamespaceNotCachedError,
    Reader,
)
from kgen_runtime.meta import ObjectMeta
from kgen_runtime.rest.errors import NotFoundError
from kgen_runtime.testing import Action, StatusError


def config_map(namespace: str, name: str, **labels: str) -> ConfigMap:
    return ConfigMap(metadata=ObjectMeta(name=name, namespace=namespace, labels=labels or None),
                     data={"key": name})


SEED = [
    config_map("a", "web-1", app="web"), config_map("a", "db-1", app="db"),
    config_map("b", "web-2", app="web"), config_map("c", "web-3", app="web"),
    config_map("c", "other"), Node(metadata=ObjectMeta(name="node-1", labels={"zone": "x"})),
    Node(metadata=ObjectMeta(name="node-2")),
    Secret(metadata=ObjectMeta(name="s", namespace="c"), string_data={"k": "v"}),
]


@pytest.fixture
def fake() -> FakeClientset:
    return FakeClientset(*SEED)


class Clusters:
    """Makes clusters over the fake with their caches started; shut down after the test."""

    def __init__(self) -> None:
        self.made: list[Cluster] = []

    def new(self, fake: FakeClientset, *, start: bool = True, **options: Any) -> Cluster:
        cluster = Cluster(fake.transport, cache=CacheOptions(**options))
        self.made.append(cluster)
        if start:
            cluster.cache.start(threading.Event())
        return cluster


@pytest.fixture
def clusters() -> Iterator[Clusters]:
    made = Clusters()
    yield made
    for cluster in made.made:
        cluster.cache.shutdown()  # stops and joins every informer


def names(objects: list[Any]) -> list[str]:
    return [f"{o.metadata.namespace or ''}/{o.metadata.name}" for o in objects]


def lists_and_watches(fake: FakeClientset, resource: str) -> list[tuple[str, str, str]]:
    """(verb, namespace, labelSelector) of every list and watch of ``resource``."""
    return [(a.verb, a.namespace, dict(a.query).get("labelSelector", ""))
            for a in fake.actions() if a.resource.resource == resource
            and a.verb in ("list", "watch")]


READS: list[tuple[str, Any, dict[str, Any]]] = [
    ("list all", ConfigMap, {}),
    ("list a namespace", ConfigMap, {"namespace": "a"}),
    ("list by labels", ConfigMap, {"labels": {"app": "web"}}),
    ("list by selector text", ConfigMap, {"labels": "app in (web,db)", "namespace": "a"}),
    ("list an empty namespace", ConfigMap, {"namespace": "empty"}),
    ("list cluster-scoped", Node, {}),
    ("list cluster-scoped by labels", Node, {"labels": "zone"}),
]


def test_the_cache_and_the_api_answer_alike(fake: FakeClientset, clusters: Clusters) -> None:
    cluster = clusters.new(fake)
    readers: list[Reader] = [cluster.cache, cluster.api_reader, cluster.client]
    for what, kind, options in READS:
        answers = [reader.list(kind, **options) for reader in readers]
        assert answers[0] == answers[1] == answers[2], what
        assert names(answers[0]) == sorted(names(answers[0])), what
    assert names(cluster.cache.list(ConfigMap, labels={"app": "web"})) == [
        "a/web-1", "b/web-2", "c/web-3"]
    gets = [reader.get(ConfigMap, "b", "web-2") for reader in readers]
    assert gets[0] == gets[1] == gets[2]
    assert gets[0].data == {"key": "web-2"}
    nodes = [reader.get(Node, "", "node-1") for reader in readers]
    assert nodes[0] == nodes[1] == nodes[2]
    for reader in readers:
        with pytest.raises(NotFoundError, match='configmaps "nope" not found'):
            reader.get(ConfigMap, "a", "nope")
        with pytest.raises(ValueError, match="configmaps are namespaced: a namespace is needed"):
            reader.get(ConfigMap, "", "web-1")


def test_cached_reads_are_copies(fake: FakeClientset, clusters: Clusters) -> None:
    cache = clusters.new(fake).cache
    mine = cache.get(ConfigMap, "a", "web-1")
    mine.data = {"changed": "yes"}
    listed = cache.list(ConfigMap, namespace="a")
    listed[0].metadata.labels = {"changed": "yes"}
    assert cache.get(ConfigMap, "a", "web-1").data == {"key": "web-1"}
    assert cache.list(ConfigMap, namespace="a")[0].metadata.labels == {"app": "db"}


def test_the_first_read_of_a_kind_starts_its_informer(
    fake: FakeClientset, clusters: Clusters
) -> None:
    cluster = clusters.new(fake, start=False)
    with pytest.raises(CacheNotStartedError, match="read secrets before the cache was started"):
        cluster.client.get(Secret, "c", "s")
    cluster.cache.start(threading.Event())
    assert fake.actions() == []
    assert cluster.client.get(Secret, "c", "s").metadata.name == "s"
    assert lists_and_watches(fake, "secrets") == [("list", "", ""), ("watch", "", "")]
    assert cluster.client.list(Secret) and cluster.client.get(Secret, "c", "s")
    assert lists_and_watches(fake, "secrets") == [("list", "", ""), ("watch", "", "")]
    assert lists_and_watches(fake, "configmaps") == []  # nothing else is watched
    cluster.cache.shutdown()
    with pytest.raises(CacheNotStartedError, match="read secrets after the cache was shut down"):
        cluster.client.get(Secret, "c", "s")


def test_concurrent_first_reads_start_one_informer(
    fake: FakeClientset, clusters: Clusters
) -> None:
    client = clusters.new(fake).client
    with ThreadPoolExecutor(8) as pool:
        answers = list(pool.map(lambda _: client.list(Secret), range(16)))
    assert all(names(answer) == ["c/s"] for answer in answers)
    assert lists_and_watches(fake, "secrets") == [("list", "", ""), ("watch", "", "")]


def test_a_read_gives_up_when_the_informer_cannot_sync(
    fake: FakeClientset, clusters: Clusters
) -> None:
    def refuse(action: Action) -> tuple[bool, Any]:
        raise StatusError(500, "InternalError", "down")

    fake.prepend_reactor("list", "pods", refuse)
    cluster = clusters.new(fake, sync_timeout=0.2)
    with pytest.raises(TimeoutError, match=r"the cache of pods did not sync within 0.2s"):
        cluster.client.list(Pod)


def test_a_namespace_restricted_cache_never_reads_other_namespaces(
    fake: FakeClientset, clusters: Clusters
) -> None:
    cluster = clusters.new(fake, namespaces=["b", "a"])
    cache = cluster.cache
    assert names(cache.list(ConfigMap)) == ["a/db-1", "a/web-1", "b/web-2"]
    assert names(cache.list(ConfigMap, namespace="b")) == ["b/web-2"]
    assert cache.get(ConfigMap, "a", "db-1").metadata.name == "db-1"
    refused = "configmaps in namespace 'c' are not cached: the cache watches namespaces 'a', 'b'"
    with pytest.raises(NamespaceNotCachedError, match=refused):
        cache.get(ConfigMap, "c", "web-3")
    with pytest.raises(NamespaceNotCachedError, match=refused):
        cluster.client.list(ConfigMap, namespace="c")
    assert names(cache.list(Node)) == ["/node-1", "/node-2"]  # cluster-scoped: cluster-wide
    assert sorted(lists_and_watches(fake, "configmaps")) == [
        ("list", "a", ""), ("list", "b", ""), ("watch", "a", ""), ("watch", "b", "")]
    assert lists_and_watches(fake, "nodes") == [("list", "", ""), ("watch", "", "")]


def test_per_kind_namespaces_and_label_selectors(
    fake: FakeClientset, clusters: Clusters
) -> None:
    cluster = clusters.new(fake, namespaces=["a"], by_object={
        ConfigMap: ByObject(namespaces=["a", "c"], labels={"app": "web"}),
        Secret: ByObject(namespaces=["c"], fields="metadata.name=s"),
    })
    assert names(cluster.client.list(ConfigMap)) == ["a/web-1", "c/web-3"]
    with pytest.raises(NotFoundError):
        cluster.client.get(ConfigMap, "a", "db-1")  # excluded by the selector
    assert names(cluster.client.list(Secret)) == ["c/s"]
    assert sorted(lists_and_watches(fake, "configmaps")) == [
        ("list", "a", "app=web"), ("list", "c", "app=web"),
        ("watch", "a", "app=web"), ("watch", "c", "app=web")]
    secret_queries = [dict(a.query) for a in fake.actions() if a.resource.resource == "secrets"]
    assert {q.get("fieldSelector") for q in secret_queries} == {"metadata.name=s"}


def test_writes_go_to_the_api_and_name_their_kind(
    fake: FakeClientset, clusters: Clusters
) -> None:
    client = clusters.new(fake).client
    pod = client.create(Pod(metadata=ObjectMeta(name="p", namespace="a"),
                            spec=PodSpec(containers=[Container(name="c", image="x")])))
    assert pod.metadata.uid
    pod.metadata.labels = {"l": "1"}
    updated = client.update(pod)
    assert updated.metadata.labels == {"l": "1"}
    patched = client.patch(updated, {"metadata": {"annotations": {"a": "b"}}})
    assert patched.metadata.annotations == {"a": "b"}
    status = client.patch_status(patched, {"status": {"phase": "Running"}})
    assert status.status is not None and status.status.phase == "Running"
    status.status.phase = "Succeeded"
    assert client.update_status(status).status.phase == "Succeeded"  # type: ignore[union-attr]
    client.delete(status)
    assert [(a.verb, a.resource.resource, a.namespace, a.subresource) for a in fake.actions()
            if a.verb not in ("list", "watch")] == [
        ("create", "pods", "a", ""), ("update", "pods", "a", ""), ("patch", "pods", "a", ""),
        ("patch", "pods", "a", "status"), ("update", "pods", "a", "status"),
        ("delete", "pods", "a", "")]
    with pytest.raises(ValueError, match="configmaps have no status subresource"):
        client.update_status(config_map("a", "web-1"))
    with pytest.raises(ValueError, match="pods are namespaced: a namespace is needed"):
        client.create(Pod(metadata=ObjectMeta(name="no-namespace")))
    with pytest.raises(ValueError, match=r"ConfigMap has no metadata\.name"):
        client.delete(ConfigMap(metadata=ObjectMeta(namespace="a")))


def test_namespaces_given_as_a_string_are_refused() -> None:
    with pytest.raises(TypeError, match="namespaces must be a list of names, not the string 'ns'"):
        CacheOptions(namespaces="ns")
    with pytest.raises(TypeError, match="not the string 'ns'"):
        ByObject(namespaces="ns")
