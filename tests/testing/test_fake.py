"""The fake clientset's transport: reactors, the action log, FakeWatch and the tracker."""

from __future__ import annotations

import threading
from typing import Any

import orjson
import pytest

from kgen_runtime.groupversion import GroupVersionResource
from kgen_runtime.meta import ObjectMeta
from kgen_runtime.rest import Request, Response
from kgen_runtime.testing import (
    Action,
    FakeClientsetBase,
    FakeWatch,
    StatusError,
)
from tests.testing._support import BAR, BARS, BARS_GVR, Bar


class FakeClientset(FakeClientsetBase):
    resources = (BAR,)


def bar(name: str, **spec: Any) -> Bar:
    return Bar(metadata=ObjectMeta(name=name, namespace="ns"), spec=spec)


def send(fake: FakeClientset, method: str, path: str, body: Any = None, *,
         content_type: str = "application/json", **query: str) -> tuple[int, Any]:
    response = fake.transport.send(Request(
        method, path, tuple(query.items()),
        None if body is None else orjson.dumps(body), content_type if body is not None
        else None))
    return response.status, orjson.loads(response.read())


def test_seeded_objects_keep_status_and_get_versions() -> None:
    seeded = bar("a", size=1)
    seeded.status = {"ready": True}
    fake = FakeClientset(seeded, {"apiVersion": "v1", "kind": "ConfigMap",
                                  "metadata": {"name": "cm"}})
    status, got = send(fake, "GET", f"{BARS}/a")
    assert status == 200
    assert got["status"] == {"ready": True} and got["metadata"]["resourceVersion"] == "1"
    assert fake.tracker.get(GroupVersionResource("", "v1", "configmaps"), "default",
                            "cm")["metadata"]["namespace"] == "default"
    assert fake.actions() == [Action("get", BARS_GVR, "ns", "a")]


def test_actions_record_every_verb_in_order() -> None:
    fake = FakeClientset()
    send(fake, "POST", BARS, bar("a").model_dump())
    send(fake, "GET", BARS, labelSelector="x=y")
    send(fake, "PATCH", f"{BARS}/a", {"spec": {"n": 1}},
         content_type="application/merge-patch+json")
    created = send(fake, "GET", f"{BARS}/a")[1]
    send(fake, "PUT", f"{BARS}/a/status", {**created, "status": {"ok": True}})
    send(fake, "DELETE", f"{BARS}/a")
    send(fake, "DELETE", BARS)
    actions = fake.actions()
    assert [(a.verb, a.name, a.subresource) for a in actions] == [
        ("create", "", ""), ("list", "", ""), ("patch", "a", ""), ("get", "a", ""),
        ("update", "a", "status"), ("delete", "a", ""), ("delete-collection", "", "")]
    assert actions[0].object["metadata"]["name"] == "a"
    assert actions[1].query == (("labelSelector", "x=y"),)
    assert (actions[2].patch, actions[2].patch_type) == (
        b'{"spec":{"n":1}}', "application/merge-patch+json")
    assert actions[4].matches("update", "bars/status")
    assert actions[4].matches("UPDATE", "bars")  # a plain resource covers its subresources
    assert not actions[4].matches("update", "bars/scale")
    assert not actions[3].matches("get", "bars/status")
    assert not actions[3].matches("list", "*") and actions[3].matches("*", "*")
    fake.clear_actions()
    assert fake.actions() == []


def test_reactors_run_in_order_and_fall_through_to_the_tracker() -> None:
    fake = FakeClientset(bar("a"))
    calls: list[str] = []

    def observe(action: Action) -> tuple[bool, Any]:
        calls.append(f"observe {action.verb}")
        return False, None

    def refuse_create(action: Action) -> tuple[bool, Any]:
        raise StatusError.conflict("example.com", "bars", "x", "injected")

    def canned(action: Action) -> tuple[bool, Any]:
        return True, bar("canned")

    fake.append_reactor("*", "*", observe)
    fake.prepend_reactor("create", "bars", refuse_create)
    fake.prepend_reactor("get", "bars", canned)
    status, body = send(fake, "POST", BARS, bar("x").model_dump())
    assert (status, body["reason"], body["message"]) == (
        409, "Conflict", 'Operation cannot be fulfilled on bars.example.com "x": injected')
    assert send(fake, "GET", f"{BARS}/a")[1]["metadata"]["name"] == "canned"
    assert send(fake, "GET", BARS)[1]["items"][0]["metadata"]["name"] == "a"
    assert calls == ["observe list"]  # earlier reactors handled create and get
    assert fake.tracker.list(BARS_GVR) != []


def test_reactors_may_return_client_gos_handled_object_err() -> None:
    """A reactor ported from Go returns ``(handled, obj, err)``: a handled action's error
    is the answer (a StatusError as its Status, anything else raised to the caller), an
    unhandled action's error is ignored (client-go testing/fake.go Invokes)."""
    fake = FakeClientset(bar("a"))
    conflict = StatusError.conflict("example.com", "bars", "a", "injected")
    fake.prepend_reactor("update", "bars", lambda action: (True, None, conflict))
    fake.prepend_reactor("get", "bars", lambda action: (True, bar("canned"), None))
    fake.prepend_reactor("list", "bars", lambda action: (False, None, conflict))
    fake.prepend_reactor("delete", "bars", lambda action: (True, None, OSError("broken")))
    status, body = send(fake, "PUT", f"{BARS}/a", bar("a").model_dump())
    assert (status, body["reason"], body["message"]) == (
        409, "Conflict", 'Operation cannot be fulfilled on bars.example.com "a": injected')
    assert send(fake, "GET", f"{BARS}/a")[1]["metadata"]["name"] == "canned"
    assert send(fake, "GET", BARS)[1]["items"][0]["metadata"]["name"] == "a"
    with pytest.raises(OSError, match="broken"):
        send(fake, "DELETE", f"{BARS}/a")


def test_watch_reactors_may_return_client_gos_handled_watch_err() -> None:
    fake = FakeClientset()
    fake.prepend_watch_reactor("bars", lambda action: (
        True, None, StatusError.gone("too old resource version: 1 (5)")))
    status, body = send(fake, "GET", BARS, watch="true")
    assert (status, body["reason"]) == (410, "Expired")


def test_a_handled_action_without_an_object_answers_success() -> None:
    fake = FakeClientset(bar("a"))
    fake.prepend_reactor("delete", "bars", lambda action: (True, None))
    assert send(fake, "DELETE", f"{BARS}/a") == (200, {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"})
    assert send(fake, "GET", f"{BARS}/a")[0] == 200  # the tracker kept it


def test_default_chain_has_server_semantics() -> None:
    fake = FakeClientset(bar("a"))
    current = send(fake, "GET", f"{BARS}/a")[1]
    stale = {**current, "metadata": {**current["metadata"], "resourceVersion": "0"}}
    assert send(fake, "PUT", f"{BARS}/a", stale)[1]["reason"] == "Conflict"
    assert send(fake, "GET", f"{BARS}/zz")[0] == 404
    assert send(fake, "POST", BARS, bar("a").model_dump())[1]["reason"] == "AlreadyExists"
    assert send(fake, "GET", "/apis/example.com/v1")[1]["resources"][0]["name"] == "bars"


def test_watch_through_the_fake_sees_writes() -> None:
    fake = FakeClientset(bar("a"))
    # the plain chain never sees watches (this reactor would swallow them)
    fake.prepend_reactor("*", "*", lambda action: (action.verb == "watch", None))
    response = fake.transport.send(Request("GET", BARS, (("watch", "true"),
                                                         ("resourceVersion", "0"))),
                                   stream=True, read_timeout=5)
    lines = response.iter_lines()
    assert orjson.loads(next(lines))["type"] == "ADDED"
    send(fake, "DELETE", f"{BARS}/a")
    assert orjson.loads(next(lines))["type"] == "DELETED"
    response.close()
    assert list(lines) == []
    assert fake.actions()[0].verb == "watch"


@pytest.mark.parametrize(("value", "verb"), [("True", "watch"), ("1", "watch"),
                                             ("false", "list"), ("0", "list")])
def test_the_watch_parameter_is_read_as_the_server_reads_it(value: str, verb: str) -> None:
    fake = FakeClientset()
    fake.prepend_reactor("*", "*", lambda action: (True, None))
    fake.transport.send(Request("GET", BARS, (("watch", value),)))
    assert [action.verb for action in fake.actions()] == [verb]


def test_watch_read_timeout_raises() -> None:
    fake = FakeClientset()
    response = fake.transport.send(Request("GET", BARS, (("watch", "true"),
                                                         ("resourceVersion", "1"))),
                                   stream=True, read_timeout=0.05)
    with pytest.raises(TimeoutError):
        next(iter(response.iter_lines()))


def test_watch_reactor_streams_a_fake_watch() -> None:
    fake = FakeClientset()
    watch = FakeWatch(read_timeout=5)
    fake.prepend_watch_reactor("bars", lambda action: (True, watch))
    response: Response = fake.transport.send(Request("GET", BARS, (("watch", "true"),)),
                                             stream=True)
    assert response is watch
    watch.add(bar("a"))
    watch.modify({"metadata": {"name": "a"}})
    watch.error(StatusError.gone("too old resource version: 1 (2)"))
    watch.stop()
    events = [orjson.loads(line) for line in response.iter_lines()]
    assert [e["type"] for e in events] == ["ADDED", "MODIFIED", "ERROR"]
    assert events[0]["object"]["kind"] == "Bar"
    assert events[2]["object"]["code"] == 410
    with pytest.raises(TimeoutError):
        next(iter(FakeWatch(read_timeout=0.01).iter_lines()))


def test_tracker_operations() -> None:
    fake = FakeClientset()
    tracker = fake.tracker
    created = tracker.create(BARS_GVR, bar("a", n=1), "ns")
    created["spec"]["n"] = 2  # results are copies
    assert tracker.get(BARS_GVR, "ns", "a")["spec"] == {"n": 1}
    updated = tracker.update(BARS_GVR, {**created}, "ns")
    assert updated["metadata"]["generation"] == 2
    assert [o["metadata"]["name"] for o in tracker.list(BARS_GVR, "ns")] == ["a"]
    tracker.delete(BARS_GVR, "ns", "a")
    with pytest.raises(StatusError) as error:
        tracker.get(BARS_GVR, "ns", "a")
    assert error.value.code == 404
    with pytest.raises(StatusError):
        tracker.add({"apiVersion": "nope/v1", "kind": "Nope", "metadata": {"name": "x"}})
    with pytest.raises(StatusError):
        tracker.list(GroupVersionResource("nope", "v1", "nopes"))
    assert fake.actions() == []


def test_concurrent_clients_through_the_fake() -> None:
    """Many threads increment one counter with read-modify-write and retry on conflict."""
    fake = FakeClientset(bar("counter", n=0))
    threads, rounds = 16, 25
    conflicts: list[int] = []

    def worker() -> None:
        for _ in range(rounds):
            while True:
                current = send(fake, "GET", f"{BARS}/counter")[1]
                current["spec"]["n"] += 1
                status, _ = send(fake, "PUT", f"{BARS}/counter", current)
                if status == 200:
                    break
                assert status == 409
                conflicts.append(1)

    workers = [threading.Thread(target=worker) for _ in range(threads)]
    for thread in workers:
        thread.start()
    for thread in workers:
        thread.join(30)
    assert not any(thread.is_alive() for thread in workers)
    final = fake.tracker.get(BARS_GVR, "ns", "counter")
    assert final["spec"]["n"] == threads * rounds
    assert int(final["metadata"]["resourceVersion"]) == 1 + threads * rounds
    updates = [a for a in fake.actions() if a.verb == "update"]
    assert len(updates) == threads * rounds + len(conflicts)
