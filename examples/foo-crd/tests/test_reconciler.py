"""The builder's Foo reconcilers (blocking and async) write the Foo's status only when it
changed: driven twice by hand against the test API server, through a transport that records
each request, the second reconcile sends a status write only if the Deployment's status moved
in between. The Event is recorded on every reconcile, as sample-controller does.

An unchanged status write would be a no-op on the server (same resourceVersion, no watch
event: ``tests/testing/test_apiserver_objects.py``), so skipping it changes no outcome, only
the request count (bench/README.md, issue 21).
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
import yaml
from foo_api.clientset import Clientset as SampleClientset
from foo_api.samplecontroller.v1alpha1 import Foo
from foo_api.samplecontroller.v1alpha1.models import FooSpec, FooStatus
from foo_controller import (
    MESSAGE_RESOURCE_SYNCED,
    SUCCESS_SYNCED,
    AsyncFooReconciler,
    FooReconciler,
)
from foo_controller._controller import FIELD_MANAGER
from foo_controller._demo import CRD_PATH
from foo_controller._reconciler import new_scheme
from tests._recorder import FakeRecorder

from kgen_runtime.api.apps.v1 import Deployment
from kgen_runtime.api.clientset import Clientset as KubeClientset
from kgen_runtime.controller import EVENT_TYPE_NORMAL, AsyncCluster, CacheOptions, Cluster, Request
from kgen_runtime.meta import ObjectMeta
from kgen_runtime.rest import AsyncHTTPTransport, AsyncResponse, HTTPTransport
from kgen_runtime.rest import Request as HTTPRequest
from kgen_runtime.rest.errors import NotFoundError
from kgen_runtime.testing import TestAPIServer
from kgen_runtime.util.wait import poll_until
from tests.controller._support import RecordingTransport

NS = "default"
BOUND = 10.0
"""Upper bound of every wait; reaching it means a bug, not slowness."""
FOOS = f"/apis/samplecontroller.k8s.io/v1alpha1/namespaces/{NS}/foos"
DEPLOYMENTS = f"/apis/apps/v1/namespaces/{NS}/deployments"
STATUS_WRITE = ("PUT", f"{FOOS}/foo/status")
SYNCED = f"{EVENT_TYPE_NORMAL} {SUCCESS_SYNCED} {MESSAGE_RESOURCE_SYNCED}"

CASES = pytest.mark.parametrize(
    ("available", "second_writes"),
    [(None, []), (2, [STATUS_WRITE])],
    ids=["deployment-unchanged-no-status-write", "deployment-changed-status-written"],
)
"""The Deployment's available replicas reported between the two reconciles (None: nothing
reported), and the writes the second reconcile must send."""


class AsyncRecordingTransport:
    """:class:`~tests.controller._support.RecordingTransport` for an async transport."""

    def __init__(self, inner: AsyncHTTPTransport) -> None:
        self.inner = inner
        self.sent: list[tuple[str, str]] = []

    async def send(
        self, request: HTTPRequest, *, stream: bool = False, read_timeout: float | None = None
    ) -> AsyncResponse:
        self.sent.append((request.method, request.path))
        return await self.inner.send(request, stream=stream, read_timeout=read_timeout)


def take_writes(transport: RecordingTransport | AsyncRecordingTransport) -> list[tuple[str, str]]:
    """The requests other than reads (GET: the cache's list and watches) ``transport`` sent
    since the last call. Only the reconciler writes, so none can slip in while it runs."""
    writes = [(method, path) for method, path in transport.sent if method != "GET"]
    transport.sent.clear()
    return writes


@pytest.fixture
def server() -> Iterator[TestAPIServer]:
    """The test API server with the Foo CRD and one Foo, ``foo``, not reconciled yet."""
    with TestAPIServer() as api_server:
        api_server.install_crd(yaml.safe_load(CRD_PATH.read_text()))
        with SampleClientset.for_config(api_server.config()) as sample:
            sample.samplecontroller_v1alpha1.foos(NS).create(Foo(
                metadata=ObjectMeta(name="foo", namespace=NS),
                spec=FooSpec(deployment_name="foo-deployment", replicas=1)))
        yield api_server


def report_available(server: TestAPIServer, count: int) -> None:
    """Set the Deployment's status as kube-controller-manager's Deployment controller would."""
    with KubeClientset.for_config(server.config()) as kube:
        kube.apps_v1.deployments(NS).patch_status("foo-deployment", {"status": {
            "replicas": count, "readyReplicas": count, "availableReplicas": count}})


def stored_available(server: TestAPIServer) -> int | None:
    with SampleClientset.for_config(server.config()) as sample:
        status = sample.samplecontroller_v1alpha1.foos(NS).get("foo").status
    return None if status is None else status.available_replicas


def caught_up(available: int) -> Callable[[Foo, Deployment], bool]:
    """Whether the cached Foo holds the first reconcile's status and the cached Deployment
    reports ``available`` replicas: the state the second reconcile must read."""

    def check(foo: Foo, deployment: Deployment) -> bool:
        reported = deployment.status.available_replicas if deployment.status else None
        return foo.status == FooStatus(available_replicas=0) and (reported or 0) == available

    return check


def new_cluster(cls: Any, transport: Any) -> Any:
    return cls(transport, new_scheme(), field_manager=FIELD_MANAGER,
               cache=CacheOptions(namespaces=[NS]))


@CASES
def test_a_reconcile_writes_the_status_only_when_it_changed(
    server: TestAPIServer, available: int | None, second_writes: list[tuple[str, str]]
) -> None:
    transport = RecordingTransport(HTTPTransport(server.config()))
    cluster: Cluster = new_cluster(Cluster, transport)
    recorder = FakeRecorder()
    reconciler = FooReconciler(cluster.client, recorder)
    stop = threading.Event()
    cluster.cache.start(stop)
    try:
        assert reconciler.reconcile(Request(NS, "foo")) is None
        assert take_writes(transport) == [("POST", DEPLOYMENTS), STATUS_WRITE]
        if available is not None:
            report_available(server, available)
        ready = caught_up(available or 0)

        def cached() -> bool:
            try:
                return ready(cluster.cache.get(Foo, NS, "foo"),
                             cluster.cache.get(Deployment, NS, "foo-deployment"))
            except NotFoundError:  # the Deployment's ADDED event is not in the cache yet
                return False

        poll_until(cached, 0.01, BOUND, immediate=True)
        take_writes(transport)
        assert reconciler.reconcile(Request(NS, "foo")) is None
        assert take_writes(transport) == second_writes
    finally:
        stop.set()
        cluster.cache.shutdown()
        transport.inner.close()
    assert stored_available(server) == (available or 0)
    assert recorder.events == [SYNCED, SYNCED]


@CASES
def test_the_async_reconcile_writes_the_status_only_when_it_changed(
    server: TestAPIServer, available: int | None, second_writes: list[tuple[str, str]]
) -> None:
    recorder = FakeRecorder()

    async def run() -> None:
        transport = AsyncRecordingTransport(AsyncHTTPTransport(server.config()))
        cluster: AsyncCluster = new_cluster(AsyncCluster, transport)
        reconciler = AsyncFooReconciler(cluster.client, recorder)
        cluster.cache.start()
        try:
            assert await reconciler.reconcile(Request(NS, "foo")) is None
            assert take_writes(transport) == [("POST", DEPLOYMENTS), STATUS_WRITE]
            if available is not None:
                await asyncio.to_thread(report_available, server, available)
            ready = caught_up(available or 0)

            async def cached() -> bool:
                try:
                    return ready(await cluster.cache.get(Foo, NS, "foo"),
                                 await cluster.cache.get(Deployment, NS, "foo-deployment"))
                except NotFoundError:  # the Deployment's ADDED event is not in the cache yet
                    return False

            async with asyncio.timeout(BOUND):
                while not await cached():
                    await asyncio.sleep(0.01)
            take_writes(transport)
            assert await reconciler.reconcile(Request(NS, "foo")) is None
            assert take_writes(transport) == second_writes
        finally:
            await cluster.cache.shutdown()
            await transport.inner.aclose()

    asyncio.run(run())
    assert stored_available(server) == (available or 0)
    assert recorder.events == [SYNCED, SYNCED]
