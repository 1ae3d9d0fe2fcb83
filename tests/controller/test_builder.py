"""The builder: what ``for_``/``owns``/``watches``/filters enqueue, exactly; the reconcile
contract; the RBAC rules; concurrency; bad use.

The manager runs over the in-process fake (its informers list and watch it). With one worker
and objects of one kind, requests are reconciled in the order the events happened, so a
"barrier" object created last proves that nothing was enqueued for the objects before it.
"""

from __future__ import annotations

import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest

from kgen_runtime.api.apps.v1 import Deployment
from kgen_runtime.api.apps.v1.models import DeploymentSpec
from kgen_runtime.api.core.v1 import ConfigMap, Pod, Secret
from kgen_runtime.api.core.v1.models import Container, PodSpec, PodTemplateSpec
from kgen_runtime.api.fake import FakeClientset
from kgen_runtime.cache import ReflectorOptions
from kgen_runtime.controller import (
    Builder,
    CacheOptions,
    ClientEventSink,
    Cluster,
    Funcs,
    GenerationChangedPredicate,
    GenericEventSource,
    LabelSelectorPredicate,
    LeaderElectionConfig,
    LeaseLock,
    Manager,
    OperationResult,
    PermissionSet,
    Request,
    Result,
    TerminalError,
    create_or_update,
    set_controller_reference,
)
from kgen_runtime.meta import LabelSelector, ObjectMeta, OwnerReference
from kgen_runtime.scheme import NotRegisteredError
from kgen_runtime.workqueue import ItemExponentialFailureRateLimiter
from tests.controller._support import eventually, started

NS = "ns"


class Recorder:
    """A reconciler remembering every request, in order."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.requests: list[Request] = []

    def reconcile(self, request: Request) -> Result | None:
        with self.lock:
            self.requests.append(request)
        return None

    def seen(self) -> list[str]:
        with self.lock:
            return [str(r) for r in self.requests]


def meta(name: str, *, labels: dict[str, str] | None = None,
         owners: list[OwnerReference] | None = None) -> ObjectMeta:
    return ObjectMeta(name=name, namespace=NS, labels=labels, owner_references=owners)


def ref(
    kind: str, name: str, *, controller: bool = True, api_version: str = "v1"
) -> OwnerReference:
    return OwnerReference(api_version=api_version, kind=kind, name=name, uid=f"uid-{name}",
                          controller=controller)


def manager_over(fake: FakeClientset, **options: Any) -> Manager:
    return Manager(cluster=Cluster(fake.transport), health_address=None, **options)


def wait_for(recorder: Recorder, expected: list[str]) -> None:
    eventually(lambda: len(recorder.seen()) >= len(expected))
    assert recorder.seen() == expected


def test_for_owns_and_watches_enqueue_exactly_their_requests() -> None:
    fake = FakeClientset()
    manager = manager_over(fake)
    recorder = Recorder()

    def pod_to_config_map(pod: Pod) -> list[Request]:
        target = (pod.metadata.labels or {}).get("for")
        return [Request(pod.metadata.namespace or "", target)] if target else []

    (manager.controller_for(ConfigMap)
        .owns(Secret)
        .watches(Pod, pod_to_config_map)
        .complete(recorder))
    secrets, pods = fake.core_v1.secrets(NS), fake.core_v1.pods(NS)
    with started(manager):
        fake.core_v1.configmaps(NS).create(ConfigMap(metadata=meta("a")))
        wait_for(recorder, ["ns/a"])
        secrets.create(Secret(metadata=meta("s1", owners=[ref("ConfigMap", "a")])))
        wait_for(recorder, ["ns/a", "ns/a"])
        secrets.create(Secret(metadata=meta("s2", owners=[ref("ConfigMap", "b",
                                                              controller=False)])))
        secrets.create(Secret(metadata=meta("s3", owners=[ref("Deployment", "c",
                                                              api_version="apps/v1")])))
        secrets.create(Secret(metadata=meta("s4", owners=[ref("ConfigMap", "d",
                                                              api_version="x.io/v1")])))
        secrets.create(Secret(metadata=meta("s5")))
        secrets.create(Secret(metadata=meta("barrier", owners=[ref("ConfigMap", "z")])))
        wait_for(recorder, ["ns/a", "ns/a", "ns/z"])
        secrets.delete("s1")
        wait_for(recorder, ["ns/a", "ns/a", "ns/z", "ns/a"])

        spec = PodSpec(containers=[Container(name="c", image="i")])
        pods.create(Pod(metadata=meta("p1", labels={"other": "x"}), spec=spec))
        pods.create(Pod(metadata=meta("p2", labels={"for": "m"}), spec=spec))
        wait_for(recorder, ["ns/a", "ns/a", "ns/z", "ns/a", "ns/m"])


def test_an_update_enqueues_the_owners_of_the_old_and_the_new_object() -> None:
    fake = FakeClientset()
    manager = manager_over(fake)
    recorder = Recorder()
    manager.controller_for(ConfigMap).owns(Secret).complete(recorder)
    secrets = fake.core_v1.secrets(NS)
    with started(manager):
        secret = secrets.create(Secret(metadata=meta("s", owners=[ref("ConfigMap", "old")])))
        wait_for(recorder, ["ns/old"])
        secret.metadata.owner_references = [ref("ConfigMap", "new")]
        secrets.update(secret)
        eventually(lambda: len(recorder.seen()) == 3)
        assert recorder.seen()[0] == "ns/old"
        assert sorted(recorder.seen()[1:]) == ["ns/new", "ns/old"]


def test_match_every_owner_enqueues_each_owner_of_the_kind() -> None:
    fake = FakeClientset()
    manager = manager_over(fake)
    recorder = Recorder()
    manager.controller_for(ConfigMap).owns(Secret, match_every_owner=True).complete(recorder)
    with started(manager):
        fake.core_v1.secrets(NS).create(Secret(metadata=meta("s", owners=[
            ref("ConfigMap", "x", controller=False), ref("ConfigMap", "y"),
            ref("Deployment", "z", api_version="apps/v1", controller=False)])))
        eventually(lambda: len(recorder.seen()) == 2)
        assert sorted(recorder.seen()) == ["ns/x", "ns/y"]


def deployment(name: str, replicas: int = 1) -> Deployment:
    labels = {"app": name}
    return Deployment(metadata=meta(name), spec=DeploymentSpec(
        replicas=replicas, selector=LabelSelector(match_labels=labels),
        template=PodTemplateSpec(metadata=ObjectMeta(labels=labels), spec=PodSpec(
            containers=[Container(name="c", image="nginx")]))))


def test_event_filters_apply_to_every_watch_and_predicates_to_one() -> None:
    fake = FakeClientset()
    manager = manager_over(fake)
    recorder = Recorder()
    (manager.controller_for(Deployment)
        .owns(Secret, predicates=[LabelSelectorPredicate("keep=yes")])
        .with_event_filter(GenerationChangedPredicate())
        .complete(recorder))
    deployments, secrets = fake.apps_v1.deployments(NS), fake.core_v1.secrets(NS)
    with started(manager):
        deployments.create(deployment("d"))
        wait_for(recorder, ["ns/d"])
        deployments.patch_status("d", {"status": {"replicas": 1}})   # generation unchanged
        deployments.patch("d", {"metadata": {"labels": {"a": "b"}}})  # generation unchanged
        deployments.create(deployment("barrier"))
        wait_for(recorder, ["ns/d", "ns/barrier"])
        deployments.patch("d", {"spec": {"replicas": 3}})             # generation 2
        wait_for(recorder, ["ns/d", "ns/barrier", "ns/d"])

        secrets.create(Secret(metadata=meta("dropped", owners=[ref("Deployment", "x",
                                            api_version="apps/v1")])))
        secrets.create(Secret(metadata=meta("kept", labels={"keep": "yes"}, owners=[
            ref("Deployment", "y", api_version="apps/v1")])))
        wait_for(recorder, ["ns/d", "ns/barrier", "ns/d", "ns/y"])


def test_generic_events_from_a_source_pass_the_predicates_and_enqueue() -> None:
    fake = FakeClientset()
    manager = manager_over(fake)
    recorder = Recorder()
    objects, names = GenericEventSource(), GenericEventSource()
    (manager.controller_for(ConfigMap)
        .watches_source(objects, predicates=[Funcs(generic=lambda e: e.object.metadata.name
                                                   != "skip")])
        .watches_source(names, lambda obj: [Request("mapped", obj.metadata.name)])
        .with_event_filter(GenerationChangedPredicate())  # lets generic events through
        .complete(recorder))
    with started(manager):
        for name in ("one", "skip", "two"):
            objects.emit(ConfigMap(metadata=meta(name)))
        names.emit(ConfigMap(metadata=meta("three")))
        eventually(lambda: len(recorder.seen()) == 3)
        assert sorted(recorder.seen()) == ["mapped/three", "ns/one", "ns/two"]
    assert [r.model_dump() for r in manager.rbac_rules()] == [  # a source adds no rule
        {"apiGroups": [""], "resources": ["configmaps"],
         "verbs": ["get", "list", "patch", "update", "watch"]},
        {"apiGroups": [""], "resources": ["configmaps/finalizers"], "verbs": ["update"]},
        {"apiGroups": [""], "resources": ["events"], "verbs": ["create", "patch"]},
    ]


def test_the_reconcile_contract_errors_terminal_errors_and_requeue_after() -> None:
    fake = FakeClientset()
    manager = manager_over(fake)
    calls: Counter[str] = Counter()
    lock = threading.Lock()

    def reconcile(request: Request) -> Result | None:
        with lock:
            calls[request.name] += 1
            count = calls[request.name]
        if request.name == "flaky" and count < 3:
            raise RuntimeError("not yet")
        if request.name == "broken":
            raise TerminalError("cannot be fixed by retrying")
        if request.name == "again" and count < 2:
            return Result(requeue_after=0.01)
        if request.name == "requeue" and count < 2:
            return Result(requeue=True)
        return None

    (manager.controller_for(ConfigMap)
        .with_options(rate_limiter=ItemExponentialFailureRateLimiter(0.001, 0.01))
        .complete(reconcile))
    config_maps = fake.core_v1.configmaps(NS)
    with started(manager):
        for name in ("flaky", "broken", "again", "requeue"):
            config_maps.create(ConfigMap(metadata=meta(name)))
        eventually(lambda: calls["flaky"] == 3 and calls["again"] == 2 and calls["requeue"] == 2)
        config_maps.create(ConfigMap(metadata=meta("barrier")))
        eventually(lambda: calls["barrier"] == 1)
    assert calls == {"flaky": 3, "broken": 1, "again": 2, "requeue": 2, "barrier": 1}


def test_max_concurrent_reconciles_never_runs_one_request_twice_at_once() -> None:
    fake = FakeClientset(*(ConfigMap(metadata=meta(f"cm-{i}")) for i in range(8)))
    manager = manager_over(fake)
    lock = threading.Lock()
    in_flight: set[str] = set()
    overlaps: list[str] = []
    most = [0]
    done: Counter[str] = Counter()
    work = threading.Event()  # never set: its wait is the reconcile's simulated work

    def reconcile(request: Request) -> None:
        with lock:
            if request.name in in_flight:
                overlaps.append(request.name)
            in_flight.add(request.name)
            most[0] = max(most[0], len(in_flight))
        work.wait(0.001)
        with lock:
            in_flight.discard(request.name)
            done[request.name] += 1

    controller = (manager.controller_for(ConfigMap)
                  .with_options(max_concurrent_reconciles=4).complete(reconcile))
    with started(manager):
        eventually(lambda: len(done) == 8)

        def hammer(i: int) -> None:
            for _ in range(50):
                controller.enqueue(Request(NS, f"cm-{i % 8}"))

        with ThreadPoolExecutor(8) as pool:
            list(pool.map(hammer, range(16)))
        with lock:
            before = done.copy()
        for i in range(8):  # reconciled once more, after all of the above
            controller.enqueue(Request(NS, f"cm-{i}"))
        eventually(lambda: all(done[f"cm-{i}"] > before[f"cm-{i}"] for i in range(8)),
                   timeout=10)
    assert overlaps == []
    assert 1 <= most[0] <= 4
    assert set(done) == {f"cm-{i}" for i in range(8)}


def test_rbac_rules_of_a_builder_and_of_the_manager() -> None:
    fake = FakeClientset()
    lock = LeaseLock(fake.coordination_v1.leases(NS), "ctrl", "me")
    manager = manager_over(fake, leader_election=LeaderElectionConfig(lock))
    builder = (manager.controller_for(Deployment).owns(Secret)
               .watches(Pod, lambda pod: []).with_permissions(ConfigMap, "get", "list"))
    expected = [
        {"apiGroups": [""], "resources": ["configmaps"], "verbs": ["get", "list"]},
        {"apiGroups": [""], "resources": ["events"], "verbs": ["create", "patch"]},
        {"apiGroups": [""], "resources": ["pods"], "verbs": ["get", "list", "watch"]},
        {"apiGroups": [""], "resources": ["secrets"],
         "verbs": ["create", "delete", "get", "list", "patch", "update", "watch"]},
        {"apiGroups": ["apps"], "resources": ["deployments"],
         "verbs": ["get", "list", "patch", "update", "watch"]},
        {"apiGroups": ["apps"], "resources": ["deployments/finalizers"], "verbs": ["update"]},
        {"apiGroups": ["apps"], "resources": ["deployments/status"],
         "verbs": ["get", "patch", "update"]},
    ]
    assert [r.model_dump() for r in builder.rbac_rules()] == expected
    assert manager.rbac_rules(leader_election=False) == []  # nothing completed yet
    never_run = [builder.complete(Recorder()),
                 manager.controller_for(ConfigMap).complete(Recorder())]
    lease = {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
             "verbs": ["create", "get", "update"]}
    rules = [r.model_dump() for r in manager.rbac_rules()]
    assert rules == [
        {"apiGroups": [""], "resources": ["configmaps"],
         "verbs": ["get", "list", "patch", "update", "watch"]},
        {"apiGroups": [""], "resources": ["configmaps/finalizers"], "verbs": ["update"]},
        *expected[1:],
        lease,
    ]
    assert [r.model_dump() for r in manager.rbac_rules(leader_election=False)] == rules[:-1]
    assert fake.actions() == []  # building asks nothing of the server: rules work offline
    for controller in never_run:
        controller.queue.shut_down()


def test_the_rbac_rules_cover_every_request_a_running_controller_makes() -> None:
    fake = FakeClientset(deployment("d"))  # seeding records no action
    lock = LeaseLock(fake.coordination_v1.leases(NS), "ctrl", "me")
    manager = manager_over(fake, leader_election=LeaderElectionConfig(lock),
                           event_sink=ClientEventSink(fake.core_v1.events))
    client = manager.cluster.client
    recorder = manager.event_recorder("test")
    done: list[str] = []

    def reconcile(request: Request) -> None:
        owner = client.get(Deployment, request.namespace, request.name)
        result, _ = create_or_update(client, Secret(metadata=meta(f"{request.name}-secret")),
                                     lambda s: set_controller_reference(owner, s,
                                                                        manager.cluster.scheme))
        owner.metadata.labels = {"reconciled": "yes"}
        owner = client.update(owner)
        client.update_status(owner)
        recorder.event(owner, "Normal", "Reconciled", str(result))
        recorder.event(owner, "Normal", "Reconciled", str(result))  # counted up: a patch
        done.append(result)

    manager.controller_for(Deployment).owns(Secret).complete(reconcile)
    with started(manager):
        eventually(lambda: OperationResult.CREATED in done)
        eventually(lambda: any(a.verb == "patch" and a.resource.resource == "events"
                               for a in fake.actions()))
    allowed = PermissionSet()
    allowed.update(manager.rbac_rules())
    used = {(a.resource.group, a.resource.resource + (f"/{a.subresource}" if a.subresource
                                                       else ""), a.verb)
            for a in fake.actions()}
    assert {verb for _, _, verb in used} >= {"list", "watch", "get", "create", "update", "patch"}
    assert sorted(p for p in used if not allowed.allows(*p)) == []


def test_bad_use_is_refused_with_a_clear_error() -> None:
    fake = FakeClientset()
    manager = manager_over(fake)
    with pytest.raises(ValueError, match="call for_ before owns"):
        Builder[ConfigMap](manager).owns(Secret)
    with pytest.raises(ValueError, match="needs a name"):
        Builder[ConfigMap](manager).watches(Pod, lambda pod: []).complete(Recorder())
    with pytest.raises(ValueError, match="watches nothing"):
        Builder[ConfigMap](manager).named("empty").complete(Recorder())
    with pytest.raises(ValueError, match="at least 1, got 0"):
        manager.controller_for(ConfigMap).with_options(max_concurrent_reconciles=0)
    with pytest.raises(ValueError, match="already called"):
        manager.controller_for(ConfigMap).for_(Secret)  # type: ignore[arg-type]
    builder = manager.controller_for(ConfigMap)
    never_run = [builder.complete(Recorder()),
                 manager.controller_for(Secret).named("custom").complete(Recorder())]
    assert [c.name for c in never_run] == ["configmap", "custom"]  # default: the kind
    with pytest.raises(ValueError, match="already completed"):
        builder.complete(Recorder())
    with pytest.raises(ValueError, match="a controller named 'configmap' was already added"):
        manager.controller_for(ConfigMap).complete(Recorder())
    for controller in never_run:
        controller.queue.shut_down()
    with pytest.raises(RuntimeError, match=r"no cluster: Manager\(cluster=Cluster"):
        Manager().controller_for(ConfigMap)


def test_a_kind_missing_from_the_scheme_is_named() -> None:
    from kgen_runtime.api.apps.v1 import DEPLOYMENT_RESOURCE
    from kgen_runtime.scheme import Scheme

    scheme = Scheme()
    scheme.add_resource(DEPLOYMENT_RESOURCE)
    manager = Manager(cluster=Cluster(FakeClientset().transport, scheme))
    with pytest.raises(NotRegisteredError, match=r"ConfigMap is not registered.*add_to_scheme"):
        manager.controller_for(Deployment).owns(ConfigMap)



def test_the_managers_cache_takes_the_reflector_options_of_an_informer_factory() -> None:
    """Issue 20 item 4: the builder's informers list, watch and judge a silent watch as the
    cache's reflector options say, as a SharedInformerFactory's do (they always ran with
    client-go's defaults: pages of 500, a watch taken as stalled after 120 s of silence)."""
    fake = FakeClientset()
    options = ReflectorOptions(page_size=7, min_watch_timeout=11.0, watch_read_timeout=0.2)
    cluster = Cluster(fake.transport, cache=CacheOptions(reflector_options=options))
    manager = Manager(cluster=cluster, health_address=None)
    recorder = Recorder()
    manager.controller_for(ConfigMap).complete(recorder)

    def requests() -> list[tuple[str, dict[str, str]]]:
        return [(a.verb, dict(a.query)) for a in fake.actions()
                if a.resource.resource == "configmaps" and a.verb in ("list", "watch")]

    with started(manager):
        fake.core_v1.configmaps(NS).create(ConfigMap(metadata=meta("a")))
        wait_for(recorder, ["ns/a"])
        # Nothing happens next: the silent watch is taken as stalled and opened again
        # (re-listing first when it ended within a second: a very short watch).
        eventually(lambda: [verb for verb, _ in requests()].count("watch") >= 2)
    lists = [query for verb, query in requests() if verb == "list"]
    watches = [query for verb, query in requests() if verb == "watch"]
    assert requests()[0][0] == "list" and len(watches) >= 2
    assert lists[0].get("limit") == "7"  # the first list pages
    assert all(11 <= int(query["timeoutSeconds"]) < 22 for query in watches)
