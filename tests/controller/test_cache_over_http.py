"""A namespace-restricted manager over real HTTP: its controller reconciles only what its
namespaces hold, its client refuses the others, and the server never sees a request for
another namespace (every request the manager sends is recorded)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from kgen_runtime.api.clientset import Clientset
from kgen_runtime.api.core.v1 import ConfigMap
from kgen_runtime.controller import (
    CacheOptions,
    Cluster,
    Manager,
    NamespaceNotCachedError,
    Request,
)
from kgen_runtime.meta import ObjectMeta
from kgen_runtime.rest import HTTPTransport
from kgen_runtime.testing import TestAPIServer
from tests.controller._support import RecordingTransport, eventually, started


@pytest.fixture
def server() -> Iterator[TestAPIServer]:
    with TestAPIServer() as api_server:
        yield api_server


def test_a_namespace_restricted_manager_stays_in_its_namespaces(server: TestAPIServer) -> None:
    with Clientset.for_config(server.config()) as setup:
        for namespace in ("a", "b"):
            setup.core_v1.configmaps(namespace).create(
                ConfigMap(metadata=ObjectMeta(name=f"old-{namespace}")))
        transport = RecordingTransport(HTTPTransport(server.config()))
        try:
            cluster = Cluster(transport, cache=CacheOptions(namespaces=["a"]))
            manager = Manager(cluster=cluster)
            seen: list[Request] = []
            manager.controller_for(ConfigMap).complete(lambda request: seen.append(request))
            with started(manager):
                setup.core_v1.configmaps("b").create(ConfigMap(metadata=ObjectMeta(name="new")))
                setup.core_v1.configmaps("a").create(ConfigMap(metadata=ObjectMeta(name="new")))
                eventually(lambda: len(seen) == 2)
                assert sorted(map(str, seen)) == ["a/new", "a/old-a"]
                assert cluster.client.get(ConfigMap, "a", "old-a").metadata.name == "old-a"
                with pytest.raises(NamespaceNotCachedError, match="namespace 'b' are not cached"):
                    cluster.client.get(ConfigMap, "b", "old-b")
                with pytest.raises(NamespaceNotCachedError):
                    cluster.client.list(ConfigMap, namespace="b")
        finally:
            transport.inner.close()
    paths = {path for _, path in transport.sent}
    assert paths == {"/api/v1/namespaces/a/configmaps"}
    assert {method for method, _ in transport.sent} == {"GET"}
