"""The Foo's webhooks and versions through an API server: admission and conversion for real.

The same tests run against the in-process :class:`TestAPIServer` and, when
``$KGEN_TEST_KUBECONFIG`` names a kubeconfig, against that cluster, with the same set-up:

1. the multi-version CRD (``crds/foo.yaml``) is installed, or updated when it exists (its
   previous spec is restored afterwards; a CRD the tests created is deleted);
2. the example's Manager runs (``ManagerSetup`` with a :class:`WebhookServer` on
   127.0.0.1, a free port, a certificate for ``IP:127.0.0.1`` issued by a test CA), serving
   the Foo's webhooks and running the builder's controller in a new namespace;
3. the CRD's conversion is pointed at ``https://127.0.0.1:PORT/convert`` and a
   Mutating- and ValidatingWebhookConfiguration register the admission webhooks by URL, with
   the CA as ``caBundle``, confined to the new namespace;
4. the tests wait until the API server calls them (a real one picks configurations up
   asynchronously), then run; everything made is deleted at the end.

A real API server reaches the webhooks on 127.0.0.1 only when it runs on this machine (the
bare kube-apiserver of ../shared/REAL-CLUSTER.md does).
"""

from __future__ import annotations

import logging
import os
import threading
import uuid
from collections.abc import Callable, Iterator
from contextlib import ExitStack, suppress
from dataclasses import dataclass
from typing import Any

import pytest
import yaml
from foo_api.clientset import Clientset as SampleClientset
from foo_api.samplecontroller import v1alpha1, v1beta1
from foo_api.samplecontroller.v1alpha1.client import FooClient as AlphaClient
from foo_api.samplecontroller.v1alpha1.models import FooSpec as AlphaSpec
from foo_api.samplecontroller.v1beta1.client import FooClient as BetaClient
from foo_api.samplecontroller.v1beta1.models import FooSpec as BetaSpec
from foo_api.samplecontroller.v1beta1.models import FooSpecDeployment
from foo_controller import (
    WEBHOOK_CONFIGURATION_NAME,
    ManagerSetup,
    conversion_webhook,
    webhook_configurations,
)
from foo_controller._demo import CRD_PATH
from prometheus_client import CollectorRegistry

from kgen_runtime.api.apiextensions.v1 import CustomResourceDefinition
from kgen_runtime.api.apiextensions.v1.client import CustomResourceDefinitionClient
from kgen_runtime.api.clientset import Clientset as KubeClientset
from kgen_runtime.api.core.v1 import Namespace
from kgen_runtime.meta import LabelSelector, ObjectMeta
from kgen_runtime.rest import Config, ListOptions
from kgen_runtime.rest.errors import ApiError, NotFoundError
from kgen_runtime.testing import TestAPIServer
from kgen_runtime.util.retry import DEFAULT_RETRY, retry_on_conflict
from kgen_runtime.util.wait import poll_until
from kgen_runtime.webhook import WebhookServer
from tests._webhooks import Certs

CLUSTER_ENV = "KGEN_TEST_KUBECONFIG"
BOUND = 10.0
"""Upper bound of every wait in a test; reaching it means a bug, not slowness."""
SETUP_BOUND = 60.0
"""Upper bound of the set-up's waits (a real API server re-initialises a changed CRD's
storage and picks webhook configurations up asynchronously)."""
ALPHA = "samplecontroller.k8s.io/v1alpha1"
BETA = "samplecontroller.k8s.io/v1beta1"
STASH = "conversion.kgen.io/foo-fields"
IMMUTABLE = ("field is immutable: the Foo's Deployment \"{}\" would be left running; delete "
             "the Foo and create it again to use another Deployment")
UNPINNED = "has no tag or the tag latest: each new pod may pull a different image"


@dataclass(frozen=True)
class Env:
    """A server with the Foo's webhooks registered, and the test namespace on it."""

    kube: KubeClientset
    sample: SampleClientset
    namespace: str
    configuration: str
    """The name of both webhook configurations (the webhooks' names end with it)."""

    @property
    def alpha(self) -> AlphaClient:
        return self.sample.samplecontroller_v1alpha1.foos(self.namespace)

    @property
    def beta(self) -> BetaClient:
        return self.sample.samplecontroller_v1beta1.foos(self.namespace)

    def denial(self, webhook: str, message: str) -> str:
        """How the API server words a refusal by one of the configuration's webhooks."""
        return (f'admission webhook "{webhook}.{self.configuration}" denied the request: '
                f"{message}")


def eventually(condition: Callable[[], bool], what: str, bound: float = BOUND) -> None:
    """Wait until ``condition()`` holds; an ApiError counts as not yet."""

    def holds() -> bool:
        try:
            return condition()
        except ApiError:
            return False

    try:
        poll_until(holds, 0.05, bound, immediate=True)
    except TimeoutError:
        pytest.fail(f"timed out after {bound}s waiting for {what}")


# -- set-up ------------------------------------------------------------------------------------


@pytest.fixture(scope="module", params=["server", "cluster"])
def env(request: pytest.FixtureRequest, module_certs: Certs) -> Iterator[Env]:
    if request.param == "server":
        with TestAPIServer(bookmark_interval=0.2) as server:
            yield from _environment(server.config(), module_certs)
        return
    kubeconfig = os.environ.get(CLUSTER_ENV)
    if not kubeconfig:
        pytest.skip(f"{CLUSTER_ENV} is not set")
    yield from _environment(Config.from_kubeconfig(kubeconfig, qps=50.0, burst=100),
                            module_certs)


def _environment(config: Config, certs: Certs) -> Iterator[Env]:
    namespace = f"kgen-foo-webhooks-{uuid.uuid4().hex[:10]}"
    with ExitStack() as cleanup:
        kube = cleanup.enter_context(KubeClientset.for_config(config))
        env = Env(kube, SampleClientset(kube.transport), namespace,
                  f"{namespace}.{WEBHOOK_CONFIGURATION_NAME}")
        crds = kube.apiextensions_v1.customresourcedefinitions()
        manifest = CustomResourceDefinition.model_validate(yaml.safe_load(CRD_PATH.read_text()))
        cleanup.callback(_restore_crd, crds, manifest, _install_crd(crds, manifest))
        kube.core_v1.namespaces().create(Namespace(metadata=ObjectMeta(name=namespace)))
        cleanup.callback(_delete_quietly, kube.core_v1.namespaces().delete, namespace)
        # After the manager has stopped, so that its controller recreates nothing.
        cleanup.callback(_delete_objects, env)
        base_url = _run_manager(kube, namespace, certs, cleanup)
        ca = certs.ca.read_bytes()
        _update_crd(crds, manifest, lambda crd: setattr(
            crd.spec, "conversion", conversion_webhook(base_url, ca)))
        selector = LabelSelector(match_labels={"kubernetes.io/metadata.name": namespace})
        mutating, validating = webhook_configurations(
            base_url, ca, name=env.configuration, namespace_selector=selector)
        registrations = kube.admissionregistration_v1
        registrations.mutatingwebhookconfigurations().create(mutating)
        cleanup.callback(_delete_quietly, registrations.mutatingwebhookconfigurations().delete,
                         env.configuration)
        registrations.validatingwebhookconfigurations().create(validating)
        cleanup.callback(_delete_quietly,
                         registrations.validatingwebhookconfigurations().delete,
                         env.configuration)
        _wait_until_called(env)
        yield env


def _install_crd(
    crds: CustomResourceDefinitionClient, manifest: CustomResourceDefinition
) -> CustomResourceDefinition | None:
    """Create the CRD, or bring an existing one to the manifest's versions; returns the
    existing one (None when created), for :func:`_restore_crd`."""
    name = manifest.metadata.name or ""
    try:
        previous = crds.get(name)
    except NotFoundError:
        crds.create(manifest)
        return None
    _update_crd(crds, manifest, lambda crd: setattr(crd, "spec", manifest.spec))
    return previous


def _update_crd(crds: CustomResourceDefinitionClient, manifest: CustomResourceDefinition,
                change: Callable[[CustomResourceDefinition], None]) -> None:
    """Change the CRD (retrying on conflicts) and wait until both versions are served."""
    name = manifest.metadata.name or ""

    def update() -> None:
        crd = crds.get(name)
        change(crd)
        crds.update(crd)

    retry_on_conflict(DEFAULT_RETRY, update)

    def established() -> bool:
        status = crds.get(name).model_dump().get("status") or {}
        return any(c.get("type") == "Established" and c.get("status") == "True"
                   for c in status.get("conditions") or ())

    eventually(established, f"CRD {name} to be established", SETUP_BOUND)


def _restore_crd(crds: CustomResourceDefinitionClient, manifest: CustomResourceDefinition,
                 previous: CustomResourceDefinition | None) -> None:
    name = manifest.metadata.name or ""
    if previous is None:
        _delete_quietly(crds.delete, name)
    else:
        _update_crd(crds, manifest, lambda crd: setattr(crd, "spec", previous.spec))


def _run_manager(kube: KubeClientset, namespace: str, certs: Certs, cleanup: ExitStack) -> str:
    """Start the example's Manager with its webhooks on 127.0.0.1; returns their base URL."""
    webhooks = WebhookServer("127.0.0.1", 0, cert_dir=certs.directory,
                             registry=CollectorRegistry())
    setup = ManagerSetup.new(kube, workers=2, resync=0, namespace=namespace, webhooks=webhooks)
    stop = threading.Event()
    errors: list[BaseException] = []

    def run() -> None:
        try:
            setup.run(stop)
        except BaseException as err:  # reported at shutdown
            errors.append(err)

    thread = threading.Thread(target=run, name="foo-manager", daemon=True)
    thread.start()

    def shut_down() -> None:
        stop.set()
        thread.join(BOUND)
        assert not thread.is_alive(), "the manager did not shut down"
        assert not errors

    cleanup.callback(shut_down)
    eventually(lambda: webhooks.address is not None, "the webhook server to listen")
    assert webhooks.address is not None
    return f"https://127.0.0.1:{webhooks.address[1]}"


def _wait_until_called(env: Env) -> None:
    """Until the API server calls every webhook: each version's create is defaulted and a
    bad one refused, and a v1alpha1 object reads as v1beta1 (the conversion webhook)."""

    def admission_works() -> bool:
        alpha = env.alpha.create(v1alpha1.Foo(metadata=ObjectMeta(name="probe-alpha")),
                                 dry_run=True)
        beta = env.beta.create(v1beta1.Foo(metadata=ObjectMeta(name="probe-beta")),
                               dry_run=True)
        for client, foo in ((env.alpha, v1alpha1.Foo(spec=AlphaSpec(deployment_name="Bad_"))),
                            (env.beta, v1beta1.Foo(spec=BetaSpec(
                                deployment=FooSpecDeployment(name="Bad_"))))):
            foo.metadata = ObjectMeta(name="probe-refused")
            try:
                client.create(foo, dry_run=True)  # type: ignore[arg-type]
                return False
            except ApiError as err:
                if err.code != 422 or "denied the request" not in err.message:
                    return False
        return bool(alpha.spec and alpha.spec.replicas == 1
                    and beta.spec and beta.spec.replicas == 1)

    eventually(admission_works, "the admission webhooks to be called (an API server reaches "
               "them on 127.0.0.1 only when it runs on this machine)", SETUP_BOUND)
    env.alpha.create(v1alpha1.Foo(metadata=ObjectMeta(name="probe-conversion"),
                                  spec=AlphaSpec(deployment_name="probe-conversion")))
    eventually(lambda: env.beta.get("probe-conversion").spec == BetaSpec(
        deployment=FooSpecDeployment(name="probe-conversion"), replicas=1),
        "the conversion webhook to be called", SETUP_BOUND)
    # The controller's informer started before the CRD got its conversion webhook; a real
    # API server re-initialises the CRD's storage then, ending its watches and answering 429
    # for a while, and the reflector backs off (0.8 s doubling). The tests that wait for the
    # controller must not pay for that within their bound: wait here until it reconciles.
    deployments = env.kube.apps_v1.deployments(env.namespace)
    eventually(lambda: deployments.get("probe-conversion") is not None,
               "the controller to reconcile after the CRD changed", SETUP_BOUND)
    env.alpha.delete("probe-conversion")
    deployments.delete("probe-conversion")


def _delete_objects(env: Env) -> None:
    """Delete the Foos and the Deployments the controller made for them."""
    env.alpha.delete_collection()
    env.kube.apps_v1.deployments(env.namespace).delete_collection()


def _delete_quietly(delete: Callable[[str], None], name: str) -> None:
    with suppress(NotFoundError):
        delete(name)


@pytest.fixture
def foos(env: Env) -> Iterator[Env]:
    """``env``, the test's Foos deleted afterwards."""
    yield env
    _delete_objects(env)


# -- helpers -----------------------------------------------------------------------------------


def wire(obj: Any) -> dict[str, Any]:
    """``obj``'s wire form without what the server adds to every object."""
    data: dict[str, Any] = obj.model_dump(mode="json")
    for key in ("managedFields", "creationTimestamp", "generation", "resourceVersion", "uid"):
        data["metadata"].pop(key, None)
    data.pop("status", None)  # the controller writes it when it gets to the Foo
    return data


def alpha_foo(name: str, deployment: str | None = None, replicas: int | None = None,
              **metadata: Any) -> v1alpha1.Foo:
    spec = {k: v for k, v in (("deploymentName", deployment), ("replicas", replicas))
            if v is not None}
    return v1alpha1.Foo.model_validate(
        {"metadata": {"name": name, **metadata}, **({"spec": spec} if spec else {})})


def beta_foo(name: str, deployment: dict[str, str] | None = None,
             replicas: int | None = None) -> v1beta1.Foo:
    spec: dict[str, Any] = {k: v for k, v in (("deployment", deployment),
                                              ("replicas", replicas)) if v is not None}
    return v1beta1.Foo.model_validate(
        {"metadata": {"name": name}, **({"spec": spec} if spec else {})})


def changed(client: Any, name: str, change: Callable[[Any], None]) -> None:
    """Read, change and update the Foo called ``name``, again when the controller's status
    write came in between (client-go's ``RetryOnConflict``)."""

    def update() -> None:
        foo = client.get(name)
        change(foo)
        client.update(foo)

    retry_on_conflict(DEFAULT_RETRY, update)


# -- admission ---------------------------------------------------------------------------------


def test_a_create_is_defaulted_in_either_version(foos: Env) -> None:
    created = foos.alpha.create(alpha_foo("plain"))
    assert wire(created) == {
        "apiVersion": ALPHA, "kind": "Foo",
        "metadata": {"name": "plain", "namespace": foos.namespace},
        "spec": {"deploymentName": "plain", "replicas": 1}}
    created_beta = foos.beta.create(beta_foo("beta", {"image": "redis:7.2"}))
    assert wire(created_beta) == {
        "apiVersion": BETA, "kind": "Foo",
        "metadata": {"name": "beta", "namespace": foos.namespace},
        "spec": {"deployment": {"name": "beta", "image": "redis:7.2"}, "replicas": 1}}


def test_a_changed_deployment_name_is_refused_with_the_handlers_message(foos: Env) -> None:
    foos.alpha.create(alpha_foo("keep", "keep-deployment", 2))

    def rename_alpha(foo: v1alpha1.Foo) -> None:
        assert foo.spec is not None
        foo.spec.deployment_name = "other"

    with pytest.raises(ApiError) as refused:
        changed(foos.alpha, "keep", rename_alpha)
    assert (refused.value.code, refused.value.message) == (422, foos.denial(
        "validate-v1alpha1",
        'spec.deploymentName: Invalid value: "other": ' + IMMUTABLE.format("keep-deployment")))

    def rename_beta(foo: v1beta1.Foo) -> None:
        assert foo.spec is not None and foo.spec.deployment is not None
        foo.spec.deployment.name = "other"

    with pytest.raises(ApiError) as refused_beta:  # the same refusal in v1beta1 terms
        changed(foos.beta, "keep", rename_beta)
    assert (refused_beta.value.code, refused_beta.value.message) == (422, foos.denial(
        "validate-v1beta1",
        'spec.deployment.name: Invalid value: "other": ' + IMMUTABLE.format("keep-deployment")))
    stored = foos.alpha.get("keep").spec
    assert stored is not None and stored.deployment_name == "keep-deployment"


def test_an_invalid_deployment_name_is_refused(foos: Env) -> None:
    with pytest.raises(ApiError) as refused:
        foos.beta.create(beta_foo("bad", {"name": "Not_A_Name"}))
    assert refused.value.code == 422
    assert refused.value.message.startswith(foos.denial(
        "validate-v1beta1", 'spec.deployment.name: Invalid value: "Not_A_Name": a lowercase '
        "RFC 1123 subdomain must consist of"))
    with pytest.raises(NotFoundError):
        foos.alpha.get("bad")


def test_warnings_come_back_with_admitted_writes(
    foos: Env, caplog: pytest.LogCaptureFixture
) -> None:
    """One warning per write, on both servers.

    The scale-down is a patch, not a read and an update: the controller writes the Foo's
    status after the create, and an update racing it gets 409 Conflict, with or without the
    validating webhook's warning on a real server (its first attempt runs against the watch
    cache's copy, which may or may not have seen the status write yet: registry/store.go
    ``Update`` in etcd3's ``GuaranteedUpdate``). A patch has no resourceVersion to conflict
    on, and the warnings of the attempts a racing write makes kube-apiserver retry are the
    same text, sent once (tests/testing/test_admission_warnings.py).
    """
    caplog.set_level(logging.WARNING, logger="kgen_runtime.rest.transport")
    foos.beta.create(beta_foo("warned", {"image": "redis"}, replicas=5))
    foos.alpha.patch("warned", {"spec": {"replicas": 2}})
    warnings = [r.getMessage() for r in caplog.records if "server warning" in r.getMessage()]
    path = f"/apis/samplecontroller.k8s.io/{{}}/namespaces/{foos.namespace}/foos"
    assert warnings == [  # as the Warning headers carry them: 299, no agent, quoted text
        f"POST {path.format('v1beta1')}: server warning: 299 - "
        f'"spec.deployment.image: \\"redis\\" {UNPINNED}"',
        f"PATCH {path.format('v1alpha1')}/warned: server warning: 299 - "
        '"spec.replicas lowered from 5 to 2: the Deployment will delete 3 pods"',
    ]


# -- conversion --------------------------------------------------------------------------------


def test_a_v1beta1_read_of_a_v1alpha1_object_is_converted_and_back(foos: Env) -> None:
    created = foos.alpha.create(alpha_foo("stored", "stored-deployment", 3,
                                          labels={"team": "a"}))
    read = foos.beta.get("stored")
    assert wire(read) == {
        "apiVersion": BETA, "kind": "Foo",
        "metadata": {"name": "stored", "namespace": foos.namespace, "labels": {"team": "a"}},
        "spec": {"deployment": {"name": "stored-deployment"}, "replicas": 3}}
    assert read.metadata.uid == created.metadata.uid


def test_a_v1alpha1_read_of_a_v1beta1_object_keeps_the_image_for_v1beta1(foos: Env) -> None:
    foos.beta.create(beta_foo("imaged", {"name": "imaged-deployment", "image": "redis:7.2"}, 2))
    assert wire(foos.alpha.get("imaged")) == {
        "apiVersion": ALPHA, "kind": "Foo",
        "metadata": {"name": "imaged", "namespace": foos.namespace,
                     "annotations": {STASH: '{"image":"redis:7.2"}'}},
        "spec": {"deploymentName": "imaged-deployment", "replicas": 2}}
    assert wire(foos.beta.get("imaged"))["spec"] == {
        "deployment": {"name": "imaged-deployment", "image": "redis:7.2"}, "replicas": 2}
    # The controller, which reads v1alpha1, runs the v1beta1 image.
    deployments = foos.kube.apps_v1.deployments(foos.namespace)

    def images() -> list[str]:
        pods = deployments.get("imaged-deployment").model_dump(mode="json")["spec"]["template"]
        return [container["image"] for container in pods["spec"]["containers"]]

    eventually(lambda: images() == ["redis:7.2"],
               "the controller's Deployment with the v1beta1 image")


def test_lists_and_watches_in_both_versions(foos: Env) -> None:
    foos.alpha.create(alpha_foo("listed-alpha", "a", 1))
    foos.beta.create(beta_foo("listed-beta", {"name": "b", "image": "redis:7.2"}, 2))
    alpha_list = foos.alpha.list()
    assert {f.metadata.name: wire(f)["spec"] for f in alpha_list.items} == {
        "listed-alpha": {"deploymentName": "a", "replicas": 1},
        "listed-beta": {"deploymentName": "b", "replicas": 2}}
    assert {f.api_version for f in alpha_list.items} == {ALPHA}
    beta_list = foos.beta.list()
    assert {f.metadata.name: wire(f)["spec"] for f in beta_list.items} == {
        "listed-alpha": {"deployment": {"name": "a"}, "replicas": 1},
        "listed-beta": {"deployment": {"name": "b", "image": "redis:7.2"}, "replicas": 2}}
    assert {f.api_version for f in beta_list.items} == {BETA}

    beta_watch = foos.beta.watch(ListOptions(resource_version=beta_list.metadata.resource_version,
                                             timeout_seconds=int(BOUND)))
    alpha_watch = foos.alpha.watch(ListOptions(
        resource_version=alpha_list.metadata.resource_version, timeout_seconds=int(BOUND)))
    try:
        foos.alpha.patch("listed-alpha", {"spec": {"replicas": 4}})
        foos.beta.patch("listed-beta", {"spec": {"deployment": {"image": "redis:7.4"}}})
        seen_beta = next(e for e in beta_watch if e.type == "MODIFIED" and e.object.spec
                         and e.object.spec.replicas == 4)
        assert seen_beta.object.api_version == BETA
        assert seen_beta.object.spec.model_dump(mode="json") == {  # type: ignore[union-attr]
            "deployment": {"name": "a"}, "replicas": 4}
        seen_alpha = next(e for e in alpha_watch if e.type == "MODIFIED"
                          and e.object.metadata.name == "listed-beta"
                          and "7.4" in str(e.object.metadata.annotations))
        assert seen_alpha.object.api_version == ALPHA
        assert seen_alpha.object.metadata.annotations == {STASH: '{"image":"redis:7.4"}'}
    finally:
        beta_watch.stop()
        alpha_watch.stop()
