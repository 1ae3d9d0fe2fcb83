"""Lists (selectors, paging, resourceVersion semantics) and watches over raw HTTP."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from kgen_runtime.rest import Request
from kgen_runtime.testing import TestAPIServer
from tests.testing._support import FOOS, Api, foo, take


def names(body: dict[str, Any]) -> list[str]:
    return [item["metadata"]["name"] for item in body["items"]]


def make(api: Api, name: str, **labels: str) -> dict[str, Any]:
    body = foo(name)
    body["metadata"]["labels"] = labels
    status, created = api.post(FOOS, body)
    assert status == 201
    result: dict[str, Any] = created
    return result


@pytest.mark.parametrize(("selector", "expected"), [
    ("tier=web", ["a", "c"]),
    ("tier==web", ["a", "c"]),
    ("tier!=web", ["b", "d"]),
    ("tier in (web,db)", ["a", "b", "c"]),
    ("tier notin (web)", ["b", "d"]),
    ("env", ["c"]),
    ("!env", ["a", "b", "d"]),
    ("tier=web,env=prod", ["c"]),
    ("", ["a", "b", "c", "d"]),
])
def test_label_selectors(crd_api: Api, selector: str, expected: list[str]) -> None:
    make(crd_api, "a", tier="web")
    make(crd_api, "b", tier="db")
    make(crd_api, "c", tier="web", env="prod")
    make(crd_api, "d")
    status, body = crd_api.get(FOOS, labelSelector=selector)
    assert status == 200 and body["kind"] == "FooList"
    assert names(body) == expected


def test_field_selectors_and_bad_selectors(crd_api: Api) -> None:
    make(crd_api, "a")
    make(crd_api, "b")
    assert names(crd_api.get(FOOS, fieldSelector="metadata.name=b")[1]) == ["b"]
    assert names(crd_api.get(FOOS, fieldSelector="metadata.name!=b")[1]) == ["a"]
    all_foos = "/apis/samplecontroller.k8s.io/v1alpha1/foos"
    assert names(crd_api.get(all_foos, fieldSelector="metadata.namespace=ns")[1]) == ["a", "b"]
    assert names(crd_api.get(all_foos, fieldSelector="metadata.namespace=other")[1]) == []
    status, body = crd_api.get(FOOS, fieldSelector="spec.replicas=1")
    assert (status, body["reason"]) == (400, "BadRequest")
    assert crd_api.get(FOOS, labelSelector="a in (")[0] == 400
    assert crd_api.get(FOOS, limit="many")[0] == 400


def test_paging_with_continue_tokens(crd_api: Api) -> None:
    for name in "edcba":
        make(crd_api, name)
    page = crd_api.get(FOOS, limit=2)[1]
    assert names(page) == ["a", "b"]
    assert page["metadata"]["remainingItemCount"] == 3
    list_rv = page["metadata"]["resourceVersion"]
    crd_api.delete(f"{FOOS}/c")  # pages keep reading the snapshot of the first one
    make(crd_api, "bb")
    page = crd_api.get(FOOS, limit=2, **{"continue": page["metadata"]["continue"]})[1]
    assert names(page) == ["c", "d"]
    assert page["metadata"]["resourceVersion"] == list_rv
    page = crd_api.get(FOOS, limit=2, **{"continue": page["metadata"]["continue"]})[1]
    assert names(page) == ["e"] and page["metadata"]["continue"] == ""  # unstructured list
    assert crd_api.get(FOOS, **{"continue": "garbage"})[0] == 400


def test_resource_version_semantics(crd_api: Api) -> None:
    first = make(crd_api, "a")["metadata"]["resourceVersion"]
    make(crd_api, "b")
    assert names(crd_api.get(FOOS, resourceVersion="0")[1]) == ["a", "b"]
    assert names(crd_api.get(FOOS, resourceVersion=first)[1]) == ["a", "b"]  # NotOlderThan
    exact = crd_api.get(FOOS, resourceVersion=first, resourceVersionMatch="Exact")[1]
    assert names(exact) == ["a"] and exact["metadata"]["resourceVersion"] == first
    status, body = crd_api.get(FOOS, resourceVersion="999")
    assert (status, body["reason"]) == (504, "Timeout")
    assert body["message"].startswith("Timeout: Too large resource version: 999, current: ")


def test_compaction_expires_old_versions(api_server: TestAPIServer, crd_api: Api) -> None:
    first = make(crd_api, "a")["metadata"]["resourceVersion"]
    make(crd_api, "b")
    page = crd_api.get(FOOS, limit=1)[1]
    make(crd_api, "c")
    api_server.compact()
    status, body = crd_api.get(FOOS, resourceVersion=first, resourceVersionMatch="Exact")
    assert (status, body["reason"], body["code"]) == (410, "Expired", 410)
    status, body = crd_api.get(FOOS, **{"continue": page["metadata"]["continue"]})
    assert (status, body["reason"]) == (410, "Expired")


def test_watch_from_a_resource_version_replays_and_follows(crd_api: Api) -> None:
    start = make(crd_api, "a")["metadata"]["resourceVersion"]
    crd_api.patch(f"{FOOS}/a", {"spec": {"replicas": 2}})
    crd_api.delete(f"{FOOS}/a")
    events = crd_api.watch(FOOS, resourceVersion=start, timeoutSeconds=2)
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in
            [next(events), next(events)]] == [("MODIFIED", "a"), ("DELETED", "a")]
    make(crd_api, "b")
    live = next(events)
    assert (live["type"], live["object"]["metadata"]["name"]) == ("ADDED", "b")
    assert live["object"]["kind"] == "Foo"


def test_watch_applies_selectors_as_transitions(crd_api: Api) -> None:
    start = make(crd_api, "a", tier="db")["metadata"]["resourceVersion"]
    crd_api.patch(f"{FOOS}/a", {"metadata": {"labels": {"tier": "web"}}})
    crd_api.patch(f"{FOOS}/a", {"spec": {"replicas": 3}})
    crd_api.patch(f"{FOOS}/a", {"metadata": {"labels": {"tier": "db"}}})
    make(crd_api, "b", tier="db")
    make(crd_api, "z", tier="web")  # the sentinel: nothing may come between
    events = crd_api.watch(FOOS, resourceVersion=start, labelSelector="tier=web")
    assert take(events, 4) == [("ADDED", "a"), ("MODIFIED", "a"), ("DELETED", "a"),
                               ("ADDED", "z")]


def test_watch_without_version_starts_with_current_state(crd_api: Api) -> None:
    make(crd_api, "b")
    make(crd_api, "a")
    events = crd_api.watch(FOOS)
    assert take(events, 2) == [("ADDED", "a"), ("ADDED", "b")]
    make(crd_api, "c")
    assert take(events, 1) == [("ADDED", "c")]


@pytest.mark.parametrize("value", ["true", "True", "TRUE", "1", "yes"])
def test_any_watch_value_but_false_or_0_opens_a_watch(crd_api: Api, value: str) -> None:
    """kube-apiserver's bool query parameters: only absent, "0" and "false" (any case) are
    false; kubernetes_asyncio sends ``watch=True``."""
    make(crd_api, "a")
    events = crd_api.watch(FOOS, watch=value, timeoutSeconds=2)
    assert take(events, 1) == [("ADDED", "a")]
    events.close()


@pytest.mark.parametrize("value", ["false", "False", "FALSE", "0"])
def test_watch_false_or_0_lists(crd_api: Api, value: str) -> None:
    make(crd_api, "a")
    status, body = crd_api.get(FOOS, watch=value)
    assert (status, body["kind"], names(body)) == (200, "FooList", ["a"])


def test_watch_initial_events_end_with_an_annotated_bookmark(crd_api: Api) -> None:
    make(crd_api, "a")
    rv = make(crd_api, "b")["metadata"]["resourceVersion"]
    events = crd_api.watch(FOOS, sendInitialEvents="true", allowWatchBookmarks="true",
                           resourceVersionMatch="NotOlderThan", timeoutSeconds=2)
    first = [next(events) for _ in range(3)]
    assert [e["type"] for e in first] == ["ADDED", "ADDED", "BOOKMARK"]
    assert first[2]["object"] == {
        "kind": "Foo", "apiVersion": "samplecontroller.k8s.io/v1alpha1",
        "metadata": {"resourceVersion": rv,
                     "annotations": {"k8s.io/initial-events-end": "true"}}}


@pytest.mark.parametrize("allow", ["true", "True"])
def test_watch_bookmarks_when_allowed(allow: str) -> None:
    with TestAPIServer(bookmark_interval=0.05) as server:
        api = Api(server)
        api.post("/api/v1/namespaces/default/configmaps", {"metadata": {"name": "a"}})
        events = api.watch("/api/v1/namespaces/default/configmaps", resourceVersion="1",
                           allowWatchBookmarks=allow, timeoutSeconds=5)
        bookmark = next(events)
        assert bookmark == {"type": "BOOKMARK", "object": {
            "kind": "ConfigMap", "apiVersion": "v1", "metadata": {"resourceVersion": "1"}}}
        events.close()


def test_watch_from_a_compacted_version_is_gone(api_server: TestAPIServer,
                                                crd_api: Api) -> None:
    start = make(crd_api, "a")["metadata"]["resourceVersion"]
    last = make(crd_api, "b")["metadata"]["resourceVersion"]
    api_server.compact()
    from_last = crd_api.watch(FOOS, resourceVersion=last)
    make(crd_api, "c")
    assert take(from_last, 1) == [("ADDED", "c")]
    events = list(crd_api.watch(FOOS, resourceVersion=start))
    assert events == [{"type": "ERROR", "object": {
        "kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "message": f"too old resource version: {start} ({last})", "reason": "Expired",
        "code": 410}}]


def test_history_window_expires_old_versions() -> None:
    with TestAPIServer(history_size=3) as server:
        api = Api(server)
        path = "/api/v1/namespaces/default/configmaps"
        for name in "abcde":
            api.post(path, {"metadata": {"name": name}})
        events = list(api.watch(path, resourceVersion="1"))
        assert events[0]["object"]["code"] == 410
        assert take(api.watch(path, resourceVersion="2"), 3) == [
            ("ADDED", "c"), ("ADDED", "d"), ("ADDED", "e")]


def test_watch_of_another_version_sees_shared_storage(crd_api: Api) -> None:
    make(crd_api, "a")
    events = crd_api.watch("/apis/samplecontroller.k8s.io/v1alpha1/foos")
    assert next(events)["object"]["metadata"]["namespace"] == "ns"


def test_list_options_are_validated(crd_api: Api) -> None:
    status, body = crd_api.get(FOOS, resourceVersionMatch="Exact")
    assert (status, body["reason"]) == (422, "Invalid")
    assert body["message"] == (
        'ListOptions.meta.k8s.io "" is invalid: resourceVersionMatch: Forbidden: '
        "resourceVersionMatch is forbidden unless resourceVersion is provided")
    assert crd_api.get(FOOS, resourceVersion="1", resourceVersionMatch="Newest")[0] == 422
    assert crd_api.get(FOOS, resourceVersion="0", resourceVersionMatch="Exact")[0] == 422
    assert crd_api.get(FOOS, resourceVersion="abc")[0] == 400


def test_watch_from_a_future_version_skips_older_writes(api_server: TestAPIServer,
                                                        crd_api: Api) -> None:
    current = int(make(crd_api, "a")["metadata"]["resourceVersion"])
    query = (("watch", "true"), ("resourceVersion", str(current + 2)))
    stream = api_server.core.handle(Request("GET", FOOS, query), read_timeout=5)
    for name in ("b", "c", "d"):  # versions current+1 .. current+3, written after the watch
        make(crd_api, name)
    event = orjson.loads(next(iter(stream.iter_lines())))
    assert (event["type"], event["object"]["metadata"]["name"]) == ("ADDED", "d")
    stream.close()
