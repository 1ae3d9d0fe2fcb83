"""The kit over real HTTP: the test API server, the HTTP transport and typed clients."""

from __future__ import annotations

import threading
from collections.abc import Iterator

import pytest

from kgen_runtime.api.apps.v1 import ReplicaSet
from kgen_runtime.api.clientset import Clientset
from kgen_runtime.api.core.v1 import Pod
from kgen_runtime.controller import (
    ClientEventSink,
    ControllerRefManager,
    EventBroadcaster,
    LeaderElector,
    LeaseLock,
)
from kgen_runtime.groupversion import GroupVersionKind
from kgen_runtime.labels import parse
from kgen_runtime.rest.errors import ConflictError
from kgen_runtime.testing import TestAPIServer
from kgen_runtime.util import Aggregate
from tests.controller._support import eventually

RS = GroupVersionKind("apps", "v1", "ReplicaSet")
POD_SPEC = {"containers": [{"name": "web", "image": "nginx"}]}  # what the server requires


@pytest.fixture
def clientset() -> Iterator[Clientset]:
    with TestAPIServer() as server, Clientset.for_config(server.config()) as clients:
        yield clients


def test_adopt_and_release_over_http(clientset: Clientset) -> None:
    pods = clientset.core_v1.pods("ns")
    rs = clientset.apps_v1.replicasets("ns").create(ReplicaSet.model_validate({
        "metadata": {"name": "rs", "namespace": "ns"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}, "template": {
            "metadata": {"labels": {"app": "web"}}, "spec": POD_SPEC}}}))
    web = pods.create(Pod.model_validate({"metadata": {"name": "web", "labels": {"app": "web"}},
                                          "spec": POD_SPEC}))
    stale = pods.create(Pod.model_validate({
        "metadata": {"name": "stale", "labels": {"app": "web"}}, "spec": POD_SPEC}))
    pods.patch("stale", {"metadata": {"annotations": {"touched": "yes"}}})
    manager = ControllerRefManager(rs, RS, parse("app=web"), clientset.core_v1.pods)
    with pytest.raises(Aggregate) as info:
        manager.claim_objects([web, stale])
    assert [type(e) for e in info.value.exceptions] == [ConflictError]
    adopted = pods.get("web")
    refs = adopted.metadata.owner_references or []
    assert [(r.kind, r.name, r.uid, r.controller) for r in refs] == [
        ("ReplicaSet", "rs", rs.metadata.uid, True)]
    adopted.metadata.labels = {"app": "db"}
    relabelled = pods.update(adopted)
    assert manager.claim_objects([relabelled]) == []
    assert pods.get("web").metadata.owner_references is None


def test_leader_election_and_events_over_http(clientset: Clientset) -> None:
    broadcaster = EventBroadcaster()
    broadcaster.start_recording_to_sink(ClientEventSink(clientset.core_v1.events))
    lock = LeaseLock(clientset.coordination_v1.leases("kube-system"), "ctl", "a",
                     event_recorder=broadcaster.new_recorder("ctl"))
    leading = threading.Event()
    stop = threading.Event()
    elector = LeaderElector(lock, on_started_leading=lambda _: leading.set(),
                            on_stopped_leading=lambda: None, release_on_cancel=True,
                            lease_duration=3, renew_deadline=2, retry_period=0.5)
    thread = threading.Thread(target=elector.run, args=(stop,), daemon=True)
    thread.start()
    assert leading.wait(5)
    spec = clientset.coordination_v1.leases("kube-system").get("ctl").spec
    assert spec is not None and spec.holder_identity == "a"
    stop.set()
    thread.join(5)
    assert not thread.is_alive()
    spec = clientset.coordination_v1.leases("kube-system").get("ctl").spec
    assert spec is not None and spec.holder_identity is None  # released
    assert broadcaster.shutdown(timeout=5)
    eventually(lambda: [e.message for e in clientset.core_v1.events("kube-system").list().items]
               == ["a became leader"])
