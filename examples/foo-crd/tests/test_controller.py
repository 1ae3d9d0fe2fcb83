"""sample-controller's ``controller_test.go``, ported onto the fake clientsets.

As in Go, the fixture seeds two fakes (the Foo clientset and the kube clientset), puts the
same objects into the informers' caches, starts the informers, calls ``sync_handler`` once
and compares each fake's actions, in order and ignoring the informers' cluster-wide
list/watch, with the expected ones (``check_action``: verb, resource, subresource and the
object sent).

One difference from Go: the fakes behave like an API server (they assign uid and
resourceVersion and refuse a status update without the current one), so the caches hold the
objects as the fakes stored them, and Deployments are built from those stored Foos.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from typing import Any

import orjson
import pytest
from foo_api.fake import FakeClientset
from foo_api.informers import SharedInformerFactory as SampleInformerFactory
from foo_api.samplecontroller.v1alpha1 import FOO_RESOURCE, Foo
from foo_api.samplecontroller.v1alpha1.models import FooSpec, FooStatus
from foo_controller import (
    ERR_RESOURCE_EXISTS,
    MESSAGE_RESOURCE_EXISTS,
    MESSAGE_RESOURCE_SYNCED,
    SUCCESS_SYNCED,
    FooController,
    ResourceExistsError,
    new_deployment,
)
from tests._recorder import FakeRecorder

from kgen_runtime.api.apps.v1 import DEPLOYMENT_RESOURCE, Deployment
from kgen_runtime.api.fake import FakeClientset as KubeFakeClientset
from kgen_runtime.api.informers import SharedInformerFactory as KubeInformerFactory
from kgen_runtime.meta import KubeModel, ObjectMeta
from kgen_runtime.testing import Action, StatusError
from kgen_runtime.util.wait import poll_until

NAMESPACE = "default"


def new_foo(name: str, replicas: int | None) -> Foo:
    return Foo(
        metadata=ObjectMeta(name=name, namespace=NAMESPACE),
        spec=FooSpec(deployment_name=f"{name}-deployment", replicas=replicas),
    )


def _wire(obj: KubeModel) -> Any:
    return orjson.loads(obj.model_dump_json())


class Fixture:
    """Go's ``fixture``: objects to seed and cache, and the actions expected of each fake."""

    def __init__(self) -> None:
        self.client = FakeClientset()
        self.kube_client = KubeFakeClientset()
        self.foo_lister: list[Foo] = []
        self.deployment_lister: list[Deployment] = []
        self.actions: list[Action] = []
        self.kube_actions: list[Action] = []
        self.recorder = FakeRecorder()
        self.stop = threading.Event()
        self.informers = SampleInformerFactory(self.client.transport)
        self.kube_informers = KubeInformerFactory(self.kube_client.transport)

    # -- objects (seeded into the fake and into the cache) -----------------------------------

    def add_foo(self, foo: Foo) -> Foo:
        """Seed ``foo`` and cache it; return it as stored (with uid and resourceVersion)."""
        stored = Foo.model_validate(self.client.tracker.add(foo))
        self.foo_lister.append(stored)
        return stored

    def add_deployment(self, deployment: Deployment) -> Deployment:
        stored = Deployment.model_validate(self.kube_client.tracker.add(deployment))
        self.deployment_lister.append(stored)
        return stored

    # -- expectations --------------------------------------------------------------------------

    def expect_create_deployment_action(self, d: Deployment) -> None:
        self.kube_actions.append(Action("create", DEPLOYMENT_RESOURCE.gvr,
                                        d.metadata.namespace or "", object=_wire(d)))

    def expect_update_deployment_action(self, d: Deployment) -> None:
        self.kube_actions.append(Action("update", DEPLOYMENT_RESOURCE.gvr,
                                        d.metadata.namespace or "", d.metadata.name or "",
                                        object=_wire(d)))

    def expect_update_foo_status_action(self, foo: Foo) -> None:
        self.actions.append(Action("update", FOO_RESOURCE.gvr, foo.metadata.namespace or "",
                                   foo.metadata.name or "", "status", object=_wire(foo)))

    # -- running -------------------------------------------------------------------------------

    def new_controller(self) -> FooController:
        controller = FooController(
            self.kube_client,
            self.client,
            self.kube_informers.apps.v1.deployments,
            self.informers.samplecontroller.v1alpha1.foos,
            recorder=self.recorder,
        )
        for foo in self.foo_lister:
            self.informers.samplecontroller.v1alpha1.foos.informer.indexer.add(foo)
        for d in self.deployment_lister:
            self.kube_informers.apps.v1.deployments.informer.indexer.add(d)
        return controller

    def run(self, key: str, *, expect_error: bool = False) -> None:
        """Go's ``runController(ctx, key, true, expectError)``: start the informers, sync
        ``key`` once, then check both fakes' actions."""
        controller = self.new_controller()
        self.informers.start(self.stop)
        self.kube_informers.start(self.stop)
        if expect_error:
            with pytest.raises(ResourceExistsError):
                controller.sync_handler(key)
        else:
            controller.sync_handler(key)
        check_actions(self.actions, filter_informer_actions(self.client.actions()))
        check_actions(self.kube_actions, filter_informer_actions(self.kube_client.actions()))

    def run_expect_error(self, key: str) -> None:
        self.run(key, expect_error=True)

    def close(self) -> None:
        self.informers.shutdown()
        self.kube_informers.shutdown()


def filter_informer_actions(actions: list[Action]) -> list[Action]:
    """Drop the informers' cluster-wide list and watch of foos and deployments."""
    return [
        a for a in actions
        if not (not a.namespace and any(a.matches(verb, resource)
                                        for verb in ("list", "watch")
                                        for resource in ("foos", "deployments")))
    ]


def check_actions(expected: list[Action], actual: list[Action]) -> None:
    assert len(actual) == len(expected), (
        f"expected {len(expected)} actions, got {len(actual)}: {actual}"
    )
    for want, got in zip(expected, actual, strict=True):
        check_action(want, got)


def check_action(expected: Action, actual: Action) -> None:
    """Go's ``checkAction``: same verb, resource and subresource, and the same object sent."""
    assert expected.matches(actual.verb, actual.resource.resource), (expected, actual)
    assert actual.subresource == expected.subresource, (expected, actual)
    assert actual.namespace == expected.namespace, (expected, actual)
    if actual.verb not in ("create", "update"):
        pytest.fail(f"uncaptured action {actual.verb} {actual.resource}: add a case for it")
    assert actual.object == expected.object


def status_updated(foo: Foo, available: int) -> Foo:
    """``foo`` as the controller writes it to the status subresource."""
    copy = foo.deepcopy()
    copy.status = FooStatus(available_replicas=available)
    return copy


@pytest.fixture
def f() -> Iterator[Fixture]:
    fixture = Fixture()
    try:
        yield fixture
    finally:
        fixture.close()


def test_creates_deployment(f: Fixture) -> None:
    foo = f.add_foo(new_foo("test", 1))

    f.expect_create_deployment_action(new_deployment(foo))
    f.expect_update_foo_status_action(status_updated(foo, 0))
    f.run("default/test")

    assert f.recorder.events == [f"Normal {SUCCESS_SYNCED} {MESSAGE_RESOURCE_SYNCED}"]


def test_do_nothing(f: Fixture) -> None:
    foo = f.add_foo(new_foo("test", 1))
    f.add_deployment(new_deployment(foo))

    f.expect_update_foo_status_action(status_updated(foo, 0))
    f.run("default/test")


def test_update_deployment(f: Fixture) -> None:
    foo = f.add_foo(new_foo("test", 2))
    before = foo.deepcopy()  # the Deployment was made when the Foo asked for 1 replica
    assert before.spec is not None
    before.spec.replicas = 1
    f.add_deployment(new_deployment(before))

    f.expect_update_foo_status_action(status_updated(foo, 0))
    f.expect_update_deployment_action(new_deployment(foo))
    f.run("default/test")


def test_not_controlled_by_us(f: Fixture) -> None:
    foo = f.add_foo(new_foo("test", 1))
    d = new_deployment(foo)
    d.metadata.owner_references = []
    f.add_deployment(d)

    f.run_expect_error("default/test")

    message = MESSAGE_RESOURCE_EXISTS % "test-deployment"
    assert f.recorder.events == [f"Warning {ERR_RESOURCE_EXISTS} {message}"]


def test_new_deployment_is_sample_controllers() -> None:
    foo = new_foo("web", 3)
    foo.metadata.uid = "6a4c1b2e-0000-4000-8000-000000000001"

    labels = {"app": "nginx", "controller": "web"}
    assert _wire(new_deployment(foo)) == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {
            "name": "web-deployment",
            "namespace": "default",
            "ownerReferences": [{
                "apiVersion": "samplecontroller.k8s.io/v1alpha1",
                "kind": "Foo",
                "name": "web",
                "uid": "6a4c1b2e-0000-4000-8000-000000000001",
                "controller": True,
                "blockOwnerDeletion": True,
            }],
        },
        "spec": {
            "replicas": 3,
            "selector": {"matchLabels": labels},
            "template": {
                "metadata": {"labels": labels},
                "spec": {"containers": [{"name": "nginx", "image": "nginx:latest"}]},
            },
        },
    }


def test_a_foo_that_is_gone_is_forgotten(f: Fixture, caplog: pytest.LogCaptureFixture) -> None:
    f.run("default/gone")  # no error (nothing to retry), no actions

    assert "Foo 'default/gone' in work queue no longer exists" in caplog.text
    assert f.recorder.events == []


def test_a_foo_without_deployment_name_is_left_alone(
    f: Fixture, caplog: pytest.LogCaptureFixture
) -> None:
    nameless = new_foo("nameless", 1)
    assert nameless.spec is not None
    nameless.spec.deployment_name = None
    f.add_foo(nameless)

    f.run("default/nameless")  # no error (retrying cannot help), no actions

    assert "Deployment name missing from object reference" in caplog.text
    assert f.recorder.events == []


# -- beyond controller_test.go: the controller running on the fakes ---------------------------


def test_a_failed_write_is_retried_with_backoff_until_it_succeeds() -> None:
    client = FakeClientset()
    kube_client = KubeFakeClientset()
    client.tracker.add(new_foo("retry", 1))
    failures = [StatusError.internal("injected"), StatusError.internal("injected")]
    later: list[bool] = []  # per create after the refused ones: did the Deployment exist?

    def fail_twice(action: Action) -> tuple[bool, Any]:
        if failures:
            raise failures.pop()
        stored = kube_client.tracker.list(DEPLOYMENT_RESOURCE.gvr, NAMESPACE)
        later.append(any(d["metadata"]["name"] == "retry-deployment" for d in stored))
        return False, None  # on to the object tracker

    kube_client.prepend_reactor("create", "deployments", fail_twice)
    informers = SampleInformerFactory(client.transport)
    kube_informers = KubeInformerFactory(kube_client.transport)
    recorder = FakeRecorder()
    controller = FooController(kube_client, client, kube_informers.apps.v1.deployments,
                               informers.samplecontroller.v1alpha1.foos, recorder=recorder)
    stop = threading.Event()
    informers.start(stop)
    kube_informers.start(stop)
    thread = threading.Thread(target=controller.run, args=(1, stop), daemon=True)
    thread.start()
    try:
        def synced() -> bool:
            status = client.tracker.get(FOO_RESOURCE.gvr, NAMESPACE, "retry").get("status")
            return status == {"availableReplicas": 0}

        poll_until(synced, 0.005, 10.0, immediate=True)
    finally:
        stop.set()
        thread.join(10.0)
        informers.shutdown()
        kube_informers.shutdown()
    assert not thread.is_alive()
    creates = [a for a in filter_informer_actions(kube_client.actions()) if a.verb == "create"]
    # Two refused, the third stored. A sync that runs before the Deployment informer has
    # seen that create (the Foo's status update re-queues the Foo) creates again and gets
    # AlreadyExists, as in Go; such creates only ever find the Deployment already there.
    assert later[0] is False and all(later[1:])
    assert len(creates) == 2 + len(later)
    assert kube_client.tracker.list(DEPLOYMENT_RESOURCE.gvr, NAMESPACE)[0]["metadata"][
        "name"] == "retry-deployment"
    assert f"Normal {SUCCESS_SYNCED} {MESSAGE_RESOURCE_SYNCED}" in recorder.events
