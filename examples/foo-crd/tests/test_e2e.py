"""The controller end to end: real HTTP, informers, workers and event recorder.

Each behaviour test runs against the in-process :class:`TestAPIServer` (a fresh one per test)
and, when ``$KGEN_TEST_KUBECONFIG`` names a kubeconfig, against that cluster too (in one new,
uniquely named namespace per session; each test deletes what it made). The last tests inject
faults (cut connections, an unreachable server) and run without a cluster. A cluster may run no
controller-manager (no Deployment controller, no garbage collector; see
../shared/REAL-CLUSTER.md), so the tests assert only what the API server and this
controller do, and set Deployment status themselves.

Every behaviour test also runs against the three controllers: the sample-controller port
(``ControllerSetup``), the same controller written on the builder (``ManagerSetup``) and on
the async builder (``AsyncManagerSetup``, an AsyncManager on an event loop of its own).

Every wait is on a condition, bounded by ``BOUND`` seconds.
"""

from __future__ import annotations

import asyncio
import logging
import os
import socket
import threading
import uuid
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager, suppress
from dataclasses import dataclass, replace
from typing import Any

import pytest
import yaml
from foo_api.clientset import Clientset as SampleClientset
from foo_api.samplecontroller.v1alpha1 import FOO_RESOURCE, Foo
from foo_api.samplecontroller.v1alpha1.client import FooClient
from foo_api.samplecontroller.v1alpha1.models import FooSpec
from foo_controller import (
    ERR_RESOURCE_EXISTS,
    MESSAGE_RESOURCE_EXISTS,
    MESSAGE_RESOURCE_SYNCED,
    SUCCESS_SYNCED,
    AsyncManagerSetup,
    ControllerSetup,
    ManagerSetup,
)
from foo_controller._demo import CRD_PATH
from foo_controller._reconciler_aio import stop_on_event

from kgen_runtime.api.apps.v1 import Deployment
from kgen_runtime.api.apps.v1.client import DeploymentClient
from kgen_runtime.api.apps.v1.models import DeploymentSpec
from kgen_runtime.api.clientset import AsyncClientset as AsyncKubeClientset
from kgen_runtime.api.clientset import Clientset as KubeClientset
from kgen_runtime.api.core.v1.models import Container, PodSpec, PodTemplateSpec
from kgen_runtime.controller import new_controller_ref
from kgen_runtime.groupversion import GroupVersionResource
from kgen_runtime.meta import LabelSelector, ObjectMeta, Unstructured
from kgen_runtime.rest import Config, ListOptions
from kgen_runtime.rest.errors import AlreadyExistsError, NotFoundError, TooManyRequestsError
from kgen_runtime.testing import TestAPIServer
from kgen_runtime.util.wait import poll_until

CLUSTER_ENV = "KGEN_TEST_KUBECONFIG"
BOUND = 10.0
"""Upper bound of every wait; reaching it means a bug, not slowness."""
CRD: dict[str, Any] = yaml.safe_load(CRD_PATH.read_text())
_CRD_GVR = GroupVersionResource("apiextensions.k8s.io", "v1", "customresourcedefinitions")
_NAMESPACE_GVR = GroupVersionResource("", "v1", "namespaces")


@dataclass(frozen=True)
class Backend:
    """Where a test's requests go: both clientsets (one transport) and its namespace.

    ``config`` reaches the same server, for the controller's own clientsets (own connection
    pool and client-side rate limit, as a separate process would have).
    """

    kube: KubeClientset
    sample: SampleClientset
    namespace: str
    config: Config
    server: TestAPIServer | None = None
    controller: str = "sample-controller"
    """Which controller the test runs: ``"sample-controller"``, ``"builder"`` or ``"async"``."""

    @property
    def foos(self) -> FooClient:
        return self.sample.samplecontroller_v1alpha1.foos(self.namespace)

    @property
    def deployments(self) -> DeploymentClient:
        return self.kube.apps_v1.deployments(self.namespace)

    def events_of(self, foo: str) -> set[tuple[str, str, str]]:
        """(type, reason, message) of every event about the Foo called ``foo``."""
        return {
            (e.type or "", e.reason or "", e.message or "")
            for e in self.kube.core_v1.events(self.namespace).list().items
            if e.involved_object is not None and e.involved_object.kind == "Foo"
            and e.involved_object.name == foo
        }


def eventually(condition: Callable[[], bool], what: str) -> None:
    """Wait until ``condition()`` holds (a NotFoundError counts as not yet)."""

    def holds() -> bool:
        try:
            return condition()
        except NotFoundError:
            return False

    try:
        poll_until(holds, 0.02, BOUND, immediate=True)
    except TimeoutError:
        pytest.fail(f"timed out after {BOUND}s waiting for {what}")


# -- backends ----------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def cluster() -> Iterator[Backend | None]:
    """The cluster of ``$KGEN_TEST_KUBECONFIG`` with the CRD and a new namespace, or None."""
    kubeconfig = os.environ.get(CLUSTER_ENV)
    if not kubeconfig:
        yield None
        return
    config = Config.from_kubeconfig(kubeconfig, qps=50.0, burst=100)
    kube = KubeClientset.for_config(config)
    try:
        crds = kube.dynamic.resource(_CRD_GVR, namespaced=False)
        with suppress(AlreadyExistsError):
            crds.create(Unstructured.model_validate(CRD))

        def established() -> bool:
            conditions = (crds.get(CRD["metadata"]["name"]).model_dump().get("status") or {})
            return any(c.get("type") == "Established" and c.get("status") == "True"
                       for c in conditions.get("conditions") or ())

        poll_until(established, 0.5, 60.0, immediate=True)
        namespace = f"kgen-foo-e2e-{uuid.uuid4().hex[:10]}"
        kube.dynamic.resource(_NAMESPACE_GVR, namespaced=False).create(Unstructured.model_validate(
            {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}}))
        backend = Backend(kube, SampleClientset(kube.transport), namespace, config)

        def served() -> bool:  # absorbs 429 "storage is (re)initializing" after Established
            try:
                backend.foos.list(ListOptions(limit=1))
            except (TooManyRequestsError, NotFoundError):
                return False
            return True

        poll_until(served, 0.5, 60.0, immediate=True)
        yield backend
    finally:
        kube.close()


@contextmanager
def _server_backend() -> Iterator[Backend]:
    with TestAPIServer(bookmark_interval=0.2) as server:
        server.install_crd(CRD)
        with KubeClientset.for_config(server.config()) as kube:
            yield Backend(kube, SampleClientset(kube.transport), "e2e", server.config(), server)


def _delete_everything(backend: Backend) -> None:
    """Delete the test's Foos and Deployments (a bare cluster has no garbage collector)."""
    backend.foos.delete_collection()
    backend.deployments.delete_collection()
    eventually(lambda: not backend.foos.list().items and not backend.deployments.list().items,
               "the test's objects to be deleted")


CONTROLLERS = ["sample-controller", "builder", "async"]


@pytest.fixture(params=CONTROLLERS)
def controller(request: pytest.FixtureRequest) -> str:
    """Which of the three Foo controllers the test runs."""
    return str(request.param)


@pytest.fixture(params=["server", "cluster"])
def backend(
    request: pytest.FixtureRequest, cluster: Backend | None, controller: str
) -> Iterator[Backend]:
    if request.param == "server":
        with _server_backend() as server_backend:
            yield replace(server_backend, controller=controller)
        return
    if cluster is None:
        pytest.skip(f"{CLUSTER_ENV} is not set")
    try:
        yield replace(cluster, controller=controller)
    finally:
        _delete_everything(cluster)


class Running:
    """A controller (confined to the backend's namespace) running in a thread."""

    def __init__(self, backend: Backend, workers: int) -> None:
        self.kube = KubeClientset.for_config(backend.config)
        self.setup = setup(self.kube, backend.controller, workers, namespace=backend.namespace,
                           config=backend.config)
        self.stop = threading.Event()
        self.errors: list[BaseException] = []
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.setup.run(self.stop)
        except BaseException as err:  # reported by close()
            self.errors.append(err)

    def cached_foo(self, namespace: str, name: str) -> Foo:
        return self.setup.cached_foo(namespace, name)

    def close(self) -> None:
        self.stop.set()
        self.thread.join(BOUND)
        assert not self.thread.is_alive(), "the controller did not shut down"
        self.kube.close()
        assert not self.errors


class _SampleSetup:
    """``ControllerSetup`` behind the interface ``ManagerSetup`` has."""

    def __init__(self, kube: KubeClientset, workers: int, namespace: str | None) -> None:
        self.setup = ControllerSetup.new(kube, SampleClientset(kube.transport), resync=0,
                                         namespace=namespace)
        self.workers = workers

    def run(self, stop: threading.Event) -> None:
        self.setup.run(stop, workers=self.workers, informer_shutdown_timeout=5.0)

    def cached_foo(self, namespace: str, name: str) -> Foo:
        return self.setup.controller.foos_lister.foos(namespace).get(name)


class _AsyncSetup:
    """``AsyncManagerSetup`` on an event loop of its own (made by ``run``), behind the
    interface ``ManagerSetup`` has; its own async clientset over ``kube``'s configuration."""

    def __init__(self, config: Config, workers: int, namespace: str | None) -> None:
        self.config = config
        self.workers = workers
        self.namespace = namespace
        self.ready = threading.Event()
        self.loop: asyncio.AbstractEventLoop | None = None
        self.setup: AsyncManagerSetup | None = None

    def run(self, stop: threading.Event) -> None:
        asyncio.run(self._run(stop))

    async def _run(self, stop: threading.Event) -> None:
        async with AsyncKubeClientset.for_config(self.config) as clientset:
            self.setup = AsyncManagerSetup.new(clientset, workers=self.workers, resync=0,
                                               namespace=self.namespace)
            self.loop = asyncio.get_running_loop()
            self.ready.set()
            stop_on_event(stop, self.setup.manager)
            await self.setup.run()

    def cached_foo(self, namespace: str, name: str) -> Foo:
        assert self.ready.wait(BOUND)
        assert self.setup is not None and self.loop is not None
        read = self.setup.cached_foo(namespace, name)
        return asyncio.run_coroutine_threadsafe(read, self.loop).result(BOUND)


def setup(
    kube: KubeClientset, controller: str, workers: int, *, namespace: str | None = None,
    config: Config,
) -> _SampleSetup | ManagerSetup | _AsyncSetup:
    """The chosen Foo controller over ``kube`` (the async one over its own clientset of
    ``config``, the same server), not running yet (no resyncs)."""
    if controller == "async":
        return _AsyncSetup(config, workers, namespace)
    if controller == "builder":
        return ManagerSetup.new(kube, workers=workers, resync=0, namespace=namespace)
    return _SampleSetup(kube, workers, namespace)


@contextmanager
def running(backend: Backend, workers: int = 2) -> Iterator[Running]:
    controller = Running(backend, workers)
    try:
        yield controller
    finally:
        controller.close()


# -- helpers -----------------------------------------------------------------------------------


def create_foo(backend: Backend, name: str, replicas: int, deployment: str = "") -> Foo:
    return backend.foos.create(Foo(
        metadata=ObjectMeta(name=name, namespace=backend.namespace),
        spec=FooSpec(deployment_name=deployment or f"{name}-deployment", replicas=replicas),
    ))


def available(backend: Backend, foo: str) -> int | None:
    status = backend.foos.get(foo).status
    return None if status is None else status.available_replicas


def replicas(backend: Backend, deployment: str) -> int | None:
    spec = backend.deployments.get(deployment).spec
    return None if spec is None else spec.replicas


def report_available(backend: Backend, deployment: str, count: int) -> None:
    """Set the Deployment's status as kube-controller-manager's Deployment controller would."""
    backend.deployments.patch_status(deployment, {"status": {
        "replicas": count, "readyReplicas": count, "availableReplicas": count}})


# -- tests -------------------------------------------------------------------------------------


def test_create_makes_a_controlled_deployment_and_reports(backend: Backend) -> None:
    with running(backend):
        foo = create_foo(backend, "alpha", 2)
        eventually(lambda: available(backend, "alpha") == 0, "the Foo's status")
        d = backend.deployments.get("alpha-deployment")
        assert d.metadata.owner_references == [new_controller_ref(foo, FOO_RESOURCE.gvk)]
        spec = d.model_dump()["spec"]  # the wire form; a real server adds defaults to it
        labels = {"app": "nginx", "controller": "alpha"}
        assert spec["replicas"] == 2
        assert spec["selector"] == {"matchLabels": labels}
        assert spec["template"]["metadata"]["labels"] == labels
        containers = spec["template"]["spec"]["containers"]
        assert [(c["name"], c["image"]) for c in containers] == [("nginx", "nginx:latest")]
        synced = ("Normal", SUCCESS_SYNCED, MESSAGE_RESOURCE_SYNCED)
        eventually(lambda: synced in backend.events_of("alpha"), "the Synced event")


def test_replicas_change_updates_the_deployment(backend: Backend) -> None:
    with running(backend):
        create_foo(backend, "beta", 1)
        eventually(lambda: replicas(backend, "beta-deployment") == 1, "the Deployment")
        backend.foos.patch("beta", {"spec": {"replicas": 4}})
        eventually(lambda: replicas(backend, "beta-deployment") == 4, "the Deployment scaled")
        assert backend.deployments.get("beta-deployment").metadata.owner_references


def test_deleted_deployment_is_recreated(backend: Backend) -> None:
    with running(backend):
        foo = create_foo(backend, "gamma", 1)
        eventually(lambda: replicas(backend, "gamma-deployment") == 1, "the Deployment")
        first = backend.deployments.get("gamma-deployment").metadata.uid
        backend.deployments.delete("gamma-deployment")
        eventually(lambda: backend.deployments.get("gamma-deployment").metadata.uid != first,
                   "the Deployment to be recreated")
        again = backend.deployments.get("gamma-deployment")
        assert again.metadata.owner_references == [new_controller_ref(foo, FOO_RESOURCE.gvk)]


def test_foreign_deployment_gets_a_warning_and_is_left_alone(backend: Backend) -> None:
    foreign = backend.deployments.create(Deployment(
        metadata=ObjectMeta(name="taken", namespace=backend.namespace),
        spec=DeploymentSpec(
            replicas=1,
            selector=LabelSelector(match_labels={"app": "other"}),
            template=PodTemplateSpec(
                metadata=ObjectMeta(labels={"app": "other"}),
                spec=PodSpec(containers=[Container(name="other", image="busybox")]),
            ),
        ),
    ))
    with running(backend):
        create_foo(backend, "delta", 3, deployment="taken")
        warning = ("Warning", ERR_RESOURCE_EXISTS, MESSAGE_RESOURCE_EXISTS % "taken")
        eventually(lambda: warning in backend.events_of("delta"), "the ErrResourceExists event")
        after = backend.deployments.get("taken")
        assert after.metadata.resource_version == foreign.metadata.resource_version
        assert not after.metadata.owner_references
        assert backend.foos.get("delta").status is None
        assert ("Normal", SUCCESS_SYNCED, MESSAGE_RESOURCE_SYNCED) not in backend.events_of(
            "delta")


def test_foo_status_follows_the_deployment_status(backend: Backend) -> None:
    with running(backend):
        create_foo(backend, "epsilon", 3)
        eventually(lambda: available(backend, "epsilon") == 0, "the Foo's status")
        report_available(backend, "epsilon-deployment", 2)
        eventually(lambda: available(backend, "epsilon") == 2, "the Foo's status to follow")
        report_available(backend, "epsilon-deployment", 3)
        eventually(lambda: available(backend, "epsilon") == 3, "the Foo's status to follow")


def test_deleted_foo_gets_no_further_work(backend: Backend) -> None:
    # One worker: keys are reconciled in the order they were queued, so the barrier below
    # (another Foo reconciled after a Deployment event) proves earlier events were handled.
    with running(backend, workers=1) as controller:
        create_foo(backend, "zeta", 1)
        eventually(lambda: available(backend, "zeta") == 0, "the Foo's status")
        backend.foos.delete("zeta")

        def forgotten() -> bool:
            with suppress(NotFoundError):
                controller.cached_foo(backend.namespace, "zeta")
                return False
            return True

        eventually(forgotten, "the controller's cache to drop the Foo")
        backend.deployments.delete("zeta-deployment")  # the garbage collector's job

        create_foo(backend, "eta", 1)
        eventually(lambda: available(backend, "eta") == 0, "the barrier Foo's status")
        report_available(backend, "eta-deployment", 1)  # a Deployment event after the delete
        eventually(lambda: available(backend, "eta") == 1, "the barrier Foo's status")

        with pytest.raises(NotFoundError):
            backend.deployments.get("zeta-deployment")




def test_many_foos_changed_from_many_threads_all_converge(backend: Backend) -> None:
    names = [f"many-{i:02d}" for i in range(40)]

    def all_foos(condition: Callable[[Foo], bool]) -> bool:
        items = backend.foos.list().items
        return len(items) == len(names) and all(condition(foo) for foo in items)

    def all_deployments(count: int) -> bool:
        items = backend.deployments.list().items
        return len(items) == len(names) and all(
            d.spec is not None and d.spec.replicas == count for d in items)

    def status_is(count: int) -> Callable[[Foo], bool]:
        return lambda foo: foo.status is not None and foo.status.available_replicas == count

    with running(backend, workers=4), ThreadPoolExecutor(8) as pool:
        foos = list(pool.map(lambda name: create_foo(backend, name, 1), names))
        eventually(lambda: all_foos(status_is(0)), "every Foo's status")
        owners = {d.metadata.name: d.metadata.owner_references
                  for d in backend.deployments.list().items}
        assert owners == {f"{foo.metadata.name}-deployment":
                          [new_controller_ref(foo, FOO_RESOURCE.gvk)] for foo in foos}

        list(pool.map(lambda name: backend.foos.patch(name, {"spec": {"replicas": 2}}), names))
        eventually(lambda: all_deployments(2), "every Deployment to be scaled")
        list(pool.map(lambda name: report_available(backend, f"{name}-deployment", 2), names))
        eventually(lambda: all_foos(status_is(2)), "every Foo's status to follow")


def test_an_unreachable_server_does_not_hold_up_shutdown(
    caplog: pytest.LogCaptureFixture, controller: str
) -> None:
    caplog.set_level(logging.DEBUG, logger="kgen_runtime.rest.transport")
    with socket.socket() as sock:  # a port nobody listens on: connections are refused
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    config = Config(host=f"http://127.0.0.1:{port}")
    with KubeClientset.for_config(config) as kube:
        running_setup = setup(kube, controller, workers=1, config=config)
        stop = threading.Event()
        thread = threading.Thread(target=running_setup.run, args=(stop,))
        thread.start()
        eventually(lambda: "retrying GET" in caplog.text, "an informer's list to be retried")
        stop.set()
        thread.join(BOUND)
        assert not thread.is_alive()
        # The reflectors' requests are cancelled with their stop (rest.cancel_on), so the
        # informers stop inside the shutdown bound instead of waiting out the retries.
        assert "informers still busy" not in caplog.text


def test_the_controller_recovers_from_cut_connections_and_compaction(controller: str) -> None:
    with _server_backend() as server_backend:
        backend = replace(server_backend, controller=controller)
        assert backend.server is not None
        with running(backend):
            create_foo(backend, "before", 1)
            eventually(lambda: available(backend, "before") == 0, "the first Foo's status")
            backend.server.compact()  # the informers' next watch gets 410 Gone: relist
            backend.server.drop_connections()  # every watch and kept-alive connection cut
            create_foo(backend, "after", 2)
            eventually(lambda: available(backend, "after") == 0,
                       "a Foo created after the faults")
            report_available(backend, "after-deployment", 2)
            eventually(lambda: available(backend, "after") == 2, "its status to follow")
