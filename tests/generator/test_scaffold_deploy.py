"""The scaffolded operator against the test API server, imported in this process: every
manifest of ``deploy/`` applies and grants every request its manager sends; two replicas
with leader election never lead at once and hand over within the lease duration.

The project is ``kgen init`` plus ``kgen create api`` of a cluster-scoped kind, so both
scopes are covered; its packages are put on ``sys.path`` for this module only.
"""

from __future__ import annotations

import dataclasses
import importlib
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
import yaml

from kgen.scaffold import create_api, init_project
from kgen_runtime.controller import Manager, RunnableFunc
from kgen_runtime.groupversion import GroupVersionResource
from kgen_runtime.meta import Unstructured
from kgen_runtime.rest import DynamicClient, HTTPTransport, Response
from kgen_runtime.rest import Request as HTTPRequest
from kgen_runtime.testing import BUILTINS, TestAPIServer
from kgen_runtime.util import poll_until

NAMESPACE = "widget-operator-system"  # deploy/namespace.yaml
ACCOUNT = ("widget-operator-system", "widget-operator-controller-manager")


@dataclass(frozen=True)
class Operator:
    root: Path
    manager: ModuleType  # widget_operator.manager
    cmd: ModuleType  # widget_operator.cmd
    api: ModuleType  # widget_operator_api.example.v1alpha1
    infra: ModuleType  # widget_operator_api.infra.v1


@pytest.fixture(scope="module")
def operator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Operator]:
    root = tmp_path_factory.mktemp("deploy") / "widget-operator"
    init_project(root, group="example.com", kind="Widget", version="v1alpha1")
    create_api(root, group="infra.example.com", version="v1", kind="Policy", namespaced=False)
    sys.path.insert(0, str(root))
    try:
        yield Operator(
            root,
            importlib.import_module("widget_operator.manager"),
            importlib.import_module("widget_operator.cmd"),
            importlib.import_module("widget_operator_api.example.v1alpha1"),
            importlib.import_module("widget_operator_api.infra.v1"),
        )
    finally:
        sys.path.remove(str(root))
        for name in [m for m in sys.modules if m.split(".")[0].startswith("widget_operator")]:
            del sys.modules[name]


@pytest.fixture
def server() -> Iterator[TestAPIServer]:
    with TestAPIServer() as api_server:
        yield api_server


class RecordingTransport:
    """Sends through an HTTP transport, recording each request; ``cut()`` makes every later
    request fail as an unreachable server would."""

    def __init__(self, server: TestAPIServer) -> None:
        self.inner = HTTPTransport(server.config())
        self.lock = threading.Lock()
        self.sent: list[HTTPRequest] = []
        self.is_cut = threading.Event()

    def send(
        self, request: HTTPRequest, *, stream: bool = False, read_timeout: float | None = None
    ) -> Response:
        if self.is_cut.is_set():
            raise ConnectionError("the connection to the API server was cut")
        with self.lock:
            self.sent.append(request)
        return self.inner.send(request, stream=stream, read_timeout=read_timeout)

    def status_writes(self, plural: str) -> list[str]:
        with self.lock:
            return [r.path for r in self.sent
                    if r.method == "PUT" and r.path.endswith("/status") and f"/{plural}/" in r.path]


@dataclass(frozen=True)
class Access:
    """One request as RBAC sees it."""

    verb: str
    group: str
    resource: str  # "widgets" or "widgets/status"
    namespace: str  # "" for cluster-scoped requests


def access_of(request: HTTPRequest) -> Access:
    """The verb, group, resource and namespace of a request path (kube-apiserver's
    ``RequestInfoFactory``, for the paths clients send)."""
    parts = request.path.strip("/").split("/")
    group, rest = ("", parts[2:]) if parts[0] == "api" else (parts[1], parts[3:])
    namespace = ""
    if rest[0] == "namespaces" and len(rest) > 2:
        namespace, rest = rest[1], rest[2:]
    resource = rest[0] if len(rest) < 3 else f"{rest[0]}/{rest[2]}"
    named = len(rest) > 1
    query = dict(request.query) if request.query else {}
    if request.method == "GET":
        verb = "get" if named else ("watch" if query.get("watch") in ("1", "true") else "list")
    else:
        verb = {"POST": "create", "PUT": "update", "PATCH": "patch"}.get(request.method, "")
        if request.method == "DELETE":
            verb = "delete" if named else "deletecollection"
    return Access(verb, group, resource, namespace)


def apply(server: TestAPIServer, documents: list[dict[str, Any]]) -> None:
    """Create each object as ``kubectl apply`` would on an empty cluster."""
    served = {(r.group, r.version, r.kind): r for r in BUILTINS}
    with closing(HTTPTransport(server.config())) as transport:
        dynamic = DynamicClient(transport)
        for doc in documents:
            if doc["kind"] == "CustomResourceDefinition":
                server.install_crd(doc)
                continue
            group, _, version = doc["apiVersion"].rpartition("/")
            resource = served[(group, version, doc["kind"])]
            client = dynamic.resource(
                GroupVersionResource(group, version, resource.plural),
                namespaced=resource.namespaced,
            )
            if resource.namespaced:
                client = client.namespace(doc["metadata"]["namespace"])
            client.create(Unstructured.model_validate(doc))


class Authorizer:
    """RBAC of the service account, read back from the server (the RBAC authorizer's rule
    resolution: ClusterRoles bound cluster-wide, Roles bound in their namespace)."""

    def __init__(self, server: TestAPIServer) -> None:
        self.rules: list[tuple[str | None, dict[str, Any]]] = []  # (namespace or None, rule)
        with closing(HTTPTransport(server.config())) as transport:
            dynamic = DynamicClient(transport)

            def objects(plural: str, namespaced: bool) -> list[dict[str, Any]]:
                gvr = GroupVersionResource("rbac.authorization.k8s.io", "v1", plural)
                found = dynamic.resource(gvr, namespaced=namespaced).list().items
                return [o.model_dump(by_alias=True, mode="json") for o in found]

            roles = {("", r["metadata"]["name"]): r for r in objects("clusterroles", False)}
            roles |= {(r["metadata"]["namespace"], r["metadata"]["name"]): r
                      for r in objects("roles", True)}
            for binding in objects("clusterrolebindings", False) + objects("rolebindings", True):
                if not any((s["namespace"], s["name"]) == ACCOUNT for s in binding["subjects"]):
                    continue
                scope = binding["metadata"].get("namespace")
                ref = binding["roleRef"]
                role = roles[("" if ref["kind"] == "ClusterRole" else scope, ref["name"])]
                self.rules += [(scope, rule) for rule in role["rules"]]

    def allows(self, access: Access) -> bool:
        return any(
            (scope is None or scope == access.namespace)
            and access.group in rule["apiGroups"]
            and access.resource in rule["resources"]
            and access.verb in rule["verbs"]
            for scope, rule in self.rules
        )


def deploy_documents(root: Path, folder: str = "deploy") -> list[dict[str, Any]]:
    """Every manifest the folder's kustomization.yaml lists, which must be every YAML file
    in it outside the folders that are kustomizations of their own (deploy/samples)."""
    deploy = root / folder
    listed = yaml.safe_load((deploy / "kustomization.yaml").read_text())["resources"]
    own = {p.parent for p in deploy.rglob("kustomization.yaml") if p.parent != deploy}
    present = {p.relative_to(deploy).as_posix() for p in deploy.rglob("*.yaml")
               if not own & set(p.parents)}
    assert set(listed) == present - {"kustomization.yaml"}
    return [doc for name in listed for doc in yaml.safe_load_all((deploy / name).read_text())]


def eventually(condition: Callable[[], bool], timeout: float = 10.0) -> None:
    poll_until(condition, 0.01, timeout=timeout, immediate=True)


class Running:
    """``manager.start`` on a thread, stopped (bounded) by :meth:`stop`."""

    def __init__(self, manager: Manager) -> None:
        self.manager = manager
        self.stop_event = threading.Event()
        self.error: Exception | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.manager.start(self.stop_event)
        except Exception as err:  # handed to the test
            self.error = err

    def stop(self) -> None:
        self.stop_event.set()
        self.thread.join(15)
        assert not self.thread.is_alive(), "the manager did not stop"


def new_objects(operator: Operator, name: str) -> tuple[Any, Any]:
    from kgen_runtime.meta import ObjectMeta

    widget = operator.api.Widget(metadata=ObjectMeta(name=name, namespace="default"),
                                 spec={"message": name})
    policy = operator.infra.Policy(metadata=ObjectMeta(name=name), spec={"message": name})
    return widget, policy


def test_deploy_applies_and_its_rbac_covers_every_request(
    operator: Operator, server: TestAPIServer
) -> None:
    documents = deploy_documents(operator.root)
    apply(server, documents)
    deployment = next(d for d in documents if d["kind"] == "Deployment")
    options = _options_of(operator, deployment)
    transport = RecordingTransport(server)
    manager = operator.manager.new_manager(transport, options)
    running = Running(manager)
    try:
        assert manager.elected.wait(10)
        client = manager.cluster.client
        widget, policy = new_objects(operator, "example")
        client.create(widget)
        client.create(policy)
        eventually(lambda: len(transport.status_writes("widgets")) == 1
                   and len(transport.status_writes("policies")) == 1)
        eventually(lambda: sum(1 for r in transport.sent
                               if r.method == "POST" and r.path.endswith("/events")) >= 2)
    finally:
        running.stop()
        transport.inner.close()
    assert running.error is None
    authorizer = Authorizer(server)
    used = {access_of(r) for r in transport.sent} - {
        # the test's own writes through the manager's client, not the controllers'
        Access("create", "example.com", "widgets", "default"),
        Access("create", "infra.example.com", "policies", ""),
    }
    denied = sorted(str(a) for a in used if not authorizer.allows(a))
    assert denied == []
    assert {
        Access("update", "example.com", "widgets/status", "default"),
        Access("update", "infra.example.com", "policies/status", ""),
        Access("watch", "example.com", "widgets", ""),
        Access("create", "", "events", "default"),
        Access("create", "coordination.k8s.io", "leases", NAMESPACE),
    } <= used
    # The Lease is only granted in the operator's namespace.
    assert not authorizer.allows(Access("update", "coordination.k8s.io", "leases", "default"))


def test_the_samples_are_valid_objects_of_their_crds(
    operator: Operator, server: TestAPIServer
) -> None:
    """``kubectl apply -k deploy/samples`` (into the default namespace) after the CRDs."""
    apply(server, [d for d in deploy_documents(operator.root)
                   if d["kind"] == "CustomResourceDefinition"])
    samples = deploy_documents(operator.root, "deploy/samples")
    assert [(s["apiVersion"], s["kind"], s["metadata"]["name"]) for s in samples] == [
        ("example.com/v1alpha1", "Widget", "widget-sample"),
        ("infra.example.com/v1", "Policy", "policy-sample"),
    ]
    with closing(HTTPTransport(server.config())) as transport:
        dynamic = DynamicClient(transport)
        widgets = dynamic.resource(GroupVersionResource("example.com", "v1alpha1", "widgets"))
        created = widgets.namespace("default").create(Unstructured.model_validate(samples[0]))
        policies = dynamic.resource(GroupVersionResource("infra.example.com", "v1", "policies"),
                                    namespaced=False)
        policies.create(Unstructured.model_validate(samples[1]))
    assert created.model_dump(by_alias=True)["spec"] == {"message": "hello", "replicas": 1}


def test_each_kind_has_admin_editor_and_viewer_roles_aggregated_to_the_builtin_ones(
    operator: Operator,
) -> None:
    roles = {d["metadata"]["name"]: d for d in deploy_documents(operator.root)
             if d["kind"] == "ClusterRole" and "-role" in d["metadata"]["name"]
             and d["metadata"]["name"].split("-")[-2] in ("admin", "editor", "viewer")}
    assert sorted(roles) == [f"widget-operator-{kind}-{role}-role"
                             for kind in ("policy", "widget")
                             for role in ("admin", "editor", "viewer")]
    editor = roles["widget-operator-widget-editor-role"]
    assert editor["metadata"]["labels"]["rbac.authorization.k8s.io/aggregate-to-edit"] == "true"
    assert editor["rules"] == [
        {"apiGroups": ["example.com"], "resources": ["widgets"],
         "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"]},
        {"apiGroups": ["example.com"], "resources": ["widgets/status"], "verbs": ["get"]},
    ]
    assert roles["widget-operator-policy-admin-role"]["rules"][0] == {
        "apiGroups": ["infra.example.com"], "resources": ["policies"], "verbs": ["*"]}
    viewer = roles["widget-operator-policy-viewer-role"]
    assert viewer["metadata"]["labels"]["rbac.authorization.k8s.io/aggregate-to-view"] == "true"
    assert viewer["rules"][0]["verbs"] == ["get", "list", "watch"]


def _options_of(operator: Operator, deployment: dict[str, Any]) -> Any:
    """The manager options the Deployment's arguments give, in the operator's namespace,
    with an ephemeral port for the probes and no metrics server."""
    spec = deployment["spec"]
    container = spec["template"]["spec"]["containers"][0]
    assert spec["replicas"] == 2
    args = operator.cmd.parse_args(container["args"])
    assert args.leader_elect
    ports = {p["name"]: p["containerPort"] for p in container["ports"]}
    assert args.health_probe_bind_address == ("0.0.0.0", ports["health"])
    assert args.metrics_bind_address == ("0.0.0.0", ports["metrics"])
    assert container["livenessProbe"]["httpGet"] == {"path": "/healthz", "port": "health"}
    assert container["readinessProbe"]["httpGet"] == {"path": "/readyz", "port": "health"}
    options = operator.cmd.options_from(args)
    assert (options.leader_elect, options.namespaces) == (True, [])
    return dataclasses.replace(
        options,
        leader_election_namespace=NAMESPACE,  # the pod's namespace, read in the pod
        health_probe_address=("127.0.0.1", 0),
        metrics_address=None,
        graceful_shutdown_timeout=5.0,
    )


def test_the_namespace_flag_restricts_what_the_manager_sees(
    operator: Operator, server: TestAPIServer
) -> None:
    for crd in sorted((operator.root / "deploy/crds").glob("*.yaml")):
        server.install_crd(yaml.safe_load(crd.read_text()))
    args = operator.cmd.parse_args(["--namespace", "team-a", "--health-probe-bind-address", "0"])
    options = dataclasses.replace(operator.cmd.options_from(args), graceful_shutdown_timeout=5.0)
    transport = RecordingTransport(server)
    manager = operator.manager.new_manager(transport, options)
    running = Running(manager)
    try:
        assert manager.elected.wait(10)
        with closing(HTTPTransport(server.config())) as setup:
            widgets = DynamicClient(setup).resource(
                GroupVersionResource("example.com", "v1alpha1", "widgets"))
            for namespace in ("team-b", "team-a"):
                widget = new_objects(operator, "w")[0]
                widget.metadata.namespace = namespace
                widgets.namespace(namespace).create(
                    Unstructured.model_validate(widget.model_dump(by_alias=True, mode="json")))
        eventually(lambda: len(transport.status_writes("widgets")) == 1)
    finally:
        running.stop()
        transport.inner.close()
    assert running.error is None
    assert transport.status_writes("widgets") == [
        "/apis/example.com/v1alpha1/namespaces/team-a/widgets/w/status"]
    assert {access_of(r).namespace for r in transport.sent
            if access_of(r).resource.startswith("widgets")} == {"team-a"}


# -- leader election ------------------------------------------------------------------------


@dataclass
class Leadership:
    """Records which replicas lead, through a runnable that runs only while leading."""

    lock: threading.Lock = field(default_factory=threading.Lock)
    leading: set[str] = field(default_factory=set)
    most_at_once: int = 0
    log: list[str] = field(default_factory=list)

    def runnable(self, name: str) -> RunnableFunc:
        def run(stop: threading.Event) -> None:
            with self.lock:
                self.leading.add(name)
                self.most_at_once = max(self.most_at_once, len(self.leading))
                self.log.append(f"{name} leads")
            stop.wait()
            with self.lock:
                self.leading.discard(name)
                self.log.append(f"{name} stopped")

        return RunnableFunc(run)


LEASE = {"lease_duration": 2.0, "renew_deadline": 1.5, "retry_period": 0.2}


def replicas(
    operator: Operator, server: TestAPIServer, leadership: Leadership
) -> dict[str, tuple[Running, RecordingTransport]]:
    server.install_crd(yaml.safe_load(
        (operator.root / "deploy/crds/example.com_widgets.yaml").read_text()))
    server.install_crd(yaml.safe_load(
        (operator.root / "deploy/crds/infra.example.com_policies.yaml").read_text()))
    started = {}
    for name in ("a", "b"):
        transport = RecordingTransport(server)
        options = operator.manager.Options(
            leader_elect=True, leader_election_namespace=NAMESPACE, identity=name,
            graceful_shutdown_timeout=5.0, **LEASE)
        manager = operator.manager.new_manager(transport, options)
        manager.add(leadership.runnable(name))
        started[name] = (Running(manager), transport)
    return started


def test_two_replicas_one_leader_that_hands_over_when_stopped(
    operator: Operator, server: TestAPIServer
) -> None:
    leadership = Leadership()
    started = replicas(operator, server, leadership)
    try:
        eventually(lambda: bool(leadership.leading))
        leader = next(iter(leadership.leading))
        follower = "b" if leader == "a" else "a"
        client = started[leader][0].manager.cluster.client
        client.create(new_objects(operator, "first")[0])
        eventually(lambda: len(started[leader][1].status_writes("widgets")) == 1)
        assert not started[follower][0].manager.elected.wait(3 * LEASE["retry_period"])
        assert started[follower][1].status_writes("widgets") == []
        stopped_at = time.monotonic()
        started[leader][0].stop()
        assert started[follower][0].manager.elected.wait(LEASE["lease_duration"])
        handover = time.monotonic() - stopped_at
        client = started[follower][0].manager.cluster.client
        client.create(new_objects(operator, "second")[0])
        eventually(lambda: len(started[follower][1].status_writes("widgets")) == 1)
    finally:
        for running, transport in started.values():
            running.stop()
            transport.inner.close()
    assert handover < LEASE["lease_duration"]
    assert leadership.most_at_once == 1
    assert leadership.log == [f"{leader} leads", f"{leader} stopped",
                              f"{follower} leads", f"{follower} stopped"]
    assert [r.error for r, _ in started.values()] == [None, None]


def test_a_leader_cut_off_from_the_server_stops_before_another_takes_over(
    operator: Operator, server: TestAPIServer
) -> None:
    leadership = Leadership()
    started = replicas(operator, server, leadership)
    try:
        eventually(lambda: bool(leadership.leading))
        leader = next(iter(leadership.leading))
        follower = "b" if leader == "a" else "a"
        started[leader][1].is_cut.set()  # no renewal, no release: as if its node vanished
        eventually(lambda: started[leader][0].error is not None)
        assert started[follower][0].manager.elected.wait(
            LEASE["lease_duration"] + LEASE["renew_deadline"] + 1)
    finally:
        for running, transport in started.values():
            running.stop()
            transport.inner.close()
    assert str(started[leader][0].error) == "leader election lost"
    assert started[follower][0].error is None
    assert leadership.most_at_once == 1
    assert leadership.log == [f"{leader} leads", f"{leader} stopped",
                              f"{follower} leads", f"{follower} stopped"]
