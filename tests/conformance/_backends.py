"""The three backends of the conformance suite, behind one small interface.

* ``fake``: ``foo_api.fake.FakeClientset``, which installs the CRD it was generated from, so
  the fake validates, defaults and prunes with the CRD's schema exactly like the test server.
* ``server``: :class:`~kgen_runtime.testing.TestAPIServer` over real HTTP
  (``Clientset.for_config(server.config())``), the CRD installed as a POST would, with
  namespace lifecycle admission on, so writing to a namespace never created fails as on a
  cluster.
* ``cluster``: a real API server from ``$KGEN_TEST_KUBECONFIG``; the CRD is created if missing
  and waited for (Established, then served: the 429s of a re-initialising storage absorbed).
  All tests share one session namespace; each test's Foos are deleted afterwards
  (finalizers cleared first), the namespace itself is left alone
  (see ../shared/REAL-CLUSTER.md).

Every backend creates its namespace through the API with a unique name (``fake`` and
``server``: a new one with a new store per test).

Each backend also runs with the async clients (``fake-async``: ``AsyncFakeClientset``;
``server-async`` and ``cluster-async``: ``AsyncClientset`` over ``AsyncHTTPTransport``):
``Backend.foos`` is then the async Foo client behind a blocking face (``_blocking.py``), its
calls run on an event loop in a thread, so the same assertions hold the async stack to the
sync one's behaviour.

Tests receive a :class:`Backend` and never branch on its name. Where a real server adds
something of its own (``managedFields``), :func:`normalised` removes it before comparing.
Where the fake or the test server knowingly falls short of a real server, the test is
marked ``@pytest.mark.gap(backends, reason)`` and runs as a strict xfail there.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import yaml
from foo_api.clientset import AsyncClientset, Clientset
from foo_api.fake import AsyncFakeClientset, FakeClientset
from foo_api.samplecontroller.v1alpha1.client import FooClient

from kgen_runtime.groupversion import GroupVersionResource
from kgen_runtime.meta import Unstructured
from kgen_runtime.rest import Config, DynamicClient, ListOptions
from kgen_runtime.rest.errors import AlreadyExistsError, NotFoundError, TooManyRequestsError
from kgen_runtime.testing import TestAPIServer
from kgen_runtime.util.retry import DEFAULT_RETRY, retry_on_conflict
from kgen_runtime.util.wait import poll_until
from tests.conformance._blocking import Blocking, EventLoopThread

__all__ = [
    "ASYNC",
    "BACKENDS",
    "BOUND",
    "CLUSTER_ENV",
    "FOO_CRD",
    "Backend",
    "cluster_session",
    "normalised",
    "open_backend",
]

#: Upper bound of any wait in the suite; reaching it means a bug, not slowness.
BOUND = 10.0
CLUSTER_ENV = "KGEN_TEST_KUBECONFIG"
BACKENDS = ("fake", "server", "cluster", "fake-async", "server-async", "cluster-async")
ASYNC = "-async"
FOO_CRD: dict[str, Any] = yaml.safe_load(
    (Path(__file__).parents[2] / "examples/foo-crd/crds/foo.yaml").read_text()
)
_CRD_GVR = GroupVersionResource("apiextensions.k8s.io", "v1", "customresourcedefinitions")
_NAMESPACE_GVR = GroupVersionResource("", "v1", "namespaces")


@dataclasses.dataclass(frozen=True)
class Backend:
    """One place the suite's Foo requests go.

    Attributes:
        name: ``fake``, ``server`` or ``cluster``, ``-async`` appended for the async clients
            (for reports only; tests never branch on it).
        clientset: The generated clientset talking to it (``AsyncClientset`` behind
            :class:`Blocking` for the async backends).
        namespace: This test's namespace; nothing else of the suite lives in it meanwhile.
        server: The test API server, for fault injection (``server`` backend only).
        config: How to reach the cluster (``cluster`` backend only).
    """

    name: str
    clientset: Clientset
    namespace: str
    server: TestAPIServer | None = None
    config: Config | None = None

    @property
    def foos(self) -> FooClient:
        """The Foo client of this test's namespace."""
        return self.clientset.samplecontroller_v1alpha1.foos(self.namespace)


def normalised(obj: Any) -> dict[str, Any]:
    """``obj``'s wire form without what only a real server adds (``managedFields``)."""
    wire: dict[str, Any] = obj.model_dump() if hasattr(obj, "model_dump") else dict(obj)
    metadata = dict(wire.get("metadata") or {})
    metadata.pop("managedFields", None)
    return {**wire, "metadata": metadata}


def _create_namespace(clientset: Clientset) -> str:
    """Create a uniquely named namespace and return its name."""
    name = f"kgen-conformance-{uuid.uuid4().hex[:10]}"
    namespaces = clientset.dynamic.resource(_NAMESPACE_GVR, namespaced=False)
    namespaces.create(
        Unstructured.model_validate(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
        )
    )
    return name


@contextmanager
def open_backend(name: str, cluster: Backend | None) -> Iterator[Backend]:
    """A ready backend for one test; ``cluster`` is the session's cluster backend, if any."""
    if name.endswith(ASYNC):
        with _open_async_backend(name, cluster) as backend:
            yield backend
    elif name == "fake":
        fake = FakeClientset()
        try:
            yield Backend(name, fake, _create_namespace(fake))
        finally:
            fake.core.shutdown()
    elif name == "server":
        with TestAPIServer(bookmark_interval=0.2, namespace_lifecycle=True) as server:
            server.install_crd(FOO_CRD)
            clientset = Clientset.for_config(server.config())
            try:
                yield Backend(name, clientset, _create_namespace(clientset), server)
            finally:
                clientset.close()
    else:
        assert cluster is not None, f"{CLUSTER_ENV} is not set"
        try:
            yield cluster
        finally:
            _delete_all_foos(cluster)


@contextmanager
def _open_async_backend(name: str, cluster: Backend | None) -> Iterator[Backend]:
    """The async clients of backend ``name`` (without ``-async``), behind :class:`Blocking`."""
    runner = EventLoopThread()
    try:
        if name == "fake" + ASYNC:
            fake = AsyncFakeClientset()  # installs the CRD, as FakeClientset does
            try:
                clientset: Any = Blocking(fake, runner)
                yield Backend(name, clientset, _create_namespace(clientset))
            finally:
                fake.core.shutdown()
        elif name == "server" + ASYNC:
            with open_backend("server", None) as served:
                assert served.server is not None
                async_clientset = AsyncClientset.for_config(served.server.config())
                try:
                    blocking: Any = Blocking(async_clientset, runner)
                    yield dataclasses.replace(served, name=name, clientset=blocking)
                finally:
                    runner.run(async_clientset.aclose())
        else:
            assert cluster is not None and cluster.config is not None, f"{CLUSTER_ENV} is not set"
            async_clientset = AsyncClientset.for_config(cluster.config)
            try:
                blocking = Blocking(async_clientset, runner)
                yield dataclasses.replace(cluster, name=name, clientset=blocking)
            finally:
                try:
                    _delete_all_foos(cluster)
                finally:
                    runner.run(async_clientset.aclose())
    finally:
        runner.close()


@contextmanager
def cluster_session(kubeconfig: str) -> Iterator[Backend]:
    """The real cluster of ``kubeconfig``, with the Foo CRD established and a new namespace.

    Throttling is raised to 50 qps so the suite is not paced by client-go's default of 5.
    """
    config = Config.from_kubeconfig(kubeconfig, qps=50.0, burst=100)
    clientset = Clientset.for_config(config)
    try:
        _ensure_crd(clientset.dynamic)
        backend = Backend("cluster", clientset, _create_namespace(clientset), config=config)
        _wait_until_served(backend)
        yield backend
    finally:
        clientset.close()


def _ensure_crd(dynamic: DynamicClient) -> None:
    """Create the Foo CRD, or give an existing one (an earlier run's) the manifest's spec."""
    crds = dynamic.resource(_CRD_GVR, namespaced=False)
    try:
        crds.create(Unstructured.model_validate(FOO_CRD))
    except AlreadyExistsError:

        def update() -> None:
            crd = crds.get(FOO_CRD["metadata"]["name"]).model_dump()
            crds.update(Unstructured.model_validate({**crd, "spec": FOO_CRD["spec"]}))

        retry_on_conflict(DEFAULT_RETRY, update)

    def established() -> bool:
        crd = crds.get(FOO_CRD["metadata"]["name"])
        conditions = (crd.model_dump().get("status") or {}).get("conditions") or ()
        return any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions)

    poll_until(established, 0.5, 60.0, immediate=True)


def _wait_until_served(backend: Backend) -> None:
    """Absorb the 429 "storage is (re)initializing" that follows a CRD's establishment."""

    def served() -> bool:
        try:
            backend.foos.list(ListOptions(limit=1))
        except (TooManyRequestsError, NotFoundError):
            return False
        return True

    poll_until(served, 0.5, 60.0, immediate=True)


def _delete_all_foos(backend: Backend) -> None:
    """Delete every Foo in the backend's namespace, clearing finalizers a test left behind."""
    foos = backend.foos
    for foo in foos.list().items:
        name = foo.metadata.name or ""
        if foo.metadata.finalizers:
            try:
                foos.patch(name, {"metadata": {"finalizers": None}})
            except NotFoundError:
                continue
    foos.delete_collection()

    def gone() -> bool:
        return not foos.list().items

    poll_until(gone, 0.1, BOUND, immediate=True)
